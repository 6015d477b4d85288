/**
 * How upstream OpenKruise v1.9.1's WorkloadSpread controller puts pods into subsets
 * (pkg/controller/workloadspread groupPodBySubset, getSuitableSubsetNameForPod, matchesSubset):
 * a pod whose annotation names this WorkloadSpread and one of its subsets belongs there; another
 * pod on a node goes to the subset whose required term and tolerations its node satisfies with the
 * best score (preferred terms x 100, a patch the pod already carries x 10, room left x 1; the first
 * on a tie), and is patched with the subset's metadata and the annotation; the rest (no node, no
 * such node, no subset) form upstream's fake subset. Node matching as
 * k8s.io/component-helpers v0.30 (nodeaffinity, FindMatchingUntoleratedTaint). Pure: the caller
 * reads the nodes and writes the patches (controller.ts). A subset patch is compared with the pod
 * for maps only (lists are upstream's strategic merge).
 */
import { isValidLabelKey, isValidLabelValue } from '../../contract/selector.js';
import { FAKE_SUBSET } from './deletion-cost.js';
import { MATCHED_WORKLOADSPREAD_ANNOTATION, readInjected } from './subset.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Upstream IgnorePatchExistingPodsAnnotation: "true" on the WorkloadSpread leaves existing pods' metadata alone. */
export const IGNORE_PATCH_EXISTING_PODS = 'workloadspread.kruise.io/ignore-patch-existing-pods-metadata';

const INT = /^[-+]?\d+$/;

/** One term's requirement on labels, or undefined when labels.NewRequirement refuses it. */
function labelRequirement(e: Json): ((labels: Record<string, string>) => boolean) | undefined {
  const key = String(e?.key ?? '');
  const values: string[] = (e?.values ?? []).map(String);
  if (!isValidLabelKey(key)) return undefined;
  switch (e?.operator) {
    case 'In':
    case 'NotIn': {
      if (!values.length || !values.every(isValidLabelValue)) return undefined;
      const inSet = (l: Record<string, string>) => key in l && values.includes(l[key]);
      return e.operator === 'In' ? inSet : (l) => !inSet(l);
    }
    case 'Exists':
    case 'DoesNotExist':
      if (values.length) return undefined;
      return e.operator === 'Exists' ? (l) => key in l : (l) => !(key in l);
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !INT.test(values[0])) return undefined;
      const bound = BigInt(values[0]);
      return (l) => {
        if (!(key in l) || !INT.test(l[key])) return false;
        const v = BigInt(l[key]);
        return e.operator === 'Gt' ? v > bound : v < bound;
      };
    }
    default:
      return undefined;
  }
}

/** A node selector term as nodeaffinity parses it: a matcher, or undefined for an unparsable term. */
function term(t: Json): ((node: Json) => boolean) | undefined {
  const expressions: Json[] = t?.matchExpressions ?? [];
  const fieldReqs: Json[] = t?.matchFields ?? [];
  const labelReqs = expressions.map(labelRequirement);
  if (labelReqs.some((r) => r === undefined)) return undefined;
  const fieldChecks: Array<(name: string) => boolean> = [];
  for (const f of fieldReqs) {
    const values: string[] = (f?.values ?? []).map(String);
    if ((f?.operator !== 'In' && f?.operator !== 'NotIn') || values.length !== 1) return undefined;
    const key = String(f.key);
    // fields.Set lookup: only metadata.name is in the node's set; any other key reads "".
    fieldChecks.push((name) => {
      const actual = key === 'metadata.name' ? name : '';
      return f.operator === 'In' ? actual === values[0] : actual !== values[0];
    });
  }
  return (node) => {
    const labels: Record<string, string> = node?.metadata?.labels ?? {};
    // An empty expression list is labels.Nothing() only when given; absent, it does not constrain.
    if (expressions.length && !labelReqs.every((r) => r!(labels))) return false;
    const name = String(node?.metadata?.name ?? '');
    if (fieldReqs.length && name !== '' && !fieldChecks.every((c) => c(name))) return false;
    return true;
  };
}

const emptyTerm = (t: Json) => !(t?.matchExpressions?.length || t?.matchFields?.length);

/** MatchNodeSelectorTerms: any non-empty, parsable term matches. */
export function matchNodeSelectorTerms(node: Json, terms: Json[]): boolean {
  return terms.some((t) => !emptyTerm(t) && (term(t)?.(node) ?? false));
}

/** PreferredSchedulingTerms.Score, or undefined when a term does not parse (upstream then panics on nil). */
export function preferredScore(node: Json, terms: Json[]): number | undefined {
  let score = 0;
  for (const t of terms) {
    if (!t?.weight || emptyTerm(t.preference ?? {})) continue;
    const m = term(t.preference);
    if (!m) return undefined;
    if (m(node)) score += Number(t.weight);
  }
  return score;
}

/** v1.Toleration.ToleratesTaint (v1.30). */
function tolerates(t: Json, taint: Json): boolean {
  if (t?.effect && t.effect !== taint?.effect) return false;
  if (t?.key && t.key !== taint?.key) return false;
  if (!t?.operator || t.operator === 'Equal') return (t?.value ?? '') === (taint?.value ?? '');
  return t.operator === 'Exists';
}

/** FindMatchingUntoleratedTaint with no filter: whether every taint of the node is tolerated. */
export function toleratesNode(node: Json, tolerations: Json[]): boolean {
  return (node?.spec?.taints ?? []).every((taint: Json) => tolerations.some((t) => tolerates(t, taint)));
}

/** matchesSubsetRequiredAndToleration: the subset's required term added to each of the pod's own terms. */
function matchesRequired(pod: Json, node: Json, subset: Json): boolean {
  if (!toleratesNode(node, [...(pod?.spec?.tolerations ?? []), ...(subset.tolerations ?? [])])) return false;
  const required = subset.requiredNodeSelectorTerm;
  if (!required) return true;
  const own: Json[] = structuredClone(
    pod?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [],
  );
  const terms = own.length
    ? own.map((t) => ({
        ...t,
        matchExpressions: [...(t.matchExpressions ?? []), ...(required.matchExpressions ?? [])],
        matchFields: [...(t.matchFields ?? []), ...(required.matchFields ?? [])],
      }))
    : [required];
  return matchNodeSelectorTerms(node, terms);
}

/** Whether merging the map-only `patch` into `value` leaves it unchanged (upstream podPreferredScore). */
function unchangedBy(value: Json, patch: Json): boolean {
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) {
      if (value?.[k] !== undefined) return false;
    } else if (typeof v === 'object' && !Array.isArray(v)) {
      if (value?.[k] === undefined && Object.keys(v as object).length === 0) return false;
      if (!unchangedBy(value?.[k], v)) return false;
    } else if (JSON.stringify(value?.[k]) !== JSON.stringify(v)) return false;
  }
  return true;
}

/** matchesSubset: [matched, score]. Annotations never count for the patch (upstream restores them). */
export function matchSubset(pod: Json, node: Json, subset: Json, missing: number): [boolean, number] {
  if (!matchesRequired(pod, node, subset)) return [false, -1];
  const nodeScore = subset.preferredNodeSelectorTerms ? preferredScore(node, subset.preferredNodeSelectorTerms) : 0;
  if (nodeScore === undefined) throw new Error(`subset ${subset.name}: a preferred node selector term does not parse`);
  let podScore = 0;
  if (subset.patch !== undefined && subset.patch !== null) {
    const { metadata, ...rest } = subset.patch ?? {};
    const meta = { ...(metadata ?? {}) };
    delete meta.annotations;
    podScore = unchangedBy(pod, { ...rest, ...(Object.keys(meta).length ? { metadata: meta } : {}) }) ? 1 : 0;
  }
  return [true, nodeScore * 100 + podScore * 10 + (missing > 0 ? 1 : 0)];
}

/** intstr scaled value of a limit (MaxInt32 when unset), 0 when it does not read, as upstream ignores the error. */
function limit(v: unknown, replicas: number): number {
  if (v === undefined || v === null) return 2147483647;
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.endsWith('%') && INT.test(v.slice(0, -1)))
    return Math.ceil((Number(v.slice(0, -1)) * replicas) / 100);
  return 0;
}

export interface Grouping {
  /** Subset name (or {@link FAKE_SUBSET}) to its pods, in the order given. */
  podMap: Record<string, Json[]>;
  /** The metadata patches for pods matched to a subset by their node (strategic merge bodies). */
  patches: Array<{ pod: Json; patch: Json }>;
}

/** groupPodBySubset for `pods`, `nodes` by name. */
export function groupPodsBySubset(ws: Json, pods: Json[], replicas: number, nodes: Record<string, Json>): Grouping {
  const subsets: Json[] = ws?.spec?.subsets ?? [];
  const podMap: Record<string, Json[]> = { [FAKE_SUBSET]: [] };
  const missing: Record<string, number> = {};
  for (const s of subsets) {
    podMap[s.name] = [];
    missing[s.name] = limit(s.maxReplicas, replicas);
  }
  const mine = (pod: Json) => {
    const injected = readInjected(pod);
    return injected && injected.name === ws.metadata.name && injected.subset !== '' ? injected.subset : undefined;
  };
  for (const pod of pods) {
    const subset = mine(pod);
    if (subset !== undefined && subset in podMap) missing[subset]--;
  }
  const patches: Grouping['patches'] = [];
  for (const pod of pods) {
    let name: string = mine(pod) ?? '';
    if (!mine(pod)) {
      const node = pod?.spec?.nodeName ? nodes[pod.spec.nodeName] : undefined;
      let best: Json | undefined;
      let bestScore = -1;
      if (node)
        for (const s of subsets) {
          const [matched, score] = matchSubset(pod, node, s, missing[s.name]);
          if (matched && score > bestScore) [best, bestScore] = [s, score];
        }
      if (best) {
        patches.push({ pod, patch: favoriteSubsetPatch(ws, best) });
        missing[best.name]--;
        name = best.name;
      } else name = FAKE_SUBSET;
    }
    (name in podMap ? podMap[name] : podMap[FAKE_SUBSET]).push(pod);
  }
  return { podMap, patches };
}

/** patchFavoriteSubsetMetadataToPod's body: the subset patch's metadata and the annotation. */
function favoriteSubsetPatch(ws: Json, subset: Json): Json {
  const ignore = String(ws?.metadata?.annotations?.[IGNORE_PATCH_EXISTING_PODS] ?? '').toLowerCase() === 'true';
  const source = !ignore && subset.patch && typeof subset.patch.metadata === 'object' ? subset.patch.metadata : null;
  const metadata: Json = source ? structuredClone(source) : {};
  const annotation = JSON.stringify({ name: ws.metadata.name, subset: subset.name });
  if (metadata.annotations && typeof metadata.annotations === 'object')
    metadata.annotations[MATCHED_WORKLOADSPREAD_ANNOTATION] = annotation;
  else metadata.annotations = { [MATCHED_WORKLOADSPREAD_ANNOTATION]: annotation };
  return { metadata };
}
