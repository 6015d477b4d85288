import { LeaderElectionDefaults } from '../../contract.js';

export interface LeaderElectionTimings {
  /** How long a candidate waits after it last saw the Lease change before taking it over. */
  leaseDurationMs: number;
  /** How long the leader keeps trying to renew (since its last successful renewal) before it gives up. */
  renewDeadlineMs: number;
  /** Interval between attempts (jittered for candidates). */
  retryPeriodMs: number;
  /** Candidates wait retryPeriod × [1, 1 + jitterFactor) between attempts. */
  jitterFactor: number;
  /** Bound on each API call; defaults to renewDeadline / 2 so a hung call leaves time to retry. */
  requestTimeoutMs: number;
}

export const defaultTimings: LeaderElectionTimings = {
  leaseDurationMs: LeaderElectionDefaults.leaseDurationSeconds * 1000,
  renewDeadlineMs: LeaderElectionDefaults.renewDeadlineSeconds * 1000,
  retryPeriodMs: LeaderElectionDefaults.retryPeriodSeconds * 1000,
  jitterFactor: LeaderElectionDefaults.jitterFactor,
  requestTimeoutMs: (LeaderElectionDefaults.renewDeadlineSeconds * 1000) / 2,
};

/**
 * Fills in defaults and enforces client-go's invariants, with errors that name the flags:
 * LeaseDuration > RenewDeadline > jitterFactor × RetryPeriod, everything positive.
 */
export function resolveTimings(partial: Partial<LeaderElectionTimings> = {}): LeaderElectionTimings {
  const t: LeaderElectionTimings = {
    ...defaultTimings,
    requestTimeoutMs: (partial.renewDeadlineMs ?? defaultTimings.renewDeadlineMs) / 2,
    ...stripUndefined(partial),
  };
  const seconds = (ms: number) => `${ms / 1000}s`;
  for (const [key, value] of Object.entries(t)) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new RangeError(`leader election: ${key} must be a positive number (got ${String(value)})`);
    }
  }
  if (t.leaseDurationMs < 1000) {
    throw new RangeError(`leader election: lease duration must be at least 1s (got ${seconds(t.leaseDurationMs)}); the Lease stores whole seconds`);
  }
  if (t.leaseDurationMs <= t.renewDeadlineMs) {
    throw new RangeError(`leader election: lease duration (${seconds(t.leaseDurationMs)}, --leader-election-lease-duration) ` +
      `must be greater than renew deadline (${seconds(t.renewDeadlineMs)}, --leader-election-renew-deadline)`);
  }
  if (t.renewDeadlineMs <= t.jitterFactor * t.retryPeriodMs) {
    throw new RangeError(`leader election: renew deadline (${seconds(t.renewDeadlineMs)}, --leader-election-renew-deadline) ` +
      `must be greater than ${t.jitterFactor} × retry period (${seconds(t.retryPeriodMs)}, --leader-election-retry-period)`);
  }
  return t;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
