/**
 * Bounded concurrency for the webhook server, so a flood degrades latency, not memory:
 * - {@link ConnectionGate}: at most `maxConnections` sockets get TLS and HTTP state (the costly
 *   part: tens of KiB each, native buffers included); more wait, as bare sockets, in a FIFO queue
 *   of bounded length and wait, the way a kernel backlog would hold them;
 * - {@link ByteBudget}: request bodies are read only while their declared size fits a shared
 *   budget, so the bodies (and the objects parsed from them) in memory at once stay bounded.
 */
import type { Socket } from 'node:net';
import type { Clock } from '../clock.js';

export interface ConnectionGateOptions {
  maxConnections: number;
  maxQueued: number;
  /** A queued socket not admitted within this is closed (the caller has given up by then). */
  queueTimeoutMs: number;
  clock: Clock;
  /** Hands an admitted socket to the TLS/HTTP server. */
  admit(socket: Socket): void;
  onDropped?(reason: 'queue-full' | 'queue-timeout'): void;
}

export class ConnectionGate {
  private active = 0;
  private readonly queue: Array<{ socket: Socket; cancel: () => void }> = [];
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly o: ConnectionGateOptions) {
    if (!(o.maxConnections >= 1) || !(o.maxQueued >= 0)) {
      throw new RangeError(
        `webhook server: maxConnections must be >= 1 and maxQueuedConnections >= 0 (got ${o.maxConnections}, ${o.maxQueued})`,
      );
    }
  }

  /** The raw listener's 'connection' handler. */
  readonly onConnection = (socket: Socket): void => {
    if (this.active < this.o.maxConnections) {
      this.admit(socket);
      return;
    }
    if (this.queue.length >= this.o.maxQueued) {
      this.o.onDropped?.('queue-full');
      socket.destroy();
      return;
    }
    socket.pause(); // nothing is read (or allocated for TLS) until it is admitted
    const entry = {
      socket,
      cancel: this.o.clock.after(this.o.queueTimeoutMs, () => {
        this.remove(entry);
        this.o.onDropped?.('queue-timeout');
        socket.destroy();
      }),
    };
    socket.once('close', () => {
      this.remove(entry);
      entry.cancel();
    });
    socket.on('error', () => undefined); // a queued peer that resets must not crash the process
    this.queue.push(entry);
  };

  /** Connections holding TLS/HTTP state now, and sockets waiting for a slot. */
  counts(): { active: number; queued: number } {
    return { active: this.active, queued: this.queue.length };
  }

  /** Resolves once no admitted connection is open. */
  whenIdle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Closes every queued socket (shutdown). */
  dropQueued(): void {
    for (const entry of this.queue.splice(0)) {
      entry.cancel();
      entry.socket.destroy();
    }
  }

  private admit(socket: Socket): void {
    this.active++;
    socket.once('close', () => {
      this.active--;
      this.next();
      if (this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
    });
    this.o.admit(socket);
    socket.resume();
  }

  private next(): void {
    while (this.active < this.o.maxConnections && this.queue.length > 0) {
      const entry = this.queue.shift()!;
      entry.cancel();
      if (entry.socket.destroyed) continue;
      this.admit(entry.socket);
    }
  }

  private remove(entry: { socket: Socket }): void {
    const i = this.queue.findIndex((e) => e === entry);
    if (i >= 0) this.queue.splice(i, 1);
  }
}

/** Waits for a slot (FIFO); rejects with `timeoutError` after `timeoutMs`. */
export class ByteBudget {
  private used = 0;
  private readonly waiters: Array<{ bytes: number; grant: () => void }> = [];

  constructor(
    readonly limit: number,
    private readonly clock: Clock,
  ) {}

  /** Reserves `bytes` (at most the whole budget); resolves with the release function. */
  acquire(bytes: number, timeoutMs: number, signal?: AbortSignal): Promise<() => void> {
    const want = Math.min(Math.max(1, bytes), this.limit);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.used -= want;
      this.grantWaiting();
    };
    if (this.waiters.length === 0 && this.used + want <= this.limit) {
      this.used += want;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        bytes: want,
        grant: () => {
          cancel();
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const drop = (err: unknown) => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        this.grantWaiting();
        reject(err);
      };
      const cancel = this.clock.after(timeoutMs, () => drop(new BudgetTimeoutError(timeoutMs)));
      const onAbort = () => {
        cancel();
        drop(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  inUse(): number {
    return this.used;
  }

  private grantWaiting(): void {
    while (this.waiters.length > 0 && this.used + this.waiters[0].bytes <= this.limit) {
      const w = this.waiters.shift()!;
      this.used += w.bytes;
      w.grant();
    }
  }
}

export class BudgetTimeoutError extends Error {
  constructor(readonly waitedMs: number) {
    super(`the webhook is at its concurrency limit and could not take this request within ${waitedMs}ms`);
  }
}

/** Lets other requests' callbacks run between the expensive steps of a large one. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
