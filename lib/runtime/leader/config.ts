import {
  describeProblem,
  Flags,
  LeaderElectionDefaults,
  leaseTimingProblems,
  withoutUndefined,
} from '../../contract.js';

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

const defaultTimings: LeaderElectionTimings = {
  leaseDurationMs: LeaderElectionDefaults.leaseDurationSeconds * 1000,
  renewDeadlineMs: LeaderElectionDefaults.renewDeadlineSeconds * 1000,
  retryPeriodMs: LeaderElectionDefaults.retryPeriodSeconds * 1000,
  jitterFactor: LeaderElectionDefaults.jitterFactor,
  requestTimeoutMs: (LeaderElectionDefaults.renewDeadlineSeconds * 1000) / 2,
};

/** The contract rule's fields, as this module names them. */
const FIELDS = {
  leaseDuration: ['leaseDurationMs', Flags.leaseDuration],
  renewDeadline: ['renewDeadlineMs', Flags.renewDeadline],
  retryPeriod: ['retryPeriodMs', Flags.retryPeriod],
} as const;

/**
 * Fills in defaults and enforces client-go's invariants (the contract's Lease timing rule, whose
 * errors name the flags), plus a positive jitter factor and request timeout.
 */
export function resolveTimings(partial: Partial<LeaderElectionTimings> = {}): LeaderElectionTimings {
  const t: LeaderElectionTimings = {
    ...defaultTimings,
    requestTimeoutMs: (partial.renewDeadlineMs ?? defaultTimings.renewDeadlineMs) / 2,
    ...withoutUndefined(partial),
  };
  for (const key of ['jitterFactor', 'requestTimeoutMs'] as const) {
    if (!Number.isFinite(t[key]) || t[key] <= 0)
      throw new RangeError(`leader election: ${key} must be a positive number (got ${String(t[key])})`);
  }
  const problems = leaseTimingProblems({
    leaseDuration: t.leaseDurationMs,
    renewDeadline: t.renewDeadlineMs,
    retryPeriod: t.retryPeriodMs,
    jitterFactor: t.jitterFactor,
  });
  if (problems.length > 0) {
    const described = problems.map((p) => {
      const [option, flag] = FIELDS[p.field as keyof typeof FIELDS];
      return describeProblem({ ...p, field: `${option} (--${flag})` });
    });
    throw new RangeError(`leader election: ${described.join('; ')}`);
  }
  return t;
}
