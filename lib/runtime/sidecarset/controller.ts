import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import { KRUISE_APPS_GROUP, SidecarSetAnnotations } from '../../contract.js';
import type { Clock } from '../clock.js';
import type { ReconcileContext, Request, Result } from '../controller.js';
import type { Informer } from '../informer/index.js';
import { PatchTypes, type CoreV1Client, type CustomObjectsClient } from '../kube/index.js';
import type { Logger } from '../log.js';
import { podSidecarSetHash, sidecarSetHash } from './hash.js';
import { registerLatestRevision, type HistoryDeps, type LatestRevision } from './history.js';
import { podNamespaceLabels, sidecarSetMatchesPod } from './inject.js';
import { inPlaceUpdatePatch } from './podupdate.js';
import { newRevision } from './revisions.js';
import { computeStatus, isPodInjectedAndConsistent, planUpdates, podState } from './rollout.js';
import type { SidecarSet, SidecarSetStatus } from './types.js';
import { UpdateExpectations } from './expectations.js';

/** What the SidecarSet controller reads (informer caches) and writes (API clients). */
export interface SidecarSetControllerDeps {
  sidecarSets: Informer<SidecarSet & { apiVersion?: string; kind?: string }>;
  pods: Informer<V1Pod>;
  namespaces: Informer<V1Namespace>;
  core: Pick<CoreV1Client, 'patchNamespacedPod'>;
  apps: HistoryDeps['apps'];
  custom: Pick<CustomObjectsClient, 'patchClusterCustomObjectStatus'>;
  /** Throws when this process cannot prove it still holds the Lease: no write without it. */
  checkStillLeader(): void;
  /** Namespace holding SidecarSet ControllerRevisions (the manager's, as upstream). */
  revisionNamespace: string;
  clock: Clock;
  logger: Logger;
  /** Pod patches in flight at once within one reconcile's batch. @default 16 */
  patchConcurrency?: number;
}

/** While a rollout waits for pods, look again at least this often (pod events usually come first). */
const ROLLOUT_RECHECK_MS = 5_000;
/** Upstream requeues after a second while the cache has not yet seen its pod updates. */
const IN_FLIGHT_RECHECK_MS = 1_000;
const DEFAULT_PATCH_CONCURRENCY = 16;

/**
 * Reconciles one SidecarSet as upstream's Processor.UpdateSidecarSet: registers the latest
 * ControllerRevision, writes the status counts, waits while its own pod updates are not yet in
 * the cache, then updates the next pods in place within maxUnavailable/partition/paused/selector,
 * patching a batch concurrently. Deleting a SidecarSet leaves running pods alone.
 */
export function sidecarSetReconciler(deps: SidecarSetControllerDeps) {
  const expectations = new UpdateExpectations(deps.clock);
  // SidecarSets whose history could not be cut to the limit (revisions in use): retried each reconcile.
  const untruncated = new Set<string>();
  return async ({ name }: Request, ctx?: Pick<ReconcileContext, 'signal'>): Promise<Result> => {
    // Before every write: still leading, and not shutting down. A reconcile that may patch many
    // pods ends between two writes once either stops holding, never in the middle of one.
    const mayWrite = () => {
      ctx?.signal.throwIfAborted();
      deps.checkStillLeader();
    };
    const s = deps.sidecarSets.store.getByName(name);
    if (!s || s.metadata.deletionTimestamp) {
      expectations.forget(name);
      return {};
    }
    const pods = matchedPods(deps, s);
    const latest = await latestRevision(deps, s, pods, mayWrite, untruncated);
    const states = pods.map((pod) => podState(s, pod));
    const revision = sidecarSetHash(s);
    const cached = (namespace: string, podName: string) => deps.pods.store.getByName(podName, namespace);
    const settled = expectations.satisfied(name, revision, cached, (pod) =>
      podSidecarSetHash(pod.metadata?.annotations, name),
    );
    const updating = settled ? planUpdates(s, states) : [];
    // The status counts this round's pods as updated and not yet running it (what they are once
    // patched), so the events of our own patches find it current and write nothing more: one status
    // write per step of the rollout, not two. It goes out together with the patches (nothing in
    // them depends on it); the reconcile awaits both.
    const planned = new Set(updating);
    const status = computeStatus(
      s,
      states.map((st) =>
        planned.has(st.pod) ? { ...st, updated: true, inPlaceUpdatable: false, consistent: false } : st,
      ),
      latest.name,
      latest.collisionCount,
    );
    const statusWritten = writeStatus(deps, s, status, mayWrite).then(
      () => undefined,
      (err: unknown) => err,
    );
    const statusError = async () => {
      const err = await statusWritten;
      if (err !== undefined) throw err;
    };
    if (!settled) {
      await statusError();
      return { requeueAfterMs: IN_FLIGHT_RECHECK_MS };
    }

    const failures = await patchAll(deps, updating, mayWrite, async (pod) => {
      const patched = await deps.core.patchNamespacedPod(
        {
          name: pod.metadata!.name!,
          namespace: pod.metadata!.namespace!,
          body: inPlaceUpdatePatch(s, pod, new Date(deps.clock.now()), latest.name),
        },
        { patchType: PatchTypes.json },
      );
      expectations.expect(name, revision, patched);
      deps.logger.info('updated sidecar images in place', {
        sidecarSet: name,
        pod: `${pod.metadata!.namespace}/${pod.metadata!.name}`,
      });
    });
    // The API server answers a failed `test` of the resourceVersion with 422 (a JSON Patch error), a
    // write race with 409: the pod changed since the cache saw it; the next reconcile re-reads it.
    const changed = (e: unknown) => [409, 422].includes((e as { code?: number }).code ?? 0);
    for (const e of failures.filter(changed))
      deps.logger.info('pod changed since read; re-planning', {
        sidecarSet: name,
        error: String((e as Error).message ?? e).slice(0, 300),
      });
    const conflicts = failures.filter(changed).length;
    const other = failures.find((e) => !changed(e));
    await statusError();
    if (other) throw other;
    const pending = states.some((st) => st.inPlaceUpdatable || (st.updated && !st.consistent));
    const rolling = s.spec.updateStrategy?.type !== 'NotUpdate' && !s.spec.updateStrategy?.paused;
    if (conflicts) return { requeueAfterMs: IN_FLIGHT_RECHECK_MS };
    return (pending && rolling) || untruncated.has(name) ? { requeueAfterMs: ROLLOUT_RECHECK_MS } : {};
  };
}

/**
 * Runs `patch` over `pods`, at most `patchConcurrency` at once. No new write starts once
 * `mayWrite` throws (shutdown, lost Lease); writes already sent finish. Failures are returned
 * (a 409 or 422 means the pod changed since the cache saw it: the next reconcile re-reads it).
 */
async function patchAll(
  deps: SidecarSetControllerDeps,
  pods: V1Pod[],
  mayWrite: () => void,
  patch: (pod: V1Pod) => Promise<void>,
): Promise<unknown[]> {
  const failures: unknown[] = [];
  let next = 0;
  let stop: unknown;
  const worker = async () => {
    while (next < pods.length && stop === undefined) {
      const pod = pods[next++];
      try {
        mayWrite();
      } catch (err) {
        stop = err;
        return;
      }
      await patch(pod).catch((err: unknown) => {
        failures.push(err);
      });
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(deps.patchConcurrency ?? DEFAULT_PATCH_CONCURRENCY, pods.length) }, worker),
  );
  if (stop !== undefined) throw stop;
  return failures;
}

/**
 * The latest revision without an API call when the status already names the revision of this
 * spec and its history needs no pruning; otherwise upstream's registerLatestRevision.
 */
async function latestRevision(
  deps: SidecarSetControllerDeps,
  s: SidecarSet,
  pods: V1Pod[],
  mayWrite: () => void,
  untruncated: Set<string>,
): Promise<LatestRevision> {
  const collisionCount = s.status?.collisionCount ?? 0;
  const expected = newRevision(s, deps.revisionNamespace, 0, collisionCount).metadata!.name!;
  if (s.status?.latestRevision === expected && !untruncated.has(s.metadata.name))
    return { name: expected, collisionCount, truncated: true };
  const latest = await registerLatestRevision(
    { apps: deps.apps, namespace: deps.revisionNamespace, mayWrite },
    s,
    pods,
  );
  if (latest.truncated) untruncated.delete(s.metadata.name);
  else untruncated.add(s.metadata.name);
  return latest;
}

/**
 * Pods the SidecarSet selects, injected and carrying all its sidecars, in namespace/name order (upstream
 * getMatchingPods).
 */
export function matchedPods(deps: Pick<SidecarSetControllerDeps, 'pods' | 'namespaces'>, s: SidecarSet): V1Pod[] {
  const namespace = (name: string) => deps.namespaces.store.getByName(name);
  const pods = s.spec.namespace ? deps.pods.store.listNamespace(s.spec.namespace) : deps.pods.store.list();
  return pods
    .filter(
      (pod) => isPodInjectedAndConsistent(s, pod) && sidecarSetMatchesPod(s, pod, podNamespaceLabels(pod, namespace)),
    )
    .sort((a, b) =>
      compareKeys(`${a.metadata?.namespace}/${a.metadata?.name}`, `${b.metadata?.namespace}/${b.metadata?.name}`),
    );
}

/** Code-unit order (localeCompare is two orders of magnitude slower on a 1,000-pod list). */
const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** SidecarSets to reconcile when a pod changes: those that injected it or now select it. */
export function sidecarSetsForPod(
  deps: Pick<SidecarSetControllerDeps, 'sidecarSets' | 'namespaces'>,
  pod: V1Pod,
): Request[] {
  const injected = new Set(
    (pod.metadata?.annotations?.[SidecarSetAnnotations.injectedList] ?? '').split(',').filter(Boolean),
  );
  const labels = podNamespaceLabels(pod, (name) => deps.namespaces.store.getByName(name));
  return deps.sidecarSets.store
    .list()
    .filter((s) => injected.has(s.metadata.name) || sidecarSetMatchesPod(s, pod, labels))
    .map((s) => ({ name: s.metadata.name }));
}

/** Upstream's inconsistentStatus: a newer generation or any count, revision or collision count changed. */
async function writeStatus(
  deps: SidecarSetControllerDeps,
  s: SidecarSet,
  status: SidecarSetStatus,
  mayWrite: () => void,
): Promise<void> {
  const current = s.status ?? {};
  const same = (Object.keys(status) as Array<keyof SidecarSetStatus>).every(
    (k) => (current[k] ?? 0) === (status[k] ?? 0),
  );
  if (same) return;
  mayWrite();
  await deps.custom.patchClusterCustomObjectStatus(
    { group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets', name: s.metadata.name, body: { status } },
    { patchType: PatchTypes.merge },
  );
}
