import type { V1ConfigMap, V1ControllerRevision, V1Namespace, V1Pod } from '@kubernetes/client-node';
import {
  FeatureGates,
  KRUISE_APPS_GROUP,
  KRUISE_CONFIGURATION,
  Paths,
  RuntimeControllers,
  SidecarSetLabels,
} from '../../contract.js';
import { resourcePath } from '../informer/index.js';
import { appsV1, coreV1, customObjects, kubeClient } from '../kube/index.js';
import type { Manager } from '../manager.js';
import { sidecarSetReconciler, sidecarSetsForPod } from './controller.js';
import { filterUpdates, podChanged, sidecarSetChanged } from './events.js';
import { PATCH_METADATA_WHITELIST_KEY } from './metadata.js';
import type { SidecarSet } from './types.js';
import {
  podInjectionWebhook,
  sidecarSetDefaultingWebhook,
  sidecarSetValidatingWebhook,
  type PodCreateStep,
  type SidecarSetSource,
} from './webhooks.js';

export * from './controller.js';
export * from './defaults.js';
export * from './events.js';
export * from './expectations.js';
export * from './hash.js';
export * from './history.js';
export * from './inject.js';
export * from './injection-revision.js';
export * from './metadata.js';
export * from './podupdate.js';
export * from './revisions.js';
export * from './rollout.js';
export * from './types.js';
export * from './updatesort.js';
export * from './validate.js';
export * from './webhooks.js';

/**
 * SidecarSet: the pod-injection and SidecarSet webhooks on every replica (pod CREATE runs
 * `beforeInjection`, WorkloadSpread's step, first) (they read the
 * SidecarSet and Namespace caches), and the status/in-place-update controller on the leader
 * (it also caches pods).
 */
export function registerSidecarSet(manager: Manager, beforeInjection?: PodCreateStep): void {
  const sidecarSets = manager.informer<SidecarSet & { apiVersion?: string; kind?: string }>(
    resourcePath({ group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets' }),
    false,
  );
  const namespaces = manager.informer<V1Namespace>(resourcePath({ version: 'v1', plural: 'namespaces' }), false);
  // SidecarSet ControllerRevisions live in the manager's namespace, as upstream: injectionStrategy.revision reads them.
  const revisionNamespace = manager.options.podNamespace;
  const revisions = manager.informer<V1ControllerRevision>(
    resourcePath({ group: 'apps', version: 'v1', plural: 'controllerrevisions', namespace: revisionNamespace }),
    false,
  );
  // Upstream reads the patchPodMetadata whitelist from this one ConfigMap on every SidecarSet
  // validation; the cache watches only it (RBAC grants it by name: RUNTIME_NAMESPACED_RULES).
  const configuration = manager.informer<V1ConfigMap>(
    resourcePath({ version: 'v1', plural: 'configmaps', namespace: revisionNamespace }),
    false,
    { fieldSelector: `metadata.name=${KRUISE_CONFIGURATION}` },
  );
  const source: SidecarSetSource = {
    sidecarSets: () => sidecarSets.store.list(),
    sortContainersByName: manager.options.featureGates[FeatureGates.sortSidecarContainerByName] === true,
    // An existing Namespace without labels reads {} (a missing one, undefined, selects nothing).
    namespaceLabels: (ns: string) => {
      const found = namespaces.store.getByName(ns);
      return found ? (found.metadata?.labels ?? {}) : undefined;
    },
    assertFresh: async (signal) => {
      await Promise.all([sidecarSets, namespaces, revisions].map((i) => i.awaitFresh(signal)));
    },
    revisions: {
      get: (name) => revisions.store.getByName(name, revisionNamespace),
      list: (sidecarSetName) =>
        revisions.store.list().filter((r) => r.metadata?.labels?.[SidecarSetLabels.sidecarSetName] === sidecarSetName),
    },
    patchMetadata: () => ({
      // Read only for a SidecarSet that patches metadata, so an outage of this one watch refuses
      // (StaleCacheError) only those, never pod injection. No ConfigMap, or no key in it, is no
      // whitelist (upstream GetSidecarSetPatchMetadataWhiteList): the gate decides.
      get whitelist() {
        configuration.checkFresh();
        return configuration.store.getByName(KRUISE_CONFIGURATION, revisionNamespace)?.data?.[
          PATCH_METADATA_WHITELIST_KEY
        ];
      },
      defaultsAllowed: manager.options.featureGates[FeatureGates.patchPodMetadataDefaultsAllowed] === true,
    }),
  };
  manager.registerWebhook(
    Paths.mutatePod,
    podInjectionWebhook(source, manager.options.podNamespace, manager.clock, Math.random, beforeInjection),
  );
  manager.registerWebhook(Paths.mutateSidecarSet, sidecarSetDefaultingWebhook());
  manager.registerWebhook(Paths.validateSidecarSet, sidecarSetValidatingWebhook(source));

  const pods = manager.informer<V1Pod>(
    resourcePath({ version: 'v1', plural: 'pods', namespace: manager.options.watchNamespace || undefined }),
    true,
  );
  const deps = {
    sidecarSets,
    pods,
    namespaces,
    core: coreV1(kubeClient(manager.kubeConfig)),
    apps: appsV1(kubeClient(manager.kubeConfig)),
    custom: customObjects(kubeClient(manager.kubeConfig)),
    checkStillLeader: () => manager.checkStillLeader(),
    revisionNamespace: manager.options.podNamespace,
    clock: manager.clock,
    logger: manager.logger.child({ controller: 'sidecarset' }),
  };
  const controller = manager.addController({
    name: RuntimeControllers.sidecarset,
    reconcile: sidecarSetReconciler(deps),
  });
  // Only updates the rollout reads reconcile (upstream's predicates, without its 5 s delay on consistency changes).
  controller?.watch(filterUpdates(sidecarSets, sidecarSetChanged));
  controller?.watch(filterUpdates(pods, podChanged), (pod) => sidecarSetsForPod(deps, pod));
}
