import { sleep, type Clock } from './clock.js';
import type { Logger } from './log.js';

/**
 * controller-runtime's manager.Runnable with its LeaderElectionRunnable: something the manager
 * starts once and stops once, in the order of its {@link RunnableGroup}.
 */
export interface Runnable {
  readonly name: string;
  start(): Promise<void> | void;
  /**
   * Stops, leaving work in flight `budgetMs` (what is left of the shutdown budget for this
   * group). Resolves `false` when work was still in flight at that deadline: for a controller,
   * a write that may still land, so the Lease is left to expire instead of being released.
   */
  stop(budgetMs: number): Promise<boolean | void> | boolean | void;
  /** Called at once on shutdown, before anything stops: stop attracting new work, keep serving. */
  drain?(): void;
  /** true: started only while this replica leads (controllers and the caches only they read). */
  readonly needLeaderElection?: boolean;
}

/**
 * Where a runnable sits. Groups start in this order (a group's members together), leader-only
 * members the same way once elected; the stop order is written down once, in {@link Runnables.stop}.
 */
const START_ORDER = ['liveness', 'servers', 'caches', 'certs', 'webhooks', 'election', 'controllers'] as const;
export type RunnableGroup = (typeof START_ORDER)[number];

/** The Lease elector as the manager drives it (leader/elector.ts's LeaderElector). */
export interface ManagedElector {
  start(): Promise<void>;
  /** Stops campaigning and leading at once; resolves once its loop has ended. */
  stepDown(): Promise<unknown>;
  /** `release: true` hands the Lease over; false leaves it to expire. */
  stop(options: { release: boolean }): Promise<void>;
}

export interface RunnablesOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Absent: no leader election, leader-only runnables start with the rest. */
  readonly elector?: ManagedElector;
  /** How long admission keeps being served after shutdown begins (`--drain-timeout`). */
  readonly drainTimeoutMs: number;
  /** Shutdown to exit, whatever is in flight (`--graceful-shutdown-timeout`). */
  readonly gracefulShutdownTimeoutMs: number;
  /** Kept from the budget after the controllers' deadline, for stopping servers and exiting. */
  readonly shutdownReserveMs: number;
}

/** The manager's runnables: start order, leader-only start, and the one shutdown sequence. */
export class Runnables {
  private readonly groups = new Map<RunnableGroup, Runnable[]>(START_ORDER.map((g) => [g, []]));
  private leading = false;
  private stopping?: Promise<void>;

  constructor(private readonly o: RunnablesOptions) {}

  add(group: RunnableGroup, runnable: Runnable): void {
    if (this.stopping) throw new Error(`runnable ${runnable.name}: added after shutdown began`);
    this.groups.get(group)!.push(runnable);
  }

  /** Starts everything not leader-only, then campaigns (or, without an elector, leads at once). */
  async start(): Promise<void> {
    await this.startGroups(false);
    if (this.o.elector) await this.o.elector.start();
    else if (this.all().some((r) => r.needLeaderElection)) await this.startLeading();
  }

  /** The elector's onStartedLeading: starts the leader-only runnables, caches before controllers. */
  async startLeading(): Promise<void> {
    if (this.leading || this.stopping) return;
    this.leading = true;
    await this.startGroups(true);
    this.o.logger.info('controllers started', { controllers: this.members('controllers').map((r) => r.name) });
  }

  /**
   * Leadership lost: controllers stop at once, without waiting for writes in flight (every
   * further write fails its leadership check). The caller exits the process.
   */
  async stopLeading(): Promise<void> {
    await Promise.all(this.members('controllers').map((r) => r.stop(0)));
  }

  /**
   * Shutdown, as one bounded sequence (`gracefulShutdownTimeoutMs`, whatever is in flight):
   * - at once: every runnable drains (readiness fails, admission answers with Connection: close)
   *   and the elector steps down: it stops campaigning (a terminating standby never takes the
   *   Lease) and a leader's signal says "not leading" from this instant, so reconciles stop
   *   between writes;
   * - controllers get until the budget's reserve to finish the write in flight; then a leader
   *   releases the Lease (or, if a write is still hanging, leaves it to expire so that write can
   *   never overlap the next leader's);
   * - admission keeps being served for the drain window, then webhooks, caches, the Lease watch,
   *   certificates, liveness and the HTTP servers stop, in that order.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const log = this.o.logger.child({ phase: 'shutdown' });
      const deadline = this.o.clock.now() + this.o.gracefulShutdownTimeoutMs;
      const left = (reserveMs = 0) => Math.max(0, deadline - reserveMs - this.o.clock.now());
      for (const r of this.all()) r.drain?.();
      const stepDown = this.o.elector?.stepDown() ?? Promise.resolve();
      // A replica stepping down never campaigns again: it needs no more release hints.
      const electionStopped = stepDown.then(() => this.stopGroup('election', left()));
      let drained = Promise.resolve();
      if (this.members('webhooks').length > 0) {
        log.info('draining admission', { drainMs: this.o.drainTimeoutMs, budgetMs: this.o.gracefulShutdownTimeoutMs });
        drained = sleep(this.o.clock, this.o.drainTimeoutMs);
      }
      const leaderDone = (async () => {
        await stepDown;
        const stopped = await this.stopGroup('controllers', left(this.o.shutdownReserveMs));
        if (!this.o.elector) return;
        const release = stopped.every((s) => s !== false);
        if (!release)
          log.warn(
            "a write was still in flight at the controllers' deadline; leaving the Lease to expire instead of releasing it",
          );
        await this.o.elector.stop({ release });
      })();
      await Promise.all([leaderDone, drained]);
      await this.stopGroup('webhooks', left(this.o.shutdownReserveMs / 2));
      await this.stopGroup('caches', left());
      await electionStopped;
      await this.stopGroup('certs', left());
      await this.stopGroup('liveness', left());
      await this.stopGroup('servers', left());
      log.info('manager stopped');
    })();
    return this.stopping;
  }

  private async startGroups(leaderOnly: boolean): Promise<void> {
    for (const group of START_ORDER) {
      await Promise.all(
        this.members(group)
          .filter((r) => Boolean(r.needLeaderElection) === leaderOnly)
          .map((r) => r.start()),
      );
    }
  }

  private stopGroup(group: RunnableGroup, budgetMs: number): Promise<Array<boolean | void>> {
    return Promise.all(this.members(group).map((r) => r.stop(budgetMs)));
  }

  private members(group: RunnableGroup): Runnable[] {
    return this.groups.get(group)!;
  }

  private all(): Runnable[] {
    return [...this.groups.values()].flat();
  }
}
