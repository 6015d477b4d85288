/**
 * Time as the control loop sees it. Everything that waits, times out or measures a duration
 * takes a Clock, so tests drive time by hand instead of sleeping (and never assert speed).
 */
export interface Clock {
  /** Milliseconds since the epoch, monotonic in the real clock (wall-clock jumps do not move it). */
  now(): number;
  /** Runs `fn` after `ms`; returns a cancel function (safe to call twice or after firing). */
  after(ms: number, fn: () => void): () => void;
}

// performance.now() is monotonic; anchoring it at timeOrigin keeps the value close to Date.now()
// so it can also stamp objects (Lease renewTime) while never running backwards.
const origin = performance.timeOrigin;

export const realClock: Clock = {
  now: () => origin + performance.now(),
  after(ms, fn) {
    const timer = setTimeout(fn, Math.max(0, ms));
    timer.unref?.();
    return () => clearTimeout(timer);
  },
};

/**
 * Like `clock.after`, but decides after the socket poll of the turn the timer fires in: Node runs
 * due timers before it reads sockets, so after a stall of this process (no CPU, a long task) an
 * answer or a client's bytes that arrived in time would otherwise lose to a timer that fired late.
 * The returned cancel also drops a decision already queued behind the poll.
 */
export function afterPoll(clock: Clock, ms: number, fn: () => void): () => void {
  let queued: NodeJS.Immediate | undefined;
  const cancel = clock.after(ms, () => {
    queued = setImmediate(fn);
  });
  return () => {
    cancel();
    if (queued) clearImmediate(queued);
  };
}

/** Resolves after `ms` on `clock`, or rejects with the signal's reason once it aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      cancel();
      reject(signal?.reason);
    };
    const cancel = clock.after(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Settles with `p`, or rejects with the signal's reason as soon as it aborts, even if `p` ignores it. */
export function raceAbort<R>(p: Promise<R>, signal: AbortSignal): Promise<R> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<R>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Runs `fn` with a signal that aborts when `outer` aborts or `ms` pass on `clock`, whichever is
 * first; rejects with `timeoutError()` on timeout even if `fn` ignores its signal.
 * The timeout is decided after that turn's socket poll (afterPoll): an answer that arrived during a
 * stall of this process is taken (a Lease renewal that succeeded, not reported as timed out).
 */
export async function withTimeout<R>(
  clock: Clock,
  ms: number,
  outer: AbortSignal | undefined,
  fn: (signal: AbortSignal) => Promise<R>,
  timeoutError: () => Error,
): Promise<R> {
  const abort = new AbortController();
  const onOuterAbort = () => abort.abort(outer?.reason);
  if (outer?.aborted) onOuterAbort();
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  const cancel = afterPoll(clock, ms, () => abort.abort(timeoutError()));
  try {
    return await raceAbort(fn(abort.signal), abort.signal);
  } catch (err) {
    throw abort.signal.aborted ? abort.signal.reason : err;
  } finally {
    cancel();
    outer?.removeEventListener('abort', onOuterAbort);
  }
}

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/**
 * A clock that only moves when told to. `advance` fires due timers in time order and lets
 * promise chains settle between them, so code that awaits between timers behaves as it would
 * with real time.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  private timers: PendingTimer[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  after(ms: number, fn: () => void): () => void {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Number of timers waiting to fire. */
  pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due on the way. */
  async advance(ms: number): Promise<void> {
    const target = this.current + ms;
    await settle();
    for (let fired = 0; ; fired++) {
      const next = this.nextDue(target);
      if (!next) break;
      if (fired > 100_000)
        throw new Error('FakeClock.advance: over 100000 timers fired; something keeps rescheduling itself');
      this.timers = this.timers.filter((t) => t !== next);
      this.current = Math.max(this.current, next.at);
      next.fn();
      await settle();
    }
    this.current = target;
    await settle();
  }

  /** Jumps the clock without firing timers (a stalled process waking up late). */
  jump(ms: number): void {
    this.current += ms;
  }

  private nextDue(limit: number): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.timers) {
      if (t.at > limit) continue;
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}

/** Lets every queued promise continuation run (setImmediate comes after the microtask queue). */
export function settle(rounds = 3): Promise<void> {
  let p = Promise.resolve();
  for (let i = 0; i < rounds; i++) p = p.then(() => new Promise<void>((r) => setImmediate(r)));
  return p;
}
