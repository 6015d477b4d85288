import { Registry } from 'prom-client';
import { afterPoll, realClock, sleep, withTimeout, type Clock } from '../clock.js';
import { describeError, httpStatus } from '../kube/errors.js';
import type { Logger } from '../log.js';
import { resolveTimings, type LeaderElectionTimings } from './config.js';
import { rawRecord, type LeaderElectionRecord, type LeaseLock } from './lease-lock.js';
import { registerMasterStatus } from './metrics.js';

export type StopReason = 'lost' | 'stopped';

export interface LeaderCallbacks {
  /** We lead. `signal` aborts the moment leadership ends; controllers should stop on it. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** 'lost': could not renew in time (the manager exits non-zero). 'stopped': stop() was called. */
  onStoppedLeading(reason: StopReason): void;
  /** The observed holder changed (including to us). */
  onNewLeader?(identity: string): void;
}

export interface LeaderElectorOptions extends Partial<LeaderElectionTimings> {
  lock: LeaseLock;
  /** Unique per process (e.g. pod name + random suffix): two processes with one identity both lead. */
  identity: string;
  callbacks: LeaderCallbacks;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  random?: () => number;
}

/**
 * What a leader-only write throws once this process cannot prove it still holds its Lease (LeaderElector's
 * checkStillLeader, and so every write of the client a Manager hands to a reconcile). The reconcile should end;
 * the Manager exits so a fresh process campaigns again.
 */
export class LeadershipLostError extends Error {
  constructor(identity: string) {
    super(`${identity} cannot prove it still holds the lease; refusing to act as leader`);
    this.name = 'LeadershipLostError';
  }
}

/**
 * client-go's LeaderElector on a Lease. Candidates retry every RetryPeriod (jittered) and take
 * the Lease once its holder is empty or it has not changed for leaseDurationSeconds on OUR
 * clock; remote timestamps are never trusted. The leader renews every RetryPeriod and steps
 * down (callback 'lost') when a renew round fails: as in client-go, a round starts RetryPeriod
 * after the last success and retries for RenewDeadline (see {@link leadWindowMs}).
 */
export class LeaderElector {
  readonly identity: string;
  private readonly t: LeaderElectionTimings;
  private readonly lock: LeaseLock;
  private readonly callbacks: LeaderCallbacks;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private observedRaw = '';
  private observedRecord?: LeaderElectionRecord;
  private observedAt = -Infinity;
  private reportedLeader = '';
  private leading = false;
  /** Leadership was lost: this elector never writes the Lease again (the process restarts). */
  private lost = false;
  /** Local time at which the request of our last successful acquire/renew was sent. */
  private lastRenewSentAt = -Infinity;
  private leaderAbort?: AbortController;
  /**
   * How long after sending its last successful renewal this process may act as leader. client-go's
   * renew round starts RetryPeriod after a success and lasts RenewDeadline, so its leader keeps
   * trying (and leading) for RetryPeriod + RenewDeadline: 12 s at the defaults, where a window of
   * RenewDeadline alone gave up 2 s earlier, before the retry that would have found an API server
   * back (HA drill 7: every API server restarted; the runtime lost its Lease in 3 runs of 3, upstream
   * in none). Capped so at least half the gap between RenewDeadline and LeaseDuration stays between
   * the end of leading and the earliest moment a standby may take over (it waits LeaseDuration from
   * when it saw the renewal, which was sent before).
   */
  private readonly leadWindowMs: number;
  /** Cancels the timer that ends leadership at the end of the lead window. */
  private cancelDeadline = () => {};
  private stopping = new AbortController();
  /** Aborted by {@link wake} to end a candidate's retry wait early. */
  private wakeup?: AbortController;
  /** A wake arrived while no wait was in progress: skip the next one (once). */
  private wakePending = false;
  private loop?: Promise<void>;
  private steppedDown?: Promise<boolean>;
  private stopped?: Promise<void>;

  constructor(options: LeaderElectorOptions) {
    if (!options.identity) throw new Error('leader election: identity must not be empty');
    this.t = resolveTimings({
      leaseDurationMs: options.leaseDurationMs,
      renewDeadlineMs: options.renewDeadlineMs,
      retryPeriodMs: options.retryPeriodMs,
      jitterFactor: options.jitterFactor,
      requestTimeoutMs: options.requestTimeoutMs,
    });
    this.leadWindowMs =
      this.t.renewDeadlineMs + Math.min(this.t.retryPeriodMs, (this.t.leaseDurationMs - this.t.renewDeadlineMs) / 2);
    this.identity = options.identity;
    this.lock = options.lock;
    this.callbacks = options.callbacks;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
    this.log = options.logger.child({ lease: options.lock.describe(), identity: options.identity });
    registerMasterStatus(options.registry ?? new Registry(), options.lock.name, () => this.isLeader());
  }

  /** Starts campaigning in the background; resolves at once. */
  async start(): Promise<void> {
    if (this.loop || this.stopped) throw new Error('a leader elector runs once: it was already started or stopped');
    this.loop = this.run();
  }

  /**
   * The guard a leader calls before every write: true only while this process believes it leads
   * AND its last successful renewal was sent less than {@link leadWindowMs} ago on the local clock.
   * A process that was paused (GC, CPU starvation) gets false here before its renew loop even wakes up.
   */
  isLeader(): boolean {
    return this.leading && this.clock.now() - this.lastRenewSentAt < this.leadWindowMs;
  }

  /** Throws LeadershipLostError unless isLeader(). */
  checkStillLeader(): void {
    if (!this.isLeader()) throw new LeadershipLostError(this.identity);
  }

  /**
   * client-go's leader-election healthz adaptor: fails only when this process still thinks it
   * leads although it has not renewed for LeaseDuration + `toleranceMs` (its renew loop is stuck),
   * so a liveness probe restarts it. Standbys are always healthy.
   */
  checkHealth(toleranceMs = 20_000): void {
    const sinceRenew = this.clock.now() - this.lastRenewSentAt;
    if (this.leading && sinceRenew > this.t.leaseDurationMs + toleranceMs) {
      throw new Error(`leading but the lease was last renewed ${Math.round(sinceRenew / 1000)}s ago`);
    }
  }

  /** The holder we last observed ('' if none or unknown). */
  observedLeader(): string {
    return this.reportedLeader;
  }

  /**
   * Stops campaigning and renewing at once: from this call on isLeader() is false, the gauge reads
   * 0 and the leader signal is aborted, so no leader-only work starts any more. Resolves (true if
   * we were leading) once the loop has ended; the Lease is left as it is until {@link stop}.
   * A terminating replica calls this first, so it can never win the Lease while it drains.
   */
  stepDown(): Promise<boolean> {
    this.steppedDown ??= (async () => {
      this.stopping.abort(new Error('leader elector stopping'));
      const wasLeading = this.leading;
      if (wasLeading) this.endLeading('leader elector stepped down');
      await this.loop;
      return wasLeading;
    })();
    return this.steppedDown;
  }

  /**
   * Steps down (see {@link stepDown}), then with `release` (default) a leader hands the Lease over
   * by writing an empty holder with leaseDurationSeconds 1, so a standby takes over at its next
   * retry. `release: false` leaves the Lease to expire, as a crash would. Later calls return the
   * first call's promise.
   */
  stop(options: { release?: boolean } = {}): Promise<void> {
    this.stopped ??= this.shutdown(options.release ?? true);
    return this.stopped;
  }

  private async shutdown(release: boolean): Promise<void> {
    if (!this.loop) return;
    // Stop leading before the Lease can pass on: once released, a standby may acquire it while
    // the release call is still returning, and isLeader() (and the gauge) must already say false.
    const wasLeading = await this.stepDown();
    // Also covers a Lease acquired by the very attempt that was in flight when stop() began.
    if (release) await this.release();
    if (wasLeading) this.notifyStopped('stopped');
  }

  /**
   * A hint that the Lease was released (empty holder) or deleted, e.g. from a watch on it: a
   * candidate makes its next attempt now instead of at the end of its retry wait. The attempt is
   * an ordinary one (read, then a write carrying the resourceVersion it read, so concurrent
   * candidates still race through 409 Conflict and a Lease held by anyone is never taken before
   * it expired on our clock): the hint only moves an attempt earlier. Each call ends at most one
   * wait; a leader, a stepped-down or a lost elector ignores it.
   */
  wake(): void {
    if (this.leading || this.lost || this.stopping.signal.aborted || !this.loop) return;
    if (this.wakeup) this.wakeup.abort(new Error('lease released'));
    else this.wakePending = true;
  }

  /**
   * The Lease as a watch delivered it. For a candidate this is an observation like its own reads:
   * a changed record restarts the expiry clock (on our clock, from now, never from the record's
   * timestamps), so a standby that sees every renewal as it happens judges expiry from the last
   * one instead of from its next poll, and a released Lease wakes it (see {@link wake}). Safe for
   * the same reason client-go's reads are: we see a renewal only after the leader sent it, and the
   * leader stops acting RenewDeadline after sending, before LeaseDuration after our observation.
   */
  observeLease(record: LeaderElectionRecord): void {
    if (this.leading || this.lost || this.stopping.signal.aborted || !this.loop) return;
    this.observe(record, rawRecord(record));
    if (!record.holderIdentity) this.wake();
  }

  private async run(): Promise<void> {
    const stop = this.stopping.signal;
    while (!stop.aborted && !(await this.tryAcquireOrRenew())) {
      if (this.wakePending) {
        this.wakePending = false;
        continue;
      }
      let delay = this.t.retryPeriodMs * (1 + this.random() * this.t.jitterFactor);
      // Held by another: try again the moment it would expire if that comes before the next retry.
      const held = this.observedRecord?.holderIdentity;
      if (held && held !== this.identity) {
        const expiresIn = this.observedAt + this.observedRecord!.leaseDurationSeconds * 1000 - this.clock.now();
        if (expiresIn > 0 && expiresIn < delay) delay = expiresIn;
      }
      this.wakeup = new AbortController();
      await sleep(this.clock, delay, AbortSignal.any([stop, this.wakeup.signal])).catch(() => undefined);
      this.wakeup = undefined;
    }
    if (stop.aborted) return;
    this.becomeLeader();
    while (!stop.aborted && this.leading) {
      await sleep(this.clock, this.t.retryPeriodMs, stop).catch(() => undefined);
      if (stop.aborted || !this.leading) return;
      if (!(await this.renewBeforeDeadline())) {
        this.loseLeadership();
        return;
      }
    }
  }

  /** Renew deadline passed without a renewal: step down and report 'lost' (once). */
  private loseLeadership(): void {
    if (!this.leading || this.stopping.signal.aborted) return;
    this.lost = true;
    this.log.error('failed to renew the lease within the renew deadline; leadership lost', {
      renewDeadlineMs: this.t.renewDeadlineMs,
      sinceLastRenewalMs: Math.round(this.clock.now() - this.lastRenewSentAt),
    });
    this.endLeading('leadership lost');
    this.notifyStopped('lost');
  }

  /** Leadership ends now: the leader signal aborts and the gauge and isLeader() say false. */
  private endLeading(reason: string): void {
    this.cancelDeadline();
    this.leaderAbort?.abort(new Error(reason));
    this.leading = false;
  }

  /**
   * Arms a timer at the end of the lead window of the last successful renewal, so leadership (the
   * leader signal controllers stop on) ends exactly then, even when the renew loop itself is late.
   */
  private armDeadline(): void {
    this.cancelDeadline();
    const at = this.lastRenewSentAt + this.leadWindowMs;
    // Decided after that turn's socket poll: after a stall of this process, a renewal answered in
    // time may be waiting unread behind this timer. The few microseconds are safe: the lead window
    // ends at least half of LeaseDuration - RenewDeadline short of the lease duration.
    this.cancelDeadline = afterPoll(this.clock, at - this.clock.now(), () => {
      if (this.leading && !this.isLeader()) this.loseLeadership();
    });
  }

  /** Retries every RetryPeriod until a renewal succeeds or the lead window of the last one ends. */
  private async renewBeforeDeadline(): Promise<boolean> {
    const deadline = this.lastRenewSentAt + this.leadWindowMs;
    for (;;) {
      const remaining = deadline - this.clock.now();
      if (remaining <= 0 || !this.leading) return false;
      if (await this.tryAcquireOrRenew(Math.min(this.t.requestTimeoutMs, remaining))) return true;
      const left = deadline - this.clock.now();
      if (left <= 0) return false;
      await sleep(this.clock, Math.min(this.t.retryPeriodMs, left), this.stopping.signal).catch(() => undefined);
      if (this.stopping.signal.aborted) return true; // stop() decides what happens to the lease
    }
  }

  /** One round of client-go's tryAcquireOrRenew; true when we hold the Lease afterwards. */
  private async tryAcquireOrRenew(timeoutMs = this.t.requestTimeoutMs): Promise<boolean> {
    const sentAt = this.clock.now();
    // One budget for the round, whatever number of requests it makes (the renew deadline is near).
    const call = <R>(fn: (s: AbortSignal) => Promise<R>): Promise<R> => {
      const left = sentAt + timeoutMs - this.clock.now();
      if (left <= 0) return Promise.reject(new Error(`lease request timed out after ${timeoutMs}ms`));
      return withTimeout(
        this.clock,
        left,
        undefined,
        fn,
        () => new Error(`lease request timed out after ${timeoutMs}ms`),
      );
    };
    const next = (old?: LeaderElectionRecord): LeaderElectionRecord => ({
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(this.t.leaseDurationMs / 1000),
      acquireTime: old?.holderIdentity === this.identity ? old.acquireTime : new Date(sentAt).toISOString(),
      renewTime: new Date(sentAt).toISOString(),
      leaseTransitions: old
        ? old.holderIdentity === this.identity
          ? old.leaseTransitions
          : old.leaseTransitions + 1
        : 0,
    });
    // Fast path, as client-go (1.28+): a leader writes its renewal straight over the Lease it last
    // wrote (that resourceVersion), one request instead of a read and a write. Under admission load
    // every request waits for event-loop turns shared with the reviews (a leader at load 20-48
    // serving 1,000 reviews/s missed its 10 s renew deadline); half the round trips is half the
    // turns. A 409 (someone else wrote the Lease since) or any error falls back to the read below,
    // so a Lease taken over meanwhile is seen, never overwritten.
    if (this.leading && this.isLeader() && this.lock.lastKnownHolder() === this.identity && this.observedRecord) {
      const record = next(this.observedRecord);
      try {
        await call((s) => this.lock.update(record, s));
        return this.acquired(record, sentAt);
      } catch (err) {
        this.log.debug('optimistic lease renewal failed; reading the Lease', {
          error: describeError(err),
          status: httpStatus(err),
        });
        if (!this.isLeader() || this.stopping.signal.aborted) return false;
      }
    }
    try {
      const current = await call((s) => this.lock.get(s));
      if (!current) {
        if (this.stopping.signal.aborted) return false;
        const record = next();
        await call((s) => this.lock.create(record, s));
        return this.acquired(record, sentAt);
      }
      this.observe(current.record, current.raw);
      const held = current.record.holderIdentity;
      const expiresAt = this.observedAt + current.record.leaseDurationSeconds * 1000;
      if (held && held !== this.identity && this.clock.now() < expiresAt) return false;
      // A leader that was paused (SIGSTOP, GC, starvation) between the read and here must not
      // write: its renew deadline passed, so a standby may already hold the Lease.
      // A replica that began stepping down meanwhile must not take the Lease either.
      if ((this.leading && !this.isLeader()) || this.lost || this.stopping.signal.aborted) return false;
      const record = next(current.record);
      await call((s) => this.lock.update(record, s));
      return this.acquired(record, sentAt);
    } catch (err) {
      const status = httpStatus(err);
      if (status === 409) this.log.debug('lost a lease update race (409 Conflict)');
      else this.log.warn('lease request failed', { error: describeError(err), status });
      return false;
    }
  }

  private acquired(record: LeaderElectionRecord, sentAt: number): boolean {
    this.observe(record, rawRecord(record));
    this.lastRenewSentAt = sentAt;
    if (this.leading) this.armDeadline();
    return true;
  }

  private observe(record: LeaderElectionRecord, raw: string): void {
    if (raw !== this.observedRaw) {
      this.observedRaw = raw;
      this.observedRecord = record;
      this.observedAt = this.clock.now();
    }
    if (record.holderIdentity !== this.reportedLeader) {
      this.reportedLeader = record.holderIdentity;
      if (record.holderIdentity) {
        this.log.info('new leader observed', { leader: record.holderIdentity });
        this.safely('onNewLeader', () => this.callbacks.onNewLeader?.(record.holderIdentity));
      }
    }
  }

  private becomeLeader(): void {
    this.log.info('acquired the lease; now leading', { leaseTransitions: this.observedRecord?.leaseTransitions });
    this.leading = true;
    this.armDeadline();
    this.leaderAbort = new AbortController();
    const signal = this.leaderAbort.signal;
    this.safely('onStartedLeading', () => this.callbacks.onStartedLeading(signal));
  }

  private async release(): Promise<void> {
    if (this.lock.lastKnownHolder() !== this.identity) return;
    const now = new Date(this.clock.now()).toISOString();
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: this.observedRecord?.leaseTransitions ?? 0,
    };
    try {
      await withTimeout(
        this.clock,
        this.t.requestTimeoutMs,
        undefined,
        (s) => this.lock.update(record, s),
        () => new Error('lease release timed out'),
      );
      this.observe(record, rawRecord(record));
      this.log.info('released the lease');
    } catch (err) {
      // 409: someone else wrote it since our last renewal, so it is no longer ours to release.
      this.log.warn('could not release the lease; it will expire instead', {
        error: describeError(err),
        status: httpStatus(err),
      });
    }
  }

  private notifyStopped(reason: StopReason): void {
    this.safely('onStoppedLeading', () => this.callbacks.onStoppedLeading(reason));
  }

  /** Runs a user callback; neither a throw nor a rejected promise may break the election loop. */
  private safely(name: string, fn: () => unknown): void {
    try {
      const result = fn();
      if (result instanceof Promise) result.catch((err: unknown) => this.log.error(`${name} failed`, { error: err }));
    } catch (err) {
      this.log.error(`${name} threw`, { error: err });
    }
  }
}
