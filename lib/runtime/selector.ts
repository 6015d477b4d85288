/** Kubernetes label selectors: matching, validation and a conservative overlap test. */
import { describeProblem, selectorProblems } from '../contract.js';

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Every problem with `selector`, each naming the field under `path` (the contract's rules). */
export function validateSelector(selector: unknown, path: string): string[] {
  return selectorProblems(path, selector).map(describeProblem);
}

/** True when `labels` satisfy `selector`. An empty selector matches everything. */
export function matchesSelector(
  selector: LabelSelector | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    switch (e.operator) {
      case 'In':
        if (!has || !(e.values ?? []).includes(l[e.key])) return false;
        break;
      case 'NotIn':
        if (has && (e.values ?? []).includes(l[e.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/** Re-exported from the contract: the constructs use the very same overlap rule. */
export { selectorsMayOverlap } from '../contract.js';
