/**
 * Jest's own sequencer, with shards balanced by time: `npm test` runs the integration tier as two shards, each a
 * Jest of its own with its own kube-apiserver + etcd, and the e2e tier as two, each with a cluster of its own
 * (tools/test/run.ts). Jest's default shard splits the files by a
 * hash of their paths, which can put the slowest files together; here each file goes, slowest first, to the shard
 * with the least time so far (longest processing time first).
 *
 * A file's time is, first, what the previous `npm test` recorded for it (the run's timings file the runner names in
 * KRUISE_HA_SHARD_DURATIONS); else what test/support/shard-durations.json records (a clean clone's, taken from
 * a warm run); else Jest's own cache. Jest's cache alone balanced badly: the two shards each write back the cache they
 * read at start, so the files of the shard that finished first kept the times of an old run (seen: 238 s and 577 s).
 * A file without any weighs the median of those with one (1 when none has), so a fresh machine's shards hold equal
 * numbers of files. Every shard computes the same split: the same files, the same times, ties broken by path.
 *
 * Jest loads this file with Node's own loader (type stripping): erasable syntax only, nothing of ours imported.
 */
import TestSequencerEntry from '@jest/test-sequencer';
import type { Test } from '@jest/test-result';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';

// The package's ESM entry exports the class as its default; TypeScript reads its CommonJS declarations, whose default
// import is the module object.
const TestSequencer = TestSequencerEntry as unknown as typeof TestSequencerEntry.default;

export interface ShardOptions {
  shardIndex: number;
  shardCount: number;
}

/** The files of shard `shardIndex` (1-based) of `shardCount`, given each file's weight. */
export function balancedShard<T extends { path: string }>(
  tests: readonly T[],
  weight: (t: T) => number | undefined,
  { shardIndex, shardCount }: ShardOptions,
): T[] {
  const known = tests
    .map(weight)
    .filter((w): w is number => w !== undefined)
    .sort((a, b) => a - b);
  const fallback = known.length > 0 ? known[Math.floor(known.length / 2)] : 1;
  const weighed = tests
    .map((t) => ({ t, w: weight(t) ?? fallback }))
    .sort((a, b) => b.w - a.w || (a.t.path < b.t.path ? -1 : a.t.path > b.t.path ? 1 : 0));
  const load = Array.from({ length: shardCount }, () => 0);
  const mine: T[] = [];
  for (const { t, w } of weighed) {
    let least = 0;
    for (let i = 1; i < shardCount; i++) if (load[i] < load[least]) least = i;
    load[least] += w;
    if (least === shardIndex - 1) mine.push(t);
  }
  return mine;
}

/** tools/test/timings.ts's SHARD_DURATIONS_ENV (a unit test holds the two to the same name). */
export const SHARD_DURATIONS_ENV = 'KRUISE_HA_SHARD_DURATIONS';
/** The durations a clean clone splits by, relative to the repository root. */
export const DURATIONS_BASELINE = join('test', 'support', 'shard-durations.json');

/**
 * Seconds per test file (path relative to `root`), from a run's timings file (JSON lines; the mean of a file's
 * `kind: file` lines of `project`), or from the baseline's `{ "<path>": seconds }`. Empty when neither can be read.
 */
export function recordedDurations(
  root: string,
  runFile: string | undefined,
  project = 'integration',
): Map<string, number> {
  const found = new Map<string, number[]>();
  if (runFile && existsSync(runFile)) {
    for (const line of readFileSync(runFile, 'utf8').split('\n')) {
      let r: { kind?: string; project?: string; file?: string; seconds?: number };
      try {
        r = JSON.parse(line) as typeof r;
      } catch {
        continue;
      }
      if (r.kind !== 'file' || r.project !== project || typeof r.file !== 'string' || typeof r.seconds !== 'number')
        continue;
      const key = isAbsolute(r.file) ? relative(root, r.file) : r.file;
      found.set(key, [...(found.get(key) ?? []), r.seconds]);
    }
  }
  if (found.size === 0 && existsSync(join(root, DURATIONS_BASELINE))) {
    const baseline = JSON.parse(readFileSync(join(root, DURATIONS_BASELINE), 'utf8')) as Record<string, unknown>;
    for (const [file, seconds] of Object.entries(baseline)) if (typeof seconds === 'number') found.set(file, [seconds]);
  }
  return new Map([...found].map(([file, s]) => [file, s.reduce((a, b) => a + b, 0) / s.length]));
}

export default class BalancedSequencer extends TestSequencer {
  shard(tests: Test[], options: ShardOptions): Test[] {
    const root = tests[0]?.context.config.rootDir ?? process.cwd();
    const project = tests[0]?.context.config.displayName?.name ?? 'integration';
    const recorded = recordedDurations(root, process.env[SHARD_DURATIONS_ENV], project);
    // time() is the default sequencer's read of its cache (private in its declarations, public at run time), in ms.
    const cached = (t: Test) => (this as unknown as { time(t: Test): number | undefined }).time(t);
    const weight = (t: Test) => {
      const seconds = recorded.get(relative(root, t.path));
      return seconds !== undefined ? seconds * 1000 : cached(t);
    };
    return balancedShard(tests, weight, options);
  }
}
