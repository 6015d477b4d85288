/**
 * What a test run costs, step by step and file by file. `npm test` (tools/test/run.ts) writes one JSON line per
 * step, the Jest reporter (test/support/timings-reporter.ts) one per test file and per Jest run, all into the run's
 * file under .test-output/timings/; `npm run test:timings` renders the newest run (or the file given) as the tables
 * docs/development.md keeps.
 *
 *   npm run test:timings                      the newest `npm test` run
 *   npm run test:timings -- FILE [--top N]    a given run's file; N largest files (default 10)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));
/** The file a Jest run appends to; `npm test` sets it to its run's file. test/support/timings-reporter.ts reads it. */
export const TIMINGS_ENV = 'KRUISE_HA_TIMINGS';
/**
 * The previous run's file whose per-file times the integration shards split by (test/support/sequencer.ts, which
 * spells the name itself: Jest loads it without our modules).
 */
export const SHARD_DURATIONS_ENV = 'KRUISE_HA_SHARD_DURATIONS';
/** Where the reporter writes when no run named a file (a tier run alone). */
export const DEFAULT_TIMINGS = join('.test-output', 'timings.jsonl');
/** One file per `npm test` run. */
export const RUNS_DIR = join('.test-output', 'timings');

export interface RunRecord {
  kind: 'run';
  startedAt: string;
  commit: string;
  machine: string;
  caches: string;
  loadBefore: string;
  at?: string;
}
export interface RunEndRecord {
  kind: 'run-end';
  seconds: number;
  loadAfter: string;
  failedSteps: string[];
  at?: string;
}
export interface StepRecord {
  kind: 'step';
  name: string;
  lane: string;
  seconds: number;
  status: 'passed' | 'failed' | 'skipped';
  detail?: string;
  at?: string;
}
export interface FileRecord {
  kind: 'file';
  project: string;
  file: string;
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
  at?: string;
}
export interface JestRecord {
  kind: 'jest';
  projects: string[];
  seconds: number;
  passed: number;
  failed: number;
  skipped: number;
  files: number;
  at?: string;
}
export type TimingRecord = RunRecord | RunEndRecord | StepRecord | FileRecord | JestRecord;

const KINDS = new Set(['run', 'run-end', 'step', 'file', 'jest']);

/** Every well-formed line of a timings file; a line that is not one (a write cut by a kill) is counted, not fatal. */
export function parseTimings(text: string): { records: TimingRecord[]; badLines: number } {
  const records: TimingRecord[] = [];
  let badLines = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as TimingRecord;
      if (r && typeof r === 'object' && KINDS.has(r.kind)) records.push(r);
      else badLines++;
    } catch {
      badLines++;
    }
  }
  return { records, badLines };
}

/**
 * Test counts over every Jest run of a run. A failed step that ran no failing test (a build, the type-check, a Jest
 * whose global setup threw) counts as one failure: the run is not green.
 */
export function totals(records: TimingRecord[]): { passed: number; failed: number; skipped: number } {
  const jest = records.filter((r): r is JestRecord => r.kind === 'jest');
  const failedSteps = records.filter((r) => r.kind === 'step' && r.status === 'failed').length;
  return {
    passed: jest.reduce((n, r) => n + r.passed, 0),
    failed: Math.max(
      jest.reduce((n, r) => n + r.failed, 0),
      failedSteps,
    ),
    skipped: jest.reduce((n, r) => n + r.skipped, 0),
  };
}

const s = (x: number) => `${Math.round(x)} s`;

/** The run's tables in Markdown: its conditions, each step, each tier, and the largest files. */
export function renderTimings(records: TimingRecord[], top = 10): string {
  const run = records.find((r): r is RunRecord => r.kind === 'run');
  const end = records.find((r): r is RunEndRecord => r.kind === 'run-end');
  const steps = records.filter((r): r is StepRecord => r.kind === 'step');
  const files = records.filter((r): r is FileRecord => r.kind === 'file');
  const out: string[] = [];
  if (run) {
    out.push(
      `Run of ${run.startedAt} at ${run.commit}; ${run.machine}; caches ${run.caches}; load ${run.loadBefore}` +
        (end ? ` → ${end.loadAfter}; ${s(end.seconds)} in all` : ' (unfinished)'),
      '',
    );
  }
  if (steps.length > 0) {
    out.push('| lane | step | time | result |', '|---|---|---:|---|');
    for (const st of steps)
      out.push(`| ${st.lane} | ${st.name} | ${s(st.seconds)} | ${st.status}${st.detail ? ` (${st.detail})` : ''} |`);
    out.push('');
  }
  if (files.length > 0) {
    const tiers = new Map<string, { files: number; tests: number; seconds: number }>();
    for (const f of files) {
      const t = tiers.get(f.project) ?? { files: 0, tests: 0, seconds: 0 };
      t.files++;
      t.tests += f.passed + f.failed + f.skipped;
      t.seconds += f.seconds;
      tiers.set(f.project, t);
    }
    out.push('| tier | files | tests | time in its files |', '|---|---:|---:|---:|');
    for (const [name, t] of [...tiers].sort((a, b) => b[1].seconds - a[1].seconds))
      out.push(`| ${name} | ${t.files} | ${t.tests} | ${s(t.seconds)} |`);
    out.push('');
    out.push(`| the ${Math.min(top, files.length)} largest files | tier | time | tests |`, '|---|---|---:|---:|');
    for (const f of [...files].sort((a, b) => b.seconds - a.seconds).slice(0, top))
      out.push(`| ${f.file} | ${f.project} | ${s(f.seconds)} | ${f.passed + f.failed + f.skipped} |`);
    out.push('');
  }
  const t = totals(records);
  out.push(`${t.passed} passed, ${t.failed} failed, ${t.skipped} skipped`);
  return out.join('\n');
}

/** The runs' files under RUNS_DIR, oldest first (none when no `npm test` has written one). */
export function runFiles(root = ROOT): string[] {
  const dir = join(root, RUNS_DIR);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs);
}

/** The newest run's file under RUNS_DIR, or undefined when no `npm test` has written one. */
export function newestRun(root = ROOT): string | undefined {
  return runFiles(root).at(-1);
}

function main(argv: string[]): number {
  let top = 10;
  let file: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--top') {
      top = Number(argv[++i]);
      if (!Number.isInteger(top) || top < 1) {
        process.stderr.write(`test:timings: --top needs a whole number of files above 0, got '${argv[i]}'\n`);
        return 2;
      }
    } else if (argv[i].startsWith('-')) {
      process.stderr.write(`test:timings: unknown option '${argv[i]}' (use: [FILE] [--top N])\n`);
      return 2;
    } else file = argv[i];
  }
  file ??= newestRun() ?? (existsSync(join(ROOT, DEFAULT_TIMINGS)) ? join(ROOT, DEFAULT_TIMINGS) : undefined);
  if (!file || !existsSync(file)) {
    process.stderr.write(
      `test:timings: no timings ${file ? `at '${file}'` : `under ${RUNS_DIR}/ or at ${DEFAULT_TIMINGS}`}: run npm test (or a tier) first, or name a run's file\n`,
    );
    return 1;
  }
  const { records, badLines } = parseTimings(readFileSync(file, 'utf8'));
  process.stdout.write(`${file}\n\n${renderTimings(records, top)}\n`);
  if (badLines > 0) process.stderr.write(`test:timings: ${badLines} line(s) of ${file} were not timing records\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url))
  process.exit(main(process.argv.slice(2)));
