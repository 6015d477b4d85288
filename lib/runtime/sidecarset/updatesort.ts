import type { V1Pod } from '@kubernetes/client-node';
import { matchesSelector } from '../../contract/selector.js';
import type { SidecarSetUpdateStrategy, UpdatePriorityStrategy } from './types.js';

/**
 * The order in which a SidecarSet rollout takes pods, as upstream (sidecarset_strategy.go
 * SortUpdateIndexes): Kubernetes' ActivePods order, then the priority strategy, then the scatter
 * strategy. Each function sorts `indexes` into `pods`.
 */
export function sortUpdateIndexes(strategy: SidecarSetUpdateStrategy, pods: V1Pod[], indexes: number[]): number[] {
  // Keys once per pod, not per comparison: a rollout sorts up to every matched pod on each reconcile.
  const keys = new Map(indexes.map((i) => [i, activePodKey(pods[i])]));
  // Upstream uses sort.Slice (unstable); ties fall back to namespace/name here so the order is deterministic.
  let sorted = [...indexes].sort((i, j) => compareActive(keys.get(i)!, keys.get(j)!));
  if (strategy.priorityStrategy) sorted = prioritySort(strategy.priorityStrategy, pods, sorted);
  if (strategy.scatterStrategy?.length)
    sorted = scatterSort(expandScatterTerms(strategy.scatterStrategy, pods), pods, sorted);
  return sorted;
}

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };
/** Seconds (metav1.Time's precision on the wire); 0 when absent. */
const seconds = (t: Date | string | undefined) => (t ? Math.floor(new Date(t).getTime() / 1000) : 0);
/** Zero times first, then later ones (Kubernetes' afterOrZero). */
const afterOrZero = (a: number, b: number) => (a === 0 || b === 0 ? a === 0 : a > b);

interface ActiveKey {
  unassigned: boolean;
  phase: number;
  ready: boolean;
  readySince: number;
  restarts: number;
  created: number;
  name: string;
}

/** Keys of cached pods (frozen, replaced on change): computed once per pod version, not per reconcile. */
const keyMemo = new WeakMap<V1Pod, ActiveKey>();

function activePodKey(p: V1Pod): ActiveKey {
  let key = keyMemo.get(p);
  if (!key) {
    key = computeActiveKey(p);
    if (Object.isFrozen(p)) keyMemo.set(p, key);
  }
  return key;
}

function computeActiveKey(p: V1Pod): ActiveKey {
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
  return {
    unassigned: !p.spec?.nodeName,
    phase: PHASE_ORDINAL[p.status?.phase ?? ''] ?? 0,
    ready: !!ready,
    readySince: seconds(ready?.lastTransitionTime),
    restarts: Math.max(0, ...(p.status?.containerStatuses ?? []).map((c) => c.restartCount ?? 0)),
    created: seconds(p.metadata?.creationTimestamp),
    name: `${p.metadata?.namespace ?? ''}/${p.metadata?.name ?? ''}`,
  };
}

/** Kubernetes' ActivePods.Less as a comparator, ties broken by namespace/name. */
function compareActive(a: ActiveKey, b: ActiveKey): number {
  const less = (x: ActiveKey, y: ActiveKey): boolean | undefined => {
    if (x.unassigned !== y.unassigned) return x.unassigned;
    if (x.phase !== y.phase) return x.phase < y.phase;
    if (x.ready !== y.ready) return !x.ready;
    if (x.ready && y.ready && x.readySince !== y.readySince) return afterOrZero(x.readySince, y.readySince);
    if (x.restarts !== y.restarts) return x.restarts > y.restarts;
    if (x.created !== y.created) return afterOrZero(x.created, y.created);
    return undefined;
  };
  const r = less(a, b);
  if (r !== undefined) return r ? -1 : 1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Kubernetes' ActivePods.Less (pkg/controller/controller_utils.go): unassigned < assigned,
 * Pending < Unknown < Running, not ready < ready, ready for less time < more, more restarts <
 * fewer, newer < older: the pods whose update costs least go first.
 */
export function activePodsLess(a: V1Pod, b: V1Pod): boolean {
  const [x, y] = [activePodKey(a), activePodKey(b)];
  return compareActive({ ...x, name: '' }, { ...y, name: '' }) < 0;
}

/** The trailing digits of a label value as a number (`pod-12` -> 12), 0 without any. */
function trailingNumber(v: string): number {
  const m = /\d+$/.exec(v);
  return m ? Number(m[0]) : 0;
}

/**
 * Upstream's updatesort prioritySort: higher total weight first; or, with orderPriority, pods
 * with none of the keys first, then by the first listed key a pod has, then the larger trailing number.
 */
export function prioritySort(strategy: UpdatePriorityStrategy, pods: V1Pod[], indexes: number[]): number[] {
  const weights = strategy.weightPriority ?? [];
  const orders = strategy.orderPriority ?? [];
  if (!weights.length && !orders.length) return indexes;
  const key = (labels: Record<string, string>): [number, number] => {
    if (weights.length)
      return [-weights.reduce((sum, w) => sum + (matchesSelector(w.matchSelector, labels) ? w.weight : 0), 0), 0];
    const level = orders.findIndex((o) => o.orderedKey in labels);
    return level < 0 ? [-1, 0] : [level, -trailingNumber(labels[orders[level].orderedKey])];
  };
  const keys = new Map(indexes.map((i) => [i, key(pods[i].metadata?.labels ?? {})]));
  // Upstream v1.9.1 sorts stably and its compare's default (`i < j` over positions in the slice being
  // sorted) is false whenever its stable sort asks, so ties keep the order they came in (v1.8.3 put the
  // later position in the pod list first). Array.prototype.sort is stable.
  return [...indexes].sort((i, j) => keys.get(i)![0] - keys.get(j)![0] || keys.get(i)![1] - keys.get(j)![1]);
}

type Term = { key: string; value: string };

/** `key: '*'` becomes one term per value the pods carry (upstream parseUpdateScatterTerms), without duplicates. */
export function expandScatterTerms(terms: Term[], pods: V1Pod[]): Term[] {
  const out: Term[] = [];
  const add = (t: Term) => {
    if (!out.some((o) => o.key === t.key && o.value === t.value)) out.push(t);
  };
  for (const t of terms) {
    if (t.value !== '*') add(t);
    else
      for (const p of pods) {
        const v = p.metadata?.labels?.[t.key];
        if (v !== undefined) add({ key: t.key, value: v });
      }
  }
  return out;
}

/** Upstream's updatesort scatterSort: for each term (most matched first), interleave matching and other pods. */
export function scatterSort(terms: Term[], pods: Array<V1Pod | undefined>, indexes: number[]): number[] {
  if (!terms.length || indexes.length <= 1) return indexes;
  let result = indexes;
  for (const term of scatterTerms(terms, pods, indexes)) result = scatterByTerm(term, pods, result);
  return result;
}

/** Upstream getScatterTerms: one term as is; several, those some pod matches, most matched first. */
export function scatterTerms(terms: Term[], pods: Array<V1Pod | undefined>, indexes: number[]): Term[] {
  if (terms.length === 1) return terms;
  const count = (t: Term) => indexes.filter((i) => pods[i]?.metadata?.labels?.[t.key] === t.value).length;
  return terms
    .map((t, at) => ({ t, at, n: count(t) }))
    .filter((x) => x.n > 0)
    .sort((a, b) => b.n - a.n || a.at - b.at)
    .map((x) => x.t);
}

/**
 * Upstream scatterPodsByRule: spreads the pods matching `term` evenly through `indexes` (absent pods count as neither).
 */
export function scatterByTerm(term: Term, pods: Array<V1Pod | undefined>, indexes: number[]): number[] {
  const matches = (p: V1Pod | undefined) => p?.metadata?.labels?.[term.key] === term.value;
  let matched = indexes.filter((i) => matches(pods[i]));
  let unmatched = indexes.filter((i) => !matches(pods[i]));
  if (matched.length <= 1 || unmatched.length <= 1) return indexes;
  let totalMatched = pods.filter((p) => p && matches(p)).length;
  const totalUnmatched = pods.filter((p) => p && !matches(p)).length;
  // The last matched pod always goes last.
  const last = matched[matched.length - 1];
  matched = matched.slice(0, -1);
  totalMatched--;
  const group = groupByDensity(totalMatched, totalUnmatched, matched.length, unmatched.length);
  const out: number[] = unmatched.slice(0, group.unmatchedRemainder);
  unmatched = unmatched.slice(group.unmatchedRemainder);
  const take = (src: number[], size: number): number[] => {
    out.push(...src.slice(0, size));
    return src.length < size ? [] : src.slice(size);
  };
  for (let g = 0; g < group.groups; g++) {
    matched = take(matched, group.matchedSize);
    unmatched = take(unmatched, group.unmatchedSize);
  }
  return [...out, ...matched, ...unmatched, last];
}

interface ScatterGroup {
  groups: number;
  matchedSize: number;
  unmatchedSize: number;
  unmatchedRemainder: number;
}

function scatterGroup(matched: number, unmatched: number): ScatterGroup {
  const groups = Math.min(matched, unmatched);
  // Go's math.Round (half away from zero) equals Math.round for these positive ratios; 0/0 is NaN there, 0 in int().
  const round = (x: number) => (Number.isFinite(x) ? Math.round(x) : 0);
  return {
    groups,
    matchedSize: round(matched / groups),
    unmatchedSize: round(unmatched / groups),
    unmatchedRemainder: 0,
  };
}

function groupByDensity(
  totalMatched: number,
  totalUnmatched: number,
  updateMatched: number,
  updateUnmatched: number,
): ScatterGroup {
  const total = scatterGroup(totalMatched, totalUnmatched);
  const update = scatterGroup(updateMatched, updateUnmatched);
  // Upstream compares float32 ratios.
  if (Math.fround(totalUnmatched / totalMatched) >= Math.fround(updateUnmatched / updateMatched)) return update;
  const byMatched = Math.trunc(updateMatched / total.matchedSize);
  const byUnmatched = Math.trunc(updateUnmatched / total.unmatchedSize);
  const groups = byMatched < byUnmatched ? byMatched : byUnmatched;
  return {
    groups,
    matchedSize: total.matchedSize,
    unmatchedSize: total.unmatchedSize,
    unmatchedRemainder: updateUnmatched - groups * total.unmatchedSize,
  };
}
