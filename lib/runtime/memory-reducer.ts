/**
 * Gives memory back once the process goes quiet after work (start-up, an admission burst, a rollout).
 *
 * V8 keeps the young generation at the size the busiest moment needed (16 MB here) and pools freed pages; its own
 * memory reducer does not shrink them in Node. Measured on the bundled runtime (bench compare): idle RSS 110–120 MB,
 * and after 10 s of 1,000 admissions/s RSS stayed at its peak (142 MB) indefinitely. One memory-reducing full GC
 * (`gc({flavor: 'last-resort'})`: compacts, shrinks new space, releases pooled pages) brings the idle replica to
 * 98–105 MB and the post-load one back to within a few MB of idle. It pauses the loop 40–60 ms, so it only runs when
 * the last interval was idle (CPU under `idleCpuShare`) and the heap grew by `minGrowthBytes` since the last one.
 * A plain major GC does not do it (heap shrinks, RSS stays: the pages go to V8's pool).
 *
 * Needs `gc` exposed (`--expose-gc`, set by the runtime image's entrypoint); without it the reducer logs once and
 * does nothing.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { getHeapStatistics } from 'node:v8';
import { realClock, type Clock } from './clock.js';
import type { Logger } from './log.js';

type ExposedGc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

export interface MemoryReducerOptions {
  logger: Logger;
  registry: Registry;
  clock?: Clock;
  /** How often idleness and heap growth are sampled. @default 5000 */
  intervalMs?: number;
  /**
   * An interval whose CPU time is below this share of it counts as idle. 2 %: a replica that has just served a burst
   * keeps using 1-1.9 % of a core for a while (its Lease renewals, watches, controllers settling the burst's status
   * writes; bench compare, runs of 2026-11-26), so at 1 % the reduction ran within 15 s of the load in one run and
   * not in another. A replica at 2 % serves ~10 reviews/s, where a 40-60 ms pause after a 4 MiB heap growth is rare.
   * @default 0.02
   */
  idleCpuShare?: number;
  /** Heap growth (V8 total heap size) since the last reduction that makes one worth its pause. @default 4 MiB */
  minGrowthBytes?: number;
  /** Seams for tests; default the process's own. */
  gc?: ExposedGc | null;
  cpuMicros?: () => number;
  heapBytes?: () => number;
}

export class MemoryReducer {
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly idleCpuShare: number;
  private readonly minGrowthBytes: number;
  private readonly gc?: ExposedGc;
  private readonly cpuMicros: () => number;
  private readonly heapBytes: () => number;
  private readonly reductions: Counter;
  private readonly pause: Histogram;
  private cancel?: () => void;
  private lastCpu = 0;
  /** Heap size after the last reduction; none yet: the first idle interval after start-up reduces. */
  private baseline = 0;

  constructor(private readonly o: MemoryReducerOptions) {
    this.clock = o.clock ?? realClock;
    this.intervalMs = o.intervalMs ?? 5_000;
    this.idleCpuShare = o.idleCpuShare ?? 0.02;
    this.minGrowthBytes = o.minGrowthBytes ?? 4 * 1024 * 1024;
    this.gc = o.gc === null ? undefined : (o.gc ?? (globalThis as { gc?: ExposedGc }).gc);
    this.cpuMicros = o.cpuMicros ?? (() => cpuMicros(process.cpuUsage()));
    this.heapBytes = o.heapBytes ?? (() => getHeapStatistics().total_heap_size);
    this.reductions = new Counter({
      name: 'kruise_ha_memory_reductions_total',
      help: 'Memory-reducing garbage collections run after the process went idle.',
      registers: [o.registry],
    });
    this.pause = new Histogram({
      name: 'kruise_ha_memory_reduction_pause_seconds',
      help: 'How long each memory-reducing garbage collection held the event loop.',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5],
      registers: [o.registry],
    });
  }

  start(): void {
    if (this.cancel) return;
    if (!this.gc) {
      this.o.logger.info('memory reducer off: node was started without --expose-gc');
      return;
    }
    this.lastCpu = this.cpuMicros();
    this.schedule();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  private schedule(): void {
    this.cancel = this.clock.after(this.intervalMs, () => {
      this.sample();
      if (this.cancel) this.schedule();
    });
  }

  private sample(): void {
    const cpu = this.cpuMicros();
    const busyMs = (cpu - this.lastCpu) / 1000;
    this.lastCpu = cpu;
    const before = this.heapBytes();
    if (busyMs >= this.intervalMs * this.idleCpuShare || before < this.baseline + this.minGrowthBytes) return;
    const startedAt = this.clock.now();
    this.gc!({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const pauseMs = this.clock.now() - startedAt;
    this.baseline = this.heapBytes();
    // The collection's own CPU must not make the next interval look busy.
    this.lastCpu = this.cpuMicros();
    this.reductions.inc();
    this.pause.observe(pauseMs / 1000);
    this.o.logger.debug('memory reduced', { heapBytesBefore: before, heapBytesAfter: this.baseline, pauseMs });
  }
}

const cpuMicros = (u: NodeJS.CpuUsage) => u.user + u.system;
