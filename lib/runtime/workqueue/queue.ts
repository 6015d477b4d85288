import { Registry } from 'prom-client';
import { realClock, type Clock } from '../clock.js';
import { QueueMetrics } from './metrics.js';

export interface QueueOptions<T> {
  /** Value of the `name` label on the workqueue metrics (controller-runtime uses the controller name). */
  name: string;
  /** Identity of an item; two items with the same key are the same work. Default: stableKey. */
  keyOf?: (item: T) => string;
  /** Where the workqueue_* metrics go; a private registry when omitted. */
  registry?: Registry;
  clock?: Clock;
}

export type GetResult<T> = { shutdown: false; item: T } | { shutdown: true };

/**
 * client-go's work queue: a FIFO of keys with three guarantees a controller relies on.
 * - Dedupe: an item added several times before it is picked up is processed once.
 * - Serial per key: an item is never handed to two workers at once. Adding it while it is being
 *   processed marks it dirty, and it is queued again only when the worker calls `done()`.
 * - Shutdown: no new adds are accepted; `get()` still hands out what is queued, then reports
 *   shutdown. `shutDownWithDrain()` also waits for in-flight items to be `done()`.
 */
export class WorkQueue<T> {
  readonly name: string;
  protected readonly clock: Clock;
  protected readonly keyOf: (item: T) => string;
  protected readonly metrics: QueueMetrics;
  private readonly fifo = new Fifo();
  private readonly items = new Map<string, T>();
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private waiters: Array<() => void> = [];
  private drainWaiters: Array<() => void> = [];
  private shutdownRequested = false;
  private draining = false;

  constructor(options: QueueOptions<T>) {
    this.name = options.name;
    this.clock = options.clock ?? realClock;
    this.keyOf = options.keyOf ?? stableKey;
    this.metrics = new QueueMetrics(options.name, options.registry ?? new Registry(), this.clock);
  }

  add(item: T): void {
    if (this.shutdownRequested) return;
    const key = this.keyOf(item);
    if (this.dirty.has(key)) return;
    this.metrics.add(key);
    this.dirty.add(key);
    if (!this.items.has(key)) this.items.set(key, item);
    if (this.processing.has(key)) return;
    this.fifo.push(key);
    this.waiters.shift()?.();
  }

  /** Waits for the next item; `{shutdown: true}` once the queue is shut down and empty. */
  async get(): Promise<GetResult<T>> {
    while (this.fifo.length === 0 && !this.shutdownRequested) {
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    const key = this.fifo.shift();
    if (key === undefined) return { shutdown: true };
    this.metrics.get(key);
    this.processing.add(key);
    this.dirty.delete(key);
    return { shutdown: false, item: this.items.get(key) as T };
  }

  /** Marks an item finished; if it was re-added meanwhile it goes back on the queue now. */
  done(item: T): void {
    const key = this.keyOf(item);
    if (!this.processing.delete(key)) return;
    this.metrics.done(key);
    if (this.dirty.has(key)) {
      this.fifo.push(key);
      this.waiters.shift()?.();
    } else {
      this.items.delete(key);
    }
    if (this.processing.size === 0) {
      if (this.shutdownRequested) this.metrics.close();
      this.releaseDrainWaiters();
    }
  }

  /** Items waiting to be picked up (not counting those being processed). */
  len(): number {
    return this.fifo.length;
  }

  shuttingDown(): boolean {
    return this.shutdownRequested;
  }

  shutDown(): void {
    this.draining = false;
    this.requestShutdown();
    this.releaseDrainWaiters();
  }

  /**
   * Shuts down and resolves once every in-flight item is `done()`. Items still queued are
   * handed out by `get()` as usual; a concurrent `shutDown()` stops the wait early.
   */
  async shutDownWithDrain(): Promise<void> {
    this.draining = true;
    this.requestShutdown();
    while (this.draining && this.processing.size > 0) {
      await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    }
  }

  protected requestShutdown(): void {
    if (this.shutdownRequested) return;
    this.shutdownRequested = true;
    if (this.processing.size === 0) this.metrics.close();
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private releaseDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const wake of waiters) wake();
  }
}

/** A queue of strings with O(1) push and shift. */
class Fifo {
  private entries: string[] = [];
  private head = 0;

  get length(): number {
    return this.entries.length - this.head;
  }

  push(key: string): void {
    this.entries.push(key);
  }

  shift(): string | undefined {
    if (this.head >= this.entries.length) return undefined;
    const key = this.entries[this.head++];
    // Compact once the consumed prefix dominates, keeping memory proportional to the backlog.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return key;
  }
}

/**
 * A key that is equal for equal values: strings as they are, objects as JSON with sorted keys
 * (so `{namespace, name}` and `{name, namespace}` are the same item).
 */
export function stableKey(item: unknown): string {
  if (typeof item === 'string') return item;
  try {
    return (
      JSON.stringify(item, (_k, value: unknown) => {
        if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
        return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      }) ?? String(item)
    );
  } catch {
    // BigInts and cycles cannot be JSON; they still need some key rather than a crash.
    return String(item);
  }
}
