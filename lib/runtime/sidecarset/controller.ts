import {
  PatchStrategy, setHeaderOptions, type AppsV1Api, type CoreV1Api, type CustomObjectsApi, type V1Namespace, type V1Pod,
} from '@kubernetes/client-node';
import { KRUISE_APPS_GROUP, SidecarSetAnnotations } from '../../contract.js';
import type { Clock } from '../clock.js';
import type { ReconcileContext, Request, Result } from '../controller.js';
import type { Informer } from '../informer/index.js';
import type { Logger } from '../log.js';
import { sidecarSetMatchesPod } from './inject.js';
import { computeStatus, inPlaceUpdatePatch, isPodActive, planUpdates, podState, type PodState } from './rollout.js';
import { sidecarSetHash } from './hash.js';
import type { SidecarSet, SidecarSetStatus } from './types.js';

/** What the SidecarSet controller reads (informer caches) and writes (API clients). */
export interface SidecarSetControllerDeps {
  sidecarSets: Informer<SidecarSet & { apiVersion?: string; kind?: string }>;
  pods: Informer<V1Pod>;
  namespaces: Informer<V1Namespace>;
  core: CoreV1Api;
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  /** Throws when this process cannot prove it still holds the Lease: no write without it. */
  checkStillLeader(): void;
  /** Namespace holding SidecarSet ControllerRevisions (the manager's, as upstream). */
  revisionNamespace: string;
  clock: Clock;
  logger: Logger;
}

/** While a rollout waits for pods, look again at least this often (pod events usually come first). */
const ROLLOUT_RECHECK_MS = 5_000;
const REVISION_LABEL = 'kruise.io/sidecarset-name';

/**
 * Reconciles one SidecarSet: keeps its status counts exact and rolls image-only changes
 * through matched pods in place, within maxUnavailable/partition/paused/selector. Deleting a
 * SidecarSet leaves running pods alone.
 */
export function sidecarSetReconciler(deps: SidecarSetControllerDeps) {
  return async ({ name }: Request, ctx?: Pick<ReconcileContext, 'signal'>): Promise<Result> => {
    // Before every write: still leading, and not shutting down. A reconcile that may patch every
    // matched pod ends between two writes once either stops holding, never in the middle of one.
    const mayWrite = () => {
      ctx?.signal.throwIfAborted();
      deps.checkStillLeader();
    };
    const s = deps.sidecarSets.store.getByName(name);
    if (!s || s.metadata.deletionTimestamp) return {};
    const states = matchedPods(deps, s).map((pod) => podState(s, pod));
    const now = new Date(deps.clock.now());
    const updating = planUpdates(s, states);
    for (const pod of updating) {
      mayWrite();
      await deps.core.patchNamespacedPod(
        { name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, body: inPlaceUpdatePatch(s, pod, now) },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      );
      deps.logger.info('updated sidecar images in place', { sidecarSet: name, pod: `${pod.metadata!.namespace}/${pod.metadata!.name}` });
    }
    const after = states.map((st): PodState => (updating.includes(st.pod) ? { ...st, updated: true, inPlaceUpdatable: false, consistent: false } : st));
    // The revision first: a status carrying the new latestRevision is what stops re-recording.
    await recordRevision(deps, s, mayWrite);
    await writeStatus(deps, s, computeStatus(s, after), mayWrite);
    const pending = after.some((st) => (st.inPlaceUpdatable && s.spec.updateStrategy?.type !== 'NotUpdate') || (st.updated && !st.consistent));
    return pending && !s.spec.updateStrategy?.paused ? { requeueAfterMs: ROLLOUT_RECHECK_MS } : {};
  };
}

/** Active pods the SidecarSet selects, from the caches. */
export function matchedPods(deps: Pick<SidecarSetControllerDeps, 'pods' | 'namespaces'>, s: SidecarSet): V1Pod[] {
  const pods = s.spec.namespace ? deps.pods.store.listNamespace(s.spec.namespace) : deps.pods.store.list();
  return pods.filter((pod) => isPodActive(pod)
    && sidecarSetMatchesPod(s, pod, deps.namespaces.store.getByName(pod.metadata?.namespace ?? '')?.metadata?.labels));
}

/** SidecarSets to reconcile when a pod changes: those that injected it or now select it. */
export function sidecarSetsForPod(deps: Pick<SidecarSetControllerDeps, 'sidecarSets' | 'namespaces'>, pod: V1Pod): Request[] {
  const injected = new Set((pod.metadata?.annotations?.[SidecarSetAnnotations.injectedList] ?? '').split(',').filter(Boolean));
  const labels = deps.namespaces.store.getByName(pod.metadata?.namespace ?? '')?.metadata?.labels;
  return deps.sidecarSets.store.list()
    .filter((s) => injected.has(s.metadata.name) || sidecarSetMatchesPod(s, pod, labels))
    .map((s) => ({ name: s.metadata.name }));
}

async function writeStatus(deps: SidecarSetControllerDeps, s: SidecarSet, status: SidecarSetStatus, mayWrite: () => void): Promise<void> {
  const current = s.status ?? {};
  const same = (Object.keys(status) as Array<keyof SidecarSetStatus>).every((k) => current[k] === status[k]);
  if (same) return;
  mayWrite();
  await deps.custom.patchClusterCustomObjectStatus(
    { group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets', name: s.metadata.name, body: { status } },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

/**
 * Keeps a ControllerRevision per sidecar revision (named `<sidecarset>-<hash>` in the manager's
 * namespace, as upstream) and prunes the oldest beyond revisionHistoryLimit.
 */
async function recordRevision(deps: SidecarSetControllerDeps, s: SidecarSet, mayWrite: () => void): Promise<void> {
  const hash = sidecarSetHash(s);
  if (s.status?.latestRevision === hash) return;
  const ns = deps.revisionNamespace;
  const selector = `${REVISION_LABEL}=${s.metadata.name}`;
  const existing = (await deps.apps.listNamespacedControllerRevision({ namespace: ns, labelSelector: selector })).items;
  const name = `${s.metadata.name}-${hash.slice(0, 10)}`.slice(0, 253);
  if (!existing.some((r) => r.metadata?.name === name)) {
    mayWrite();
    const revision = Math.max(0, ...existing.map((r) => r.revision)) + 1;
    await deps.apps.createNamespacedControllerRevision({
      namespace: ns,
      body: { metadata: { name, namespace: ns, labels: { [REVISION_LABEL]: s.metadata.name } }, revision, data: { spec: { containers: s.spec.containers ?? [] } } },
    }).catch((err: { code?: number }) => { if (err.code !== 409) throw err; });
    existing.push({ metadata: { name }, revision });
  }
  const limit = s.spec.revisionHistoryLimit ?? 10;
  const prunable = existing.filter((r) => r.metadata?.name !== name).sort((a, b) => a.revision - b.revision);
  for (const old of prunable.slice(0, Math.max(0, prunable.length - limit))) {
    mayWrite();
    await deps.apps.deleteNamespacedControllerRevision({ name: old.metadata!.name!, namespace: ns })
      .catch((err: { code?: number }) => { if (err.code !== 404) throw err; });
  }
}
