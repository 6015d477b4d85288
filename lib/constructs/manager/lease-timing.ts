import { Duration } from 'cdk8s';
import { LeaderElectionDefaults } from '../../contract.js';
import { wholeSeconds } from '../core/errors.js';

/**
 * Leader-election timing: how fast a standby takes over against how much API-server trouble a
 * leader rides out. Upstream kruise-manager v1.8.3 never releases its Lease on SIGTERM, so with
 * the upstream image every rollout, node drain or crash leaves the controllers without a leader
 * until the Lease expires (admission keeps working: every replica serves it).
 */
export class LeaseTiming {
  /**
   * 15s / 10s / 2s: the client-go, controller-runtime and upstream default. Handover with the
   * upstream image: up to lease + retry, about 17 s (plus jitter); a leader rides out 10 s
   * without a successful renew; clock-skew tolerance 5 s.
   */
  public static standard(): LeaseTiming {
    const d = LeaderElectionDefaults;
    return new LeaseTiming(d.leaseDurationSeconds, d.renewDeadlineSeconds, d.retryPeriodSeconds);
  }

  /**
   * 8s / 5s / 2s: about half the controller gap of every upstream rollout, at a cost: a leader
   * that cannot renew for 5 s (an etcd leader election, an API-server upgrade) exits and
   * restarts, and clock skew between nodes must stay under 3 s. Same Lease write rate.
   */
  public static fastHandover(): LeaseTiming {
    return new LeaseTiming(8, 5, 2);
  }

  /**
   * 30s / 20s / 4s: for overloaded or distant API servers, where spurious step-downs cost more
   * than a slower handover (up to about 34 s).
   */
  public static tolerant(): LeaseTiming {
    return new LeaseTiming(30, 20, 4);
  }

  /**
   * Explicit whole-second values. Must satisfy client-go's rule
   * leaseDuration > renewDeadline > 1.2 x retryPeriod.
   */
  public static of(leaseDuration: Duration, renewDeadline: Duration, retryPeriod: Duration): LeaseTiming {
    return new LeaseTiming(
      wholeSeconds('leaderElection.leaseDuration', leaseDuration),
      wholeSeconds('leaderElection.renewDeadline', renewDeadline),
      wholeSeconds('leaderElection.retryPeriod', retryPeriod),
    );
  }

  private constructor(
    public readonly leaseDurationSeconds: number,
    public readonly renewDeadlineSeconds: number,
    public readonly retryPeriodSeconds: number,
  ) {}
}
