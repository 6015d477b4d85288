import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../lib/runtime/clock.js';
import { Logger } from '../../../lib/runtime/log.js';
import { MemoryReducer } from '../../../lib/runtime/memory-reducer.js';
import { histogramSum, valueOf } from './metric-values.js';

const MiB = 1024 * 1024;

/** A process whose CPU time and heap size the test sets; `gc` shrinks the heap to `afterGc`. */
function reducer(opts: { gc?: boolean; gcCpuMs?: number } = {}) {
  const clock = new FakeClock();
  const registry = new Registry();
  const logs: string[] = [];
  const proc = { cpuMicros: 0, heap: 40 * MiB, afterGc: 20 * MiB, gcs: 0 };
  const r = new MemoryReducer({
    logger: new Logger({}, 'debug', { write: (l) => logs.push(l) }),
    registry,
    clock,
    intervalMs: 5_000,
    idleCpuShare: 0.01, // 50 ms of CPU per interval
    minGrowthBytes: 4 * MiB,
    // null: not exposed, whatever this process has (another test file may have exposed gc in it).
    gc:
      opts.gc === false
        ? null
        : (o) => {
            expect(o).toEqual({ type: 'major', execution: 'sync', flavor: 'last-resort' });
            proc.gcs++;
            proc.heap = proc.afterGc;
            proc.cpuMicros += (opts.gcCpuMs ?? 0) * 1000;
            clock.jump(45); // the pause
          },
    cpuMicros: () => proc.cpuMicros,
    heapBytes: () => proc.heap,
  });
  /** One interval in which the process used `cpuMs` of CPU (plus slack: a pause pushes the next sample back). */
  const interval = async (cpuMs: number) => {
    proc.cpuMicros += cpuMs * 1000;
    await clock.advance(5_000 + 45);
  };
  return { r, proc, interval, registry, logs };
}

describe('MemoryReducer', () => {
  it('reduces once the process goes idle after start-up, and not again while nothing grows', async () => {
    const { r, proc, interval, registry } = reducer();
    r.start();
    await interval(900); // start-up: busy
    expect(proc.gcs).toBe(0);
    await interval(10); // idle
    expect(proc.gcs).toBe(1);
    for (let i = 0; i < 10; i++) await interval(10);
    expect(proc.gcs).toBe(1);
    expect(await valueOf(registry, 'kruise_ha_memory_reductions_total', {})).toBe(1);
    expect(await histogramSum(registry, 'kruise_ha_memory_reduction_pause_seconds', {})).toBeCloseTo(0.045);
  });

  it('never pauses a busy process, however much its heap grew; reduces after the burst', async () => {
    const { r, proc, interval } = reducer();
    r.start();
    await interval(10);
    expect(proc.gcs).toBe(1);
    proc.heap = 60 * MiB;
    for (let i = 0; i < 5; i++) await interval(200); // an admission burst: 4 % of a core
    await interval(50); // exactly the threshold still counts as busy
    expect(proc.gcs).toBe(1);
    await interval(49);
    expect(proc.gcs).toBe(2);
  });

  it('skips growth below the threshold: a pause is not worth a few pages', async () => {
    const { r, proc, interval } = reducer();
    r.start();
    await interval(0);
    proc.heap = 20 * MiB + 4 * MiB - 1;
    await interval(0);
    expect(proc.gcs).toBe(1);
    proc.heap += 1;
    await interval(0);
    expect(proc.gcs).toBe(2);
  });

  it('does not count its own collection as work in the next interval', async () => {
    const { r, proc, interval } = reducer({ gcCpuMs: 200 }); // the collection costs 200 ms of CPU
    r.start();
    await interval(0);
    proc.heap = 40 * MiB;
    await interval(0);
    expect(proc.gcs).toBe(2);
  });

  it('stops sampling when stopped (the drain), and says once when gc is not exposed', async () => {
    const { r, proc, interval } = reducer();
    r.start();
    r.stop();
    await interval(0);
    expect(proc.gcs).toBe(0);
    const off = reducer({ gc: false });
    off.r.start();
    await off.interval(0);
    expect(off.proc.gcs).toBe(0);
    expect(off.logs.filter((l) => l.includes('--expose-gc'))).toHaveLength(1);
  });
});
