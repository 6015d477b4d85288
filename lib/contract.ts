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
import type { Problem } from './contract/problems.js';
import { upstreamNamespacesOverlap, upstreamSelectorsOverlap, type NamespaceSelected } from './contract/sidecarset.js';

export * from './contract/problems.js';
export * from './contract/lease.js';
export * from './contract/values.js';
export * from './contract/sidecarset.js';
export * from './contract/workloadspread.js';

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

/** Certificate modes. */
export const CertModes = {
  selfManaged: 'self-managed',
  external: 'external',
} as const;

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
export function isEmptySelector(selector: { matchLabels?: object; matchExpressions?: unknown[] } | undefined): boolean {
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

/** Label selector operators (the Kubernetes set). */
export const SELECTOR_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Kubernetes' label key syntax (`[prefix/]name`). Shared so the constructs never accept a
 * selector the runtime's webhook would reject.
 */
export function isValidLabelKey(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  return LABEL_NAME.test(name) && (prefix === undefined || (prefix.length <= 253 && LABEL_PREFIX.test(prefix)));
}

/** Kubernetes' label value syntax (empty, or at most 63 letters, digits, `-`, `_`, `.`). */
export function isValidLabelValue(value: string): boolean {
  return value === '' || LABEL_NAME.test(value);
}

const KEY_FIX = 'use [prefix/]name, name at most 63 characters of letters, digits, "-", "_", "."';
const VALUE_FIX = 'use at most 63 letters, digits, "-", "_", ".", starting and ending with a letter or digit';

/**
 * Kubernetes' label selector rules, for the construct (a prop error at synth) and the runtime's
 * webhooks (a denial naming the field): every problem with `selector`, fields under `field`.
 */
export function selectorProblems(field: string, selector: unknown): Problem[] {
  const problem = (f: string, value: unknown, message: string, fix: string): Problem => ({
    field: f,
    value,
    message,
    fix,
  });
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) {
    return [
      problem(
        field,
        selector,
        'must be an object with matchLabels and/or matchExpressions',
        'e.g. { matchLabels: { app: "web" } }',
      ),
    ];
  }
  const s = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  const out: Problem[] = [];
  if (s.matchLabels !== undefined) {
    if (typeof s.matchLabels !== 'object' || s.matchLabels === null || Array.isArray(s.matchLabels)) {
      out.push(
        problem(`${field}.matchLabels`, s.matchLabels, 'must be a map of label to value', 'e.g. { app: "web" }'),
      );
    } else {
      for (const [k, v] of Object.entries(s.matchLabels)) {
        if (!isValidLabelKey(k)) out.push(problem(`${field}.matchLabels`, k, 'is not a valid label key', KEY_FIX));
        if (typeof v !== 'string' || !isValidLabelValue(v))
          out.push(problem(`${field}.matchLabels["${k}"]`, v, 'is not a valid label value', VALUE_FIX));
      }
    }
  }
  if (s.matchExpressions === undefined) return out;
  if (!Array.isArray(s.matchExpressions))
    return [
      ...out,
      problem(
        `${field}.matchExpressions`,
        s.matchExpressions,
        'must be a list',
        'e.g. [{ key: "app", operator: "In", values: ["web"] }]',
      ),
    ];
  s.matchExpressions.forEach((e: { key?: unknown; operator?: unknown; values?: unknown } | null | undefined, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    if (typeof e?.key !== 'string' || !isValidLabelKey(e.key))
      out.push(problem(`${at}.key`, e?.key, 'is not a valid label key', KEY_FIX));
    const operator = e?.operator;
    if (!SELECTOR_OPERATORS.includes(operator as string))
      out.push(
        problem(
          `${at}.operator`,
          operator,
          'is not a selector operator',
          `use one of ${SELECTOR_OPERATORS.join(', ')}`,
        ),
      );
    const values = e?.values;
    const count = Array.isArray(values) ? values.length : 0;
    if ((operator === 'In' || operator === 'NotIn') && count === 0) {
      out.push(
        problem(
          `${at}.values`,
          values,
          `must not be empty for ${operator}`,
          'list at least one value, or use Exists/DoesNotExist',
        ),
      );
    }
    if ((operator === 'Exists' || operator === 'DoesNotExist') && count > 0)
      out.push(problem(`${at}.values`, values, `must be empty for ${operator}`, 'remove values, or use In/NotIn'));
    if (values !== undefined && !Array.isArray(values))
      out.push(problem(`${at}.values`, values, 'must be a list of label values', 'e.g. ["web"]'));
    if (Array.isArray(values)) {
      values.forEach((v: unknown, j) => {
        if (typeof v !== 'string' || !isValidLabelValue(v))
          out.push(problem(`${at}.values[${j}]`, v, 'is not a valid label value', VALUE_FIX));
      });
    }
  });
  return out;
}

/**
 * The label-selector shape both rooms use (structurally what cdk8s' k8s.LabelSelector and the
 * API's LabelSelector are).
 */
export interface SelectorLike {
  readonly matchLabels?: { readonly [key: string]: string };
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

/** What a selector demands of one label key. */
type KeyConstraint =
  { kind: 'any' } | { kind: 'absent' } | { kind: 'present' } | { kind: 'values'; values: Set<string> };

function constraintOn(s: SelectorLike, key: string): KeyConstraint {
  let values: Set<string> | undefined = s.matchLabels?.[key] !== undefined ? new Set([s.matchLabels[key]]) : undefined;
  let present = values !== undefined;
  for (const e of s.matchExpressions ?? []) {
    if (e.key !== key) continue;
    if (e.operator === 'DoesNotExist') return present ? { kind: 'values', values: new Set() } : { kind: 'absent' };
    if (e.operator === 'Exists') present = true;
    if (e.operator === 'In') {
      const inValues = new Set(e.values ?? []);
      values = values ? new Set([...values].filter((v) => inValues.has(v))) : inValues;
      present = true;
    }
  }
  if (values) return { kind: 'values', values };
  return present ? { kind: 'present' } : { kind: 'any' };
}

function compatible(x: KeyConstraint, y: KeyConstraint): boolean {
  if (x.kind === 'values' && x.values.size === 0) return false;
  if (y.kind === 'values' && y.values.size === 0) return false;
  if (x.kind === 'any' || y.kind === 'any') return true;
  if (x.kind === 'absent' || y.kind === 'absent') return x.kind === y.kind;
  if (x.kind === 'values' && y.kind === 'values') return [...x.values].some((v) => y.values.has(v));
  return true;
}

/**
 * False only when no label set can satisfy both selectors (a key pinned to disjoint values, or
 * required by one and forbidden by the other); true otherwise. Conservative on purpose: a
 * conflict check must never miss a real overlap (NotIn is treated as "any"). Shared so the
 * synth-time check of the SidecarSet construct and the runtime's webhook can never disagree.
 */
export function selectorsMayOverlap(a: SelectorLike, b: SelectorLike): boolean {
  const keys = new Set([
    ...Object.keys(a.matchLabels ?? {}),
    ...Object.keys(b.matchLabels ?? {}),
    ...(a.matchExpressions ?? []).map((e) => e.key),
    ...(b.matchExpressions ?? []).map((e) => e.key),
  ]);
  return [...keys].every((key) => compatible(constraintOn(a, key), constraintOn(b, key)));
}

/** An RBAC rule (the shape of rbac.authorization.k8s.io/v1 PolicyRule). */
export interface RbacRule {
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
export function runtimeClusterRules(resources: readonly RuntimeResource[] = RuntimeApi.resources): RbacRule[] {
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
export const RUNTIME_LEADER_ELECTION_RULES: readonly RbacRule[] = [
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
export const RUNTIME_NAMESPACED_RULES: readonly RbacRule[] = [
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
