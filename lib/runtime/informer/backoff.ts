import type { Clock } from '../clock.js';

export interface BackoffOptions {
  /** First delay (default 800ms, as client-go's reflector). */
  initialMs?: number;
  /** Cap of every delay, jitter included (default 30s). */
  maxMs?: number;
  /** Growth per consecutive failure (default 2). */
  factor?: number;
  /** A quiet period after which the next failure starts from `initialMs` again (default 2min). */
  resetAfterMs?: number;
}

/**
 * Exponential backoff with jitter for reconnects. Each delay is drawn from [0.5, 1.5) times the
 * exponential step and capped at `maxMs`, so a fleet of clients that lost the API server together
 * does not come back in lockstep (at the cap they spread over [maxMs / 2, maxMs]), and no delay
 * ever exceeds the cap.
 */
export class Backoff {
  private readonly initialMs: number;
  private readonly maxMs: number;
  private readonly factor: number;
  private readonly resetAfterMs: number;
  private step = 0;
  private lastFailure = -Infinity;

  constructor(
    options: BackoffOptions,
    private readonly clock: Clock,
    private readonly random: () => number = Math.random,
  ) {
    this.initialMs = options.initialMs ?? 800;
    this.maxMs = options.maxMs ?? 30_000;
    this.factor = options.factor ?? 2;
    this.resetAfterMs = options.resetAfterMs ?? 120_000;
    if (!(this.initialMs > 0) || !(this.maxMs >= this.initialMs) || !(this.factor >= 1)) {
      throw new RangeError(`invalid backoff: initial ${this.initialMs}ms, max ${this.maxMs}ms, factor ${this.factor}`);
    }
  }

  /** The delay before the next attempt; counts one more failure. */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastFailure > this.resetAfterMs) this.step = 0;
    this.lastFailure = now;
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.step);
    if (base < this.maxMs) this.step++;
    return Math.min(this.maxMs, base * (0.5 + this.random()));
  }

  /** Forget past failures (after a success). */
  reset(): void {
    this.step = 0;
    this.lastFailure = -Infinity;
  }
}
