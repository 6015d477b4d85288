/**
 * Liveness for a single-threaded process: a timer that should fire every `intervalMs` measures
 * how late it fires. A late timer means the event loop was blocked (CPU-bound work, a sync call,
 * GC thrashing near the heap limit: the classic Node failure a restart cures).
 *
 * A stall is remembered for `windowMs`, because the probe only samples: a loop that blocks for
 * 12s every 20s answers most probes quickly, yet serves nothing on time.
 */
import { realClock, type Clock } from '../clock.js';

export interface StallDetectorOptions {
  clock?: Clock;
  intervalMs?: number;
  /**
   * Default 10s, the leader election renew deadline: a loop blocked that long has already lost
   * its lease and timed out every webhook call.
   */
  maxLagMs?: number;
  windowMs?: number;
}

export class EventLoopStallDetector {
  private readonly clock: Clock;
  private readonly intervalMs: number;
  private readonly maxLagMs: number;
  private readonly windowMs: number;
  private expectedAt = 0;
  private cancel?: () => void;
  private lastStall?: { at: number; lagMs: number };

  constructor(opts: StallDetectorOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.intervalMs = opts.intervalMs ?? 1_000;
    this.maxLagMs = opts.maxLagMs ?? 10_000;
    this.windowMs = opts.windowMs ?? 30_000;
  }

  start(): void {
    if (this.cancel) return;
    this.schedule();
  }

  stop(): void {
    this.cancel?.();
    this.cancel = undefined;
  }

  /** A HealthCheck: throws while a stall is recent, or while the probe timer is overdue now. */
  readonly check = (): void => {
    const now = this.clock.now();
    if (this.cancel) {
      const overdue = now - this.expectedAt;
      if (overdue > this.maxLagMs)
        throw new Error(`event loop blocked: the probe timer is ${overdue}ms overdue (bound ${this.maxLagMs}ms)`);
    }
    if (this.lastStall && now - this.lastStall.at <= this.windowMs) {
      const ago = Math.round((now - this.lastStall.at) / 1000);
      throw new Error(
        `event loop was blocked ${ago}s ago: the probe timer fired ${this.lastStall.lagMs}ms late (bound ${this.maxLagMs}ms)`,
      );
    }
  };

  private schedule(): void {
    this.expectedAt = this.clock.now() + this.intervalMs;
    this.cancel = this.clock.after(this.intervalMs, () => {
      const now = this.clock.now();
      const lag = now - this.expectedAt;
      if (lag > this.maxLagMs) this.lastStall = { at: now, lagMs: lag };
      this.schedule();
    });
  }
}
