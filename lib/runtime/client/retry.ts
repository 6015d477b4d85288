/**
 * client-go's util/retry: run a get-modify-update closure again when its write lost a race (409 Conflict), after
 * apimachinery's wait.Backoff between attempts.
 */
import { realClock, sleep, type Clock } from '../clock.js';
import { isConflict } from '../kube/errors.js';

/** apimachinery's `wait.Backoff`, in milliseconds. */
export interface Backoff {
  /** How many attempts in all (at least 1). */
  readonly steps: number;
  /** The wait after the first failed attempt. */
  readonly durationMs: number;
  /** Each further wait is the previous times this (1: constant). */
  readonly factor: number;
  /** Each wait is lengthened by up to this fraction of itself, at random. */
  readonly jitter: number;
  /** No wait grows beyond this (before jitter). */
  readonly capMs?: number;
}

/**
 * client-go's `retry.DefaultRetry`, recommended for conflicts between several clients changing the same object:
 * 5 attempts, 10 ms apart (+ up to 10% jitter).
 */
export const DefaultRetry: Backoff = Object.freeze({ steps: 5, durationMs: 10, factor: 1, jitter: 0.1 });

/**
 * client-go's `retry.DefaultBackoff`, for a client making an unrelated change to an object a controller manages:
 * 4 attempts, after 10, 50 and 250 ms (+ up to 10% jitter).
 */
export const DefaultBackoff: Backoff = Object.freeze({ steps: 4, durationMs: 10, factor: 5, jitter: 0.1 });

/** How {@link retryOnConflict} and {@link retryOnError} wait. */
export interface RetryOptions {
  /** @default DefaultRetry */
  backoff?: Backoff;
  /** Ends the waiting between attempts: the retry rejects with the signal's reason. */
  signal?: AbortSignal;
  /** @default the real clock */
  clock?: Clock;
  /** @default Math.random (the jitter) */
  random?: () => number;
}

/**
 * client-go's `retry.OnError`: runs `fn` until it resolves, it throws an error `retriable` refuses, or the backoff's
 * attempts are spent; then rethrows the last error.
 */
export async function retryOnError<R>(
  fn: () => Promise<R> | R,
  retriable: (err: unknown) => boolean,
  options: RetryOptions = {},
): Promise<R> {
  const { backoff = DefaultRetry, signal, clock = realClock, random = Math.random } = options;
  if (!Number.isInteger(backoff.steps) || backoff.steps < 1)
    throw new RangeError(`backoff.steps must be an integer >= 1 (got ${backoff.steps})`);
  let wait = backoff.durationMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= backoff.steps || !retriable(err)) throw err;
    }
    // wait.Backoff.Step: this wait (jittered), then the next one grows by factor, up to the cap.
    const jittered = backoff.jitter > 0 ? wait + random() * backoff.jitter * wait : wait;
    if (backoff.factor !== 0) wait = Math.min(wait * backoff.factor, backoff.capMs ?? Infinity);
    await sleep(clock, jittered, signal);
  }
}

/**
 * client-go's `retry.RetryOnConflict`: runs the closure again while it fails with a Conflict (409, a stale
 * resourceVersion), with {@link DefaultRetry}'s waits unless told otherwise. The closure must read the object afresh
 * each time and write its change onto that: retrying a write of the same stale object conflicts again.
 *
 * @example
 * await retryOnConflict(async () => {
 *   const cm = await client.get(Kinds.ConfigMap, 'settings', { namespace });
 *   cm.data = { ...cm.data, mode: 'on' };
 *   await client.update(Kinds.ConfigMap, cm);
 * });
 */
export function retryOnConflict<R>(fn: () => Promise<R> | R, options?: RetryOptions): Promise<R> {
  return retryOnError(fn, isConflict, options);
}
