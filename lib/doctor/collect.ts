/**
 * Reads everything the checks judge, read-only: gets and lists only. A read the doctor may not
 * make (403) or an object that does not exist (404) becomes `undefined` plus a note, so one
 * missing permission of the person running the doctor never hides the other checks.
 */
import {
  AdmissionregistrationV1Api,
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  PolicyV1Api,
  type KubeConfig,
  type V1Pod,
} from '@kubernetes/client-node';
import { LabelValues, Labels, Names } from '../contract.js';
import { expectations } from './expectations.js';
import type { ClusterSnapshot } from './model.js';

/** Runs a read; 404 gives undefined, 403 gives undefined and a note; anything else throws. */
async function read<T>(what: string, errors: string[], call: () => Promise<T>): Promise<T | undefined> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof ApiException && e.code === 404) return undefined;
    if (e instanceof ApiException && e.code === 403) {
      errors.push(`${what}: forbidden for the doctor's user`);
      return undefined;
    }
    throw e;
  }
}

const usesHostPorts = (p: V1Pod) =>
  Boolean(p.spec?.hostNetwork) ||
  [...(p.spec?.containers ?? []), ...(p.spec?.initContainers ?? [])].some((c) =>
    (c.ports ?? []).some((x) => x.hostPort),
  );

export async function collect(
  kc: KubeConfig,
  namespace: string,
  now: () => number = Date.now,
): Promise<ClusterSnapshot> {
  const core = kc.makeApiClient(CoreV1Api);
  const apps = kc.makeApiClient(AppsV1Api);
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  const errors: string[] = [];
  const managerSelector = `${Labels.controlPlane}=${LabelValues.controllerManager}`;
  const deployments =
    (
      await read('deployments', errors, () =>
        apps.listNamespacedDeployment({ namespace, labelSelector: managerSelector }),
      )
    )?.items ?? [];
  const e = expectations(namespace, deployments);
  const leaseNs = e?.lease.namespace ?? namespace;
  const leaseName = e?.lease.name ?? Names.leaderElectionId;
  const [
    pods,
    allPods,
    nodes,
    service,
    slices,
    lease,
    events,
    secret,
    mutating,
    validating,
    crds,
    pdbs,
    systemNs,
    installNs,
  ] = await Promise.all([
    read('pods', errors, () => core.listNamespacedPod({ namespace })),
    read('pods (all namespaces)', errors, () => core.listPodForAllNamespaces({ resourceVersion: '0' })),
    read('nodes', errors, () => core.listNode({ resourceVersion: '0' })),
    read('services', errors, () => core.readNamespacedService({ name: Names.webhookService, namespace })),
    read('endpointslices', errors, () =>
      kc.makeApiClient(DiscoveryV1Api).listNamespacedEndpointSlice({
        namespace,
        labelSelector: `kubernetes.io/service-name=${Names.webhookService}`,
      }),
    ),
    read('leases', errors, () =>
      kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: leaseName, namespace: leaseNs }),
    ),
    read('events', errors, () =>
      core.listNamespacedEvent({
        namespace: leaseNs,
        fieldSelector: `involvedObject.kind=Lease,involvedObject.name=${leaseName},reason=LeaderElection`,
      }),
    ),
    read('secrets', errors, () => core.readNamespacedSecret({ name: Names.webhookSecret, namespace })),
    read('mutatingwebhookconfigurations', errors, () =>
      admission.readMutatingWebhookConfiguration({ name: Names.mutatingWebhookConfiguration }),
    ),
    read('validatingwebhookconfigurations', errors, () =>
      admission.readValidatingWebhookConfiguration({ name: Names.validatingWebhookConfiguration }),
    ),
    read('customresourcedefinitions', errors, () =>
      kc.makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition(),
    ),
    read('poddisruptionbudgets', errors, () =>
      kc.makeApiClient(PolicyV1Api).listNamespacedPodDisruptionBudget({ namespace }),
    ),
    read('namespaces', errors, () => core.readNamespace({ name: 'kube-system' })),
    read('namespaces', errors, () => core.readNamespace({ name: namespace })),
  ]);
  return {
    namespace,
    now: now(),
    deployments,
    pods: pods?.items ?? [],
    hostPortPods: (allPods?.items ?? []).filter(usesHostPorts),
    nodes: nodes?.items,
    webhookService: service,
    endpointSlices: slices?.items ?? [],
    lease,
    leaderEvents: events?.items ?? [],
    secret,
    mutating,
    validating,
    crds: crds?.items ?? [],
    pdbs: pdbs?.items ?? [],
    namespaces: [systemNs, installNs].filter((n) => n !== undefined),
    readErrors: [...new Set(errors)],
  };
}
