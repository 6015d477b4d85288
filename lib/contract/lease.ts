/** The Lease timing rule (client-go's), once for the constructs and the runtime. */
import type { Problem } from './problems.js';

/** Leader-election timing in milliseconds (the runtime's unit; the constructs convert seconds). */
export interface LeaseTimingMs {
  readonly leaseDuration: number;
  readonly renewDeadline: number;
  readonly retryPeriod: number;
  /**
   * Candidates retry after retryPeriod x [1, 1 + jitterFactor); default {@link LeaderElectionDefaults}.jitterFactor.
   */
  readonly jitterFactor?: number;
}

/** client-go / controller-runtime defaults, shared by kruise-manager. */
export const LeaderElectionDefaults = {
  leaseDurationSeconds: 15,
  renewDeadlineSeconds: 10,
  retryPeriodSeconds: 2,
  /** Retries are jittered by up to this factor of the retry period (client-go's leaderelection.JitterFactor). */
  jitterFactor: 1.2,
} as const;

const LEASE_FIX = 'keep leaseDuration > renewDeadline > 1.2 x retryPeriod, e.g. 15s / 10s / 2s';

/**
 * client-go's leaderelection.NewLeaderElector rule (k8s.io/client-go/tools/leaderelection/
 * leaderelection.go): every duration positive, LeaseDuration > RenewDeadline > JitterFactor x
 * RetryPeriod. The Lease stores whole seconds, so the lease must also be at least 1 s.
 * Fields are the keys of {@link LeaseTimingMs}.
 */
export function leaseTimingProblems(t: LeaseTimingMs): Problem[] {
  const jitter = t.jitterFactor ?? LeaderElectionDefaults.jitterFactor;
  const shown = (ms: number) => (Number.isInteger(ms / 1000) ? `${ms / 1000}s` : `${ms}ms`);
  const problems: Problem[] = [];
  for (const field of ['leaseDuration', 'renewDeadline', 'retryPeriod'] as const) {
    const ms = t[field];
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
      problems.push({ field, value: ms, message: 'must be a positive duration', fix: LEASE_FIX });
    }
  }
  if (problems.length > 0) return problems;
  if (t.leaseDuration < 1000) {
    problems.push({
      field: 'leaseDuration',
      value: shown(t.leaseDuration),
      message: 'must be at least 1s: the Lease stores whole seconds',
      fix: LEASE_FIX,
    });
  }
  if (t.leaseDuration <= t.renewDeadline) {
    problems.push({
      field: 'leaseDuration',
      value: shown(t.leaseDuration),
      message: `must exceed renewDeadline (${shown(t.renewDeadline)}), or two leaders can overlap`,
      fix: LEASE_FIX,
    });
  }
  if (t.renewDeadline <= jitter * t.retryPeriod) {
    problems.push({
      field: 'renewDeadline',
      value: shown(t.renewDeadline),
      message: `must exceed ${jitter} x retryPeriod (${shown(t.retryPeriod)}), or a jittered retry can miss the deadline`,
      fix: LEASE_FIX,
    });
  }
  return problems;
}
