/**
 * When upstream's SidecarSet validating webhook considers two SidecarSets to select the same pods,
 * ported from OpenKruise v1.9.1 (pkg/util/selector.go IsSelectorOverlapping and
 * pkg/webhook/sidecarset/validating/utils.go isSidecarSetNamespaceOverlapping), quirks included:
 * these decide which SidecarSets upstream admits, and the construct and the runtime must admit the
 * same ones. Below them, the SidecarSet names and rules the construct and the runtime's webhook
 * share. Re-exported by lib/contract.ts.
 */
import { isValidLabelKey, type SelectorLike } from './selector.js';
import { isRecord } from './values.js';

/**
 * Upstream's isDisjoint: `b` is disjoint from `a` when one of b's terms cannot hold on a's labels,
 * reading `a` loosely (a key `a` pins to values, or `ALL` for Exists; NotIn/DoesNotExist in `a` are
 * ignored). An Exists in `b` on a key `a` never mentions counts as disjoint (upstream's reading).
 */
function isDisjoint(a: SelectorLike, b: SelectorLike): boolean {
  const pinned = new Map<string, string[]>();
  for (const [k, v] of Object.entries(a.matchLabels ?? {})) pinned.set(k, [v]);
  for (const e of a.matchExpressions ?? []) {
    if (e.operator === 'In') for (const v of e.values ?? []) pinned.set(e.key, [...(pinned.get(e.key) ?? []), v]);
    else if (e.operator === 'Exists') pinned.set(e.key, ['ALL']);
  }
  for (const [k, v] of Object.entries(b.matchLabels ?? {})) {
    const values = pinned.get(k);
    if (values && !values.includes('ALL') && !values.includes(v)) return true;
  }
  for (const e of b.matchExpressions ?? []) {
    const values = pinned.get(e.key);
    const wanted = e.values ?? [];
    if (e.operator === 'In' && values && !values.includes('ALL') && !wanted.some((v) => values.includes(v)))
      return true;
    if (e.operator === 'NotIn' && values && values.every((v) => wanted.includes(v))) return true;
    if (e.operator === 'Exists' && !values) return true;
    if (e.operator === 'DoesNotExist' && values) return true;
  }
  return false;
}

/** Upstream's IsSelectorOverlapping: neither selector is disjoint from the other. */
export function upstreamSelectorsOverlap(a: SelectorLike, b: SelectorLike): boolean {
  return !(isDisjoint(a, b) || isDisjoint(b, a));
}

/** The scope of a SidecarSet as upstream's namespace check reads it. */
export interface NamespaceScope {
  namespace?: string;
  namespaceSelector?: SelectorLike;
}

/** The label the API server sets on every Namespace to its name. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * Upstream v1.9.1's isSidecarSetNamespaceOverlapping(candidate, existing), on the v1beta1 form both are converted to
 * first (ConvertTo: `namespace: X` becomes the selector `kubernetes.io/metadata.name: X` and wins over any
 * namespaceSelector): they do not overlap only when both have a namespace selector and those are disjoint by
 * {@link upstreamSelectorsOverlap}, a syntactic reading that fetches no Namespace. So `namespace: a` and
 * `namespace: b` do not overlap, while `namespace: a` and `namespaceSelector: { env: prod }` do (different keys).
 * v1.8.3 compared the names and looked the Namespace up for a name against a selector.
 */
export function upstreamNamespacesOverlap(candidate: NamespaceScope, existing: NamespaceScope): boolean {
  const selector = (s: NamespaceScope): SelectorLike | undefined =>
    s.namespace ? { matchLabels: { [NAMESPACE_NAME_LABEL]: s.namespace } } : s.namespaceSelector;
  const a = selector(candidate);
  const b = selector(existing);
  return !(a && b && !upstreamSelectorsOverlap(a, b));
}

/**
 * Upstream's UpdatePriorityStrategy and UpdateScatterStrategy FieldsValidation, for the construct
 * and the runtime: problems as `[path, message]`, the path under `spec.updateStrategy`. The
 * selectors of weight terms are only checked for presence here; each room checks their syntax.
 */
export function updateOrderProblems(strategy: {
  readonly priorityStrategy?: unknown;
  readonly scatterStrategy?: unknown;
}): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const priority = strategy.priorityStrategy;
  if (priority !== undefined) {
    const at = 'priorityStrategy';
    if (!isRecord(priority)) out.push([at, 'must be an object']);
    else {
      const weights = Array.isArray(priority.weightPriority) ? priority.weightPriority : [];
      const orders = Array.isArray(priority.orderPriority) ? priority.orderPriority : [];
      if (weights.length && orders.length) out.push([at, 'only one of weightPriority and orderPriority can be used']);
      weights.forEach((w: unknown, i) => {
        const term = isRecord(w) ? w : {};
        const weight = term.weight;
        if (!Number.isInteger(weight) || (weight as number) < 0 || (weight as number) > 100)
          out.push([`${at}.weightPriority[${i}].weight`, 'must be a whole number from 0 to 100']);
        if (!isRecord(term.matchSelector) || Object.keys(term.matchSelector).length === 0)
          out.push([`${at}.weightPriority[${i}].matchSelector`, 'can not be empty']);
      });
      orders.forEach((o: unknown, i) => {
        if (!isRecord(o) || typeof o.orderedKey !== 'string' || !o.orderedKey)
          out.push([`${at}.orderPriority[${i}].orderedKey`, 'can not be empty']);
      });
    }
  }
  const scatter = strategy.scatterStrategy;
  if (scatter !== undefined) {
    const seen = new Set<string>();
    if (!Array.isArray(scatter)) out.push(['scatterStrategy', 'must be a list of { key, value }']);
    else {
      scatter.forEach((t: unknown, i) => {
        const term = isRecord(t) ? t : {};
        if (typeof term.key !== 'string' || !term.key) out.push([`scatterStrategy[${i}].key`, 'should not be empty']);
        const id = `${String(term.key)}:${String(term.value)}`;
        if (seen.has(id))
          out.push([`scatterStrategy[${i}]`, `duplicated key=${String(term.key)} value=${String(term.value)}`]);
        seen.add(id);
      });
    }
  }
  return out;
}

/**
 * Annotations of SidecarSet injection (upstream keys). `hash` and `hashWithoutImage` are on both
 * objects, as upstream: on a SidecarSet, the revision string its defaulting webhook computes
 * with upstream's algorithm; on a pod, a JSON map of the revisions it was injected/updated with.
 */
export const SidecarSetAnnotations = {
  /** Pod: JSON map SidecarSet name -> { hash, sidecarSetName, sidecarList, ... }; SidecarSet: its revision. */
  hash: 'kruise.io/sidecarset-hash',
  /** Same with images blanked: equal revisions here mean only images differ (an in-place update). */
  hashWithoutImage: 'kruise.io/sidecarset-hash-without-image',
  /** Comma-separated SidecarSet names injected into the pod. */
  injectedList: 'kruise.io/sidecarset-injected-list',
  /** Skip injection for this pod when "true". */
  injectIgnore: 'kruise.io/sidecarset-inject-ignore',
} as const;

/** Labels of SidecarSet ControllerRevisions (upstream keys). */
export const SidecarSetLabels = {
  /** The SidecarSet a ControllerRevision belongs to. */
  sidecarSetName: 'kruise.io/sidecarset-name',
  /**
   * The user's name for a revision, copied from the SidecarSet's own label; injectionStrategy.revision.customVersion
   * selects by it.
   */
  customVersion: 'apps.kruise.io/sidecarset-custom-version',
} as const;

/**
 * Upstream never injects a SidecarSet whose selector is empty (sidecarcontrol.PodMatchedSidecarSet
 * requires a non-empty selector) and its validating webhook refuses one; so do the construct and
 * the runtime.
 */
export function isEmptySelector(
  selector: { readonly matchLabels?: object; readonly matchExpressions?: readonly unknown[] } | undefined,
): boolean {
  return (
    !selector ||
    (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)
  );
}
export const SIDECARSET_SELECTOR_FIX =
  'select the pods to inject, e.g. { matchLabels: { app: "web" } }; an empty selector selects no pod (upstream refuses it)';

/** Where two SidecarSets can conflict. */
export type SidecarSetConflictField = 'containers' | 'initContainers' | 'volumes' | 'patchPodMetadata';

/** What {@link sidecarSetConflicts} compares of a SidecarSet. */
export interface SidecarSetConflictView {
  namespace?: string;
  namespaceSelector?: SelectorLike;
  selector?: SelectorLike;
  containers: string[];
  initContainers: string[];
  volumes: Array<{ name: string }>;
  patchPodMetadata?: ReadonlyArray<{
    readonly annotations?: { readonly [key: string]: string };
    readonly patchPolicy?: string;
  }>;
}

/** Annotation keys a SidecarSet patches other than with Retain, and the policy of each. */
function patchedKeys(v: SidecarSetConflictView): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of v.patchPodMetadata ?? []) {
    if (p.patchPolicy === 'Retain') continue;
    for (const key of Object.keys(p.annotations ?? {})) out.set(key, p.patchPolicy ?? '');
  }
  return out;
}

/** A JSON value with object keys sorted: equal values compare equal whatever their key order. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${sortedJson(o[k])}`)
    .join(',')}}`;
}

/**
 * Upstream validates SidecarSet volumes as pod volumes (core ValidateVolumes): exactly one volume
 * source besides the name. A problem message, or undefined. For the construct and the runtime.
 */
export function volumeSourceProblem(volume: object): string | undefined {
  const sources = Object.entries(volume)
    .filter(([k, v]) => k !== 'name' && v !== undefined)
    .map(([k]) => k);
  if (sources.length === 1) return undefined;
  return sources.length
    ? `sets ${sources.join(', ')}; a volume may have only one source`
    : 'has no volume source; set one, e.g. emptyDir: {}';
}

/**
 * spec.patchPodMetadata[].patchPolicy values (upstream SidecarSetPatchPolicyType); the defaulting webhook fills Retain.
 */
export const SIDECARSET_PATCH_POLICIES: readonly string[] = ['Retain', 'Overwrite', 'MergePatchJson'];
/**
 * spec.injectionStrategy.revision.policy values (upstream SidecarSetInjectRevisionPolicy); the defaulting webhook fills
 * Always.
 */
export const SIDECARSET_INJECT_REVISION_POLICIES: readonly string[] = ['Always', 'Partial'];

/**
 * Upstream's rules for spec.patchPodMetadata on one SidecarSet (validateSidecarSetSpec): each
 * entry has annotations with valid keys and a patch policy, and no key is patched twice. Problems
 * as `[path, message]`, the path under `spec.patchPodMetadata`. For the construct and the runtime.
 */
export function patchPodMetadataProblems(
  patches: ReadonlyArray<{ readonly annotations?: unknown; readonly patchPolicy?: unknown }>,
): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  patches.forEach((p, i) => {
    const at = `spec.patchPodMetadata[${i}]`;
    const annotations =
      p.annotations !== null && typeof p.annotations === 'object' ? Object.entries(p.annotations as object) : [];
    if (annotations.length === 0) out.push([`${at}.annotations`, 'is required: the pod annotations to patch']);
    for (const [key, value] of annotations) {
      if (!isValidLabelKey(key.toLowerCase()))
        out.push([`${at}.annotations`, `key ${JSON.stringify(key)} is not a valid annotation key ([prefix/]name)`]);
      if (typeof value !== 'string') out.push([`${at}.annotations[${JSON.stringify(key)}]`, 'must be a string']);
      if (seen.has(key))
        out.push([
          `${at}.annotations`,
          `key ${JSON.stringify(key)} is already patched by an earlier entry; patch each key once`,
        ]);
      seen.add(key);
    }
    if (!SIDECARSET_PATCH_POLICIES.includes(p.patchPolicy as string)) {
      out.push([
        `${at}.patchPolicy`,
        `${JSON.stringify(p.patchPolicy)} must be one of ${SIDECARSET_PATCH_POLICIES.join(', ')}`,
      ]);
    }
  });
  return out;
}

/**
 * Upstream's rule for transferEnv[].sourceContainerNameFrom.fieldRef (validateDownwardAPI): API
 * version v1 and a subscripted pod label or annotation, e.g. `metadata.labels['app']`. A problem
 * message, or undefined.
 */
export function sourceContainerFieldRefProblem(fieldRef: {
  readonly apiVersion?: unknown;
  readonly fieldPath?: unknown;
}): string | undefined {
  if (!fieldRef.apiVersion) return 'apiVersion: is required (v1)';
  if (!fieldRef.fieldPath) return "fieldPath: is required, e.g. metadata.labels['sidecar-source']";
  if (fieldRef.apiVersion !== 'v1')
    return `apiVersion: ${JSON.stringify(fieldRef.apiVersion)} is not supported; use v1`;
  const match = /^(metadata\.(?:annotations|labels))\['(.*)'\]$/.exec(String(fieldRef.fieldPath));
  if (!match)
    return `fieldPath: ${JSON.stringify(fieldRef.fieldPath)} is not supported; use metadata.labels['<key>'] or metadata.annotations['<key>']`;
  const key = match[1] === 'metadata.annotations' ? match[2].toLowerCase() : match[2];
  return isValidLabelKey(key)
    ? undefined
    : `fieldPath: ${JSON.stringify(match[2])} is not a valid ${match[1] === 'metadata.labels' ? 'label' : 'annotation'} key`;
}

/**
 * Upstream's SidecarSet conflicts (validateSidecarConflict) of candidate `a` with existing `b`,
 * for the construct and the runtime: when upstream deems that both select the same pods,
 * containers and init containers of the same name (each compared with its own kind)
 * volumes of the same name that differ, and pod annotations one overwrites and the other patches. Empty when there is
 * none.
 */
export function sidecarSetConflicts(
  a: SidecarSetConflictView,
  b: SidecarSetConflictView,
): Array<{ field: SidecarSetConflictField; names: string[] }> {
  // Upstream's own overlap rules (lib/contract/sidecarset.ts), not selectorsMayOverlap: they decide what upstream
  // admits.
  if (!upstreamNamespacesOverlap(a, b)) return [];
  if (!a.selector || !b.selector || !upstreamSelectorsOverlap(a.selector, b.selector)) return [];
  const out: Array<{ field: SidecarSetConflictField; names: string[] }> = [];
  for (const field of ['containers', 'initContainers'] as const) {
    const theirs = new Set(b[field]);
    const names = a[field].filter((n) => theirs.has(n));
    if (names.length) out.push({ field, names });
  }
  const differing = a.volumes
    .filter((v) => {
      const theirs = b.volumes.find((o) => o.name === v.name);
      return theirs !== undefined && sortedJson(theirs) !== sortedJson(v);
    })
    .map((v) => v.name);
  if (differing.length) out.push({ field: 'volumes', names: differing });
  // Two SidecarSets may both merge JSON into one annotation; neither may overwrite one the other patches.
  const theirKeys = patchedKeys(b);
  const clashing = [...patchedKeys(a)]
    .filter(([key, policy]) => theirKeys.has(key) && (policy === 'Overwrite' || theirKeys.get(key) === 'Overwrite'))
    .map(([key]) => key);
  if (clashing.length) out.push({ field: 'patchPodMetadata', names: clashing });
  return out;
}

/** SidecarSet rules upstream's validating webhook enforces, worded once for the construct and the runtime. */
export const SidecarSetRules = {
  partitionWithSelector: 'partition and selector cannot be used together (upstream refuses it); set one',
  nativeSidecarRolling:
    'is a native sidecar (restartPolicy: Always), which cannot be updated in place as RollingUpdate does (upstream refuses it); use updateStrategy NotUpdate',
  mountWithoutVolume: 'is not a volume of the SidecarSet; add it to volumes or remove the mount',
  patchConflictFix:
    'patch the key with MergePatchJson in both (or Retain in one), or patch different keys, or make the selectors disjoint',
} as const;
