import { WorkQueue, type QueueOptions } from './queue.js';

interface Waiting<T> {
  readyAt: number;
  seq: number;
  key: string;
  item: T;
}

/**
 * A work queue with `addAfter`: items wait on the clock, then are added normally (and deduped).
 * An item already waiting keeps the earlier of its two ready times, as in client-go.
 */
export class DelayingQueue<T> extends WorkQueue<T> {
  private readonly waiting = new Map<string, Waiting<T>>();
  private readonly heap = new MinHeap<Waiting<T>>((a, b) => a.readyAt - b.readyAt || a.seq - b.seq);
  private seq = 0;
  private cancelTimer?: () => void;
  private timerAt = Infinity;

  constructor(options: QueueOptions<T>) {
    super(options);
  }

  addAfter(item: T, delayMs: number): void {
    if (this.shuttingDown()) return;
    this.metrics.retry();
    // NaN, negative and non-numeric delays mean "now": a bad delay must not lose the item.
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const key = this.keyOf(item);
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waiting.get(key);
    if (existing && existing.readyAt <= readyAt) return;
    const entry: Waiting<T> = { readyAt, seq: this.seq++, key, item };
    this.waiting.set(key, entry);
    this.heap.push(entry);
    this.armTimer();
  }

  /** Items waiting for their delay to pass. */
  waitingLen(): number {
    return this.waiting.size;
  }

  protected override requestShutdown(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    this.waiting.clear();
    this.heap.clear();
    super.requestShutdown();
  }

  private armTimer(): void {
    const next = this.peekLive();
    if (!next || next.readyAt >= this.timerAt) return;
    this.cancelTimer?.();
    this.timerAt = next.readyAt;
    this.cancelTimer = this.clock.after(next.readyAt - this.clock.now(), () => this.fire());
  }

  private fire(): void {
    this.cancelTimer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (let next = this.peekLive(); next && next.readyAt <= now; next = this.peekLive()) {
      this.heap.pop();
      this.waiting.delete(next.key);
      this.add(next.item);
    }
    this.armTimer();
  }

  /** The earliest entry still current; entries superseded by an earlier addAfter are dropped here. */
  private peekLive(): Waiting<T> | undefined {
    for (let top = this.heap.peek(); top; top = this.heap.peek()) {
      if (this.waiting.get(top.key) === top) return top;
      this.heap.pop();
    }
    return undefined;
  }
}

class MinHeap<E> {
  private items: E[] = [];

  constructor(private readonly less: (a: E, b: E) => number) {}

  peek(): E | undefined {
    return this.items[0];
  }

  clear(): void {
    this.items = [];
  }

  push(e: E): void {
    const a = this.items;
    a.push(e);
    for (let i = a.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (this.less(a[i], a[parent]) >= 0) break;
      [a[i], a[parent]] = [a[parent], a[i]];
      i = parent;
    }
  }

  pop(): E | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      a[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let smallest = i;
        if (l < a.length && this.less(a[l], a[smallest]) < 0) smallest = l;
        if (r < a.length && this.less(a[r], a[smallest]) < 0) smallest = r;
        if (smallest === i) break;
        [a[i], a[smallest]] = [a[smallest], a[i]];
        i = smallest;
      }
    }
    return top;
  }
}
