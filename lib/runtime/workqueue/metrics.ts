import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../clock.js';

// client-go's buckets: 10ns to 1000s, one per decade.
const DURATION_BUCKETS = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

interface InFlight {
  unfinishedSeconds(): number;
  longestSeconds(): number;
}

/** The workqueue metric families of one registry, shared by every queue registered in it. */
class WorkqueueFamilies {
  readonly depth: Gauge<'name'>;
  readonly adds: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly retries: Counter<'name'>;
  readonly inFlight = new Map<string, Set<InFlight>>();

  constructor(registry: Registry) {
    const registers = [registry];
    const labelNames = ['name'] as const;
    this.depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames, registers });
    this.adds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames,
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames,
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.retries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames,
      registers,
    });
    // Computed at scrape time, so they need no ticker and are exact whenever they are read.
    const inFlight = this.inFlight;
    new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help:
        "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
        'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [name, queues] of inFlight) {
          this.set(
            { name },
            [...queues].reduce((sum, q) => sum + q.unfinishedSeconds(), 0),
          );
        }
      },
    });
    new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [name, queues] of inFlight) {
          this.set({ name }, Math.max(0, ...[...queues].map((q) => q.longestSeconds())));
        }
      },
    });
  }
}

const familiesByRegistry = new WeakMap<Registry, WorkqueueFamilies>();

function familiesFor(registry: Registry): WorkqueueFamilies {
  let families = familiesByRegistry.get(registry);
  if (!families) {
    families = new WorkqueueFamilies(registry);
    familiesByRegistry.set(registry, families);
  }
  return families;
}

/** What one queue reports, keyed by item key (client-go's defaultQueueMetrics). */
export class QueueMetrics implements InFlight {
  private readonly families: WorkqueueFamilies;
  private readonly addedAt = new Map<string, number>();
  private readonly startedAt = new Map<string, number>();
  private readonly labels: { name: string };

  constructor(
    private readonly name: string,
    registry: Registry,
    private readonly clock: Clock,
  ) {
    this.families = familiesFor(registry);
    this.labels = { name };
    this.families.depth.set(this.labels, 0);
    let queues = this.families.inFlight.get(name);
    if (!queues) this.families.inFlight.set(name, (queues = new Set()));
    queues.add(this);
  }

  add(key: string): void {
    this.families.adds.inc(this.labels);
    this.families.depth.inc(this.labels);
    if (!this.addedAt.has(key)) this.addedAt.set(key, this.clock.now());
  }

  get(key: string): void {
    const now = this.clock.now();
    this.families.depth.dec(this.labels);
    this.startedAt.set(key, now);
    const added = this.addedAt.get(key);
    if (added !== undefined) {
      this.families.queueDuration.observe(this.labels, (now - added) / 1000);
      this.addedAt.delete(key);
    }
  }

  done(key: string): void {
    const started = this.startedAt.get(key);
    if (started === undefined) return;
    this.families.workDuration.observe(this.labels, (this.clock.now() - started) / 1000);
    this.startedAt.delete(key);
  }

  retry(): void {
    this.families.retries.inc(this.labels);
  }

  unfinishedSeconds(): number {
    const now = this.clock.now();
    let total = 0;
    for (const started of this.startedAt.values()) total += now - started;
    return total / 1000;
  }

  longestSeconds(): number {
    const now = this.clock.now();
    let longest = 0;
    for (const started of this.startedAt.values()) longest = Math.max(longest, now - started);
    return longest / 1000;
  }

  /** Stops reporting in-flight work for this queue (after shutdown). */
  close(): void {
    const queues = this.families.inFlight.get(this.name);
    queues?.delete(this);
    if (queues?.size === 0) this.families.inFlight.delete(this.name);
  }
}
