/**
 * `npm test`: the whole suite CI runs, on both cores. Phases run one after another; the lanes of a phase run side by
 * side, the steps of a lane one after another. The two middle lanes share nothing: one judges against a real
 * kube-apiserver + etcd (whose files run one at a time: they share that control plane), the other needs no server
 * (type-check, lint, the unit, linters, package and languages tiers). The e2e tier comes last, alone: it needs root
 * and its drills measure a loaded machine's behaviour, not each other.
 *
 * Every step's time, and (through test/support/timings-reporter.ts) every test file's, goes to the run's file under
 * .test-output/timings/; `npm run test:timings` renders it. A failing step does not stop its phase's other lane, so
 * one run names every failure; it does stop the phases after it. The last line is `N passed, N failed, N skipped`
 * over every Jest run, and the exit code is 1 when any step failed (a step killed by a signal fails too), 130 when the
 * runner itself was interrupted (its running steps get the signal; no step starts after it).
 *
 *   npm test                     everything
 *   npm test -- ARGS             ARGS to every Jest step (e.g. a file path: the tier that has it runs it)
 *   npm run test:fast            the type-check, the lint and the unit tier, side by side (FAST_PLAN)
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, homedir, loadavg, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  parseTimings,
  ROOT,
  runFiles,
  RUNS_DIR,
  SHARD_DURATIONS_ENV,
  TIMINGS_ENV,
  totals,
  type RunEndRecord,
  type RunRecord,
  type StepRecord,
} from './timings.js';

export interface Step {
  readonly name: string;
  /** Run by /bin/sh in the repository's root. */
  readonly command: string;
  /** A Jest run: it gets `npm test`'s arguments. */
  readonly jest?: boolean;
  /** Only in a run of the whole suite (no arguments). */
  readonly whole?: boolean;
  /** A Jest run split into this many processes (`--shard=i/N`, balanced by test/support/sequencer.ts). */
  readonly shards?: number;
  /** Set to each shard's index (0-based) in its process's environment: what the shard owns alone (its cluster). */
  readonly shardEnv?: string;
}
export interface Lane {
  readonly name: string;
  readonly steps: readonly Step[];
  /**
   * Starts when the first of its phase's other lanes ends, not with them: work that fits beside either lane,
   * whichever the run's machine and changes make the shorter (on a cold cache, or with the jsii packages rebuilt,
   * the local lane is the longer one; warm, the api-server lane).
   */
  readonly whenALaneEnds?: boolean;
}
export type Phase = readonly Lane[];

/**
 * Jest for npm test's steps. --forceExit: a file that fails half-way can leave a handle open (an attacker process's
 * socket, a server its afterAll never reached), and Jest then waits for it after its summary, forever: one shard of a
 * run here sat 380 s past its summary until it was killed. Jest still runs the global teardown first and still names
 * the leak ("Force exiting Jest").
 */
const JEST = 'node --experimental-vm-modules node_modules/jest/bin/jest.js --forceExit';

/**
 * Integration files that judge a process against a deadline while they load it themselves (hostile clients, a flood,
 * API-server outages): they need the machine to themselves, as before the lanes. Beside the other lanes (load 5 on
 * the 2 cores) a review during webhook-dos.test.ts's all-at-once attack missed the API server's 10 s timeout; at load
 * 10-12 manager-faults.test.ts's flood queued nothing and manager-apiserver-restart.test.ts's readiness self-check
 * missed its 500 ms. They run in a phase of their own, after the lanes and before the e2e tier.
 */
/**
 * The kept run (oldest first) that recorded the most integration files, the newest on a tie: a run stopped early
 * records only its first files, and weighing the rest as the median unbalances the shards. Undefined when none has
 * one (then the tracked baseline).
 */
export function previousDurations(runs: readonly string[]): string | undefined {
  let best: string | undefined;
  let most = 0;
  for (const file of runs) {
    const n = integrationFiles(file);
    if (n > 0 && n >= most) [best, most] = [file, n];
  }
  return best;
}

/** How many integration files a run's timings file records. */
function integrationFiles(file: string): number {
  if (!existsSync(file)) return 0;
  const { records } = parseTimings(readFileSync(file, 'utf8'));
  return records.filter((r) => r.kind === 'file' && r.project === 'integration').length;
}

/** How many clusters the e2e tier runs on side by side (see the e2e step in PLAN). */
export const E2E_SHARDS = 1;

export const ALONE = ['webhook-dos', 'manager-faults', 'manager-apiserver-restart'] as const;
export const aloneFiles = `/test/integration/(${ALONE.join('|')})\\.test\\.ts$`;

/** What `npm test` runs. */
export const PLAN: readonly Phase[] = [
  [{ name: 'setup', steps: [{ name: 'prebuild', command: 'bash test/setup/prebuild.sh' }] }],
  [
    {
      name: 'api-server',
      steps: [
        { name: 'envtest:binaries', command: 'bash test/envtest/binaries/build.sh >/dev/null' },
        { name: 'registry', command: 'bash test/setup/ensure-docker-registry.sh' },
        // Two shards, each with its own kube-apiserver + etcd (the tier's global setup): its files wait on leases,
        // restarts and webhooks more than they compute, so the second shard mostly fills those waits.
        {
          name: 'integration',
          command: `${JEST} --selectProjects integration --runInBand --testPathIgnorePatterns '${aloneFiles}'`,
          jest: true,
          shards: 2,
        },
      ],
    },
    {
      name: 'local',
      steps: [
        { name: 'typecheck', command: 'tsc -p tsconfig.dev.json' },
        { name: 'lint', command: 'npm run --silent lint' },
        {
          name: 'unit, linters, package, languages',
          command: `${JEST} --selectProjects unit linters package languages --runInBand`,
          jest: true,
        },
      ],
    },
    {
      name: 'releases',
      whenALaneEnds: true,
      steps: [
        // The real-binary test for every other pinned upstream release (docs/upstream-releases.md), with its own
        // kube-apiserver + etcd; skipped when npm test was given arguments (a file, a pattern): they choose what runs.
        { name: 'upstream releases', command: 'bash tools/upstream/test-releases.sh', whole: true },
      ],
    },
  ],
  [
    {
      name: 'alone',
      steps: [
        {
          name: 'integration, the files that need the machine alone',
          // Every other file ignored (a negative lookahead), so npm test's arguments still narrow what runs.
          command: `${JEST} --selectProjects integration --runInBand --testPathIgnorePatterns '^(?!.*${aloneFiles})'`,
          jest: true,
        },
      ],
    },
  ],
  [
    {
      name: 'cluster',
      steps: [
        { name: 'node packages', command: 'bash test/setup/ensure-node-packages.sh' },
        { name: 'cluster:binaries', command: 'bash test/envtest/binaries/build.sh cluster >/dev/null' },
        // One shard, on the cluster of slot 0. Two shards, each with a cluster of its own (E2E_SHARDS = 2, slots 0
        // and 1), took the tier from about 2,400 s to 1,480 s, but the two clusters and their drills side by side
        // load the 2 cores to 13-21, and at that load upstream's manager failed webhook calls while its pods were
        // drained (the upstream drain drill: 1 and 4 failures in a full run, 2026-11-29). Until that drill holds
        // there, the tier runs on one cluster.
        {
          name: 'e2e',
          command: `${JEST} --selectProjects e2e --runInBand`,
          jest: true,
          shards: E2E_SHARDS,
          shardEnv: 'KRUISE_HA_CLUSTER_SLOT',
        },
      ],
    },
  ],
];

/** `npm run test:fast`: what a contributor runs before pushing (the unit tier beside the type-check and the lint). */
export const FAST_PLAN: readonly Phase[] = [
  [
    {
      name: 'local',
      steps: [
        { name: 'typecheck', command: 'tsc -p tsconfig.dev.json' },
        { name: 'lint', command: 'npm run --silent lint' },
      ],
    },
    { name: 'unit', steps: [{ name: 'unit', command: `${JEST} --selectProjects unit`, jest: true }] },
  ],
];

/** Runs kept under RUNS_DIR. */
const KEEP_RUNS = 10;

class Run {
  readonly file: string;
  /** The previous run's timings file the shards weigh their files by, if one has them. */
  private readonly durations: string | undefined;
  private readonly children = new Set<ChildProcess>();
  /** The signal that stopped the run, if one did. */
  interrupted: NodeJS.Signals | undefined;
  readonly failed: string[] = [];

  constructor(
    private readonly root: string,
    private readonly jestArgs: readonly string[],
    private readonly parallel: boolean,
  ) {
    const dir = join(root, RUNS_DIR);
    mkdirSync(dir, { recursive: true });
    const old = runFiles(root);
    for (const f of old.slice(0, Math.max(0, old.length - (KEEP_RUNS - 1)))) rmSync(f, { force: true });
    // The integration shards split by the last run's file times (test/support/sequencer.ts), chosen once here so that
    // every shard reads the same file (this run's own, which they write to, would differ between them).
    this.durations = previousDurations(runFiles(root));
    this.file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}.jsonl`);
    // Each step runs in a process group of its own, which gets the signal whole: a shell that waits for its command
    // does not pass a signal on, so Jest went on running when only the runner was signalled (CI's cancel, a kill).
    // No step starts after it.
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
      process.on(signal, () => {
        this.interrupted = signal;
        for (const c of this.children) {
          try {
            process.kill(-c.pid!, signal);
          } catch {
            /* the group is gone */
          }
        }
      });
  }

  record(r: RunRecord | RunEndRecord | StepRecord): void {
    appendFileSync(this.file, `${JSON.stringify({ ...r, at: new Date().toISOString() })}\n`);
  }

  async phase(lanes: Phase): Promise<boolean> {
    if (!this.parallel || lanes.length === 1) {
      let ok = true;
      for (const lane of lanes) ok = (await this.lane(lane, false)) && ok;
      return ok;
    }
    const first = lanes.filter((lane) => !lane.whenALaneEnds).map((lane) => this.lane(lane, true));
    const oneEnded = Promise.race(first);
    const later = lanes
      .filter((lane) => lane.whenALaneEnds)
      .map(async (lane) => (await oneEnded, this.lane(lane, true)));
    const results = await Promise.all([...first, ...later]);
    return results.every(Boolean);
  }

  /** `besideOthers`: other lanes run at the same time (their output is prefixed). */
  private async lane(lane: Lane, besideOthers: boolean): Promise<boolean> {
    let ok = true;
    for (const step of lane.steps) {
      const shards = step.shards ?? 1;
      const names =
        shards > 1 ? Array.from({ length: shards }, (_, i) => `${step.name} ${i + 1}/${shards}`) : [step.name];
      if (!ok || this.interrupted || (step.whole && this.jestArgs.length > 0)) {
        for (const name of names) this.record({ kind: 'step', name, lane: lane.name, seconds: 0, status: 'skipped' });
        continue;
      }
      const args =
        step.jest && this.jestArgs.length > 0 ? ` --passWithNoTests ${this.jestArgs.map(shellQuote).join(' ')}` : '';
      // Shards side by side (one after another when the lanes are), each a process of its own.
      const sideBySide = shards > 1 && this.parallel;
      const prefixed = besideOthers || sideBySide;
      const run = (name: string, i: number) => {
        const shard = shards > 1 ? ` --shard=${i + 1}/${shards}` : '';
        const tag = shards > 1 ? `${lane.name} ${i + 1}/${shards}` : lane.name;
        const env = step.shardEnv ? { [step.shardEnv]: String(i) } : {};
        return this.step(lane.name, name, `${step.command}${shard}${args}`, prefixed ? `[${tag}] ` : undefined, env);
      };
      const results = sideBySide
        ? await Promise.all(names.map(run))
        : await names.reduce<Promise<boolean[]>>(
            async (acc, name, i) => [...(await acc), await run(name, i)],
            Promise.resolve([]),
          );
      ok = results.every(Boolean);
    }
    return ok;
  }

  private async step(
    lane: string,
    name: string,
    command: string,
    prefix: string | undefined,
    env: NodeJS.ProcessEnv,
  ): Promise<boolean> {
    const started = Date.now();
    const outcome = await this.exec(command, prefix, env);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    const ok = outcome === 'passed';
    if (!ok) this.failed.push(`${lane}: ${name} (${outcome})`);
    this.record({
      kind: 'step',
      name,
      lane,
      seconds,
      status: ok ? 'passed' : 'failed',
      ...(ok ? {} : { detail: outcome }),
    });
    process.stderr.write(`${prefix ?? ''}test: ${name} ${ok ? 'passed' : outcome} in ${seconds} s\n`);
    return ok;
  }

  /** 'passed', or why not: 'exit N' or 'killed by SIGX'. */
  private exec(command: string, prefix: string | undefined, env: NodeJS.ProcessEnv): Promise<string> {
    return new Promise((done) => {
      const child = spawn('/bin/sh', ['-c', command], {
        cwd: this.root,
        env: {
          ...process.env,
          [TIMINGS_ENV]: this.file,
          ...(this.durations ? { [SHARD_DURATIONS_ENV]: this.durations } : {}),
          ...env,
        },
        stdio: prefix ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'],
        detached: true,
      });
      this.children.add(child);
      if (prefix) {
        prefixLines(child.stdout!, process.stdout, prefix);
        prefixLines(child.stderr!, process.stderr, prefix);
      }
      child.on('error', (e) => {
        this.children.delete(child);
        done(`not started: ${e.message}`);
      });
      child.on('close', (code, signal) => {
        this.children.delete(child);
        done(signal ? `killed by ${signal}` : code === 0 ? 'passed' : `exit ${code}`);
      });
    });
  }
}

function prefixLines(from: NodeJS.ReadableStream, to: NodeJS.WritableStream, prefix: string): void {
  let rest = '';
  from.setEncoding('utf8');
  from.on('data', (chunk: string) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop() ?? '';
    if (lines.length > 0) to.write(lines.map((l) => prefix + l).join('\n') + '\n');
  });
  from.on('end', () => {
    if (rest) to.write(`${prefix}${rest}\n`);
  });
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function load(): string {
  return loadavg()
    .map((x) => x.toFixed(1))
    .join('/');
}

function commit(root: string): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${sha} + uncommitted changes` : sha;
  } catch {
    return 'not a git checkout';
  }
}

/** Whether the one-time builds' cache is there: a run on an empty one is a cold run. */
function caches(): string {
  const root =
    process.env.ENVTEST_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kruise-ts-envtest');
  return existsSync(root) && readdirSync(root).length > 0 ? `present (${root})` : `empty (${root})`;
}

export async function runPlan(plan: readonly Phase[], jestArgs: readonly string[], root = ROOT): Promise<number> {
  // KRUISE_HA_TEST_LANES=1 runs a phase's lanes one after another (a person reading one log at a time).
  const run = new Run(root, jestArgs, process.env.KRUISE_HA_TEST_LANES !== '1');
  const started = Date.now();
  run.record({
    kind: 'run',
    startedAt: new Date(started).toISOString(),
    commit: commit(root),
    machine: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    caches: caches(),
    loadBefore: load(),
  });
  for (const phase of plan) {
    const ok = await run.phase(phase);
    if (!ok) break;
  }
  run.record({
    kind: 'run-end',
    seconds: Math.round((Date.now() - started) / 1000),
    loadAfter: load(),
    failedSteps: run.failed,
  });
  const t = totals(parseTimings(readFileSync(run.file, 'utf8')).records);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  process.stderr.write(`\ntest: ${minutes} min; timings in ${run.file} (npm run test:timings)\n`);
  for (const f of run.failed) process.stderr.write(`test: FAILED ${f}\n`);
  process.stdout.write(`${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped\n`);
  return run.interrupted ? 130 : run.failed.length > 0 ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exitCode =
    process.argv[2] === '--fast'
      ? await runPlan(FAST_PLAN, process.argv.slice(3))
      : await runPlan(PLAN, process.argv.slice(2));
