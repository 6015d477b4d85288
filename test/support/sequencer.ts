/**
 * Jest's own sequencer, with shards balanced by time: `npm test` runs the integration tier as two shards, each a
 * Jest of its own with its own kube-apiserver + etcd (tools/test/run.ts). Jest's default shard splits the files by a
 * hash of their paths, which can put the slowest files together; here each file goes, slowest first, to the shard
 * with the least time so far (longest processing time first), by the durations of Jest's own cache of the last run.
 * A file without a recorded duration weighs the median of those with one (1 when none has), so a fresh machine's
 * shards hold equal numbers of files. Every shard computes the same split: the same files, the same cache, ties
 * broken by path.
 *
 * Jest loads this file with Node's own loader (type stripping): erasable syntax only, nothing of ours imported.
 */
import TestSequencerEntry from '@jest/test-sequencer';
import type { Test } from '@jest/test-result';

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

export default class BalancedSequencer extends TestSequencer {
  shard(tests: Test[], options: ShardOptions): Test[] {
    // time() is the default sequencer's read of its cache (private in its declarations, public at run time).
    const time = (t: Test) => (this as unknown as { time(t: Test): number | undefined }).time(t);
    return balancedShard(tests, (t) => time(t) ?? undefined, options);
  }
}
