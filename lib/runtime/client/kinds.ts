/**
 * Kinds by name: what the {@link Client} needs to know about a resource to build its paths (group, version, plural,
 * scope), with the object type it carries, so no caller writes an API path by hand.
 */
import type {
  CoreV1Event,
  KubernetesObject,
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1ControllerRevision,
  V1CronJob,
  V1CustomResourceDefinition,
  V1DaemonSet,
  V1Deployment,
  V1EndpointSlice,
  V1Ingress,
  V1Job,
  V1Lease,
  V1MutatingWebhookConfiguration,
  V1Namespace,
  V1NetworkPolicy,
  V1Node,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1PodDisruptionBudget,
  V1ReplicaSet,
  V1Role,
  V1RoleBinding,
  V1Secret,
  V1Service,
  V1ServiceAccount,
  V1StatefulSet,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { resourcePath } from '../informer/path.js';

/**
 * A resource the API server serves (a GroupVersionResource with its Kind and scope). `T` is the type of its objects;
 * it only types the {@link Client}'s arguments and answers. Make one with {@link defineKind}; {@link Kinds} has the
 * built-in ones.
 */
export interface Kind<T extends KubernetesObject = KubernetesObject> {
  /** The API group; '' for the core group (Pods, ConfigMaps, ...). */
  readonly group: string;
  readonly version: string;
  /** The object's `kind`, e.g. `ConfigMap`. */
  readonly kind: string;
  /** The lower-case plural resource name in the path, e.g. `configmaps`. */
  readonly plural: string;
  /** True for namespaced resources, false for cluster-scoped ones (Namespace, Node, CRDs, ...). */
  readonly namespaced: boolean;
  /** `group/version`, or `version` for the core group: the objects' `apiVersion`. */
  readonly apiVersion: string;
  /** Carries `T` for the type checker; never set. */
  readonly __object?: T;
}

/** The object type a Kind carries: `ObjectOf<typeof Kinds.Pod>` is client-node's V1Pod. */
export type ObjectOf<K extends Kind<KubernetesObject>> = K extends Kind<infer T> ? T : never;

/** What {@link defineKind} takes: a Kind without the `apiVersion` it derives. */
export interface KindSpec {
  /** The API group; '' (or omitted) for the core group. */
  group?: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

// A DNS-1123 subdomain (group), a DNS-1123 label (plural, version) and a Kind's CamelCase name, as the API server's
// CRD validation accepts them. Checked here so a typo fails where the Kind is defined, not at its first call.
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;

/**
 * A Kind for a resource, typically a custom resource:
 * `defineKind<Widget>({ group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', namespaced: true })`.
 * Throws a TypeError for a group, version, plural or kind the API server could not serve.
 */
export function defineKind<T extends KubernetesObject = KubernetesObject>(spec: KindSpec): Kind<T> {
  const group = spec.group ?? '';
  const bad = (what: string, value: unknown) =>
    new TypeError(`defineKind: ${what} ${JSON.stringify(value)} is not a valid Kubernetes ${what}`);
  if (group && !GROUP.test(group)) throw bad('group', group);
  if (!LABEL.test(spec.version)) throw bad('version', spec.version);
  if (!LABEL.test(spec.plural)) throw bad('plural', spec.plural);
  if (!KIND.test(spec.kind)) throw bad('kind', spec.kind);
  if (typeof spec.namespaced !== 'boolean') throw new TypeError('defineKind: namespaced must be true or false');
  return Object.freeze({
    group,
    version: spec.version,
    kind: spec.kind,
    plural: spec.plural,
    namespaced: spec.namespaced,
    apiVersion: group ? `${group}/${spec.version}` : spec.version,
  });
}

/** Where a call on `kind` goes: the collection, or one object and optionally its subresource. */
export interface PathTarget {
  namespace?: string;
  name?: string;
  subresource?: string;
}

/**
 * The API path of `kind`'s collection (no `name`) or of one object. A namespaced kind needs a namespace, except for
 * a collection (a list across all namespaces); a cluster-scoped kind takes none. Throws a TypeError otherwise, before
 * anything is sent.
 */
export function kindPath(kind: Kind<KubernetesObject>, target: PathTarget = {}): string {
  const { namespace, name, subresource } = target;
  if (namespace && !kind.namespaced)
    throw new TypeError(`${kind.kind} is cluster-scoped: it has no namespace (got ${JSON.stringify(namespace)})`);
  if (!namespace && kind.namespaced && name !== undefined)
    throw new TypeError(`${kind.kind} is namespaced: pass the namespace of ${JSON.stringify(name)}`);
  if (name === '') throw new TypeError(`${kind.kind}: the name is empty`);
  if (subresource !== undefined && name === undefined) throw new TypeError(`${kind.kind}: a subresource needs a name`);
  const collection = resourcePath({ group: kind.group, version: kind.version, plural: kind.plural, namespace });
  if (name === undefined) return collection;
  return `${collection}/${encodeURIComponent(name)}${subresource ? `/${encodeURIComponent(subresource)}` : ''}`;
}

const core = (kind: string, plural: string, namespaced = true) =>
  ({ version: 'v1', kind, plural, namespaced }) as const;
const apps = (kind: string, plural: string) => ({ group: 'apps', version: 'v1', kind, plural, namespaced: true });
const rbac = (kind: string, plural: string, namespaced: boolean) =>
  ({ group: 'rbac.authorization.k8s.io', version: 'v1', kind, plural, namespaced }) as const;
const admission = (kind: string, plural: string) =>
  ({ group: 'admissionregistration.k8s.io', version: 'v1', kind, plural, namespaced: false }) as const;

/**
 * The built-in kinds controllers and webhooks commonly read and write, at their current stable versions. Their
 * object types are client-node's models; the client sends and returns the API's JSON as it is, so the few fields
 * those models rename (JSONSchemaProps' `x-kubernetes-*`, `default`, `enum`, `$ref`, ...) keep their JSON names
 * on the wire: write them so (cast where the model's type disagrees).
 */
export const Kinds = Object.freeze({
  Pod: defineKind<V1Pod>(core('Pod', 'pods')),
  ConfigMap: defineKind<V1ConfigMap>(core('ConfigMap', 'configmaps')),
  Secret: defineKind<V1Secret>(core('Secret', 'secrets')),
  Service: defineKind<V1Service>(core('Service', 'services')),
  ServiceAccount: defineKind<V1ServiceAccount>(core('ServiceAccount', 'serviceaccounts')),
  PersistentVolumeClaim: defineKind<V1PersistentVolumeClaim>(core('PersistentVolumeClaim', 'persistentvolumeclaims')),
  /** core/v1 Events, as `kubectl get events` and client-go's EventRecorder write them. */
  Event: defineKind<CoreV1Event>(core('Event', 'events')),
  Namespace: defineKind<V1Namespace>(core('Namespace', 'namespaces', false)),
  Node: defineKind<V1Node>(core('Node', 'nodes', false)),
  PersistentVolume: defineKind<V1PersistentVolume>(core('PersistentVolume', 'persistentvolumes', false)),
  Deployment: defineKind<V1Deployment>(apps('Deployment', 'deployments')),
  StatefulSet: defineKind<V1StatefulSet>(apps('StatefulSet', 'statefulsets')),
  DaemonSet: defineKind<V1DaemonSet>(apps('DaemonSet', 'daemonsets')),
  ReplicaSet: defineKind<V1ReplicaSet>(apps('ReplicaSet', 'replicasets')),
  ControllerRevision: defineKind<V1ControllerRevision>(apps('ControllerRevision', 'controllerrevisions')),
  Job: defineKind<V1Job>({ group: 'batch', version: 'v1', kind: 'Job', plural: 'jobs', namespaced: true }),
  CronJob: defineKind<V1CronJob>({
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    plural: 'cronjobs',
    namespaced: true,
  }),
  Lease: defineKind<V1Lease>({
    group: 'coordination.k8s.io',
    version: 'v1',
    kind: 'Lease',
    plural: 'leases',
    namespaced: true,
  }),
  EndpointSlice: defineKind<V1EndpointSlice>({
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    plural: 'endpointslices',
    namespaced: true,
  }),
  Ingress: defineKind<V1Ingress>({
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'Ingress',
    plural: 'ingresses',
    namespaced: true,
  }),
  NetworkPolicy: defineKind<V1NetworkPolicy>({
    group: 'networking.k8s.io',
    version: 'v1',
    kind: 'NetworkPolicy',
    plural: 'networkpolicies',
    namespaced: true,
  }),
  PodDisruptionBudget: defineKind<V1PodDisruptionBudget>({
    group: 'policy',
    version: 'v1',
    kind: 'PodDisruptionBudget',
    plural: 'poddisruptionbudgets',
    namespaced: true,
  }),
  Role: defineKind<V1Role>(rbac('Role', 'roles', true)),
  RoleBinding: defineKind<V1RoleBinding>(rbac('RoleBinding', 'rolebindings', true)),
  ClusterRole: defineKind<V1ClusterRole>(rbac('ClusterRole', 'clusterroles', false)),
  ClusterRoleBinding: defineKind<V1ClusterRoleBinding>(rbac('ClusterRoleBinding', 'clusterrolebindings', false)),
  MutatingWebhookConfiguration: defineKind<V1MutatingWebhookConfiguration>(
    admission('MutatingWebhookConfiguration', 'mutatingwebhookconfigurations'),
  ),
  ValidatingWebhookConfiguration: defineKind<V1ValidatingWebhookConfiguration>(
    admission('ValidatingWebhookConfiguration', 'validatingwebhookconfigurations'),
  ),
  CustomResourceDefinition: defineKind<V1CustomResourceDefinition>({
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  }),
});
