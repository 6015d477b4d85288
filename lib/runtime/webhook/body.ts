/**
 * Reads a request body with a hard size cap, charging a shared byte budget as the bytes arrive
 * (never by the length the client declares) and holding the client to a minimum transfer rate and
 * a deadline. A slow client loses its own request; it never holds budget it has not filled.
 *
 * An oversized body is rejected as soon as the cap is crossed (or up front from Content-Length)
 * without buffering the rest. Waiting for budget room pauses the socket and does not count
 * against the client's rate or deadline: that wait is ours, bounded by `budgetWaitMs`.
 *
 * Neither does a stall of this process: while the event loop is blocked or the process gets no
 * CPU, nothing reads the socket, so a client that sent everything at once looks slow: its bytes sit
 * in the kernel, its TCP window full, and the rate check's timer fires before the read does (Node
 * runs due timers before polling sockets). The time a check fires late is counted as ours and left
 * out of the rate; the deadline stays on the wall clock (it is the API server's own timeout), so a
 * slow client gains no more than it had. Before this, a 1.1 MB review from the API server was cut
 * (`EOF` at the API server) when other processes starved the replica (#25).
 */
import type { IncomingMessage } from 'node:http';
import type { Clock } from '../clock.js';
import type { ByteBudget } from './limiter.js';

export class BodyTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`request body exceeds ${limit} bytes`);
  }
}

export class ClientGoneError extends Error {
  constructor() {
    super('client closed the connection before sending the whole body');
  }
}

/** The client sent its body too slowly; the connection is closed (there is nobody to answer in time). */
export class SlowBodyError extends Error {}

export interface ReadBodyOptions {
  limit: number;
  budget: ByteBudget;
  /** Longest wait for budget room for one chunk; past it the read fails with BudgetTimeoutError. */
  budgetWaitMs: number;
  /** The whole body within this (time waiting for budget excluded). */
  deadlineMs: number;
  /** From `graceMs` on, the body so far must have arrived at this average rate at least. */
  minBytesPerSecond: number;
  graceMs: number;
  clock: Clock;
  /**
   * How often the rate and deadline are checked (default 250 ms). A check that fires later than
   * this was held up by this process; the delay is not counted against the client's rate.
   */
  checkEveryMs?: number;
  /**
   * Called once with a probe saying whether the client is behind the minimum rate right now (after
   * its first 500 ms): the connection gate may then give its slot to a newcomer.
   */
  onReading?(behind: () => boolean): void;
  /** Called at each check when whether the client is behind the minimum rate changed. */
  onPace?(behind: boolean): void;
}

export interface Body {
  data: Buffer;
  /** Gives the body's bytes back to the budget; call once the body and what was parsed from it are done with. */
  release(): void;
}

export function readBody(req: IncomingMessage, o: ReadBodyOptions): Promise<Body> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > o.limit) {
      req.resume();
      reject(new BodyTooLargeError(o.limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let charged = 0;
    let settled = false;
    const start = o.clock.now();
    let waitedMs = 0;
    let waitingSince: number | undefined;
    // Made only when a chunk has to wait for budget room (rare): aborting it at every body's end cost an Error (its
    // stack captured) and an abort event per request, 4-6 % of the process's CPU under load (bench compare profile).
    let budgetAbort: AbortController | undefined;
    const giveBack = () => {
      const bytes = charged;
      charged = 0;
      if (bytes > 0) o.budget.give(bytes);
    };
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      cleanup();
      chunks.length = 0;
      giveBack();
      reject(err);
    };
    const accept = (chunk: Buffer) => {
      charged += chunk.length;
      size += chunk.length;
      chunks.push(chunk);
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > o.limit) {
        fail(new BodyTooLargeError(o.limit));
        req.resume(); // keep draining without keeping anything
        return;
      }
      if (o.budget.tryTake(chunk.length)) {
        accept(chunk);
        return;
      }
      req.pause();
      waitingSince = o.clock.now();
      o.budget.take(chunk.length, o.budgetWaitMs, (budgetAbort ??= new AbortController()).signal).then(
        () => {
          waitedMs += o.clock.now() - waitingSince!;
          waitingSince = undefined;
          if (settled) {
            o.budget.give(chunk.length);
            return;
          }
          accept(chunk);
          req.resume();
        },
        (err: Error) => fail(err),
      );
    };
    // 'end' can only follow the last chunk's grant: the stream is paused while a chunk waits.
    const onEnd = () => {
      if (settled) return;
      settled = true;
      cleanup();
      let released = false;
      resolve({
        data: Buffer.concat(chunks, size),
        release: () => {
          if (released) return;
          released = true;
          giveBack();
        },
      });
    };
    const onGone = () => fail(new ClientGoneError());
    // 'close' before 'end' means the peer went away mid-body.
    const onClose = () => {
      if (!req.complete) onGone();
    };
    const activeMs = (now: number) => now - start - waitedMs - (waitingSince === undefined ? 0 : now - waitingSince);
    const everyMs = o.checkEveryMs ?? 250;
    // Time the rate checks fired late: this process was not running its event loop, so nothing
    // read what the client had sent.
    let stalledMs = 0;
    let checkDueAt = start + everyMs;
    // Also between checks: a check already overdue means this process is held up right now (the
    // connection gate asks `behind()` whenever a newcomer arrives, possibly before the timer runs).
    const pacedMs = (now: number) => Math.max(0, activeMs(now) - stalledMs - Math.max(0, now - checkDueAt));
    const behind = () => {
      if (settled || waitingSince !== undefined) return false;
      const ms = pacedMs(o.clock.now());
      return ms > 500 && size < (o.minBytesPerSecond * ms) / 1000;
    };
    o.onReading?.(behind);
    let wasBehind = false;
    let cancelCheck = () => {};
    const check = () => {
      if (settled) return;
      const at = o.clock.now();
      // A wait for budget room is already left out of the active time; do not count it twice.
      if (waitingSince === undefined) stalledMs += Math.max(0, at - checkDueAt);
      checkDueAt = at + everyMs;
      const active = activeMs(at);
      if (active > o.deadlineMs) {
        fail(new SlowBodyError(`request body did not arrive within ${o.deadlineMs}ms (${size} bytes received)`));
        return;
      }
      const paced = pacedMs(at);
      if (waitingSince === undefined && paced > o.graceMs && size < (o.minBytesPerSecond * paced) / 1000) {
        fail(
          new SlowBodyError(
            `request body arrived slower than ${o.minBytesPerSecond} bytes/s (${size} bytes in ${Math.round(paced)}ms` +
              (stalledMs > 0 ? `, not counting ${Math.round(stalledMs)}ms this process was held up` : '') +
              ')',
          ),
        );
        return;
      }
      const now = behind();
      if (now !== wasBehind) o.onPace?.((wasBehind = now));
      cancelCheck = o.clock.after(everyMs, check);
    };
    const cleanup = () => {
      cancelCheck();
      // Only a take still waiting needs telling; a settled one ignores the abort.
      if (waitingSince !== undefined) budgetAbort?.abort(new ClientGoneError());
      req.off('data', onData).off('end', onEnd).off('aborted', onGone).off('error', onGone).off('close', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onGone).on('error', onGone).on('close', onClose);
    cancelCheck = o.clock.after(everyMs, check);
  });
}
