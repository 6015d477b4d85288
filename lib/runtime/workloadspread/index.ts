import type { V1ConfigMap, V1Pod } from '@kubernetes/client-node';
import {
  FeatureGates,
  KRUISE_APPS_GROUP,
  KRUISE_CONFIGURATION,
  parseWorkloadSpreadWhitelist,
  Paths,
  RuntimeControllers,
  workloadSpreadEnabled,
  WORKLOADSPREAD_WHITELIST_KEY,
  type CustomWorkloadEntry,
} from '../../contract.js';
import { resourcePath } from '../informer/index.js';
import { kubeClient } from '../kube/index.js';
import type { Manager } from '../manager.js';
import { deny, exemptSystemNamespaces, validating } from '../webhook/index.js';
import { workloadSpreadApi } from './api.js';
import { filterUpdates } from '../sidecarset/events.js';
import {
  WORKLOADSPREAD_CONTROLLER,
  podChangedForSpread,
  workloadChangedForSpread,
  workloadSpreadReconciler,
  workloadSpreadsForPod,
  workloadSpreadsForWorkload,
} from './controller.js';
import {
  podDeletionWebhook,
  workloadSpreadPodMutation,
  WorkloadSpreadPodHandler,
  workloadSpreadValidatingWebhook,
} from './webhooks.js';

export * from './api.js';
export * from './controller.js';
export * from './deletion-cost.js';
export * from './match.js';
export * from './status.js';
export * from './strategic-merge.js';
export * from './subset.js';
export * from './validate.js';
export * from './webhooks.js';

/** The pod CREATE step the pod webhook runs before SidecarSet injection. */
export type PodMutation = ReturnType<typeof workloadSpreadPodMutation>;

/**
 * WorkloadSpread: the WorkloadSpread validating webhook and the pod deletion/eviction webhook on
 * every replica (they read the WorkloadSpread cache), the controller on the leader (it also reads
 * the pod cache). Answers the pod CREATE step for the pod webhook, or undefined when the
 * WorkloadSpread gate (or PodWebhook) is off: then, as upstream, WorkloadSpreads are refused at
 * write (403) and pods are not spread.
 */
export function registerWorkloadSpread(manager: Manager): PodMutation | undefined {
  if (!workloadSpreadEnabled(manager.options.featureGates)) {
    manager.registerWebhook(
      Paths.validateWorkloadSpread,
      validating(() => deny(`feature-gate ${FeatureGates.workloadSpread} is not enabled`, 403)),
    );
    return undefined;
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const workloadSpreads = manager.informer<any>(
    resourcePath({ group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'workloadspreads' }),
    false,
  );
  const api = workloadSpreadApi(kubeClient(manager.kubeConfig));
  // Upstream's custom workload whitelist, in ConfigMap kruise-configuration of the manager's
  // namespace (the same one watch SidecarSet reads its whitelist from).
  const configuration = manager.informer<V1ConfigMap>(
    resourcePath({ version: 'v1', plural: 'configmaps', namespace: manager.options.podNamespace }),
    false,
    { fieldSelector: `metadata.name=${KRUISE_CONFIGURATION}` },
  );
  let parsed: { raw?: string; value: readonly CustomWorkloadEntry[] } = { value: [] };
  const customWorkloads = (): readonly CustomWorkloadEntry[] => {
    configuration.checkFresh();
    const raw = configuration.store.getByName(KRUISE_CONFIGURATION, manager.options.podNamespace)?.data?.[
      WORKLOADSPREAD_WHITELIST_KEY
    ];
    if (raw !== parsed.raw) parsed = { raw, value: parseWorkloadSpreadWhitelist(raw) };
    return parsed.value;
  };
  const cache = {
    list: (namespace: string) => workloadSpreads.store.listNamespace(namespace),
    get: (namespace: string, name: string) => workloadSpreads.store.getByName(name, namespace),
    assertFresh: (signal?: AbortSignal) => workloadSpreads.awaitFresh(signal),
  };
  const handler = new WorkloadSpreadPodHandler({
    cache,
    api,
    clock: manager.clock,
    logger: manager.logger.child({ webhook: 'workloadspread' }),
    customWorkloads,
  });
  workloadSpreads.addEventHandler({
    onDelete: (ws) => handler.forget(ws.metadata.namespace, ws.metadata.name),
  });
  manager.registerWebhook(
    Paths.validatePod,
    exemptSystemNamespaces(podDeletionWebhook(handler, api), manager.options.podNamespace),
  );
  manager.registerWebhook(Paths.validateWorkloadSpread, workloadSpreadValidatingWebhook(cache, api, customWorkloads));

  const pods = manager.informer<V1Pod>(
    resourcePath({ version: 'v1', plural: 'pods', namespace: manager.options.watchNamespace || undefined }),
    true,
  );
  const controller = manager.addController({
    name: RuntimeControllers.workloadspread,
    reconcile: workloadSpreadReconciler({
      workloadSpreads,
      pods,
      api,
      handler,
      checkStillLeader: () => manager.checkStillLeader(),
      clock: manager.clock,
      logger: manager.logger.child({ controller: 'workloadspread' }),
      recorder: manager.eventRecorder(WORKLOADSPREAD_CONTROLLER),
      customWorkloads,
    }),
  });
  controller?.watch(workloadSpreads);
  controller?.watch(filterUpdates(pods, podChangedForSpread), workloadSpreadsForPod);
  // The workloads upstream watches for replica changes (CloneSet and Advanced StatefulSet are not:
  // their CRDs need not exist where this runtime runs; their pods' events still reconcile).
  const scope = manager.options.watchNamespace || undefined;
  for (const [group, version, plural, kind] of [
    ['apps', 'v1', 'deployments', 'Deployment'],
    ['apps', 'v1', 'replicasets', 'ReplicaSet'],
    ['apps', 'v1', 'statefulsets', 'StatefulSet'],
    ['batch', 'v1', 'jobs', 'Job'],
  ] as const) {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const workloads = manager.informer<any>(resourcePath({ group, version, plural, namespace: scope }), true);
    controller?.watch(filterUpdates(workloads, workloadChangedForSpread), (w) =>
      workloadSpreadsForWorkload(workloadSpreads, kind, group, w),
    );
  }
  return workloadSpreadPodMutation(handler);
}
