// `npm test`'s runner (tools/test/run.ts), its timings (tools/test/timings.ts, test/support/timings-reporter.ts) and
// `npm run drills:publish`: what they record, how a failure shows, and that the documented commands run.
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import {
  balancedShard,
  DURATIONS_BASELINE,
  recordedDurations,
  SHARD_DURATIONS_ENV as SEQUENCER_ENV,
} from '../../support/sequencer.js';
import { SHARD_DURATIONS_ENV } from '../../../tools/test/timings.js';
import TimingsReporter from '../../support/timings-reporter.js';
import { CLUSTER_SLOT_ENV } from '../../cluster/paths.js';
import { alive } from '../../envtest/process.js';
import {
  ALONE,
  aloneFiles,
  E2E_SHARDS,
  FAST_PLAN,
  PLAN,
  previousDurations,
  runPlan,
  type Phase,
} from '../../../tools/test/run.js';
import {
  DEFAULT_TIMINGS,
  parseTimings,
  renderTimings,
  ROOT,
  RUNS_DIR,
  TIMINGS_ENV,
  totals,
  type TimingRecord,
} from '../../../tools/test/timings.js';
import {
  publishDrills,
  README_BEGIN,
  README_END,
  recordDrill,
  runResultsPath,
  type Results,
} from '../../e2e/support/drill-results.js';

const made: string[] = [];
const tmp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'kruise-test-run-'));
  made.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

async function run(plan: readonly Phase[], args: string[] = []) {
  const root = tmp();
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    const code = await runPlan(plan, args, root);
    const lines = out.mock.calls.map((c) => String(c[0]));
    const [file] = readdirSync(join(root, RUNS_DIR));
    const { records, badLines } = parseTimings(readFileSync(join(root, RUNS_DIR, file), 'utf8'));
    return { code, lines, records, badLines, root };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const steps = (records: TimingRecord[]) =>
  records.flatMap((r) =>
    r.kind === 'step' ? [`${r.lane}/${r.name}: ${r.status}${r.detail ? ` ${r.detail}` : ''}`] : [],
  );

describe('npm test runner', () => {
  it('runs lanes side by side, steps in order, and records each with its time', async () => {
    const { code, records, lines, badLines } = await run([
      [
        {
          name: 'a',
          steps: [
            { name: 'one', command: 'sleep 0.3 && echo > a1' },
            { name: 'two', command: 'true' },
          ],
        },
        { name: 'b', steps: [{ name: 'three', command: 'test ! -e a1 && sleep 0.5' }] },
      ],
      [{ name: 'c', steps: [{ name: 'four', command: 'test -e a1' }] }],
    ]);
    expect(code).toBe(0);
    expect(badLines).toBe(0);
    // b's step ran while a's first step had not yet written its file: the lanes overlapped.
    expect(steps(records).sort()).toEqual(['a/one: passed', 'a/two: passed', 'b/three: passed', 'c/four: passed']);
    expect(records[0]).toMatchObject({ kind: 'run', machine: expect.stringMatching(/cores/) });
    expect(records.at(-1)).toMatchObject({ kind: 'run-end', failedSteps: [] });
    expect(lines.at(-1)).toBe('0 passed, 0 failed, 0 skipped\n');
  });

  it('starts a whenALaneEnds lane once the first other lane of its phase ends, beside the one still running', async () => {
    const { code, records } = await run([
      [
        // "slow" checks, when it ends, that "late" ran while it was still running; "late" checks that "quick" ended.
        { name: 'slow', steps: [{ name: 'long', command: 'sleep 1.5 && test -e late-done' }] },
        { name: 'quick', steps: [{ name: 'short', command: 'sleep 0.2 && echo > quick-done' }] },
        {
          name: 'late',
          whenALaneEnds: true,
          steps: [{ name: 'after-one', command: 'test -e quick-done && echo > late-done' }],
        },
      ],
    ]);
    expect(steps(records).sort()).toEqual(['late/after-one: passed', 'quick/short: passed', 'slow/long: passed']);
    expect(code).toBe(0);
    // It waits for its phase's first lane to end: with none ended yet, it has not started.
    const order = records.flatMap((r) => (r.kind === 'step' ? [r.name] : []));
    expect(order).toEqual(['short', 'after-one', 'long']);
  });

  it("fails on a step's exit or kill, still finishes the other lane, skips the rest and later phases", async () => {
    const { code, records, lines } = await run([
      [
        {
          name: 'a',
          steps: [
            { name: 'exits', command: 'exit 3' },
            { name: 'after', command: 'true' },
          ],
        },
        { name: 'b', steps: [{ name: 'killed', command: 'kill -9 $$' }] },
        { name: 'c', steps: [{ name: 'fine', command: 'true' }] },
      ],
      [{ name: 'd', steps: [{ name: 'never', command: 'true' }] }],
    ]);
    expect(code).toBe(1);
    expect(steps(records).sort()).toEqual([
      'a/after: skipped',
      'a/exits: failed exit 3',
      'b/killed: failed killed by SIGKILL',
      'c/fine: passed',
    ]);
    const end = records.at(-1);
    expect(end?.kind === 'run-end' && [...end.failedSteps].sort()).toEqual([
      'a: exits (exit 3)',
      'b: killed (killed by SIGKILL)',
    ]);
    // No Jest ran, yet the closing line is not green.
    expect(lines.at(-1)).toBe('0 passed, 2 failed, 0 skipped\n');
  });

  it("hands npm test's arguments to Jest steps only, quoted, and names the run's timings file", async () => {
    const { code, root } = await run(
      [
        [
          {
            name: 'a',
            steps: [
              {
                name: 'jest',
                command: `printf '%s|' "$${TIMINGS_ENV}" > jest-env; printf '%s\\n' > jest-args`,
                jest: true,
              },
              { name: 'other', command: 'echo "$@" > other-args' },
            ],
          },
        ],
      ],
      ["it's", 'test/unit/x.test.ts'],
    );
    expect(code).toBe(0);
    // The Jest step's command got the arguments after --passWithNoTests, and the run's timings file in the environment.
    expect(readFileSync(join(root, 'jest-args'), 'utf8')).toBe("--passWithNoTests\nit's\ntest/unit/x.test.ts\n");
    expect(readFileSync(join(root, 'jest-env'), 'utf8')).toMatch(new RegExp(`^${join(root, RUNS_DIR)}/.*\\.jsonl\\|$`));
    expect(readFileSync(join(root, 'other-args'), 'utf8')).toBe('\n');
  });
});

describe('a signal to the runner', () => {
  it("reaches the running step's whole process group, and no later step starts", async () => {
    const root = tmp();
    // The step is a shell that waits for a node grandchild (`; true` keeps the shell from exec'ing it): a shell that
    // waits does not pass a signal on, so only a signal to the step's group reaches the grandchild.
    const grandchild = `node -e "require('fs').writeFileSync('pid', String(process.pid)); setTimeout(() => {}, 60000)"`;
    const script = join(root, 'runner.mts');
    writeFileSync(
      script,
      `import { runPlan } from ${JSON.stringify(join(ROOT, 'tools/test/run.ts'))};\n` +
        `process.exitCode = await runPlan([[{ name: 'lane', steps: [` +
        `{ name: 'long', command: ${JSON.stringify(`${grandchild}; true`)} }, { name: 'next', command: 'touch next' }` +
        `] }]], [], ${JSON.stringify(root)});\n`,
    );
    const runner = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, stdio: 'ignore' });
    const exited = new Promise<number | null>((resolve) => runner.once('exit', (code) => resolve(code)));
    const pidFile = join(root, 'pid');
    for (let i = 0; i < 300 && !existsSync(pidFile); i++) await sleep(100);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    runner.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(root, 'next'))).toBe(false);
  }, 60_000);
});

describe('sharded steps', () => {
  it('run as N processes side by side, each told its shard, each recorded', async () => {
    const { code, records, root } = await run([
      [
        { name: 'api', steps: [{ name: 'integration', command: `printf '%s\\n' >> shards`, shards: 2 }] },
        { name: 'local', steps: [{ name: 'unit', command: 'true' }] },
      ],
    ]);
    expect(code).toBe(0);
    expect(readFileSync(join(root, 'shards'), 'utf8').split('\n').filter(Boolean).sort()).toEqual([
      '--shard=1/2',
      '--shard=2/2',
    ]);
    expect(steps(records).sort()).toEqual([
      'api/integration 1/2: passed',
      'api/integration 2/2: passed',
      'local/unit: passed',
    ]);
  });
});

describe('the e2e tier', () => {
  it("shards run side by side, even alone in their phase, each told its cluster's slot", async () => {
    // Each shard waits (5 s at most) for the other's start: one after another, the first would fail.
    const other = 'started-$((1 - SLOT))';
    const wait = `i=0; while [ ! -e ${other} ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; [ -e ${other} ]`;
    const { code, root } = await run([
      [
        {
          name: 'cluster',
          steps: [
            {
              name: 'e2e',
              command: `touch started-$SLOT; ${wait} && printf '%s %s\\n' "$SLOT" >> shards`,
              shards: 2,
              shardEnv: 'SLOT',
            },
          ],
        },
      ],
    ]);
    expect(code).toBe(0);
    expect(readFileSync(join(root, 'shards'), 'utf8').split('\n').filter(Boolean).sort()).toEqual([
      '0 --shard=1/2',
      '1 --shard=2/2',
    ]);
    const e2e = PLAN.flat()
      .flatMap((lane) => lane.steps)
      .find((st) => st.command.includes('--selectProjects e2e'))!;
    expect([e2e.shards, e2e.shardEnv]).toEqual([E2E_SHARDS, CLUSTER_SLOT_ENV]);
  });

  it("the baseline puts the two flavours' drills on different clusters and balances the tier within a tenth", () => {
    const baseline = JSON.parse(readFileSync(join(ROOT, DURATIONS_BASELINE), 'utf8')) as Record<string, number>;
    const e2e = Object.keys(baseline).filter((f) => f.startsWith('test/e2e/'));
    const onDisk = readdirSync(join(ROOT, 'test/e2e')).filter((f) => f.endsWith('.test.ts'));
    expect(e2e.map((f) => f.slice('test/e2e/'.length)).sort()).toEqual(onDisk.sort());
    const [one, two] = [1, 2].map((i) =>
      balancedShard(
        e2e.map((path) => ({ path })),
        (t) => baseline[t.path],
        { shardIndex: i, shardCount: 2 },
      ).map((t) => t.path),
    );
    expect(one.includes('test/e2e/drills-upstream.test.ts')).not.toBe(one.includes('test/e2e/drills-runtime.test.ts'));
    const sum = (xs: string[]) => xs.reduce((n, x) => n + baseline[x], 0);
    expect(Math.abs(sum(one) - sum(two))).toBeLessThan((sum(one) + sum(two)) / 10);
  });
});

describe('the integration files that run alone', () => {
  it('name existing files, which the shards skip and the alone phase alone runs, before the e2e tier', () => {
    const dir = join(ROOT, 'test/integration');
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => join(dir, f));
    const alone = files.filter((f) => new RegExp(aloneFiles).test(f));
    expect(alone.map((f) => f.slice(dir.length + 1)).sort()).toEqual(ALONE.map((n) => `${n}.test.ts`).sort());
    const commands = PLAN.map((phase) => phase.flatMap((lane) => lane.steps.map((st) => st.command)).join('\n'));
    const shardPhase = commands.findIndex((c) => c.includes(`--testPathIgnorePatterns '${aloneFiles}'`));
    const alonePhase = commands.findIndex((c) => c.includes(`--testPathIgnorePatterns '^(?!.*${aloneFiles})'`));
    const e2ePhase = commands.findIndex((c) => c.includes('--selectProjects e2e'));
    expect(shardPhase).toBeGreaterThanOrEqual(0);
    expect(alonePhase).toBeGreaterThan(shardPhase);
    expect(e2ePhase).toBeGreaterThan(alonePhase);
    // The alone phase is one lane of one step: nothing beside it.
    expect(PLAN[alonePhase]).toHaveLength(1);
    expect(PLAN[alonePhase][0].steps).toHaveLength(1);
    // The negative lookahead keeps exactly the alone files.
    const keep = new RegExp(`^(?!.*${aloneFiles})`);
    expect(files.filter((f) => !keep.test(f)).sort()).toEqual(alone.sort());
  });
});

describe('the smaller loops the README gives', () => {
  it('`npm run test:fast` runs the commands npm test runs for the type-check, the lint and the unit tier', () => {
    const commands = (plan: readonly Phase[]) => plan.flat().flatMap((lane) => lane.steps.map((st) => st.command));
    const whole = commands(PLAN);
    const fast = commands(FAST_PLAN);
    expect(fast).toHaveLength(3);
    for (const c of fast.filter((x) => !x.includes('jest'))) expect(whole).toContain(c);
    // The unit tier: the same Jest with the unit project selected, which npm test selects among others.
    const unit = fast.find((x) => x.includes('jest'))!;
    expect(unit).toMatch(/--selectProjects unit$/);
    expect(whole.some((c) => c.startsWith(unit) && c.includes(' linters'))).toBe(true);
  });

  it('`npm run test:unit -- FILE` runs that file, not the whole tier', () => {
    const listed = spawnSync('npm', ['run', '--silent', 'test:unit', '--', 'test/unit/tools/test-run', '--listTests'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(listed.status).toBe(0);
    expect(listed.stdout.split('\n').filter((l) => l.endsWith('.test.ts'))).toEqual([
      join(ROOT, 'test/unit/tools/test-run.test.ts'),
    ]);
  });
});

describe('integration shards', () => {
  const files = (weights: Record<string, number | undefined>) => Object.keys(weights).map((path) => ({ path }));
  const split = (weights: Record<string, number | undefined>, count: number) =>
    Array.from({ length: count }, (_, i) =>
      balancedShard(files(weights), (t) => weights[t.path], { shardIndex: i + 1, shardCount: count }).map(
        (t) => t.path,
      ),
    );

  it('puts every file in exactly one shard, the slowest apart, balanced by time', () => {
    const weights = { a: 280, b: 290, c: 160, d: 100, e: 60, f: 50, g: 40, h: 10 };
    const [one, two] = split(weights, 2);
    expect([...one, ...two].sort()).toEqual(Object.keys(weights).sort());
    // The two slowest never share a shard, which a split by path hash can do.
    expect(one.includes('a') === one.includes('b')).toBe(false);
    const sum = (xs: string[]) => xs.reduce((n, x) => n + weights[x as keyof typeof weights], 0);
    expect(Math.abs(sum(one) - sum(two))).toBeLessThanOrEqual(60);
  });

  it("weighs files by the previous run's times: the mean of a file's lines, paths made relative; else the baseline", () => {
    expect(SEQUENCER_ENV).toBe(SHARD_DURATIONS_ENV);
    const root = mkdtempSync(join(tmpdir(), 'durations-'));
    const run = join(root, 'run.jsonl');
    writeFileSync(
      run,
      [
        JSON.stringify({ kind: 'run', startedAt: 'x' }),
        JSON.stringify({ kind: 'file', project: 'integration', file: 'test/integration/a.test.ts', seconds: 10 }),
        JSON.stringify({ kind: 'file', project: 'integration', file: 'test/integration/a.test.ts', seconds: 20 }),
        JSON.stringify({
          kind: 'file',
          project: 'integration',
          file: join(root, 'test/integration/b.test.ts'),
          seconds: 5,
        }),
        JSON.stringify({ kind: 'file', project: 'unit', file: 'test/unit/c.test.ts', seconds: 99 }),
        'not json',
      ].join('\n'),
    );
    expect([...recordedDurations(root, run)]).toEqual([
      ['test/integration/a.test.ts', 15],
      ['test/integration/b.test.ts', 5],
    ]);
    // No run file (a clean clone), or one without integration files: the tracked baseline.
    mkdirSync(join(root, 'test', 'support'), { recursive: true });
    writeFileSync(join(root, DURATIONS_BASELINE), JSON.stringify({ 'test/integration/a.test.ts': 7 }));
    expect([...recordedDurations(root, undefined)]).toEqual([['test/integration/a.test.ts', 7]]);
    expect([...recordedDurations(root, join(root, 'missing.jsonl'))]).toEqual([['test/integration/a.test.ts', 7]]);
    rmSync(root, { recursive: true, force: true });
  });

  it("the shards weigh by the kept run with the most integration files (a stopped run's few would unbalance them)", () => {
    const dir = mkdtempSync(join(tmpdir(), 'runs-'));
    const write = (name: string, n: number) => {
      const line = (i: number) => JSON.stringify({ kind: 'file', project: 'integration', file: `f${i}`, seconds: 1 });
      writeFileSync(join(dir, name), Array.from({ length: n }, (_, i) => line(i)).join('\n'));
      return join(dir, name);
    };
    const full = write('1.jsonl', 40);
    const stopped = write('2.jsonl', 14);
    const none = write('3.jsonl', 0);
    expect(previousDurations([full, stopped, none])).toBe(full);
    const next = write('4.jsonl', 40);
    expect(previousDurations([full, stopped, none, next])).toBe(next);
    expect(previousDurations([none])).toBeUndefined();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the tracked baseline names only files that exist, and splits the tier within a tenth of its time', () => {
    const baseline = JSON.parse(readFileSync(join(ROOT, DURATIONS_BASELINE), 'utf8')) as Record<string, number>;
    for (const file of Object.keys(baseline)) expect([file, existsSync(join(ROOT, file))]).toEqual([file, true]);
    const weights = Object.fromEntries(Object.entries(baseline).filter(([f]) => f.startsWith('test/integration/')));
    const [one, two] = split(weights, 2);
    const sum = (xs: string[]) => xs.reduce((n, x) => n + weights[x], 0);
    expect(Math.abs(sum(one) - sum(two))).toBeLessThan((sum(one) + sum(two)) / 10);
  });

  it('is the same in every shard process, and weighs a file without a duration as the median', () => {
    const weights = { x: 100, y: undefined, z: 10, w: 30 };
    expect(split(weights, 2)).toEqual(split({ ...weights }, 2));
    // y weighs 30 (the median of 10, 30, 100): x alone in one shard, the other three in the other.
    expect(split(weights, 2)).toEqual([['x'], ['w', 'y', 'z']]);
    // Nothing known: equal weights, equal counts.
    expect(split({ p: undefined, q: undefined, r: undefined, s: undefined }, 2).map((s) => s.length)).toEqual([2, 2]);
  });
});

describe('timings', () => {
  it('the reporter writes where the runner and the renderer look, one line per file and per run', () => {
    const dir = tmp();
    const file = join(dir, 't.jsonl');
    const saved = process.env[TIMINGS_ENV];
    process.env[TIMINGS_ENV] = file;
    try {
      const reporter = new TimingsReporter({ rootDir: '/repo' });
      reporter.onRunStart();
      const config = { context: { config: { displayName: { name: 'unit' } } } };
      reporter.onTestFileResult(config, {
        testFilePath: '/repo/test/unit/a.test.ts',
        numPassingTests: 3,
        numFailingTests: 1,
        numPendingTests: 1,
        numTodoTests: 0,
        perfStats: { start: 1_000, end: 13_500 },
      });
      reporter.onRunComplete(undefined, {
        numPassedTests: 3,
        numFailedTests: 1,
        numPendingTests: 1,
        numTodoTests: 0,
        numRuntimeErrorTestSuites: 1,
        numFailedTestSuites: 2,
        numTotalTestSuites: 2,
        startTime: 0,
      });
    } finally {
      if (saved === undefined) delete process.env[TIMINGS_ENV];
      else process.env[TIMINGS_ENV] = saved;
    }
    const { records } = parseTimings(readFileSync(file, 'utf8'));
    expect(records).toMatchObject([
      { kind: 'file', project: 'unit', file: 'test/unit/a.test.ts', seconds: 12.5, passed: 3, failed: 1, skipped: 1 },
      { kind: 'jest', projects: ['unit'], passed: 3, failed: 2, skipped: 1, files: 2 },
    ]);
    // Without the variable it writes the renderer's default file.
    delete process.env[TIMINGS_ENV];
    try {
      expect((new TimingsReporter({ rootDir: '/repo' }) as unknown as { file: string }).file).toBe(
        join('/repo', DEFAULT_TIMINGS),
      );
    } finally {
      if (saved !== undefined) process.env[TIMINGS_ENV] = saved;
    }
  });

  it('renders steps, tiers and the largest files, and counts a cut line instead of failing', () => {
    const text = [
      JSON.stringify({
        kind: 'run',
        startedAt: 'T',
        commit: 'abc',
        machine: '2 cores',
        caches: 'empty',
        loadBefore: '1',
      }),
      JSON.stringify({ kind: 'step', name: 'lint', lane: 'local', seconds: 20, status: 'passed' }),
      JSON.stringify({
        kind: 'file',
        project: 'unit',
        file: 'a.test.ts',
        seconds: 5,
        passed: 2,
        failed: 0,
        skipped: 0,
      }),
      JSON.stringify({
        kind: 'file',
        project: 'unit',
        file: 'b.test.ts',
        seconds: 9,
        passed: 1,
        failed: 0,
        skipped: 1,
      }),
      JSON.stringify({ kind: 'jest', projects: ['unit'], seconds: 15, passed: 3, failed: 0, skipped: 1, files: 2 }),
      '{"kind": "file", "proj',
    ].join('\n');
    const { records, badLines } = parseTimings(text);
    expect(badLines).toBe(1);
    const table = renderTimings(records, 1);
    expect(table).toContain('| local | lint | 20 s | passed |');
    expect(table).toContain('| unit | 2 | 4 | 14 s |');
    expect(table).toContain('| b.test.ts | unit | 9 s | 2 |');
    expect(table).not.toContain('| a.test.ts |');
    expect(table.split('\n').at(-1)).toBe('3 passed, 0 failed, 1 skipped');
    expect(totals([...records, { kind: 'step', name: 'x', lane: 'l', seconds: 1, status: 'failed' }]).failed).toBe(1);
  });

  it('`npm run test:timings -- FILE` prints the table; a missing file or a bad option is named', () => {
    const dir = tmp();
    const file = join(dir, 'run.jsonl');
    writeFileSync(
      file,
      `${JSON.stringify({ kind: 'step', name: 'lint', lane: 'local', seconds: 20, status: 'passed' })}\n`,
    );
    const ok = spawnSync('npm', ['run', '--silent', 'test:timings', '--', file], { cwd: ROOT, encoding: 'utf8' });
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('| local | lint | 20 s | passed |');
    const missing = spawnSync('npm', ['run', '--silent', 'test:timings', '--', join(dir, 'none.jsonl')], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(missing.status).not.toBe(0);
    expect(missing.stderr).toContain(`no timings at '${join(dir, 'none.jsonl')}'`);
    const bad = spawnSync('npm', ['run', '--silent', 'test:timings', '--', '--top', 'x'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(bad.stderr).toContain("--top needs a whole number of files above 0, got 'x'");
  });
});

describe('drills:publish', () => {
  const figures = (drill: string, flavour: string, creates: number) => ({
    drill,
    flavour,
    at: '2026-11-28T10:00:00.000Z',
    uptime: '1 → 1',
    creates,
    webhookFailures: 0,
    apiFailures: 0,
    withoutSidecar: 0,
    createP99Ms: 40,
    routeAwayS: null,
    failuresAfterRouteAway: 0,
    newLeaderS: 12.5,
    leaderChanges: 1,
    maxLeadersAtOnce: 1,
    longestRenewalGapS: 2,
    convergeS: 20,
    extra: {},
    failures: [],
  });
  const checkout = (published: Results) => {
    const root = tmp();
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'ha-drills-results.json'), JSON.stringify(published));
    writeFileSync(join(root, 'README.md'), `# x\n\n${README_BEGIN}\nold\n${README_END}\n\nrest\n`);
    return root;
  };

  it('merges the run over the published figures, keeps a drill not run, and rewrites the docs and README', () => {
    const root = checkout({
      conditions: { machine: 'old' },
      drills: {
        '1-crash/upstream': figures('1. process crash (leader)', 'upstream', 100),
        '2-hang/upstream': figures('2. hang (leader)', 'upstream', 300),
      },
    });
    const from = join(root, 'run.json');
    writeFileSync(
      from,
      JSON.stringify({
        conditions: { machine: 'new' },
        drills: { '1-crash/upstream': figures('1. process crash (leader)', 'upstream', 135) },
      }),
    );
    expect(publishDrills(from, root)).toEqual(['1-crash/upstream']);
    const merged = JSON.parse(readFileSync(join(root, 'docs', 'ha-drills-results.json'), 'utf8')) as Results;
    expect(merged.conditions).toEqual({ machine: 'new' });
    expect(Object.keys(merged.drills).sort()).toEqual(['1-crash/upstream', '2-hang/upstream']);
    expect(merged.drills['1-crash/upstream'].creates).toBe(135);
    expect(readFileSync(join(root, 'docs', 'ha-drills.md'), 'utf8')).toContain('npm run drills:publish');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain('0 of 135');
    expect(readme).not.toContain('\nold\n');
    expect(readme).toMatch(/rest\n$/);
  });

  it('`npm run drills:publish -- --from F --root D` runs; a missing or broken results file is named', () => {
    const root = checkout({ conditions: {}, drills: {} });
    const from = join(root, 'run.json');
    writeFileSync(
      from,
      JSON.stringify({ conditions: {}, drills: { '2-hang/runtime': figures('2. hang (leader)', 'runtime', 7) } }),
    );
    const npmRun = (...args: string[]) =>
      spawnSync('npm', ['run', '--silent', 'drills:publish', '--', ...args], { cwd: ROOT, encoding: 'utf8' });
    const ok = npmRun('--from', from, '--root', root);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('1 drill result(s)');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toContain('0 of 7');
    const missing = npmRun('--from', join(root, 'none.json'), '--root', root);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(`no drill figures at ${join(root, 'none.json')}: run the drills first`);
    writeFileSync(from, '{"drills": ');
    expect(npmRun('--from', from, '--root', root).stderr).toContain(`${from} is not JSON`);
    expect(npmRun('--form', from).stderr).toContain("unexpected argument '--form'");
  });

  it('a drill records its figures under .test-output and leaves the tracked docs and README alone', () => {
    const tracked = ['docs/ha-drills-results.json', 'docs/ha-drills.md', 'README.md'].map((f) => join(ROOT, f));
    const before = tracked.map((f) => readFileSync(f, 'utf8'));
    const out = join(tmp(), 'run.json');
    const saved = process.env.KRUISE_HA_DRILL_RESULTS;
    process.env.KRUISE_HA_DRILL_RESULTS = out;
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const report = {
        drill: '9-test',
        flavour: 'runtime',
        faultAt: Date.parse('2026-11-28T10:00:00Z'),
        uptime: '1 → 1',
        load: { sent: 5, webhookFailures: 0, apiFailures: 0, withoutSidecar: 0, p99Ms: 30 },
        routeAwayS: null,
        failuresAfterRouteAway: 0,
        newLeaderS: null,
        leaderChanges: 0,
        maxLeadersAtOnce: 1,
        longestRenewalGapS: null,
        convergeS: 3,
        figures: {},
        failures: [],
        samples: [],
        outcomes: [],
      } as unknown as Parameters<typeof recordDrill>[0];
      const state = { ha: false, nodes: [{ zone: 'zone-a' }], kubernetesVersion: 'v1.36.3' } as unknown as Parameters<
        typeof recordDrill
      >[1];
      recordDrill(report, state, '9. a test drill');
    } finally {
      err.mockRestore();
      if (saved === undefined) delete process.env.KRUISE_HA_DRILL_RESULTS;
      else process.env.KRUISE_HA_DRILL_RESULTS = saved;
    }
    expect(Object.keys((JSON.parse(readFileSync(out, 'utf8')) as Results).drills)).toEqual(['9-test/runtime']);
    expect(tracked.map((f) => readFileSync(f, 'utf8'))).toEqual(before);
    // And the default place is one git ignores.
    expect(
      execFileSync('git', ['check-ignore', relative(ROOT, runResultsPath({}))], { cwd: ROOT, encoding: 'utf8' }).trim(),
    ).toBe('.test-output/ha-drills-results.json');
  });
});
