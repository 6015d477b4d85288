/**
 * What upstream OpenKruise v1.9.1's pod webhook does for a WorkloadSpread when a pod of its
 * workload is created or deleted (pkg/util/workloadspread/workloadspread.go): pick the subset
 * (acquireSuitableSubset: by ordinal for a StatefulSet, else the first schedulable subset with
 * missing replicas, in order), book it in the status (updateSubsetForPod: creatingPods /
 * deletingPods, missingReplicas), and inject the subset into the pod (injectWorkloadSpreadIntoPod:
 * tolerations, node affinity, patch, the `apps.kruise.io/matched-workloadspread` annotation).
 * Pure: the caller reads the WorkloadSpread and the workload's replicas, and writes the status.
 *
 * Subset patches are merged as upstream's strategic merge over a Pod (strategic-merge.ts); a patch
 * that cannot be merged throws {@link StrategicMergeError} (upstream answers the CREATE with 500).
 */
import { strategicMergePod } from './strategic-merge.js';

/** Upstream MatchedWorkloadSpreadSubsetAnnotations. */
export const MATCHED_WORKLOADSPREAD_ANNOTATION = 'apps.kruise.io/matched-workloadspread';
/** Upstream VersionIgnored: the status key of workloads without versioned statuses. */
export const VERSION_IGNORED = 'versionIgnored';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface SubsetStatus {
  name: string;
  replicas: number;
  missingReplicas: number;
  conditions?: Array<{ type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }>;
  creatingPods?: Record<string, string>;
  deletingPods?: Record<string, string>;
}

export interface WorkloadSpreadStatus {
  observedGeneration?: number;
  subsetStatuses?: SubsetStatus[];
  versionedSubsetStatuses?: Record<string, SubsetStatus[]>;
}

export interface Injected {
  name: string;
  subset: string;
  uid?: string;
}

/**
 * The pod's `apps.kruise.io/matched-workloadspread` annotation read as Go's encoding/json reads it
 * into upstream's InjectWorkloadSpread (keys case-insensitive, the last one wins), or undefined
 * when it is absent, not a JSON object, or has a field of another type (Go's Unmarshal fails).
 */
export function readInjected(pod: Json): Injected | undefined {
  let v: unknown;
  try {
    v = JSON.parse(pod?.metadata?.annotations?.[MATCHED_WORKLOADSPREAD_ANNOTATION] ?? 'null');
  } catch {
    return undefined;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const out: Injected = { name: '', subset: '' };
  for (const [k, value] of Object.entries(v)) {
    const field = ({ name: 'name', subset: 'subset', uid: 'uid' } as const)[k.toLowerCase() as 'name'];
    if (!field || value === null) continue;
    // A value of another type makes Go's Unmarshal fail, and upstream then reads no annotation at all.
    if (typeof value !== 'string') return undefined;
    out[field] = value;
  }
  return out;
}

/** metav1.GetControllerOf. */
export function controllerOf(pod: Json): Json | undefined {
  return (pod?.metadata?.ownerReferences ?? []).find((o: Json) => o?.controller === true);
}

/** Upstream GetPodVersion (versioned statuses for Deployment and ReplicaSet pods, the default flag). */
export function podVersion(pod: Json): string {
  const owner = controllerOf(pod);
  const kind = String(owner?.kind ?? '').toLowerCase();
  if (kind !== 'deployment' && kind !== 'replicaset') return VERSION_IGNORED;
  const labels = pod?.metadata?.labels ?? {};
  if (typeof labels['pod-template-hash'] === 'string') return labels['pod-template-hash'];
  if (typeof labels['controller-revision-hash'] === 'string')
    return labels['controller-revision-hash'].split('-').pop()!;
  return VERSION_IGNORED;
}

/** intstr.GetScaledValueFromIntOrPercent(v, total, true), 0 on a value it cannot read (upstream ignores the error). */
export function scaledMaxReplicas(v: unknown, total: number): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.endsWith('%') && /^[-+]?\d+$/.test(v.slice(0, -1)))
    return Math.ceil((Number(v.slice(0, -1)) * total) / 100);
  return 0;
}

/** Whether a subset's maxReplicas is a percentage (upstream hasPercentSubset: then the replicas are read). */
export const hasPercentSubset = (ws: Json) =>
  (ws?.spec?.subsets ?? []).some((s: Json) => typeof s?.maxReplicas === 'string');

/** Upstream initializedSubsetStatuses: -1 missing for an unlimited subset, else its limit for `replicas`. */
export function initialSubsetStatuses(ws: Json, replicas: number): SubsetStatus[] {
  return (ws.spec.subsets ?? []).map((s: Json) => ({
    name: s.name,
    replicas: 0,
    missingReplicas:
      s.maxReplicas === undefined || s.maxReplicas === null ? -1 : scaledMaxReplicas(s.maxReplicas, replicas),
  }));
}

const schedulable = (s: SubsetStatus) =>
  !(s.conditions ?? []).some((c) => c.type === 'Schedulable' && c.status === 'False');

/** Upstream getSuitableSubset: the first schedulable subset with room (or unlimited). */
export function suitableSubset(statuses: SubsetStatus[]): SubsetStatus | undefined {
  return statuses.find((s) => schedulable(s) && (s.missingReplicas > 0 || s.missingReplicas === -1));
}

/** Upstream getParentNameAndOrdinal's ordinal: the trailing number of `name-<n>`, else -1. */
export function ordinalOf(name: string): number {
  const m = /^(.*)-([0-9]+)$/.exec(name);
  if (!m) return -1;
  const n = Number(m[2]);
  return n <= 2147483647 ? n : -1;
}

/** acquireSuitableSubset for a StatefulSet: by ordinal, over the cumulated limits of the schedulable subsets. */
export function statefulSubset(ws: Json, pod: Json): string {
  const conditions = new Map<string, SubsetStatus['conditions']>(
    (ws.status?.subsetStatuses ?? []).map((s: SubsetStatus) => [s.name, s.conditions]),
  );
  let threshold = 0;
  const ordinal = ordinalOf(String(pod?.metadata?.name ?? ''));
  for (const subset of ws.spec.subsets ?? []) {
    const schedulableCondition = (conditions.get(subset.name) ?? []).find((c) => c.type === 'Schedulable');
    if (schedulableCondition?.status === 'False') continue;
    threshold +=
      subset.maxReplicas === undefined || subset.maxReplicas === null ? 2147483647 : intValue(subset.maxReplicas);
    if (ordinal < threshold) return subset.name;
  }
  return '';
}

/** intstr IntValue: a number, or a string's leading integer (Atoi, 0 when it is not one). */
const intValue = (v: unknown) => (typeof v === 'number' ? v : /^[-+]?\d+$/.test(String(v)) ? Number(v) : 0);

export interface SubsetDecision {
  /** Whether the status changed (and must be written). */
  changed: boolean;
  /** The subset chosen ('' for none). */
  subset: string;
  /** The key booked in creatingPods for a pod without a name (upstream's generated UID), if any. */
  generatedUID?: string;
  /** The status after (a copy; unchanged when `changed` is false). */
  status: WorkloadSpreadStatus;
}

export interface SubsetContext {
  operation: 'Create' | 'Delete' | 'Eviction';
  /** The pod's annotation on DELETE/eviction. */
  injected?: Injected;
  /** The workload's replicas, read only when a subset's maxReplicas is a percentage. */
  replicas?: number;
  now: Date;
  newUID: () => string;
}

const metaTime = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** acquireSuitableSubset's choice and updateSubsetForPod's booking, on a copy of `ws.status`. */
export function decideSubset(ws: Json, pod: Json, ctx: SubsetContext): SubsetDecision {
  const status: WorkloadSpreadStatus = structuredClone(ws.status ?? {});
  const subsets = ws.spec.subsets ?? [];
  if (subsets.length === 1 && (subsets[0].maxReplicas === undefined || subsets[0].maxReplicas === null))
    return { changed: false, subset: subsets[0].name, status };
  if (ws.spec.targetRef?.kind === 'StatefulSet') return { changed: false, subset: statefulSubset(ws, pod), status };
  const version = podVersion(pod);
  status.versionedSubsetStatuses ??= {};
  let statuses = status.versionedSubsetStatuses[version];
  if (!statuses?.length) {
    statuses = initialSubsetStatuses(ws, ctx.replicas ?? 0);
    status.versionedSubsetStatuses[version] = statuses;
  }
  const name = String(pod?.metadata?.name ?? '');
  const recorded = (n: string) =>
    statuses.find((s) => (s.creatingPods && n in s.creatingPods) || (s.deletingPods && n in s.deletingPods));
  const unchanged = (subset = '') => ({ changed: false, subset, status: structuredClone(ws.status ?? {}) });
  let chosen: SubsetStatus | undefined;
  let generatedUID: string | undefined;
  if (ctx.operation === 'Create') {
    const already = name ? recorded(name) : undefined;
    if (already) return unchanged(already.name);
    chosen = suitableSubset(statuses);
    if (!chosen) return unchanged();
    if (chosen.missingReplicas === -1) return unchanged(chosen.name);
    chosen.creatingPods ??= {};
    const key = name || (generatedUID = ctx.newUID());
    chosen.creatingPods[key] = metaTime(ctx.now);
    if (chosen.missingReplicas > 0) chosen.missingReplicas--;
  } else {
    if (recorded(name)) return unchanged();
    chosen = statuses.find((s) => s.name === ctx.injected?.subset);
    if (!chosen) return unchanged();
    if (chosen.missingReplicas === -1) return unchanged(chosen.name);
    chosen.deletingPods ??= {};
    chosen.deletingPods[name] = metaTime(ctx.now);
    if (chosen.missingReplicas >= 0) chosen.missingReplicas++;
  }
  return { changed: true, subset: chosen.name, ...(generatedUID ? { generatedUID } : {}), status };
}

/** Upstream injectWorkloadSpreadIntoPod on a copy of `pod`. */
export function injectSubset(ws: Json, pod: Json, subsetName: string, generatedUID?: string): Json {
  const subset = (ws.spec.subsets ?? []).find((s: Json) => s.name === subsetName);
  if (!subset) return pod;
  let out = structuredClone(pod);
  out.spec ??= {};
  if (subset.tolerations?.length) out.spec.tolerations = [...(out.spec.tolerations ?? []), ...subset.tolerations];
  out.spec.affinity ??= {};
  out.spec.affinity.nodeAffinity ??= {};
  const affinity = out.spec.affinity.nodeAffinity;
  if (subset.preferredNodeSelectorTerms?.length)
    affinity.preferredDuringSchedulingIgnoredDuringExecution = [
      ...(affinity.preferredDuringSchedulingIgnoredDuringExecution ?? []),
      ...subset.preferredNodeSelectorTerms,
    ];
  const required = subset.requiredNodeSelectorTerm;
  if (required) {
    affinity.requiredDuringSchedulingIgnoredDuringExecution ??= {};
    const terms = affinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms ?? [];
    if (!terms.length) affinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms = [required];
    else
      for (const term of terms) {
        const expressions = [...(term.matchExpressions ?? []), ...(required.matchExpressions ?? [])];
        const fields = [...(term.matchFields ?? []), ...(required.matchFields ?? [])];
        if (expressions.length) term.matchExpressions = expressions;
        if (fields.length) term.matchFields = fields;
      }
  }
  if (subset.patch !== undefined && subset.patch !== null) {
    const priorityClass = out.spec.priorityClassName;
    out = strategicMergePod(out, subset.patch);
    if (out.spec?.priorityClassName !== priorityClass && out.spec) delete out.spec.priority;
  }
  out.metadata ??= {};
  out.metadata.labels ??= {};
  out.metadata.annotations ??= {};
  out.metadata.annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = JSON.stringify({
    name: ws.metadata.name,
    subset: subsetName,
    ...(generatedUID ? { uid: generatedUID } : {}),
  });
  return out;
}
