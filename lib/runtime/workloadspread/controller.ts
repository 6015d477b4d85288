/**
 * The WorkloadSpread controller, as upstream OpenKruise v1.9.1's (pkg/controller/workloadspread
 * syncWorkloadSpread): finds the target's pods, groups them by version and subset (patching the
 * subset's metadata onto pods created before the WorkloadSpread, by their node), sets pod deletion
 * costs so that a scale-in removes pods from the right subsets, writes status.subsetStatuses and
 * versionedSubsetStatuses (missing replicas, creating and deleting pods with their timeouts), and
 * under the Adaptive strategy marks subsets unschedulable and deletes the pods that stayed
 * unschedulable past rescheduleCriticalSeconds. Pods come from the leader's pod cache; the target
 * workload, its ReplicaSets and pods' nodes are read through the API server at each reconcile (this
 * runtime keeps no workload or node caches), so a change of the workload's replicas alone is
 * noticed at the next pod or WorkloadSpread event, not at once as upstream's workload watches do.
 * Records upstream's events on the WorkloadSpread (source `workloadspread-controller`):
 * CreatePodFailed, DeletePodFailed, RecoverSchedulable and PatchPodDeletionCostFailed.
 */
import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../clock.js';
import { objectReference, type EventRecorder } from '../events/index.js';
import type { ReconcileContext, Request, Result } from '../controller.js';
import type { Informer } from '../informer/index.js';
import type { Logger } from '../log.js';
import { matchesSelector, parseSelectorString, validateSelector } from '../../contract/selector.js';
import { replicasAtPath, workloadReplicas, type WorkloadSpreadApi } from './api.js';
import { apiGroupOf, type CustomWorkloadEntry, WORKLOADSPREAD_TARGETS } from '../../contract/workloadspread.js';
import { KRUISE_APPS_GROUP } from '../../contract.js';
import {
  deletionCostWrites,
  FAKE_SUBSET,
  isPodActive,
  patchDeletionCostFailedMessage,
  POD_DELETION_COST,
} from './deletion-cost.js';
import { groupPodsBySubset } from './match.js';
import { subsetStatuses, type SpreadEvent } from './status.js';
import { controllerOf, podVersion, VERSION_IGNORED, type SubsetStatus } from './subset.js';
import { podSelectedByFilter, type WorkloadSpreadPodHandler } from './webhooks.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface WorkloadSpreadControllerDeps {
  workloadSpreads: Informer<Json>;
  pods: Informer<V1Pod>;
  api: Pick<
    WorkloadSpreadApi,
    'getWorkload' | 'getScale' | 'listReplicaSets' | 'getNode' | 'patchPod' | 'deletePod' | 'updateStatus'
  >;
  /** The custom workload whitelist (kruise-configuration); throws when it cannot be read or decoded. */
  customWorkloads?: () => readonly CustomWorkloadEntry[];
  /** This process's pod-path handler: the controller's writes become its newest copy (upstream's GlobalCache). */
  handler?: WorkloadSpreadPodHandler;
  checkStillLeader(): void;
  clock: Clock;
  logger: Logger;
  /** Upstream's controller events go here (the manager's recorder for `workloadspread-controller`). */
  recorder: Pick<EventRecorder, 'event'>;
}

/** Upstream's controllerName, the source of its events. */
export const WORKLOADSPREAD_CONTROLLER = 'workloadspread-controller';

const selectorString = (selector: Json): string | undefined => {
  if (!selector || validateSelector(selector, 'selector').length) return undefined;
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
};

const ownedBy = (o: Json, uid: string) => (o?.metadata?.ownerReferences ?? []).some((r: Json) => r?.uid === uid);
const byName = (a: Json, b: Json) =>
  a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;

/** Semantic equality of two statuses: empty maps and lists equal absent ones (apimachinery's Semantic.DeepEqual). */
function normalized(v: Json): Json {
  if (Array.isArray(v)) return v.length ? v.map(normalized) : undefined;
  if (v && typeof v === 'object') {
    const out: Json = {};
    for (const k of Object.keys(v).sort()) {
      const n = normalized(v[k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null ? undefined : v;
}
const sameStatus = (a: Json, b: Json) => JSON.stringify(normalized(a) ?? {}) === JSON.stringify(normalized(b) ?? {});

/** Pod template equality ignoring the pod-template-hash label (upstream util.EqualIgnoreHash). */
function equalIgnoreHash(a: Json, b: Json): boolean {
  const strip = (t: Json) => {
    const c = structuredClone(t ?? {});
    if (c.metadata?.labels) delete c.metadata.labels['pod-template-hash'];
    return JSON.stringify(normalized(c) ?? {});
  };
  return strip(a) === strip(b);
}

export function workloadSpreadReconciler(deps: WorkloadSpreadControllerDeps) {
  return async ({ namespace, name }: Request, ctx?: Pick<ReconcileContext, 'signal'>): Promise<Result> => {
    const signal = ctx?.signal;
    const mayWrite = () => {
      signal?.throwIfAborted();
      deps.checkStillLeader();
    };
    const ws = deps.workloadSpreads.store.getByName(name, namespace);
    if (!ws || ws.metadata?.deletionTimestamp) {
      deps.handler?.forget(namespace ?? '', name);
      return {};
    }
    const record = (e: SpreadEvent) =>
      deps.recorder.event(
        objectReference(ws, `${KRUISE_APPS_GROUP}/v1alpha1`, 'WorkloadSpread'),
        e.type,
        e.reason,
        e.message,
      );
    if (!ws.spec?.targetRef) return {};
    const { pods, replicas, workload } = await podsForWorkloadSpread(deps, ws, signal);
    const waits: number[] = [];

    // Group pods by version, then by subset (patching the subset's metadata on pods created before the WorkloadSpread).
    const byVersion = new Map<string, Json[]>();
    for (const pod of pods) {
      const v = podVersion(pod);
      byVersion.set(v, [...(byVersion.get(v) ?? []), pod]);
    }
    const nodes: Record<string, Json> = {};
    for (const pod of pods) {
      const node = pod.spec?.nodeName;
      if (node && !(node in nodes)) nodes[node] = await deps.api.getNode(node, signal);
    }
    const versionedPodMap = new Map<string, Record<string, Json[]>>();
    const subsetPodMap: Record<string, Json[]> = {};
    for (const [version, list] of byVersion) {
      const { podMap, patches } = groupPodsBySubset(ws, list, replicas, nodes);
      for (const { pod, patch } of patches) {
        mayWrite();
        await deps.api.patchPod(pod.metadata.namespace, pod.metadata.name, patch, signal);
      }
      for (const [subset, ps] of Object.entries(podMap))
        subsetPodMap[subset] = [...(subsetPodMap[subset] ?? []), ...ps];
      versionedPodMap.set(version, podMap);
    }

    // Deletion costs: the latest version scales in from the last subset, older versions from the first.
    const kind = ws.spec.targetRef.kind;
    if (kind === 'ReplicaSet' || kind === 'Deployment' || kind === 'CloneSet') {
      const latest = await latestVersion(deps, ws, workload, signal);
      for (const [version, podMap] of versionedPodMap) {
        for (const write of deletionCostWrites(ws, podMap, replicas, version !== latest)) {
          const [podNamespace, podName] = write.pod.split('/');
          mayWrite();
          try {
            await deps.api.patchPod(
              podNamespace,
              podName,
              { metadata: { annotations: { [POD_DELETION_COST]: write.value } } },
              signal,
            );
          } catch (e) {
            if (!signal?.aborted)
              record({
                type: 'Warning',
                reason: 'PatchPodDeletionCostFailed',
                message: patchDeletionCostFailedMessage(ws, write),
              });
            throw e;
          }
        }
      }
    }

    // Status, and the pods to reschedule (Adaptive).
    const now = deps.clock.now();
    const top = subsetStatuses(ws, ws.status?.subsetStatuses, subsetPodMap, replicas, now);
    const events = [...top.events];
    const recordEvents = () => events.forEach(record);
    if (!top.statuses) {
      recordEvents();
      return {};
    }
    if (top.requeueAfterMs) waits.push(top.requeueAfterMs);
    const versioned: Record<string, SubsetStatus[]> = {};
    for (const [version, podMap] of versionedPodMap) {
      const r = subsetStatuses(ws, ws.status?.versionedSubsetStatuses?.[version], podMap, replicas, now);
      events.push(...r.events);
      if (r.statuses) versioned[version] = r.statuses;
      if (r.requeueAfterMs) waits.push(r.requeueAfterMs);
    }
    for (const [version, old] of Object.entries<SubsetStatus[]>(ws.status?.versionedSubsetStatuses ?? {})) {
      if (versionedPodMap.has(version)) continue;
      const r = subsetStatuses(ws, old, {}, replicas, now);
      events.push(...r.events);
      if (r.requeueAfterMs) waits.push(r.requeueAfterMs);
      const statuses = r.statuses ?? [];
      const busy = statuses.some(
        (s) => s.replicas > 0 || Object.keys(s.creatingPods ?? {}).length || Object.keys(s.deletingPods ?? {}).length,
      );
      if (busy) versioned[version] = statuses;
    }
    // Upstream records them while it computes the status, before writing it.
    recordEvents();
    const status = {
      observedGeneration: ws.metadata.generation,
      subsetStatuses: top.statuses,
      versionedSubsetStatuses: versioned,
    };
    if (!sameStatus(status, ws.status)) {
      mayWrite();
      const written = await deps.api.updateStatus({ ...ws, status }, signal);
      deps.handler?.remember(written);
      deps.logger.info('WorkloadSpread status written', {
        workloadSpread: `${namespace}/${name}`,
        subsets: top.statuses.map((s) => `${s.name}: ${s.replicas} replicas, ${s.missingReplicas} missing`).join('; '),
      });
    }
    for (const [subset, failed] of Object.entries(top.reschedule)) {
      for (const pod of failed) {
        mayWrite();
        try {
          await deps.api.deletePod(pod.metadata.namespace, pod.metadata.name, signal);
        } catch (e) {
          if (!signal?.aborted)
            record({
              type: 'Warning',
              reason: 'DeletePodFailed',
              message: `Failed to delete unschedulabe Pod ${pod.metadata.namespace}/${pod.metadata.name} in Subset ${subset} of WorkloadSpread ${namespace}/${name}`,
            });
          throw e;
        }
        deps.logger.info('deleted a pod that stayed unschedulable (Adaptive)', {
          workloadSpread: `${namespace}/${name}`,
          subset,
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
        });
      }
    }
    const positive = waits.filter((w) => w > 0);
    return positive.length ? { requeueAfterMs: Math.min(...positive) } : {};
  };
}

/** Upstream getPodsForWorkloadSpread + filterWorkload: the target's pods (by owner UID) and its replicas. */
async function podsForWorkloadSpread(
  deps: WorkloadSpreadControllerDeps,
  ws: Json,
  signal?: AbortSignal,
): Promise<{ pods: Json[]; replicas: number; workload?: Json }> {
  const ref = ws.spec.targetRef;
  const namespace = ws.metadata.namespace;
  const custom = !WORKLOADSPREAD_TARGETS[String(ref.kind)];
  const found = custom
    ? await customWorkload(deps, ref, namespace, signal)
    : await builtInWorkload(deps, ref, namespace, signal);
  if (!found) return { pods: [], replicas: 0 };
  const { workload, uids, podSelector } = found;
  // filterWorkload: the replicas at the paths (the targetFilter's, or the whitelist's), whatever the
  // pods; a path the workload does not have is an error (no status, no deletion cost), as upstream.
  const paths = replicasPaths(deps, ws);
  const replicas = paths.length ? paths.reduce((sum, p) => sum + replicasAtPath(workload, p), 0) : found.replicas;
  if (ref.kind !== 'Job' && found.replicas === 0) return { pods: [], replicas, workload };
  const listed = (keep: (p: Json) => boolean) => deps.pods.store.listNamespace(namespace).filter(keep).sort(byName);
  let pods = listed(
    (p) =>
      uids.some((uid) => ownedBy(p, uid)) &&
      (ref.kind !== 'Job' || matchesSelector(workload.spec?.selector, p.metadata?.labels ?? {})),
  );
  // A custom workload whose pods are owned by an object between them (a sub-resource): by the scale's selector.
  if (!pods.length && podSelector) pods = listed((p) => matchesSelector(podSelector, p.metadata?.labels ?? {}));
  if (ws.spec.targetFilter?.selector)
    pods = pods.filter((p) => podSelectedByFilter(ws.spec.targetFilter, p.metadata?.labels));
  return { pods, replicas, workload };
}

interface FoundWorkload {
  workload: Json;
  replicas: number;
  uids: string[];
  podSelector?: Json;
}

/** The built-in targets (a Deployment's pods are those of its ReplicaSets). */
async function builtInWorkload(
  deps: WorkloadSpreadControllerDeps,
  ref: Json,
  namespace: string,
  signal?: AbortSignal,
): Promise<FoundWorkload | undefined> {
  const workload = await deps.api.getWorkload(
    String(ref.apiVersion),
    String(ref.kind),
    namespace,
    String(ref.name),
    signal,
  );
  if (!workload || workload.metadata?.deletionTimestamp) return undefined;
  const uids: string[] = [workload.metadata.uid];
  if (ref.kind === 'Job') {
    if (selectorString(workload.spec?.selector) === undefined)
      throw new Error(`Job ${namespace}/${ref.name}: its selector does not parse`);
  } else if (ref.kind === 'Deployment') {
    const rsSelector = selectorString(workload.spec?.selector);
    const owned =
      rsSelector === undefined
        ? []
        : (await deps.api.listReplicaSets(namespace, rsSelector, signal)).filter(
            (rs) => !rs.metadata?.deletionTimestamp && controllerOf(rs)?.uid === workload.metadata.uid,
          );
    if (owned.length) uids.splice(0, 1, ...owned.map((rs) => rs.metadata.uid));
  }
  return { workload, replicas: workloadReplicas(String(ref.kind), workload), uids };
}

/**
 * A custom workload as upstream's controller finder reads one: its scale subresource (replicas,
 * the pod selector) when it has one, else the object alone with its replicas unknown (-1); its
 * pods are those it owns, or those the scale's selector selects.
 */
async function customWorkload(
  deps: WorkloadSpreadControllerDeps,
  ref: Json,
  namespace: string,
  signal?: AbortSignal,
): Promise<FoundWorkload | undefined> {
  const args = [String(ref.apiVersion), String(ref.kind), namespace, String(ref.name)] as const;
  const workload = await deps.api.getWorkload(...args, signal);
  if (!workload || workload.metadata?.deletionTimestamp) return undefined;
  const scale = await deps.api.getScale(...args, signal);
  if (!scale) return { workload, replicas: -1, uids: [workload.metadata.uid] };
  const selector = scale.status?.selector;
  const podSelector = typeof selector === 'string' ? parseSelectorString(selector) : undefined;
  if (typeof selector === 'string' && !podSelector)
    throw new Error(
      `${ref.kind} ${namespace}/${ref.name}: its scale's selector ${JSON.stringify(selector)} does not parse`,
    );
  return {
    workload,
    replicas: Number(scale.spec?.replicas ?? 0),
    uids: [scale.metadata?.uid ?? workload.metadata.uid],
    ...(podSelector ? { podSelector } : {}),
  };
}

/**
 * Upstream getReplicasPathList: the targetFilter's paths, else the replicasPath of the whitelist
 * entry of the target's exact group version and kind.
 */
function replicasPaths(deps: WorkloadSpreadControllerDeps, ws: Json): string[] {
  const paths: string[] = ws.spec.targetFilter?.replicasPathList ?? [];
  if (paths.length) return paths;
  const ref = ws.spec.targetRef;
  const group = apiGroupOf(String(ref.apiVersion ?? ''));
  if (group === undefined) throw new Error(`targetRef apiVersion ${JSON.stringify(ref.apiVersion)} does not parse`);
  const version = String(ref.apiVersion).split('/').pop();
  const entry = (deps.customWorkloads?.() ?? []).find(
    (w) => w.group === group && w.version === version && w.kind === ref.kind,
  );
  return entry ? [entry.replicasPath] : [];
}

/** Upstream GetWorkloadVersion: the latest version's key among the pods' versions. */
async function latestVersion(
  deps: WorkloadSpreadControllerDeps,
  ws: Json,
  workload: Json | undefined,
  signal?: AbortSignal,
): Promise<string> {
  const kind = ws.spec.targetRef.kind;
  if (!workload) return '';
  if (kind === 'ReplicaSet') return workload.metadata?.labels?.['pod-template-hash'] ?? '';
  if (kind !== 'Deployment') return VERSION_IGNORED;
  const selector = selectorString(workload.spec?.selector) ?? '';
  for (const rs of await deps.api.listReplicaSets(ws.metadata.namespace, selector, signal)) {
    if (controllerOf(rs)?.uid !== workload.metadata.uid || rs.metadata?.deletionTimestamp) continue;
    if (equalIgnoreHash(workload.spec?.template, rs.spec?.template))
      return rs.metadata?.labels?.['pod-template-hash'] ?? '';
  }
  throw new Error(
    `Deployment ${ws.metadata.namespace}/${workload.metadata.name}: no ReplicaSet of its latest version yet`,
  );
}

/**
 * The WorkloadSpread to reconcile when a pod is created, deleted or (see {@link podChangedForSpread})
 * updated: the one its annotation names, as upstream's podEventHandler (a pod without one, never
 * spread, triggers nothing).
 */
export function workloadSpreadsForPod(pod: V1Pod): Request[] {
  const raw = pod.metadata?.annotations?.['apps.kruise.io/matched-workloadspread'];
  if (raw === undefined) return [];
  try {
    const name = JSON.parse(raw)?.name;
    return typeof name === 'string' && name ? [{ namespace: pod.metadata?.namespace, name }] : [];
  } catch {
    return [];
  }
}

/** Upstream's pod update predicate: the pod stopped being active, or its version changed. */
export function podChangedForSpread(a: V1Pod, b: V1Pod): boolean {
  return (isPodActive(a) && !isPodActive(b)) || podVersion(a) !== podVersion(b);
}

/** Upstream's workload update predicate: replicas (a Job's parallelism) or the rollout revision changed. */
export function workloadChangedForSpread(a: Json, b: Json): boolean {
  const replicas = (o: Json) =>
    o?.kind === 'Job' || o?.spec?.parallelism !== undefined ? o?.spec?.parallelism : o?.spec?.replicas;
  const revision = (o: Json) => o?.metadata?.annotations?.['deployment.kubernetes.io/revision'];
  return replicas(a) !== replicas(b) || revision(a) !== revision(b);
}

/**
 * Upstream getWorkloadSpreadForWorkload: the first WorkloadSpread of the namespace that targets the
 * workload (by group, kind and name), or for a ReplicaSet of a Deployment, its Deployment.
 */
export function workloadSpreadsForWorkload(
  workloadSpreads: Informer<Json>,
  kind: string,
  group: string,
  workload: Json,
): Request[] {
  const namespace = workload?.metadata?.namespace ?? '';
  const owner = controllerOf(workload);
  const ownerDeployment =
    kind === 'ReplicaSet' && owner?.kind === 'Deployment' && apiGroupOf(String(owner.apiVersion ?? '')) === 'apps'
      ? String(owner.name)
      : undefined;
  const ws = workloadSpreads.store.listNamespace(namespace).find((w) => {
    const ref = w?.spec?.targetRef;
    if (w?.metadata?.deletionTimestamp || !ref) return false;
    const refGroup = apiGroupOf(String(ref.apiVersion ?? ''));
    if (refGroup === group && ref.kind === kind && ref.name === workload?.metadata?.name) return true;
    return (
      ownerDeployment !== undefined && refGroup === 'apps' && ref.kind === 'Deployment' && ref.name === ownerDeployment
    );
  });
  return ws ? [{ namespace, name: ws.metadata.name }] : [];
}

export { FAKE_SUBSET };
