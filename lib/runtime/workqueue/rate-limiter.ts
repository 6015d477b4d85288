import { realClock, type Clock } from '../clock.js';

/**
 * Decides how long an item waits before it is retried (client-go's `RateLimiter`). Keys are
 * the queue's item keys, so one failing object backs off without slowing down the others.
 */
export interface RateLimiter {
  /** Delay in ms before `key` may be processed again; counts one more failure for it. */
  when(key: string): number;
  /** Clears the failure history of `key` (call after it was processed successfully). */
  forget(key: string): void;
  /** How many times `key` has been rate limited since it was last forgotten. */
  numRequeues(key: string): number;
}

/** Per-item exponential backoff: base, 2×base, 4×base, ... capped at max. */
export class ItemExponentialFailureRateLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseDelayMs = 5,
    private readonly maxDelayMs = 1_000_000,
  ) {
    if (!(baseDelayMs >= 0) || !(maxDelayMs >= 0)) {
      throw new RangeError(`backoff delays must be >= 0 (base ${baseDelayMs}ms, max ${maxDelayMs}ms)`);
    }
  }

  when(key: string): number {
    const exponent = this.failures.get(key) ?? 0;
    this.failures.set(key, exponent + 1);
    // 2 ** exponent overflows to Infinity long before the counter overflows; min() caps both.
    return Math.min(this.baseDelayMs * 2 ** exponent, this.maxDelayMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/**
 * A token bucket shared by all items (golang.org/x/time/rate reservations): `burst` retries go
 * through at once, after that they are spaced at `qps`. It caps the overall retry rate when
 * many objects fail together, for example while the API server is down.
 */
export class BucketRateLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0) || !(burst >= 1))
      throw new RangeError(`token bucket needs qps > 0 and burst >= 1 (got ${qps}, ${burst})`);
    this.tokens = burst;
    this.last = clock.now();
  }

  when(_key: string): number {
    const now = this.clock.now();
    const elapsedSeconds = Math.max(0, now - this.last) / 1000;
    this.last = Math.max(this.last, now);
    this.tokens = Math.min(this.burst, this.tokens + elapsedSeconds * this.qps) - 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay any of its limiters asks for. */
export class MaxOfRateLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new RangeError('MaxOfRateLimiter needs at least one limiter');
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(...this.limiters.map((l) => l.numRequeues(key)));
  }
}

export interface ControllerRateLimiterOptions {
  /** First per-item retry delay (default 5ms). */
  baseDelayMs?: number;
  /** Cap of the per-item delay (default 1000s). */
  maxDelayMs?: number;
  /** Overall retry rate (default 10/s). */
  qps?: number;
  /** Retries allowed at once before `qps` applies (default 100). */
  burst?: number;
  clock?: Clock;
}

/** controller-runtime's default: max(per-item 5ms→1000s exponential, 10 qps / 100 burst bucket). */
export function defaultControllerRateLimiter(options: ControllerRateLimiterOptions = {}): RateLimiter {
  return new MaxOfRateLimiter(
    new ItemExponentialFailureRateLimiter(options.baseDelayMs ?? 5, options.maxDelayMs ?? 1_000_000),
    new BucketRateLimiter(options.qps ?? 10, options.burst ?? 100, options.clock ?? realClock),
  );
}
