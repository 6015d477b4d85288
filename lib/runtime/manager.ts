import { CoordinationV1Api, type KubeConfig, type KubernetesObject, type V1Lease } from '@kubernetes/client-node';
import { Gauge, Registry } from 'prom-client';
import { randomBytes } from 'node:crypto';
import { realClock, sleep, type Clock } from './clock.js';
import { Metrics } from '../contract.js';
import { createCertificateProvider, type CertificateProvider } from './certs/index.js';
import { Controller, type ControllerOptions } from './controller.js';
import { EventLoopStallDetector, HealthServer, readyCheck, webhookSelfCheck } from './health/index.js';
import { Informer, type InformerOptions } from './informer/index.js';
import { LeaderElector, LeaseLock, recordOf } from './leader/index.js';
import type { Logger } from './log.js';
import { createMetricsRegistry, MetricsServer } from './metrics.js';
import { SHUTDOWN_RESERVE_MS, type ManagerOptions } from './options.js';
import { WebhookServer, type Webhook } from './webhook/index.js';

/** How a manager replica ends: 0 after a graceful shutdown, 1 when it must be restarted. */
export type ExitCode = 0 | 1;

export interface ManagerDeps {
  options: ManagerOptions;
  kubeConfig: KubeConfig;
  logger: Logger;
  clock?: Clock;
  /** Called once when the process must end (lost leadership, a component died). */
  onExit: (code: ExitCode, reason: string) => void;
}

/**
 * controller-runtime's Manager in TypeScript. Every replica serves admission and keeps the
 * caches its webhooks read; only the Lease holder starts the leader caches and controllers.
 */
export class Manager {
  readonly options: ManagerOptions;
  readonly kubeConfig: KubeConfig;
  readonly registry: Registry;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly elector?: LeaderElector;
  /** Watches the Lease so a standby sees a release at once instead of at its next retry. */
  private readonly leaseWatch?: Informer<V1Lease>;
  private readonly webhooks: WebhookServer;
  private readonly health: HealthServer;
  private readonly metrics: MetricsServer;
  private readonly certs: CertificateProvider;
  private readonly stall: EventLoopStallDetector;
  private readonly informers = new Map<string, { informer: Informer<KubernetesObject>; leaderOnly: boolean }>();
  private readonly controllers: Controller[] = [];
  private leading = false;
  private shutdown?: Promise<void>;

  constructor(private readonly deps: ManagerDeps) {
    const o = (this.options = deps.options);
    this.kubeConfig = deps.kubeConfig;
    this.logger = deps.logger;
    this.clock = deps.clock ?? realClock;
    this.registry = createMetricsRegistry();
    this.metrics = new MetricsServer({ registry: this.registry, logger: this.logger.child({ component: 'metrics' }), port: o.metricsAddr.port, host: o.metricsAddr.host });
    this.health = new HealthServer({ logger: this.logger.child({ component: 'health' }), port: o.healthAddr.port, host: o.healthAddr.host, clock: this.clock });
    this.stall = new EventLoopStallDetector({ clock: this.clock });
    this.webhooks = new WebhookServer({
      certDir: o.certDir, port: o.webhookPort, host: o.webhookHost, logger: this.logger.child({ component: 'webhook' }), registry: this.registry, clock: this.clock,
    });
    this.certs = createCertificateProvider({
      kubeConfig: this.kubeConfig, mode: o.certMode, namespace: o.podNamespace, certDir: o.certDir, secretName: o.secretName, serviceName: o.serviceName,
      logger: this.logger.child({ component: 'certs' }), clock: this.clock, policy: { renewBeforeMs: o.certsRenewBeforeMs },
      onCertificatesWritten: () => this.webhooks.reloadCertificates(),
    });
    const certs = this.certs;
    new Gauge({
      name: Metrics.certificateExpiry, help: 'When the serving certificate this replica presents expires (Unix seconds).', registers: [this.registry],
      collect() {
        const expiresAt = certs.expiresAt();
        if (expiresAt !== undefined) this.set(Math.floor(expiresAt / 1000));
      },
    });
    if (o.role !== 'webhook' && o.leaderElection) {
      this.elector = new LeaderElector({
        lock: new LeaseLock(this.kubeConfig.makeApiClient(CoordinationV1Api), o.leaderElectionNamespace, o.leaderElectionId),
        // Unique per process: a restarted container must not inherit its predecessor's lease.
        identity: `${o.podName}_${randomBytes(4).toString('hex')}`,
        leaseDurationMs: o.leaseDurationMs, renewDeadlineMs: o.renewDeadlineMs, retryPeriodMs: o.retryPeriodMs,
        logger: this.logger.child({ component: 'leader' }), registry: this.registry, clock: this.clock,
        callbacks: {
          onStartedLeading: () => this.startLeading(),
          onStoppedLeading: (reason) => { if (reason === 'lost') this.fatal('leadership lost: exiting so a fresh process campaigns again'); },
        },
      });
      this.leaseWatch = leaseWatch(this.kubeConfig, o.leaderElectionNamespace, o.leaderElectionId, this.logger.child({ component: 'leader' }), this.clock, this.elector);
    }
  }

  /** A shared informer per path: `leaderOnly` ones start with the controllers. */
  informer<T extends KubernetesObject>(path: string, leaderOnly: boolean, extra: Partial<InformerOptions<T>> = {}): Informer<T> {
    const existing = this.informers.get(path);
    if (existing) {
      existing.leaderOnly &&= leaderOnly;
      return existing.informer as unknown as Informer<T>;
    }
    const informer = new Informer<T>({
      path, kubeConfig: this.kubeConfig, logger: this.logger.child({ informer: path }), registry: this.registry, clock: this.clock,
      maxStalenessMs: this.options.maxCacheStalenessMs, ...extra,
    });
    this.informers.set(path, { informer: informer as unknown as Informer<KubernetesObject>, leaderOnly });
    return informer;
  }

  registerWebhook(path: string, webhook: Webhook): void {
    if (this.options.role !== 'controllers') this.webhooks.register(path, webhook);
  }

  /** A leader-only controller; `--<name>-workers` sets its concurrency. */
  addController(options: Omit<ControllerOptions, 'logger' | 'registry' | 'clock' | 'workers'>): Controller | undefined {
    if (this.options.role === 'webhook') return undefined;
    const controller = new Controller({
      ...options, workers: this.options.workers[options.name] ?? 1, logger: this.logger.child({ controller: options.name }), registry: this.registry, clock: this.clock,
    });
    this.controllers.push(controller);
    return controller;
  }

  /** Throws unless this replica may write as leader right now (no fencing exists in Kubernetes). */
  checkStillLeader(): void {
    this.elector?.checkStillLeader();
  }

  async start(): Promise<void> {
    const serving = this.options.role !== 'controllers';
    this.stall.start();
    this.health.addLivenessCheck('event-loop', this.stall.check);
    await Promise.all([this.metrics.start(), this.health.start()]);
    for (const [path, { informer, leaderOnly }] of this.informers) {
      const name = checkName(path);
      this.health.addLivenessCheck(`informer-${name}`, () => informer.checkHealth());
      // Webhooks answer from these caches: a replica whose cache cannot prove it is current
      // (watch down past --max-cache-staleness) leaves the Service until it has relisted.
      if (!leaderOnly) this.health.addReadinessCheck(`cache-${name}`, () => informer.checkFresh());
    }
    if (this.elector) this.health.addLivenessCheck('leader-election', () => this.elector!.checkHealth());
    await Promise.all([...this.informers.values()].filter((i) => !i.leaderOnly).map((i) => i.informer.start()));
    if (serving) {
      this.health.addReadinessCheck('certificates', readyCheck(this.certs, 'certificates'));
      this.health.addReadinessCheck('webhook', webhookSelfCheck({ port: this.options.webhookPort, caPem: () => this.certs.caPem() }));
      await this.certs.start();
      await this.certs.waitReady();
      await this.webhooks.start();
    }
    if (this.elector) {
      await this.leaseWatch?.start();
      await this.elector.start();
    } else if (this.options.role !== 'webhook') await this.startLeading();
    this.logger.info('manager started', { role: this.options.role, leaderElection: Boolean(this.elector), identity: this.elector?.identity });
  }

  private async startLeading(): Promise<void> {
    if (this.leading || this.shutdown) return;
    this.leading = true;
    await Promise.all([...this.informers.values()].filter((i) => i.leaderOnly).map((i) => i.informer.start()));
    await Promise.all(this.controllers.map((c) => c.start()));
    this.logger.info('controllers started', { controllers: this.controllers.map((c) => c.name) });
  }

  /**
   * SIGTERM, as one bounded sequence (`--graceful-shutdown-timeout`, whatever is in flight):
   * - at once: readiness fails, admission starts draining, and the elector steps down: it stops
   *   campaigning (a terminating standby never takes the Lease) and a leader's signal, gauge and
   *   checkStillLeader() say "not leading" from this instant, so reconciles stop between writes;
   * - controllers get until the budget's reserve to finish the write in flight; then a leader
   *   releases the Lease (or, if a write is still hanging, leaves it to expire so that write can
   *   never overlap the next leader's);
   * - admission keeps being served for the drain window, then servers and caches stop.
   */
  stop(): Promise<void> {
    this.shutdown ??= (async () => {
      const log = this.logger.child({ phase: 'shutdown' });
      const deadline = this.clock.now() + this.options.gracefulShutdownTimeoutMs;
      const left = (reserveMs = 0) => Math.max(0, deadline - reserveMs - this.clock.now());
      this.health.markShuttingDown();
      const stepDown = this.elector?.stepDown() ?? Promise.resolve(false);
      // A replica stepping down never campaigns again: it needs no more release hints.
      const leaseWatchStopped = stepDown.then(() => this.leaseWatch?.stop());
      let drained = Promise.resolve();
      if (this.options.role !== 'controllers') {
        log.info('draining admission', { drainMs: this.options.drainTimeoutMs, budgetMs: this.options.gracefulShutdownTimeoutMs });
        // Connection: close on every response from now on, so the API server's kept-alive
        // connections move to the replicas that stay during the window, instead of all being
        // cut at stop() (a POST racing a server-side close is a failed admission).
        this.webhooks.drain();
        drained = sleep(this.clock, this.options.drainTimeoutMs);
      }
      const leaderDone = (async () => {
        await stepDown;
        const stopped = await Promise.all(this.controllers.map((c) => c.stop(left(SHUTDOWN_RESERVE_MS))));
        if (!this.elector) return;
        if (stopped.every(Boolean)) await this.elector.stop({ release: true });
        else {
          log.warn('a write was still in flight at the controllers\' deadline; leaving the Lease to expire instead of releasing it');
          await this.elector.stop({ release: false });
        }
      })();
      await Promise.all([leaderDone, drained]);
      await this.webhooks.stop(left(SHUTDOWN_RESERVE_MS / 2));
      await Promise.all([...this.informers.values()].map((i) => i.informer.stop()));
      await leaseWatchStopped;
      await this.certs.stop();
      this.stall.stop();
      await Promise.all([this.health.stop(), this.metrics.stop()]);
      log.info('manager stopped');
    })();
    return this.shutdown;
  }

  private fatal(reason: string): void {
    this.logger.error('fatal', { reason });
    this.deps.onExit(1, reason);
  }

  /** Ports actually bound (tests pass 0 to get free ones). */
  ports(): { webhook: number; health: number; metrics: number } {
    return { webhook: this.webhooks.port(), health: this.health.port(), metrics: this.metrics.port() };
  }
}

/**
 * A watch on the one Lease (field selector on its name): every version it delivers is an
 * observation for the elector (expiry is judged from the last renewal as it happened, not from the
 * next poll), and a release or deletion wakes it. The elector still reads the Lease and writes it
 * with optimistic concurrency before it leads, so a lost or late event only means waiting longer.
 * Its metrics go to a private registry: it is not a cache any webhook or controller reads.
 */
function leaseWatch(kubeConfig: KubeConfig, namespace: string, name: string, logger: Logger, clock: Clock, elector: LeaderElector): Informer<V1Lease> {
  const informer = new Informer<V1Lease>({
    path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
    fieldSelector: `metadata.name=${name}`,
    kubeConfig, logger: logger.child({ informer: 'lease' }), registry: new Registry(), clock,
  });
  informer.addEventHandler({
    onAdd: (lease) => elector.observeLease(recordOf(lease)),
    onUpdate: (_old, lease) => elector.observeLease(recordOf(lease)),
    onDelete: () => elector.wake(),
  });
  return informer;
}

/** `/apis/apps.kruise.io/v1alpha1/sidecarsets` -> `apps-kruise-io-v1alpha1-sidecarsets` (check names are DNS-ish). */
function checkName(path: string): string {
  return path.toLowerCase().replace(/^\/apis?\//, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
