/**
 * Bounded concurrency for the webhook server, so a flood degrades latency, not memory, and no
 * client can hold what it does not use:
 * - {@link ConnectionGate}: at most `maxConnections` connections work at once (a TLS handshake or a
 *   request in progress: the costly part), and at most `maxOpenConnections` are open, idle ones
 *   included (~36 KiB each). An idle or slowloris connection holds no working slot, a client
 *   sending its body too slowly gives its slot to a newcomer, and past the open cap a newcomer
 *   takes an idle connection's slot, so such clients cannot keep the API server out; otherwise it
 *   waits as a bare socket in a bounded queue, newest first.
 * - {@link ByteBudget}: request bodies are charged as their bytes arrive (never by the length a
 *   client declares), so the bodies (and the objects parsed from them) in memory stay bounded and
 *   a slow client holds only what it has sent.
 */
import type { Socket } from 'node:net';
import type { Clock } from '../clock.js';

export type DropReason = 'queue-full' | 'queue-timeout' | 'evicted';

export interface ConnectionGateOptions {
  /**
   * Connections doing work at once: in their TLS handshake, or with a request in progress whose
   * client keeps up. This is what costs CPU and memory (handshakes, requests, responses).
   */
  maxConnections: number;
  /**
   * Connections open at all, idle ones included (an idle TLS connection costs ~36 KiB): past it a
   * newcomer takes the slot of an idle one, or waits.
   */
  maxOpenConnections: number;
  maxQueued: number;
  /** A queued socket not admitted within this is closed (the caller has given up by then). */
  queueTimeoutMs: number;
  /**
   * An idle connection is a candidate for eviction (past maxOpenConnections) once idle this long
   * (default 1 s): connected without a request since its handshake, or unused since its last response.
   */
  evictIdleAfterMs?: number;
  clock: Clock;
  /** Hands an admitted socket to the TLS/HTTP server. */
  admit(socket: Socket): void;
  onDropped?(reason: DropReason): void;
}

/** An admitted connection: what it is doing and since when. */
interface Slot {
  socket: Socket;
  /** The TLS handshake completed (before it, the server is the one working on the connection). */
  secure: boolean;
  /** A request is in progress (headers received, response not yet ended). */
  busy: boolean;
  /** Counted in `working` (in its handshake, or busy). */
  working: boolean;
  served: number;
  /** Admission, the end of the handshake, then the end of its last response. */
  since: number;
  /** While its request body is read: true when the client is sending it below the minimum rate. */
  behind?: () => boolean;
}

export class ConnectionGate {
  private readonly slots = new Map<Socket, Slot>();
  private working = 0;
  private readonly queue: Array<{ socket: Socket; cancel: () => void }> = [];
  private idleWaiters: Array<() => void> = [];
  private closing = false;

  constructor(private readonly o: ConnectionGateOptions) {
    if (!(o.maxConnections >= 1) || !(o.maxOpenConnections >= o.maxConnections) || !(o.maxQueued >= 0)) {
      throw new RangeError(
        `webhook server: maxConnections must be >= 1, maxOpenConnections >= maxConnections and maxQueuedConnections >= 0 (got ${o.maxConnections}, ${o.maxOpenConnections}, ${o.maxQueued})`,
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
    if (this.working >= this.o.maxConnections) {
      // Every working slot is taken: one whose client sends its body too slowly gives its slot up.
      const slow = this.slowest();
      if (slow) this.evict(slow);
    }
    if (this.working < this.o.maxConnections && this.slots.size >= this.o.maxOpenConnections) {
      const idle = this.idlest();
      if (idle) this.evict(idle);
    }
    if (this.hasRoom()) {
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

  /** The TLS handshake on `socket` (the raw socket under the TLS one) completed. */
  handshakeDone(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.secure = true;
    slot.since = this.o.clock.now();
    this.update(slot);
  }

  /** A request started on `socket`: its connection is working. */
  requestStarted(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.busy = true;
    slot.served++;
    this.update(slot);
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
    this.update(slot);
    if (this.closing) socket.destroy();
  }

  /** Connections working now (handshake or request), open and idle, and sockets waiting for a slot. */
  counts(): { active: number; idle: number; queued: number } {
    return { active: this.working, idle: this.slots.size - this.working, queued: this.queue.length };
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

  private hasRoom(): boolean {
    return this.working < this.o.maxConnections && this.slots.size < this.o.maxOpenConnections;
  }

  private admit(socket: Socket): void {
    const slot: Slot = { socket, secure: false, busy: false, working: true, served: 0, since: this.o.clock.now() };
    this.slots.set(socket, slot);
    this.working++;
    socket.once('close', () => {
      if (this.slots.get(socket) === slot) this.release(slot);
    });
    this.o.admit(socket);
    socket.resume();
  }

  private update(slot: Slot): void {
    const working = !slot.secure || slot.busy;
    if (working === slot.working) return;
    slot.working = working;
    this.working += working ? 1 : -1;
    if (!working) this.next();
  }

  private release(slot: Slot): void {
    this.slots.delete(slot.socket);
    if (slot.working) this.working--;
    this.next();
    if (this.slots.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Frees `slot` now (for the newcomer being admitted) and closes its connection. */
  private evict(slot: Slot): void {
    this.o.onDropped?.('evicted');
    this.slots.delete(slot.socket);
    if (slot.working) this.working--;
    slot.socket.destroy();
  }

  /** A working connection whose client sends its request body below the minimum rate. */
  private slowest(): Slot | undefined {
    for (const slot of this.slots.values()) if (slot.busy && slot.behind?.()) return slot;
    return undefined;
  }

  /**
   * The idle connection to close for a newcomer: one that completed its handshake and has sent no
   * request since, longest first; else the kept-alive connection unused the longest (an HTTP
   * client such as Go's reuses the connection it used last, so that one is the least likely to
   * carry the next request). Either only once idle for evictIdleAfterMs.
   */
  private idlest(): Slot | undefined {
    const cutoff = this.o.clock.now() - (this.o.evictIdleAfterMs ?? 1_000);
    let fresh: Slot | undefined;
    let kept: Slot | undefined;
    for (const slot of this.slots.values()) {
      if (slot.working || slot.since > cutoff) continue;
      if (slot.served === 0) {
        if (!fresh || slot.since < fresh.since) fresh = slot;
      } else if (!kept || slot.since < kept.since) kept = slot;
    }
    return fresh ?? kept;
  }

  /** Admits queued sockets while there is room, newest first: the oldest have waited longest and are likeliest gone. */
  private next(): void {
    while (this.hasRoom() && this.queue.length > 0) {
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
