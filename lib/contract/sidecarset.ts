/**
 * When upstream's SidecarSet validating webhook considers two SidecarSets to select the same pods,
 * ported from OpenKruise v1.8.3 (pkg/util/selector.go IsSelectorOverlapping and
 * pkg/webhook/sidecarset/validating/utils.go isSidecarSetNamespaceOverlapping), quirks included:
 * these decide which SidecarSets upstream admits, and the construct and the runtime must admit the
 * same ones. Re-exported by lib/contract.ts.
 */
import type { SelectorLike } from '../contract.js';
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

/**
 * Whether namespace `ns` exists and `selector` selects it (upstream sidecarcontrol
 * IsSelectorNamespace: no selector selects nothing, an empty one everything). Without a cluster
 * to ask (the construct at synth time), assume it does, so a possible conflict is reported.
 */
export type NamespaceSelected = (ns: string, selector: SelectorLike) => boolean;

/**
 * Upstream's isSidecarSetNamespaceOverlapping(candidate, existing). Upstream checks the existing
 * SidecarSet's namespace against the EXISTING one's own namespaceSelector (not the candidate's);
 * a SidecarSet with a namespace has none, so a candidate with a namespaceSelector never overlaps
 * one pinned to a namespace. Kept as upstream has it: it decides what upstream admits.
 */
export function upstreamNamespacesOverlap(
  candidate: NamespaceScope,
  existing: NamespaceScope,
  selected: NamespaceSelected = () => true,
): boolean {
  const matches = (ns: string, selector: SelectorLike | undefined) => selector !== undefined && selected(ns, selector);
  if (candidate.namespace && existing.namespace && candidate.namespace !== existing.namespace) return false;
  if (
    candidate.namespaceSelector &&
    existing.namespaceSelector &&
    !upstreamSelectorsOverlap(candidate.namespaceSelector, existing.namespaceSelector)
  )
    return false;
  if (candidate.namespace && existing.namespaceSelector && !matches(candidate.namespace, existing.namespaceSelector))
    return false;
  if (existing.namespace && candidate.namespaceSelector && !matches(existing.namespace, existing.namespaceSelector))
    return false;
  return true;
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
