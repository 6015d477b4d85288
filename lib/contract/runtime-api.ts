/**
 * What this project's runtime serves and needs (its resources, webhooks and RBAC), so the
 * constructs render exactly that and the doctor checks a live install against the same list.
 */
import { FeatureGates, KRUISE_APPS_GROUP, Paths } from './names.js';

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
 * generated from upstream's module: lib/upstream.)
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

/**
 * What the runtime's Manager needs cluster-wide in every program: its event recorder, and reading the webhook
 * configurations whose caBundle it keeps.
 */
export const MANAGER_CLUSTER_RULES: readonly PolicyRule[] = [
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  {
    apiGroups: ['admissionregistration.k8s.io'],
    resources: ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations'],
    verbs: READ_VERBS,
  },
];

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
    ...MANAGER_CLUSTER_RULES,
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
