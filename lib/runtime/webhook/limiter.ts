/**
 * Bounded concurrency for the webhook server, so a flood degrades latency, not memory, and no
 * client can hold what it does not use:
 * - {@link ConnectionGate}: at most `maxConnections` sockets get TLS and HTTP state (the costly
 *   part: tens of KiB each, native buffers included). A newcomer at the cap takes the slot of a
 *   connection that holds one without using it (connected a while ago and never sent a whole
 *   request; or kept alive and unused the longest), so idle and slowloris clients cannot keep the
 *   API server out; otherwise it waits as a bare socket in a bounded queue, newest first.
 * - {@link ByteBudget}: request bodies are charged as their bytes arrive (never by the length a
 *   client declares), so the bodies (and the objects parsed from them) in memory stay bounded and
 *   a slow client holds only what it has sent.
 */
import type { Socket } from 'node:net';
import type { Clock } from '../clock.js';

export type DropReason = 'queue-full' | 'queue-timeout' | 'evicted';

export interface ConnectionGateOptions {
  maxConnections: number;
  maxQueued: number;
  /** A queued socket not admitted within this is closed (the caller has given up by then). */
  queueTimeoutMs: number;
  /**
   * A connection with no request in progress becomes a candidate for eviction once it has held its
   * slot this long without a request (default 1 s: a real client sends its request right after the
   * handshake), or, after a response, has been unused this long.
   */
  evictIdleAfterMs?: number;
  clock: Clock;
  /** Hands an admitted socket to the TLS/HTTP server. */
  admit(socket: Socket): void;
  onDropped?(reason: DropReason): void;
}

/** An admitted connection: whether a request is in progress and when it was last used. */
interface Slot {
  socket: Socket;
  busy: boolean;
  /** The TLS handshake completed (before it, the server is the one working on the connection). */
  secure: boolean;
  served: number;
  /** Admission time, then the end of its last response. */
  since: number;
  /** While its request body is read: true when the client is sending it below the minimum rate. */
  behind?: () => boolean;
}

export class ConnectionGate {
  private readonly slots = new Map<Socket, Slot>();
  private readonly queue: Array<{ socket: Socket; cancel: () => void }> = [];
  private idleWaiters: Array<() => void> = [];
  private closing = false;

  constructor(private readonly o: ConnectionGateOptions) {
    if (!(o.maxConnections >= 1) || !(o.maxQueued >= 0)) {
      throw new RangeError(
        `webhook server: maxConnections must be >= 1 and maxQueuedConnections >= 0 (got ${o.maxConnections}, ${o.maxQueued})`,
      );
    }
  }

  /** The raw listener's 'connection' handler. */
  readonly onConnection = (socket: Socket): void => {
    socket.on('error', () => undefined); // a peer that resets must not crash the process
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.slots.size < this.o.maxConnections) {
      this.admit(socket);
      return;
    }
    // At the cap: a connection holding a slot without using it gives it up to the newcomer.
    const idle = this.evictable();
    if (idle) {
      this.o.onDropped?.('evicted');
      this.slots.delete(idle.socket); // its slot goes to the newcomer, not to the queue
      idle.socket.destroy();
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
    this.queue.push(entry);
  };

  /** A request started on `socket` (the raw socket a TLS socket wraps): its connection is in use. */
  requestStarted(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.busy = true;
    slot.served++;
  }

  /** The TLS handshake on `socket` completed: from now on an idle connection is the client's doing. */
  handshakeDone(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.secure = true;
    slot.since = this.o.clock.now();
  }

  /** While the body of the request on `socket` is read, `behind` says whether the client sends it too slowly. */
  readingBody(socket: Socket | undefined, behind: (() => boolean) | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (slot) slot.behind = behind;
  }

  /** The response on `socket` ended: the connection is idle from now (and closed at once while stopping). */
  requestEnded(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.busy = false;
    slot.behind = undefined;
    slot.since = this.o.clock.now();
    if (this.closing) socket.destroy();
  }

  /** Connections holding TLS/HTTP state now, and sockets waiting for a slot. */
  counts(): { active: number; queued: number } {
    return { active: this.slots.size, queued: this.queue.length };
  }

  /** Resolves once no admitted connection is open. */
  whenIdle(): Promise<void> {
    return this.slots.size === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Shutdown: closes every queued socket and every admitted connection with no request in
   * progress (kept-alive, or connected and never used); the others close as their response ends.
   */
  close(): void {
    this.closing = true;
    for (const entry of this.queue.splice(0)) {
      entry.cancel();
      entry.socket.destroy();
    }
    for (const slot of [...this.slots.values()]) if (!slot.busy) slot.socket.destroy();
  }

  /** Cuts every connection (the end of the stop grace period). */
  destroyAll(): void {
    this.close();
    for (const slot of [...this.slots.values()]) slot.socket.destroy();
  }

  private admit(socket: Socket): void {
    const slot: Slot = { socket, busy: false, secure: false, served: 0, since: this.o.clock.now() };
    this.slots.set(socket, slot);
    socket.once('close', () => {
      if (this.slots.get(socket) === slot) this.release(slot);
    });
    this.o.admit(socket);
    socket.resume();
  }

  private release(slot: Slot): void {
    this.slots.delete(slot.socket);
    this.next();
    if (this.slots.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * The slot to free for a newcomer: a connection that completed its handshake and has sent no
   * request since, longest first; else one sending its request body below the minimum rate; else
   * one still without a completed handshake (twice the idle time: under load, ours is the slow
   * side); else the kept-alive connection unused the longest (an HTTP client such as Go's reuses
   * the connection it used last, so that one is the least likely to carry the next request).
   */
  private evictable(): Slot | undefined {
    const now = this.o.clock.now();
    const idleMs = this.o.evictIdleAfterMs ?? 1_000;
    let fresh: Slot | undefined;
    let slow: Slot | undefined;
    let handshaking: Slot | undefined;
    let kept: Slot | undefined;
    const older = (a: Slot, b: Slot | undefined) => !b || a.since < b.since;
    for (const slot of this.slots.values()) {
      if (slot.busy) {
        if (!slow && slot.behind?.()) slow = slot;
      } else if (!slot.secure) {
        if (now - slot.since >= 2 * idleMs && older(slot, handshaking)) handshaking = slot;
      } else if (now - slot.since < idleMs) continue;
      else if (slot.served === 0) {
        if (older(slot, fresh)) fresh = slot;
      } else if (older(slot, kept)) kept = slot;
    }
    return fresh ?? slow ?? handshaking ?? kept;
  }

  /** Admits queued sockets while there is room, newest first: the oldest have waited longest and are likeliest gone. */
  private next(): void {
    while (this.slots.size < this.o.maxConnections && this.queue.length > 0) {
      const entry = this.queue.pop()!;
      entry.cancel();
      if (entry.socket.destroyed) continue;
      this.admit(entry.socket);
    }
  }

  private remove(entry: { socket: Socket }): void {
    const i = this.queue.indexOf(entry as (typeof this.queue)[number]);
    if (i >= 0) this.queue.splice(i, 1);
  }
}

/**
 * A shared budget of bytes. {@link take} waits for room; any waiter whose bytes fit is granted,
 * not only the first, so one large waiter never blocks smaller ones behind it.
 */
export class ByteBudget {
  private used = 0;
  private readonly waiters: Array<{ bytes: number; grant: () => void }> = [];

  constructor(
    readonly limit: number,
    private readonly clock: Clock,
  ) {}

  /** Takes `bytes` now if they fit; false otherwise. */
  tryTake(bytes: number): boolean {
    const want = this.clamp(bytes);
    if (this.used + want > this.limit) return false;
    this.used += want;
    return true;
  }

  /** Takes `bytes`, waiting up to `timeoutMs` for room; rejects with BudgetTimeoutError, or the signal's reason. */
  take(bytes: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.tryTake(bytes)) return Promise.resolve();
    const want = this.clamp(bytes);
    return new Promise((resolve, reject) => {
      const waiter = {
        bytes: want,
        grant: () => {
          cancel();
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const drop = (err: unknown) => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(err);
      };
      const cancel = this.clock.after(timeoutMs, () => {
        signal?.removeEventListener('abort', onAbort);
        drop(new BudgetTimeoutError(timeoutMs));
      });
      const onAbort = () => {
        cancel();
        drop(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Returns `bytes` taken earlier (each take's amount as passed). */
  give(bytes: number): void {
    this.used -= this.clamp(bytes);
    this.grantWaiting();
  }

  /** Takes `bytes` (waiting as {@link take}); resolves with a function that gives them back once. */
  async acquire(bytes: number, timeoutMs: number, signal?: AbortSignal): Promise<() => void> {
    await this.take(bytes, timeoutMs, signal);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.give(bytes);
    };
  }

  inUse(): number {
    return this.used;
  }

  private clamp(bytes: number): number {
    return Math.min(Math.max(1, bytes), this.limit);
  }

  private grantWaiting(): void {
    for (let i = 0; i < this.waiters.length && this.used < this.limit;) {
      const w = this.waiters[i];
      if (this.used + w.bytes > this.limit) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
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
