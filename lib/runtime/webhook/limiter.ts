/**
 * Bounded concurrency for the webhook server, so a flood degrades latency, not memory, and no
 * client can hold what it does not use:
 * - {@link ConnectionGate}: at most `maxConnections` connections work at once (a TLS handshake or a
 *   request in progress: the costly part), and at most `maxOpenConnections` are open, idle ones
 *   included (~36 KiB each). An idle or slowloris connection holds no working slot, a client
 *   sending its body too slowly gives its slot to a newcomer, and past the open cap a newcomer
 *   takes an idle connection's slot, so such clients cannot keep the API server out; otherwise it
 *   waits as a bare socket in a bounded queue, newest first. A connection takes nothing until its
 *   first bytes arrive, and its handshake holds a working slot only while the server answers its
 *   ClientHello: waiting on a client (silent, or slow to finish its handshake) holds none.
 * - {@link ByteBudget}: request bodies are charged as their bytes arrive (never by the length a
 *   client declares), so the bodies (and the objects parsed from them) in memory stay bounded and
 *   a slow client holds only what it has sent.
 */
import type { Socket } from 'node:net';
import { afterPoll, type Clock } from '../clock.js';

export type DropReason = 'queue-full' | 'queue-timeout' | 'evicted' | 'silent';

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
   * A connection that has sent nothing within this is closed (the TLS handshake timeout: a TLS
   * client sends its ClientHello as soon as it connects).
   */
  silentTimeoutMs: number;
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
  /** Holds a working slot: in its handshake, or serving a request whose client keeps up. */
  working: boolean;
  /** Its request waits for a working slot. */
  waiting?: { grant: (ok: boolean) => void; cancel: () => void };
  served: number;
  /** Admission, the end of the handshake, then the end of its last response. */
  since: number;
  /** While its request body is read: true when the client is sending it below the minimum rate. */
  behind?: () => boolean;
}

export class ConnectionGate {
  /** Connected, nothing received yet: no slot, no TLS state; the oldest is closed for a newcomer past maxQueued. */
  private readonly silent = new Map<Socket, () => void>();
  private readonly slots = new Map<Socket, Slot>();
  private working = 0;
  private readonly queue: Array<{ socket: Socket; cancel: () => void }> = [];
  /** Requests on open connections waiting for a working slot (served before queued sockets). */
  private readonly waitingRequests: Slot[] = [];
  private idleWaiters: Array<() => void> = [];
  private closing = false;
  private pendingEviction: NodeJS.Immediate | undefined;

  constructor(private readonly o: ConnectionGateOptions) {
    if (!(o.maxConnections >= 1) || !(o.maxOpenConnections >= o.maxConnections) || !(o.maxQueued >= 0)) {
      throw new RangeError(
        `webhook server: maxConnections must be >= 1, maxOpenConnections >= maxConnections and maxQueuedConnections >= 0 (got ${o.maxConnections}, ${o.maxOpenConnections}, ${o.maxQueued})`,
      );
    }
  }

  /**
   * The raw listener's 'connection' handler. A connection takes nothing until its first bytes (a
   * TLS ClientHello) arrive: one that sends nothing (an idle TCP client) would otherwise hold a
   * working slot for the whole handshake timeout, and a few hundred of them every slot.
   */
  readonly onConnection = (socket: Socket): void => {
    socket.on('error', () => undefined); // a peer that resets must not crash the process
    if (this.closing) {
      socket.destroy();
      return;
    }
    if (this.silent.size >= this.o.maxQueued) {
      // The connection silent the longest: a TLS client speaks at once, so it is the least likely to be one.
      const [oldest, drop] = this.silent.entries().next().value!;
      drop();
      this.o.onDropped?.('silent');
      oldest.destroy();
    }
    const onReadable = () => {
      done();
      // Left paused, its first bytes buffered: the TLS socket reads them when it takes the connection.
      if (socket.readableLength > 0 && !socket.destroyed) this.arrived(socket);
      else socket.destroy(); // ended without a byte
    };
    // After a stall of this process the client's first bytes may be in the kernel, unread: judged
    // after this turn's poll has read them ('readable' calls done(), which cancels this) (#25).
    const cancel = afterPoll(this.o.clock, this.o.silentTimeoutMs, () => {
      done();
      this.o.onDropped?.('silent');
      socket.destroy();
    });
    const done = () => {
      cancel();
      this.silent.delete(socket);
      socket.off('readable', onReadable).off('close', done);
    };
    this.silent.set(socket, done);
    socket.on('readable', onReadable).once('close', done);
  };

  /** `socket` sent its first bytes: it takes a working slot, or waits for one as a bare socket. */
  private arrived(socket: Socket): void {
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
      this.evictAfterPoll(); // the newcomer waits in the queue for this turn
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
  }

  /** The TLS handshake on `socket` (the raw socket under the TLS one) completed: it gives up its working slot. */
  handshakeDone(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.secure = true;
    slot.since = this.o.clock.now();
    if (!slot.busy) this.stopWorking(slot);
  }

  /**
   * A request started on `socket`: resolves true once it holds a working slot (at once when one is
   * free), false if none freed within `waitMs` (the caller answers 429).
   */
  requestStarted(socket: Socket | undefined, waitMs: number): Promise<boolean> {
    const slot = socket && this.slots.get(socket);
    if (!slot) return Promise.resolve(true);
    slot.busy = true;
    slot.served++;
    if (slot.working) return Promise.resolve(true);
    if (this.working < this.o.maxConnections && this.waitingRequests.length === 0) {
      this.startWorking(slot);
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const cancel = this.o.clock.after(waitMs, () => {
        this.unwait(slot);
        resolve(false);
      });
      slot.waiting = { grant: resolve, cancel };
      this.waitingRequests.push(slot);
    });
  }

  /**
   * While the body of the request on `socket` is read: `behind` says whether the client sends it
   * too slowly. Such a request gives its working slot up (it costs its connection and the bytes it
   * sent, nothing more) and takes one again if the client catches up.
   */
  readingBody(socket: Socket | undefined, behind: (() => boolean) | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (slot) slot.behind = behind;
  }

  /** The request's client fell behind the minimum rate, or caught up. */
  pace(socket: Socket | undefined, behind: boolean): void {
    const slot = socket && this.slots.get(socket);
    if (!slot || !slot.busy || slot.waiting) return;
    if (behind) this.stopWorking(slot);
    else if (!slot.working) this.startWorking(slot); // already reading: over the cap briefly rather than stalled
  }

  /** The response on `socket` ended: the connection is idle from now (and closed at once while stopping). */
  requestEnded(socket: Socket | undefined): void {
    const slot = socket && this.slots.get(socket);
    if (!slot) return;
    slot.busy = false;
    slot.behind = undefined;
    slot.since = this.o.clock.now();
    this.unwait(slot);
    this.stopWorking(slot);
    if (this.closing) socket.destroy();
  }

  /**
   * Connections working now (handshake or request), open and idle, sockets waiting for a slot, and
   * connections that have sent nothing yet.
   */
  counts(): { active: number; idle: number; queued: number; silent: number } {
    return {
      active: this.working,
      idle: this.slots.size - this.working,
      queued: this.queue.length,
      silent: this.silent.size,
    };
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
    if (this.pendingEviction) clearImmediate(this.pendingEviction);
    this.pendingEviction = undefined;
    for (const [socket, done] of [...this.silent]) {
      done();
      socket.destroy();
    }
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
    // The server answers the ClientHello (its key exchange and signature: the costly part of a
    // handshake) as the TLS socket reads the bytes buffered here, before this turn of the event
    // loop ends. What is left waits on the client: a client slow to finish its handshake holds no
    // working slot (the handshake timeout still closes it).
    setImmediate(() => {
      if (this.slots.get(socket) === slot && !slot.secure && !slot.busy) this.stopWorking(slot);
    });
  }

  private startWorking(slot: Slot): void {
    if (slot.working) return;
    slot.working = true;
    this.working++;
  }

  private stopWorking(slot: Slot): void {
    if (!slot.working) return;
    slot.working = false;
    this.working--;
    this.next();
  }

  private unwait(slot: Slot): void {
    if (!slot.waiting) return;
    slot.waiting.cancel();
    slot.waiting = undefined;
    const i = this.waitingRequests.indexOf(slot);
    if (i >= 0) this.waitingRequests.splice(i, 1);
  }

  private release(slot: Slot): void {
    this.slots.delete(slot.socket);
    if (slot.waiting) {
      const { grant } = slot.waiting;
      this.unwait(slot);
      grant(false);
    }
    if (slot.working) this.working--;
    this.next();
    if (this.slots.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  /**
   * Closes idle connections for the queued newcomers once this turn's poll phase is over. An idle
   * connection's client may have sent its request in this very turn, its bytes still unread behind the
   * newcomer's: the API server's next review on a kept-alive connection, or its first on a new one
   * that only looks idle because this process stalled after the handshake. Closed now, that review
   * fails (EOF, and the API server retries no POST); after the poll it has been read and its
   * connection is busy, so another is chosen.
   */
  private evictAfterPoll(): void {
    if (this.pendingEviction) return;
    this.pendingEviction = setImmediate(() => {
      this.pendingEviction = undefined;
      while (
        !this.closing &&
        this.queue.length > 0 &&
        this.working < this.o.maxConnections &&
        this.slots.size >= this.o.maxOpenConnections
      ) {
        const idle = this.idlest();
        if (!idle) break;
        this.evict(idle);
        this.next();
      }
    });
  }

  /** Frees `slot` now (for the newcomer being admitted) and closes its connection. */
  private evict(slot: Slot): void {
    this.o.onDropped?.('evicted');
    this.slots.delete(slot.socket);
    if (slot.working) this.working--;
    if (slot.waiting) {
      const { grant } = slot.waiting;
      this.unwait(slot);
      grant(false);
    }
    slot.socket.destroy();
  }

  /** A working connection whose client sends its request body below the minimum rate. */
  private slowest(): Slot | undefined {
    for (const slot of this.slots.values()) if (slot.busy && slot.working && slot.behind?.()) return slot;
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
      if (slot.working || slot.busy || slot.since > cutoff) continue;
      if (slot.served === 0) {
        if (!fresh || slot.since < fresh.since) fresh = slot;
      } else if (!kept || slot.since < kept.since) kept = slot;
    }
    return fresh ?? kept;
  }

  /** Admits queued sockets while there is room, newest first: the oldest have waited longest and are likeliest gone. */
  private next(): void {
    while (this.working < this.o.maxConnections && this.waitingRequests.length > 0) {
      const slot = this.waitingRequests.shift()!;
      const { grant, cancel } = slot.waiting!;
      cancel();
      slot.waiting = undefined;
      this.startWorking(slot);
      grant(true);
    }
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
