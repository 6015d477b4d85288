import type { KubeConfig, KubernetesObject, V1Lease } from '@kubernetes/client-node';
import { Gauge, Registry } from 'prom-client';
import { randomBytes } from 'node:crypto';
import { realClock, type Clock } from './clock.js';
import {
  Metrics,
  REGISTRATIONS_VERSION,
  resourceKey,
  resourceRef,
  Roles,
  RuntimeApi,
  runtimeWebhookGate,
  servedRuntimeWebhooks,
  workersFlag,
  type ControllerRegistration,
  type Registrations,
  type ResourceRef,
  type WebhookRegistration,
} from '../contract.js';
import { createCertificateProvider, type CertificateProvider } from './certs/index.js';
import { Client, kindPath, type ClientCall, type Kind } from './client/index.js';
import { AdmissionBinding } from './bindings/admission.js';
import { Controller, type ControllerOptions } from './controller.js';
import { EventBroadcaster, kubeEventSink, type EventRecorder } from './events/index.js';
import {
  EventLoopStallDetector,
  HealthServer,
  readyCheck,
  webhookSelfCheck,
  type HealthCheck,
} from './health/index.js';
import { Informer, type InformerOptions } from './informer/index.js';
import { coordinationV1, kubeClient } from './kube/index.js';
import { LeaderElector, LeaseLock, recordOf } from './leader/index.js';
import type { Logger } from './log.js';
import { MemoryReducer } from './memory-reducer.js';
import { createMetricsRegistry, MetricsServer } from './metrics.js';
import { SHUTDOWN_RESERVE_MS, type ManagerOptions } from './options.js';
import { Runnables, type Runnable } from './runnables.js';
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
  /** The program's name (run's `name`), which names its webhook bindings' entries. @default the Lease's name */
  name?: string;
  /** The program's own flags (run's `flags`), for its registrations. @default none */
  flags?: readonly string[];
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
  /**
   * The API client of this replica, for webhooks and start-up work: its writes are not guarded by leader election
   * (every replica serves admission). A controller's reconcile gets the guarded one in its ReconcileContext.
   */
  readonly client: Client;
  /** Watches the Lease so a standby sees a release at once instead of at its next retry. */
  private readonly leaseWatch?: Informer<V1Lease>;
  private readonly webhooks: WebhookServer;
  private readonly health: HealthServer;
  private readonly metrics: MetricsServer;
  private readonly certs: CertificateProvider;
  private readonly stall: EventLoopStallDetector;
  private readonly informers = new Map<string, { informer: Informer<KubernetesObject>; leaderOnly: boolean }>();
  private readonly controllers: Controller[] = [];
  private readonly runnables: Runnables;
  /** What the role decides, once: every role but `controllers` serves admission, every role but `webhook` may lead. */
  private readonly serving: boolean;
  private readonly leads: boolean;
  /** What the program registered through when(), addController and informer(Kind): see registrations(). */
  private readonly recorded: {
    webhooks: WebhookRegistration[];
    controllers: ControllerRegistration[];
    watches: Map<string, ResourceRef>;
  } = { webhooks: [], controllers: [], watches: new Map() };

  constructor(private readonly deps: ManagerDeps) {
    const o = (this.options = deps.options);
    this.kubeConfig = deps.kubeConfig;
    this.logger = deps.logger;
    this.clock = deps.clock ?? realClock;
    this.client = new Client(this.kubeConfig);
    this.registry = createMetricsRegistry();
    this.metrics = new MetricsServer({
      registry: this.registry,
      logger: this.logger.child({ component: 'metrics' }),
      port: o.metricsAddr.port,
      host: o.metricsAddr.host,
    });
    this.health = new HealthServer({
      logger: this.logger.child({ component: 'health' }),
      port: o.healthAddr.port,
      host: o.healthAddr.host,
      clock: this.clock,
    });
    this.stall = new EventLoopStallDetector({ clock: this.clock });
    this.webhooks = new WebhookServer({
      certDir: o.certDir,
      port: o.webhookPort,
      host: o.webhookHost,
      logger: this.logger.child({ component: 'webhook' }),
      registry: this.registry,
      clock: this.clock,
    });
    this.certs = createCertificateProvider({
      kubeConfig: this.kubeConfig,
      mode: o.certMode,
      namespace: o.podNamespace,
      certDir: o.certDir,
      secretName: o.secretName,
      serviceName: o.serviceName,
      mutatingWebhookConfiguration: o.mutatingWebhookConfiguration,
      validatingWebhookConfiguration: o.validatingWebhookConfiguration,
      logger: this.logger.child({ component: 'certs' }),
      clock: this.clock,
      policy: { renewBeforeMs: o.certsRenewBeforeMs },
      onCertificatesWritten: () => this.webhooks.reloadCertificates(),
    });
    const certs = this.certs;
    new Gauge({
      name: Metrics.certificateExpiry,
      help: 'When the serving certificate this replica presents expires (Unix seconds).',
      registers: [this.registry],
      collect() {
        const expiresAt = certs.expiresAt();
        if (expiresAt !== undefined) this.set(Math.floor(expiresAt / 1000));
      },
    });
    this.serving = o.role !== Roles.controllers;
    this.leads = o.role !== Roles.webhook;
    if (this.leads && o.leaderElection) {
      this.elector = new LeaderElector({
        lock: new LeaseLock(coordinationV1(kubeClient(this.kubeConfig)), o.leaderElectionNamespace, o.leaderElectionId),
        // Unique per process: a restarted container must not inherit its predecessor's lease.
        identity: `${o.podName}_${randomBytes(4).toString('hex')}`,
        leaseDurationMs: o.leaseDurationMs,
        renewDeadlineMs: o.renewDeadlineMs,
        retryPeriodMs: o.retryPeriodMs,
        logger: this.logger.child({ component: 'leader' }),
        registry: this.registry,
        clock: this.clock,
        callbacks: {
          onStartedLeading: () => this.runnables.startLeading(),
          onStoppedLeading: (reason) => {
            if (reason !== 'lost') return;
            this.fatal('leadership lost: exiting so a fresh process campaigns again');
            void this.runnables.stopLeading();
          },
        },
      });
      this.leaseWatch = leaseWatch(
        this.kubeConfig,
        o.leaderElectionNamespace,
        o.leaderElectionId,
        this.logger.child({ component: 'leader' }),
        this.clock,
        this.elector,
      );
    }
    const r = (this.runnables = new Runnables({
      clock: this.clock,
      logger: this.logger,
      elector: this.elector,
      drainTimeoutMs: o.drainTimeoutMs,
      gracefulShutdownTimeoutMs: o.gracefulShutdownTimeoutMs,
      shutdownReserveMs: SHUTDOWN_RESERVE_MS,
    }));
    r.add('liveness', runnable('event-loop', this.stall));
    // Process housekeeping, like the stall detector; off from the drain on: no pause while handing over.
    const reducer = new MemoryReducer({
      logger: this.logger.child({ component: 'memory' }),
      registry: this.registry,
      clock: this.clock,
    });
    r.add('liveness', runnable('memory-reducer', reducer, { drain: () => reducer.stop() }));
    r.add('servers', runnable('metrics', this.metrics));
    r.add('servers', runnable('health', this.health, { drain: () => this.health.markShuttingDown() }));
    if (this.serving) {
      r.add(
        'certs',
        runnable('certificates', {
          start: async () => {
            await certs.start();
            await certs.waitReady();
          },
          stop: () => certs.stop(),
        }),
      );
      // Connection: close on every response from the drain on, so the API server's kept-alive
      // connections move to the replicas that stay during the window, instead of all being
      // cut at stop() (a POST racing a server-side close is a failed admission).
      r.add('webhooks', runnable('webhook-server', this.webhooks, { drain: () => this.webhooks.drain() }));
    }
    if (this.leaseWatch) r.add('election', runnable('lease-watch', this.leaseWatch));
  }

  /**
   * The shared informer (cache) of a kind, or of an API path: one per path, shared by every caller. `leaderOnly` ones
   * start with the controllers, on the leader only; the others run on every replica, for the webhooks, and a replica
   * whose cache goes stale leaves its Service (readiness). A Kind's non-leader cache is in the program's
   * registrations (RBAC get, list and watch).
   */
  informer<T extends KubernetesObject>(
    source: Kind<T> | string,
    leaderOnly = false,
    extra: Partial<InformerOptions<T>> = {},
  ): Informer<T> {
    const path = typeof source === 'string' ? source : kindPath(source);
    if (typeof source !== 'string' && !leaderOnly) this.recorded.watches.set(path, resourceRef(source));
    const existing = this.informers.get(path);
    if (existing) {
      existing.leaderOnly &&= leaderOnly;
      return existing.informer as unknown as Informer<T>;
    }
    const informer = new Informer<T>({
      path,
      kubeConfig: this.kubeConfig,
      logger: this.logger.child({ informer: path }),
      registry: this.registry,
      clock: this.clock,
      maxStalenessMs: this.options.maxCacheStalenessMs,
      ...extra,
    });
    this.informers.set(path, { informer: informer as unknown as Informer<KubernetesObject>, leaderOnly });
    return informer;
  }

  /**
   * An admission binding on `kind`: `manager.when(Kinds.Pod).isCreated().inNamespacesLabelled({ team: 'x' })
   * .mutate((pod) => { ... })`. Each binding is served at its own path on every replica that serves admission, and
   * is an entry of {@link registrations}, from which the constructs render its webhook configuration entry.
   */
  when<T extends KubernetesObject>(kind: Kind<T>): AdmissionBinding<T> {
    return new AdmissionBinding(kind, (bound, type) => {
      const r = bound.registration;
      const base = `${r.resource.kind.toLowerCase()}`;
      const taken = this.recorded.webhooks.filter((w) => w.type === type && w.resource.kind === r.resource.kind);
      const suffix = taken.length === 0 ? '' : `-${taken.length + 1}`;
      const verb = type === 'mutating' ? 'mutate' : 'validate';
      const group = r.resource.group.replaceAll('.', '-');
      const path = `/${verb}-${group}-${r.resource.version}-${base}${suffix}`;
      const name = `${type[0]}${base}${suffix}.${this.programName}.kruise-ha.io`;
      this.recorded.webhooks.push({ name, path, ...r });
      this.registerWebhook(path, bound.webhook(['kube-system', this.options.podNamespace]));
    });
  }

  /**
   * What this program serves and needs: its webhook bindings (paths, rules, filters), its controllers with the kinds
   * they watch, read and write, and the kinds its webhooks cache. `run` prints it for `--registrations`, and the
   * constructs render the webhook configurations and RBAC from it.
   */
  registrations(): Registrations {
    return {
      version: REGISTRATIONS_VERSION,
      name: this.programName,
      webhooks: this.recorded.webhooks.map((w) => ({ ...w })),
      controllers: this.recorded.controllers.map((c) => ({ ...c })),
      watches: [...this.recorded.watches.values()],
      flags: [...(this.deps.flags ?? [])],
      declaredControllers: Object.keys(this.options.workers),
    };
  }

  private get programName(): string {
    return this.deps.name ?? this.options.leaderElectionId;
  }

  /**
   * Serves `webhook` at `path` on this replica; false when it is not served: a `controllers`
   * replica serves no admission, and a webhook whose feature gate is off (PodWebhook=false) is
   * not registered (said once in the log, with what the configuration must drop).
   */
  registerWebhook(path: string, webhook: Webhook): boolean {
    if (!this.serving) return false;
    const entry = RuntimeApi.webhooks.find((w) => w.path === path);
    if (entry && !servedRuntimeWebhooks(this.options.featureGates).includes(entry)) {
      this.logger.warn('feature gate off: webhook not served', {
        gate: `${runtimeWebhookGate(path, this.options.featureGates)}=false`,
        webhook: entry.name,
        path,
        fix: `remove ${entry.name} from the ${entry.type} webhook configuration, or calls to it fail (failurePolicy Fail rejects the request)`,
      });
      return false;
    }
    this.webhooks.register(path, webhook);
    return true;
  }

  /**
   * A leader-only controller; `--<name>-workers` sets its concurrency. Its reconciles get {@link client} guarded by
   * {@link checkStillLeader}: a replica that lost its Lease writes nothing through it.
   *
   * `watches` are the kinds whose changes queue a reconcile of the changed object (leader-only caches); `reads` and
   * `writes` the other kinds its client reads and writes. They are its registrations (the RBAC the constructs
   * render), and once any is given its client refuses a call on a kind they do not name, before sending it, so a
   * missing grant shows in the first test rather than as a 403 in the cluster.
   */
  addController(
    options: Omit<ControllerOptions, 'logger' | 'registry' | 'clock' | 'workers' | 'client'> & ControllerAccess,
  ): Controller | undefined {
    const declared = Object.keys(this.options.workers);
    if (!declared.includes(options.name)) {
      throw new Error(
        `addController: controller "${options.name}" is not among the program's controllers (${declared.join(', ') || 'none'}), ` +
          `so its --${workersFlag(options.name)} flag does not exist. Fix: declare it, run({ controllers: ['${options.name}'] }) ` +
          `(or parseOptions(argv, env, { controllers }) when building the Manager yourself)`,
      );
    }
    if (this.recorded.controllers.some((c) => c.name === options.name))
      throw new Error(`addController: controller "${options.name}" is added twice. Fix: add each controller once`);
    const { watches = [], reads = [], writes = [], ...rest } = options;
    this.recorded.controllers.push({
      name: options.name,
      watches: watches.map(resourceRef),
      reads: reads.map(resourceRef),
      writes: writes.map(resourceRef),
    });
    if (!this.leads) return undefined;
    let client = this.client.withGuard(() => this.checkStillLeader());
    if (watches.length + reads.length + writes.length > 0)
      client = client.withAccess(accessCheck(options.name, [...watches, ...reads, ...writes], writes));
    const controller = new Controller({
      ...rest,
      client,
      workers: this.options.workers[options.name],
      logger: this.logger.child({ controller: options.name }),
      registry: this.registry,
      clock: this.clock,
    });
    for (const kind of watches) controller.watch(this.informer(kind, true));
    this.controllers.push(controller);
    return controller;
  }

  private broadcaster?: EventBroadcaster;

  /**
   * A recorder of Kubernetes Events whose source is `component` (controller-runtime's
   * GetEventRecorderFor): one broadcaster per process, stopped at shutdown.
   */
  eventRecorder(component: string): EventRecorder {
    if (!this.broadcaster) {
      const broadcaster = (this.broadcaster = new EventBroadcaster({
        sink: kubeEventSink(kubeClient(this.kubeConfig)),
        clock: this.clock,
        logger: this.logger.child({ component: 'events' }),
      }));
      this.runnables.add(
        'liveness',
        runnable('event-broadcaster', { start: async () => {}, stop: async () => broadcaster.stop() }),
      );
    }
    return this.broadcaster.recorder(component);
  }

  /**
   * A named readiness check, served at `/readyz/<name>`: while it fails, this replica is left out of its
   * Service's endpoints. Names are lower-case DNS labels, unique among the manager's own checks
   * (`webhook`, `certificates`, `cache-*`), which start() adds.
   */
  addReadinessCheck(name: string, check: HealthCheck): void {
    this.health.addReadinessCheck(name, check);
  }

  /**
   * A named liveness check, served at `/healthz/<name>`: while it fails, the kubelet restarts the
   * container. Names are lower-case DNS labels, unique among the manager's own checks (`event-loop`,
   * `leader-election`, `informer-*`), which start() adds.
   */
  addLivenessCheck(name: string, check: HealthCheck): void {
    this.health.addLivenessCheck(name, check);
  }

  /** Throws unless this replica may write as leader right now (no fencing exists in Kubernetes). */
  checkStillLeader(): void {
    this.elector?.checkStillLeader();
  }

  /** Registers the health checks and the caches and controllers added so far, then starts them all. */
  async start(): Promise<void> {
    this.health.addLivenessCheck('event-loop', this.stall.check);
    for (const [path, { informer, leaderOnly }] of this.informers) {
      const name = checkName(path);
      this.health.addLivenessCheck(`informer-${name}`, () => informer.checkHealth());
      // Webhooks answer from these caches: a replica whose cache is stale past --max-cache-staleness
      // while an API server is up (it refuses our watch, or a review waited for the cache in vain)
      // leaves the Service until it has relisted. A full API outage does not (Informer.checkReady).
      if (!leaderOnly) this.health.addReadinessCheck(`cache-${name}`, () => informer.checkReady());
      // A webhook-only replica never leads, so it never starts the caches only controllers read.
      if (!leaderOnly || this.leads)
        this.runnables.add('caches', runnable(path, informer, { needLeaderElection: leaderOnly }));
    }
    if (this.elector) this.health.addLivenessCheck('leader-election', () => this.elector!.checkHealth());
    if (this.serving) {
      this.health.addReadinessCheck('certificates', readyCheck(this.certs, 'certificates'));
      this.health.addReadinessCheck(
        'webhook',
        webhookSelfCheck({ port: this.options.webhookPort, caPem: () => this.certs.caPem() }),
      );
    }
    for (const c of this.controllers)
      this.runnables.add('controllers', runnable(c.name, c, { needLeaderElection: true }));
    await this.runnables.start();
    this.logger.info('manager started', {
      role: this.options.role,
      leaderElection: Boolean(this.elector),
      identity: this.elector?.identity,
    });
  }

  /** SIGTERM: the bounded shutdown sequence written down in {@link Runnables.stop}. */
  stop(): Promise<void> {
    return this.runnables.stop();
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
function leaseWatch(
  kubeConfig: KubeConfig,
  namespace: string,
  name: string,
  logger: Logger,
  clock: Clock,
  elector: LeaderElector,
): Informer<V1Lease> {
  const informer = new Informer<V1Lease>({
    path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
    fieldSelector: `metadata.name=${name}`,
    kubeConfig,
    logger: logger.child({ informer: 'lease' }),
    registry: new Registry(),
    clock,
  });
  informer.addEventHandler({
    onAdd: (lease) => elector.observeLease(recordOf(lease)),
    onUpdate: (_old, lease) => elector.observeLease(recordOf(lease)),
    onDelete: () => elector.wake(),
  });
  return informer;
}

/** A component as a {@link Runnable}: anything with start() and stop(budgetMs). */
function runnable(name: string, target: Pick<Runnable, 'start' | 'stop'>, extra: Partial<Runnable> = {}): Runnable {
  return { name, start: () => target.start(), stop: (budgetMs) => target.stop(budgetMs), ...extra };
}

/** `/apis/apps.kruise.io/v1alpha1/sidecarsets` -> `apps-kruise-io-v1alpha1-sidecarsets` (check names are DNS-ish). */
function checkName(path: string): string {
  return path
    .toLowerCase()
    .replace(/^\/apis?\//, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

/** The kinds a controller declares besides its reconcile (see Manager.addController). */
export interface ControllerAccess {
  /** Kinds whose add, update and delete queue a reconcile of that object (cached on the leader, all namespaces). */
  watches?: readonly Kind[];
  /** Other kinds its client reads (get, list). */
  reads?: readonly Kind[];
  /** Kinds its client writes (create, update, patch, delete, status). */
  writes?: readonly Kind[];
}

/** Refuses a call on a kind the controller did not declare: the RBAC rendered from its registration has no grant. */
function accessCheck(
  controller: string,
  readable: readonly Kind[],
  writable: readonly Kind[],
): (call: ClientCall) => void {
  const reads = new Set(readable.map(resourceKey));
  const writes = new Set(writable.map(resourceKey));
  return (call) => {
    const ok = call.write ? writes.has(resourceKey(call.kind)) : reads.has(resourceKey(call.kind));
    if (ok) return;
    const list = call.write ? 'writes' : 'reads (or watches, or writes)';
    throw new Error(
      `controller ${controller}: ${call.verb} ${call.kind.kind} is not declared, so its RBAC grants none. ` +
        `Fix: add Kinds.${call.kind.kind} (or its defineKind) to addController's ${list}`,
    );
  };
}
