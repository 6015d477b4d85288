/**
 * The pod deletion costs upstream OpenKruise v1.9.1's WorkloadSpread controller sets so that a
 * scale-in removes pods from the right subsets (pkg/controller/workloadspread/
 * update_pod_deletion_cost.go updateDeletionCostBySubset): per subset, in order, the pods within
 * its limit get +100 x (subsets - index), those over it (the first to delete by
 * kubecontroller.ActivePods order) -100 x (index + 1); pods of no subset -100 x (subsets + 1). On
 * an old version of the workload the subset order is reversed. Pure: answers the annotation
 * values to write (only those that change); the controller (controller.ts) patches them.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Upstream wsutil.PodDeletionCostAnnotation (the Kubernetes annotation ReplicaSets honour). */
export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';
/** Upstream FakeSubsetName: the pods that match no subset. */
export const FAKE_SUBSET = 'kruise.io/workloadspread-fake-subset-name';

/** kubecontroller.IsPodActive. */
export const isPodActive = (p: Json) =>
  p?.status?.phase !== 'Succeeded' && p?.status?.phase !== 'Failed' && !p?.metadata?.deletionTimestamp;

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
const readyCondition = (p: Json) =>
  (p?.status?.conditions ?? []).find((c: Json) => c?.type === 'Ready' && c?.status === 'True');
const isReady = (p: Json) => readyCondition(p) !== undefined;
/** A metav1.Time as seconds (JSON carries seconds), 0 for the zero time. */
const seconds = (t: unknown) => (typeof t === 'string' && t ? Math.floor(Date.parse(t) / 1000) : 0);
/** afterOrZero: a zero time sorts first, else the later one. */
const afterOrZero = (a: number, b: number) => (a === 0 || b === 0 ? a === 0 : a > b);
const maxRestarts = (statuses: Json[] | undefined) =>
  Math.max(0, ...(statuses ?? []).map((c: Json) => Number(c?.restartCount ?? 0)));
/** The most restarts of a pod's native sidecars (init containers with restartPolicy Always). */
const maxSidecarRestarts = (p: Json) => {
  const sidecars = new Set(
    (p?.spec?.initContainers ?? []).filter((c: Json) => c?.restartPolicy === 'Always').map((c: Json) => c?.name),
  );
  return maxRestarts((p?.status?.initContainerStatuses ?? []).filter((c: Json) => sidecars.has(c?.name)));
};

/**
 * kubecontroller.ActivePods.Less (Kubernetes 1.32, which upstream v1.9.1 links): whether `a` is deleted before `b`.
 * 1.32 breaks a tie in container restarts by the native sidecars' restarts (1.30, v1.8.3's, did not).
 */
export function deletedBefore(a: Json, b: Json): boolean {
  const na = a?.spec?.nodeName ?? '';
  const nb = b?.spec?.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '';
  const pa = PHASE_ORDINAL[a?.status?.phase] ?? 0;
  const pb = PHASE_ORDINAL[b?.status?.phase] ?? 0;
  if (pa !== pb) return pa < pb;
  if (isReady(a) !== isReady(b)) return !isReady(a);
  if (isReady(a) && isReady(b)) {
    const ra = seconds(readyCondition(a)?.lastTransitionTime);
    const rb = seconds(readyCondition(b)?.lastTransitionTime);
    if (ra !== rb) return afterOrZero(ra, rb);
  }
  const [restartsA, restartsB] = [maxRestarts(a?.status?.containerStatuses), maxRestarts(b?.status?.containerStatuses)];
  if (restartsA !== restartsB) return restartsA > restartsB;
  if (maxSidecarRestarts(a) !== maxSidecarRestarts(b)) return maxSidecarRestarts(a) > maxSidecarRestarts(b);
  const ca = seconds(a?.metadata?.creationTimestamp);
  const cb = seconds(b?.metadata?.creationTimestamp);
  if (ca !== cb) return afterOrZero(ca, cb);
  return false;
}

/** intstr.GetValueFromIntOrPercent(v, total, true) (deprecated form: any string is a percentage), or undefined. */
function limitOf(v: unknown, total: number): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const digits = v.replace(/%/g, '');
  if (!/^[-+]?\d+$/.test(digits)) return undefined;
  return Math.ceil((Number(digits) * total) / 100);
}

/** One deletion-cost write: the pod (`namespace/name`), the value, its subset ({@link FAKE_SUBSET} for none). */
export interface DeletionCostWrite {
  readonly pod: string;
  readonly value: string;
  readonly subset: string;
}

/**
 * updateDeletionCostBySubset: the deletion cost each pod of `podMap` (subset name, or
 * {@link FAKE_SUBSET}, to its pods) must carry, as `[namespace/name, value]` for the pods whose
 * annotation changes (upstream patches only those; a pod without one is not given "0").
 */
export function deletionCostPatches(
  ws: Json,
  podMap: Record<string, Json[]>,
  workloadReplicas: number,
  reverseOrder: boolean,
): Array<[string, string]> {
  return deletionCostWrites(ws, podMap, workloadReplicas, reverseOrder).map((w) => [w.pod, w.value]);
}

/** {@link deletionCostPatches} with each write's subset, in upstream's order of writes. */
export function deletionCostWrites(
  ws: Json,
  podMap: Record<string, Json[]>,
  workloadReplicas: number,
  reverseOrder: boolean,
): DeletionCostWrite[] {
  const subsets: Json[] = ws?.spec?.subsets ?? [];
  const n = subsets.length;
  const out: DeletionCostWrite[] = [];
  const write = (subset: string, pods: Json[], cost: number) => {
    const value = String(cost);
    for (const p of pods) {
      const old = p?.metadata?.annotations?.[POD_DELETION_COST];
      if (old === value || (old === undefined && value === '0')) continue;
      out.push({ pod: `${p.metadata.namespace}/${p.metadata.name}`, value, subset });
    }
  };
  const sync = (subset: Json | undefined, index: number, pods: Json[]) => {
    const name = subset ? String(subset.name) : FAKE_SUBSET;
    const active = pods.filter(isPodActive);
    let positive: Json[] = [];
    let negative: Json[] = [];
    if (!subset) negative = active;
    else if (subset.maxReplicas === undefined || subset.maxReplicas === null) positive = active;
    else {
      const limit = limitOf(subset.maxReplicas, workloadReplicas);
      if (limit === undefined || limit < 0) return;
      if (active.length <= limit) positive = active;
      else {
        // sort.SliceStable over indexes with ActivePods.Less.
        const order = active
          .map((_, i) => i)
          .sort((i, j) => (deletedBefore(active[i], active[j]) ? -1 : deletedBefore(active[j], active[i]) ? 1 : i - j));
        order.forEach((idx, k) => (k < active.length - limit ? negative : positive).push(active[idx]));
      }
    }
    write(name, positive, 100 * (n - index));
    write(name, negative, -100 * (index + 1));
  };
  subsets.forEach((subset, idx) => sync(subset, reverseOrder ? n - idx - 1 : idx, podMap[subset.name] ?? []));
  if ((podMap[FAKE_SUBSET] ?? []).length) sync(undefined, n, podMap[FAKE_SUBSET]);
  return out;
}

/**
 * The message of upstream's PatchPodDeletionCostFailed event, as Go formats it: upstream passes
 * the cost as a string to a `%d` verb, so fmt writes `%!d(string=<cost>)` (kept: event
 * consumers matching upstream's text see the same).
 */
export function patchDeletionCostFailedMessage(ws: Json, write: DeletionCostWrite): string {
  const [namespace, name] = write.pod.split('/');
  return (
    `WorkloadSpread ${ws?.metadata?.namespace ?? ''}/${ws?.metadata?.name ?? ''} failed to patch deletion-cost ` +
    `annotation to %!d(string=${write.value}) for Pod ${namespace}/${name} in subset ${write.subset}`
  );
}
