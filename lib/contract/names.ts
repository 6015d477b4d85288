/**
 * The names both rooms share: flags, env vars, ports, HTTP paths, object names, label keys, roles,
 * certificate modes and feature gates. Names follow upstream kruise-manager wherever upstream has
 * one, so the same Deployment shape configures both images. No imports: every other contract
 * module may read these.
 */
/** Default ports of the manager container. */
export const Ports = {
  webhook: 9876,
  metrics: 8080,
  health: 8000,
  /** The webhook Service port the API server dials. */
  webhookService: 443,
} as const;

/** Command-line flags (upstream kruise-manager names). */
export const Flags = {
  enableLeaderElection: 'enable-leader-election',
  leaderElectionNamespace: 'leader-election-namespace',
  leaderElectionId: 'leader-election-id',
  leaderElectionResourceLock: 'leader-election-resource-lock',
  leaseDuration: 'leader-election-lease-duration',
  renewDeadline: 'leader-election-renew-deadline',
  retryPeriod: 'leader-election-retry-period',
  metricsAddr: 'metrics-addr',
  healthProbeAddr: 'health-probe-addr',
  featureGates: 'feature-gates',
  namespace: 'namespace',
  kubeconfig: 'kubeconfig',
  syncPeriod: 'sync-period',
  restConfigQps: 'rest-config-qps',
  restConfigBurst: 'rest-config-burst',
  logToStderr: 'logtostderr',
  verbosity: 'v',
  /** Runtime-only: which halves this replica runs (`all`, `webhook`, `controllers`). */
  role: 'role',
  /** Runtime-only: how long admission keeps being served after SIGTERM. */
  drainTimeout: 'drain-timeout',
  /** Runtime-only: the whole shutdown's budget; the process exits within it whatever is in flight. */
  gracefulShutdownTimeout: 'graceful-shutdown-timeout',
  /** Runtime-only: how stale a webhook's cache may be before the replica turns unready and refuses admission. */
  maxCacheStaleness: 'max-cache-staleness',
  /** Runtime-only: `self-managed` or `external` (cert-manager) certificates. */
  certMode: 'cert-mode',
  /** Runtime-only: log level (`debug`, `info`, `warn`, `error`). */
  logLevel: 'log-level',
} as const;

/** Per-controller worker flag, for example `--sidecarset-workers`. */
export function workersFlag(controller: string): string {
  return `${controller}-workers`;
}

/**
 * Controllers the runtime carries, by the name of their `--<name>-workers` flag. The runtime parses
 * a worker flag for each (and for no other name), and the constructs accept these names in
 * `controllerWorkers` for the runtime image: a controller added here is tunable in both rooms.
 */
export const RuntimeControllers = {
  sidecarset: 'sidecarset',
  workloadspread: 'workloadspread',
} as const;

/** Environment variables (upstream names). */
export const Env = {
  podNamespace: 'POD_NAMESPACE',
  podName: 'POD_NAME',
  webhookPort: 'WEBHOOK_PORT',
  webhookHost: 'WEBHOOK_HOST',
  webhookCertDir: 'WEBHOOK_CERT_DIR',
  secretName: 'SECRET_NAME',
  serviceName: 'SERVICE_NAME',
  certsRenewBefore: 'CERTS_RENEW_BEFORE',
} as const;

/** HTTP paths served by the manager. */
export const Paths = {
  readyz: '/readyz',
  healthz: '/healthz',
  metrics: '/metrics',
  mutatePod: '/mutate-pod',
  validatePod: '/validate-pod',
  mutateSidecarSet: '/mutate-apps-kruise-io-v1alpha1-sidecarset',
  validateSidecarSet: '/validate-apps-kruise-io-v1alpha1-sidecarset',
  validateWorkloadSpread: '/validate-apps-kruise-io-v1alpha1-workloadspread',
} as const;

/**
 * Metric names the runtime exports beyond controller-runtime's (which both flavours share), so
 * the dashboard and alert constructs query what the runtime serves.
 */
export const Metrics = {
  /** Gauge: when the serving certificate a replica presents expires (Unix seconds). */
  certificateExpiry: 'kruise_webhook_certificate_expiration_timestamp_seconds',
} as const;

/** Names of the objects the manager reads and writes at runtime. */
export const Names = {
  namespace: 'kruise-system',
  daemonConfigNamespace: 'kruise-daemon-config',
  webhookService: 'kruise-webhook-service',
  webhookSecret: 'kruise-webhook-certs',
  mutatingWebhookConfiguration: 'kruise-mutating-webhook-configuration',
  validatingWebhookConfiguration: 'kruise-validating-webhook-configuration',
  leaderElectionId: 'kruise-manager',
  managerServiceAccount: 'kruise-manager',
  daemonServiceAccount: 'kruise-daemon',
  managerContainer: 'manager',
} as const;

/**
 * The objects a program on the runtime finds by name: its Lease, its webhook Service and certificate
 * Secret, and the two webhook configurations whose caBundle it keeps (self-managed certificates).
 */
export interface ObjectNames {
  readonly leaderElectionId: string;
  readonly webhookService: string;
  readonly webhookSecret: string;
  readonly mutatingWebhookConfiguration: string;
  readonly validatingWebhookConfiguration: string;
}

/** Kruise's (upstream kruise-manager's) object names. */
export const KruiseObjectNames: ObjectNames = {
  leaderElectionId: Names.leaderElectionId,
  webhookService: Names.webhookService,
  webhookSecret: Names.webhookSecret,
  mutatingWebhookConfiguration: Names.mutatingWebhookConfiguration,
  validatingWebhookConfiguration: Names.validatingWebhookConfiguration,
};

/**
 * A program's object names from its name: the Lease `<name>`, `<name>-webhook-service`,
 * `<name>-webhook-certs`, `<name>-mutating-webhook-configuration` and
 * `<name>-validating-webhook-configuration`, so that programs and Kruise run side by side without
 * sharing a Lease or writing each other's caBundle. Check the name with objectNamePrefixProblems.
 */
export function objectNamesFor(name: string): ObjectNames {
  return {
    leaderElectionId: name,
    webhookService: `${name}-webhook-service`,
    webhookSecret: `${name}-webhook-certs`,
    mutatingWebhookConfiguration: `${name}-mutating-webhook-configuration`,
    validatingWebhookConfiguration: `${name}-validating-webhook-configuration`,
  };
}

/** Keys of the webhook certificate Secret. */
export const SecretKeys = {
  caKey: 'ca-key.pem',
  caCert: 'ca-cert.pem',
  serverKey: 'key.pem',
  serverCert: 'cert.pem',
  tlsKey: 'tls.key',
  tlsCert: 'tls.crt',
  /** cert-manager's CA key. */
  caCrt: 'ca.crt',
} as const;

/** Label and annotation keys. */
export const Labels = {
  controlPlane: 'control-plane',
  /** Set automatically and immutably by the API server on every namespace (1.21+). */
  namespaceName: 'kubernetes.io/metadata.name',
  /** Upstream rewrites webhook configurations from this annotation's snapshot. */
  webhookTemplate: 'template',
  certManagerInjectCaFrom: 'cert-manager.io/inject-ca-from',
  deleteProtection: 'policy.kruise.io/delete-protection',
  /** Which half of a split deployment a pod runs: `all`, `webhook` or `controllers`. */
  component: 'kruise.io/component',
} as const;

/** Label values. */
export const LabelValues = {
  /** Manager pods (selector of the webhook Service). */
  controllerManager: 'controller-manager',
  /** Namespace label upstream uses to exclude its own namespace. */
  openkruise: 'openkruise',
  daemon: 'daemon',
} as const;

/** What a manager replica runs. */
export const Roles = {
  /** Webhook on every replica, controllers on the leader (upstream default). */
  all: 'all',
  /** Webhook only: no leader election, no controllers. */
  webhook: 'webhook',
  /** Controllers only, leader-elected. */
  controllers: 'controllers',
} as const;
/** One of {@link Roles}: the value of `--role`. */
export type Role = (typeof Roles)[keyof typeof Roles];

/** Certificate modes. */
export const CertModes = {
  selfManaged: 'self-managed',
  external: 'external',
} as const;
/** One of {@link CertModes}: the value of `--cert-mode`. */
export type CertMode = (typeof CertModes)[keyof typeof CertModes];

/** Where the manager writes serving certificates (an emptyDir with a read-only root). */
export const DEFAULT_CERT_DIR = '/tmp/kruise-webhook-certs';

/** API group of the Kruise CRDs. */
export const KRUISE_APPS_GROUP = 'apps.kruise.io';

/**
 * Feature gates the runtime reads (upstream's names and meanings); it refuses any other by name,
 * as upstream refuses a gate it does not know.
 */
export const FeatureGates = {
  /** true: cert-manager provides the serving certificate (the runtime: as --cert-mode=external). */
  enableExternalCerts: 'EnableExternalCerts',
  /**
   * true: the containers a SidecarSet injection adds are sorted by name before they are placed (upstream v1.9.1's
   * alpha gate, off by default; init containers are always sorted).
   */
  sortSidecarContainerByName: 'EnableSortSidecarContainerByName',
  /** false: no pod webhook is served (the runtime: no mpod.kb.io, so SidecarSets inject nothing). */
  podWebhook: 'PodWebhook',
  /** true: patchPodMetadata is allowed where no whitelist applies (off by default, as upstream). */
  patchPodMetadataDefaultsAllowed: 'SidecarSetPatchPodMetadataDefaultsAllowed',
  /** false: pods are not spread by WorkloadSpreads (no pod path, no controller); on by default, as upstream. */
  workloadSpread: 'WorkloadSpread',
} as const;
