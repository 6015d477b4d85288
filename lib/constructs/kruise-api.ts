import { KRUISE_APPS_GROUP, KRUISE_POLICY_GROUP } from '../contract.js';

/** One Kruise custom resource, as the webhooks and RBAC need to know it. */
export interface KruiseResource {
  readonly group: string;
  readonly versions: string[];
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** The manager creates these (so it needs create); else it only reconciles them. */
  readonly managerCreates: boolean;
}

const apps = (kind: string, namespaced = true, managerCreates = true, versions = ['v1alpha1']): KruiseResource => ({
  group: KRUISE_APPS_GROUP, versions, kind, plural: `${kind.toLowerCase()}s`, namespaced, managerCreates,
});

/** The 17 CRDs of kruise 1.8 (upstream-kruise.md). */
export const KRUISE_RESOURCES: KruiseResource[] = [
  apps('AdvancedCronJob'),
  apps('BroadcastJob'),
  apps('CloneSet'),
  apps('ContainerRecreateRequest'),
  apps('DaemonSet'),
  apps('ImageListPullJob'),
  apps('ImagePullJob'),
  apps('NodeImage', false),
  apps('NodePodProbe', false),
  apps('PersistentPodState'),
  apps('PodProbeMarker'),
  apps('ResourceDistribution', false, false),
  apps('SidecarSet', false),
  apps('UnitedDeployment'),
  apps('WorkloadSpread', true, false),
  apps('StatefulSet', true, true, ['v1beta1', 'v1alpha1']),
  { group: KRUISE_POLICY_GROUP, versions: ['v1alpha1'], kind: 'PodUnavailableBudget', plural: 'podunavailablebudgets', namespaced: true, managerCreates: true },
];

/** Kruise resources our TypeScript runtime serves today. */
export const RUNTIME_RESOURCES: KruiseResource[] = KRUISE_RESOURCES.filter((r) => r.kind === 'SidecarSet');

/** kubebuilder's webhook path convention, which kruise follows. */
export function webhookPath(kind: 'mutate' | 'validate', resource: KruiseResource): string {
  return `/${kind}-${resource.group.replace(/\./g, '-')}-${resource.versions[0]}-${resource.kind.toLowerCase()}`;
}

/** Workloads whose deletion kruise's delete-protection webhooks guard. */
export const DELETE_PROTECTED = [
  { group: 'apps', version: 'v1', plural: 'deployments', short: 'deployment' },
  { group: 'apps', version: 'v1', plural: 'replicasets', short: 'replicaset' },
  { group: 'apps', version: 'v1', plural: 'statefulsets', short: 'statefulset' },
  { group: 'apiextensions.k8s.io', version: 'v1', plural: 'customresourcedefinitions', short: 'crd' },
  { group: '', version: 'v1', plural: 'namespaces', short: 'namespace' },
  { group: 'networking.k8s.io', version: 'v1', plural: 'ingresses', short: 'ingress' },
  { group: '', version: 'v1', plural: 'services', short: 'service' },
];
