/**
 * The contract between the constructs (which write the Deployment) and the runtime (which
 * reads it): flag names, env vars, ports, HTTP paths, object names and label keys.
 *
 * Both rooms import this module and nothing else from each other, so a flag the constructs
 * render is always a flag the runtime parses. Names follow upstream kruise-manager wherever
 * upstream has one, so the same Deployment shape configures both images.
 *
 * This module must stay free of I/O and import only lib/contract/ (the rules both rooms check,
 * as pure functions returning problems): it is loaded at synth time.
 */
import { isValidLabelKey, type SelectorLike } from './contract/selector.js';
import { upstreamNamespacesOverlap, upstreamSelectorsOverlap, type NamespaceSelected } from './contract/sidecarset.js';

export * from './contract/problems.js';
export * from './contract/lease.js';
export * from './contract/values.js';
export * from './contract/sidecarset.js';
export * from './contract/workloadspread.js';
export * from './contract/selector.js';

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
 * Annotations of SidecarSet injection (upstream keys). `hash` and `hashWithoutImage` are on both
 * objects, as upstream: on a SidecarSet, the revision string its defaulting webhook computes
 * with upstream's algorithm; on a pod, a JSON map of the revisions it was injected/updated with.
 */
export const SidecarSetAnnotations = {
  /** Pod: JSON map SidecarSet name -> { hash, sidecarSetName, sidecarList, ... }; SidecarSet: its revision. */
  hash: 'kruise.io/sidecarset-hash',
  /** Same with images blanked: equal revisions here mean only images differ (an in-place update). */
  hashWithoutImage: 'kruise.io/sidecarset-hash-without-image',
  /** Comma-separated SidecarSet names injected into the pod. */
  injectedList: 'kruise.io/sidecarset-injected-list',
  /** Skip injection for this pod when "true". */
  injectIgnore: 'kruise.io/sidecarset-inject-ignore',
} as const;

/** Labels of SidecarSet ControllerRevisions (upstream keys). */
export const SidecarSetLabels = {
  /** The SidecarSet a ControllerRevision belongs to. */
  sidecarSetName: 'kruise.io/sidecarset-name',
  /**
   * The user's name for a revision, copied from the SidecarSet's own label; injectionStrategy.revision.customVersion
   * selects by it.
   */
  customVersion: 'apps.kruise.io/sidecarset-custom-version',
} as const;

/**
 * Upstream never injects a SidecarSet whose selector is empty (sidecarcontrol.PodMatchedSidecarSet
 * requires a non-empty selector) and its validating webhook refuses one; so do the construct and
 * the runtime.
 */
export function isEmptySelector(
  selector: { readonly matchLabels?: object; readonly matchExpressions?: readonly unknown[] } | undefined,
): boolean {
  return (
    !selector ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
  );
}
export const SIDECARSET_SELECTOR_FIX =
  'select the pods to inject, e.g. { matchLabels: { app: "web" } }; an empty selector selects no pod (upstream refuses it)';

/** Where two SidecarSets can conflict. */
export type SidecarSetConflictField = 'containers' | 'initContainers' | 'volumes' | 'patchPodMetadata';

/** What {@link sidecarSetConflicts} compares of a SidecarSet. */
export interface SidecarSetConflictView {
  namespace?: string;
  namespaceSelector?: SelectorLike;
  selector?: SelectorLike;
  containers: string[];
  initContainers: string[];
  volumes: Array<{ name: string }>;
  patchPodMetadata?: ReadonlyArray<{
    readonly annotations?: { readonly [key: string]: string };
    readonly patchPolicy?: string;
  }>;
}

/** Annotation keys a SidecarSet patches other than with Retain, and the policy of each. */
function patchedKeys(v: SidecarSetConflictView): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of v.patchPodMetadata ?? []) {
    if (p.patchPolicy === 'Retain') continue;
    for (const key of Object.keys(p.annotations ?? {})) out.set(key, p.patchPolicy ?? '');
  }
  return out;
}

/** A JSON value with object keys sorted: equal values compare equal whatever their key order. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
    .join(',')}}`;
}

/**
 * Upstream validates SidecarSet volumes as pod volumes (core ValidateVolumes): exactly one volume
 * source besides the name. A problem message, or undefined. For the construct and the runtime.
 */
export function volumeSourceProblem(volume: object): string | undefined {
  const sources = Object.entries(volume)
    .filter(([k, v]) => k !== 'name' && v !== undefined)
    .map(([k]) => k);
  if (sources.length === 1) return undefined;
  return sources.length
    ? `sets ${sources.join(', ')}; a volume may have only one source`
    : 'has no volume source; set one, e.g. emptyDir: {}';
}

/**
 * spec.patchPodMetadata[].patchPolicy values (upstream SidecarSetPatchPolicyType); the defaulting webhook fills Retain.
 */
export const SIDECARSET_PATCH_POLICIES: readonly string[] = ['Retain', 'Overwrite', 'MergePatchJson'];
/**
 * spec.injectionStrategy.revision.policy values (upstream SidecarSetInjectRevisionPolicy); the defaulting webhook fills
 * Always.
 */
export const SIDECARSET_INJECT_REVISION_POLICIES: readonly string[] = ['Always', 'Partial'];

/**
 * Upstream's rules for spec.patchPodMetadata on one SidecarSet (validateSidecarSetSpec): each
 * entry has annotations with valid keys and a patch policy, and no key is patched twice. Problems
 * as `[path, message]`, the path under `spec.patchPodMetadata`. For the construct and the runtime.
 */
export function patchPodMetadataProblems(
  patches: ReadonlyArray<{ readonly annotations?: unknown; readonly patchPolicy?: unknown }>,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  patches.forEach((p, i) => {
    const at = `spec.patchPodMetadata[${i}]`;
    const annotations =
      p.annotations !== null && typeof p.annotations === 'object' ? Object.entries(p.annotations as object) : [];
    if (annotations.length === 0) out.push([`${at}.annotations`, 'is required: the pod annotations to patch']);
    for (const [key, value] of annotations) {
      if (!isValidLabelKey(key.toLowerCase()))
        out.push([`${at}.annotations`, `key ${JSON.stringify(key)} is not a valid annotation key ([prefix/]name)`]);
      if (typeof value !== 'string') out.push([`${at}.annotations[${JSON.stringify(key)}]`, 'must be a string']);
      if (seen.has(key))
        out.push([
          `${at}.annotations`,
          `key ${JSON.stringify(key)} is already patched by an earlier entry; patch each key once`,
        ]);
      seen.add(key);
    }
    if (!SIDECARSET_PATCH_POLICIES.includes(p.patchPolicy as string)) {
      out.push([
        `${at}.patchPolicy`,
        `${JSON.stringify(p.patchPolicy)} must be one of ${SIDECARSET_PATCH_POLICIES.join(', ')}`,
      ]);
    }
  });
  return out;
}

/**
 * Upstream's rule for transferEnv[].sourceContainerNameFrom.fieldRef (validateDownwardAPI): API
 * version v1 and a subscripted pod label or annotation, e.g. `metadata.labels['app']`. A problem
 * message, or undefined.
 */
export function sourceContainerFieldRefProblem(fieldRef: {
  readonly apiVersion?: unknown;
  readonly fieldPath?: unknown;
}): string | undefined {
  if (!fieldRef.apiVersion) return 'apiVersion: is required (v1)';
  if (!fieldRef.fieldPath) return "fieldPath: is required, e.g. metadata.labels['sidecar-source']";
  if (fieldRef.apiVersion !== 'v1')
    return `apiVersion: ${JSON.stringify(fieldRef.apiVersion)} is not supported; use v1`;
  const match = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(String(fieldRef.fieldPath));
  if (!match)
    return `fieldPath: ${JSON.stringify(fieldRef.fieldPath)} is not supported; use metadata.labels['<key>'] or metadata.annotations['<key>']`;
  const key = match[1] === 'metadata.annotations' ? match[2].toLowerCase() : match[2];
  return isValidLabelKey(key)
    ? undefined
    : `fieldPath: ${JSON.stringify(match[2])} is not a valid ${match[1] === 'metadata.labels' ? 'label' : 'annotation'} key`;
}

/**
 * Upstream's SidecarSet conflicts (validateSidecarConflict) of candidate `a` with existing `b`,
 * for the construct and the runtime: when upstream deems that both select the same pods,
 * containers and init containers of the same name (each compared with its own kind)
 * volumes of the same name that differ, and pod annotations one overwrites and the other patches. Empty when there is
 * none.
 */
export function sidecarSetConflicts(
  a: SidecarSetConflictView,
  b: SidecarSetConflictView,
  namespaceSelected?: NamespaceSelected,
): Array<{ field: SidecarSetConflictField; names: string[] }> {
  // Upstream's own overlap rules (lib/contract/sidecarset.ts), not selectorsMayOverlap: they decide what upstream
  // admits.
  if (!upstreamNamespacesOverlap(a, b, namespaceSelected)) return [];
  if (!a.selector || !b.selector || !upstreamSelectorsOverlap(a.selector, b.selector)) return [];
  const out: Array<{ field: SidecarSetConflictField; names: string[] }> = [];
  for (const field of ['containers', 'initContainers'] as const) {
    const theirs = new Set(b[field]);
    const names = a[field].filter((n) => theirs.has(n));
    if (names.length) out.push({ field, names });
  }
  const differing = a.volumes
    .filter((v) => {
      const theirs = b.volumes.find((o) => o.name === v.name);
      return theirs !== undefined && sortedJson(theirs) !== sortedJson(v);
    })
    .map((v) => v.name);
  if (differing.length) out.push({ field: 'volumes', names: differing });
  // Two SidecarSets may both merge JSON into one annotation; neither may overwrite one the other patches.
  const theirKeys = patchedKeys(b);
  const clashing = [...patchedKeys(a)]
    .filter(([key, policy]) => theirKeys.has(key) && (policy === 'Overwrite' || theirKeys.get(key) === 'Overwrite'))
    .map(([key]) => key);
  if (clashing.length) out.push({ field: 'patchPodMetadata', names: clashing });
  return out;
}

/** SidecarSet rules upstream's validating webhook enforces, worded once for the construct and the runtime. */
export const SidecarSetRules = {
  partitionWithSelector: 'partition and selector cannot be used together (upstream refuses it); set one',
  nativeSidecarRolling:
    'is a native sidecar (restartPolicy: Always), which cannot be updated in place as RollingUpdate does (upstream refuses it); use updateStrategy NotUpdate',
  mountWithoutVolume: 'is not a volume of the SidecarSet; add it to volumes or remove the mount',
  patchConflictFix:
    'patch the key with MergePatchJson in both (or Retain in one), or patch different keys, or make the selectors disjoint',
} as const;

/**
 * Feature gates the runtime reads (upstream's names and meanings); it refuses any other by name,
 * as upstream refuses a gate it does not know.
 */
export const FeatureGates = {
  /** true: cert-manager provides the serving certificate (the runtime: as --cert-mode=external). */
  enableExternalCerts: 'EnableExternalCerts',
  /** false: no pod webhook is served (the runtime: no mpod.kb.io, so SidecarSets inject nothing). */
  podWebhook: 'PodWebhook',
  /** true: patchPodMetadata is allowed where no whitelist applies (off by default, as upstream). */
  patchPodMetadataDefaultsAllowed: 'SidecarSetPatchPodMetadataDefaultsAllowed',
  /** false: pods are not spread by WorkloadSpreads (no pod path, no controller); on by default, as upstream. */
  workloadSpread: 'WorkloadSpread',
} as const;

/** An RBAC rule: rbac.authorization.k8s.io/v1 PolicyRule, for both rooms and the upstream data. */
export interface PolicyRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
  readonly resourceNames?: string[];
}

/** A Kruise custom resource the runtime serves. */
export interface RuntimeResource {
  readonly group: string;
  readonly versions: string[];
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/**
 * What this project's runtime serves and needs, so the constructs render exactly that and the
 * doctor checks a live install against the same list. (The upstream flavour's equivalents are
 * generated from upstream's module: lib/constructs/upstream.)
 */
export const RuntimeApi = {
  /** Kruise resources the runtime serves today (their CRDs must be installed). */
  resources: [
    { group: KRUISE_APPS_GROUP, versions: ['v1alpha1'], kind: 'SidecarSet', plural: 'sidecarsets', namespaced: false },
    {
      group: KRUISE_APPS_GROUP,
      versions: ['v1alpha1'],
      kind: 'WorkloadSpread',
      plural: 'workloadspreads',
      namespaced: true,
    },
  ] as readonly RuntimeResource[],
  /** The admission webhooks the runtime registers: configuration entry name and served path. */
  webhooks: [
    { type: 'mutating', name: 'mpod.kb.io', path: Paths.mutatePod },
    { type: 'mutating', name: 'msidecarset.kb.io', path: Paths.mutateSidecarSet },
    { type: 'validating', name: 'vsidecarset.kb.io', path: Paths.validateSidecarSet },
    // Pod deletion and eviction keep WorkloadSpread's counts (upstream's two entries on one path).
    { type: 'validating', name: 'vpod.kb.io', path: Paths.validatePod },
    { type: 'validating', name: 'vpodeviction.kb.io', path: Paths.validatePod },
    { type: 'validating', name: 'vworkloadspread.kb.io', path: Paths.validateWorkloadSpread },
  ] as ReadonlyArray<{ readonly type: 'mutating' | 'validating'; readonly name: string; readonly path: string }>,
} as const;

/**
 * The feature gates that turn a runtime webhook off when one is false, by path: upstream's
 * PodWebhook for the pod webhooks; the pod validation serves only WorkloadSpread here, so
 * WorkloadSpread=false drops it too (upstream: PodWebhook=false implies WorkloadSpread=false).
 */
export function runtimeWebhookGates(path: string): string[] {
  if (path === Paths.mutatePod) return [FeatureGates.podWebhook];
  if (path === Paths.validatePod) return [FeatureGates.podWebhook, FeatureGates.workloadSpread];
  return [];
}

/** The first gate of {@link runtimeWebhookGates} set to false in `gates`, if any. */
export function runtimeWebhookGate(path: string, gates: { readonly [gate: string]: boolean } = {}): string | undefined {
  const all = runtimeWebhookGates(path);
  return all.find((g) => gates[g] === false) ?? all[0];
}

/** The runtime's webhooks served under `gates`: one whose gate is set to false is not. */
export function servedRuntimeWebhooks(gates: { readonly [gate: string]: boolean }): typeof RuntimeApi.webhooks {
  return RuntimeApi.webhooks.filter((w) => runtimeWebhookGates(w.path).every((g) => gates[g] !== false));
}

/** Whether the runtime serves WorkloadSpread's pod paths and controller under `gates` (upstream's default: on). */
export function workloadSpreadEnabled(gates: { readonly [gate: string]: boolean }): boolean {
  return gates[FeatureGates.podWebhook] !== false && gates[FeatureGates.workloadSpread] !== false;
}

const READ_VERBS = ['get', 'list', 'watch'];

/** What the runtime's controllers, webhooks and caches touch cluster-wide. */
export function runtimeClusterRules(resources: readonly RuntimeResource[] = RuntimeApi.resources): PolicyRule[] {
  return [
    // In-place sidecar updates patch pod images; status counts read pods; WorkloadSpread sets deletion
    // costs and deletes pods that stay unschedulable (Adaptive).
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch', 'update', 'delete'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: READ_VERBS },
    // WorkloadSpread: the nodes of pods created before it (which subset they are in) and its target
    // workloads (replicas, owner chain, pod template; the built-in kinds watched for replica changes).
    { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
    { apiGroups: ['apps'], resources: ['deployments', 'replicasets', 'statefulsets'], verbs: READ_VERBS },
    { apiGroups: ['batch'], resources: ['jobs'], verbs: READ_VERBS },
    { apiGroups: [KRUISE_APPS_GROUP], resources: ['clonesets', 'statefulsets'], verbs: ['get', 'list'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    {
      apiGroups: ['admissionregistration.k8s.io'],
      resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
      verbs: READ_VERBS,
    },
    {
      apiGroups: ['apps'],
      resources: ['controllerrevisions'],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    },
    ...resources.flatMap((r) => [
      { apiGroups: [r.group], resources: [r.plural], verbs: ['get', 'list', 'watch', 'patch', 'update'] },
      { apiGroups: [r.group], resources: [`${r.plural}/finalizers`], verbs: ['update'] },
      { apiGroups: [r.group], resources: [`${r.plural}/status`], verbs: ['get', 'patch', 'update'] },
    ]),
  ];
}

/** The runtime's Lease lock and the events it records about leadership (in the Lease namespace). */
export const RUNTIME_LEADER_ELECTION_RULES: readonly PolicyRule[] = [
  {
    apiGroups: ['coordination.k8s.io'],
    resources: ['leases'],
    verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'],
  },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

/**
 * Upstream's ConfigMap of manager settings in the manager's namespace (pkg/util/configuration:
 * KruiseConfigurationName); the runtime reads its SidecarSet patchPodMetadata whitelist.
 */
export const KRUISE_CONFIGURATION = 'kruise-configuration';

/**
 * What the runtime reads in its own namespace only: the one ConfigMap above, by name. list and
 * watch are restricted too: the runtime's informer selects `metadata.name=kruise-configuration`
 * and the API server authorizes a list/watch whose fieldSelector pins metadata.name as a request
 * for that resourceName (k8s.io/apiserver pkg/endpoints/request/requestinfo.go).
 */
export const RUNTIME_NAMESPACED_RULES: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['configmaps'], verbs: READ_VERBS, resourceNames: [KRUISE_CONFIGURATION] },
];

/**
 * What a self-managed manager (either flavour) writes besides its cluster rules: the
 * certificate Secret in its namespace, and the caBundle of its own webhook configurations
 * (and of CRDs it converts), by name.
 */
export const CERTIFICATE_RULES = {
  secretVerbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  externalSecretVerbs: READ_VERBS,
  caBundleVerbs: ['get', 'patch', 'update'],
} as const;
