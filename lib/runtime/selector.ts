/** Kubernetes label selectors: matching, validation and a conservative overlap test. */
import { isValidLabelKey, isValidLabelValue, SELECTOR_OPERATORS } from '../contract.js';

export interface LabelSelectorRequirement {
  key: string;
  operator: string;
  values?: string[];
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}


/** Every problem with `selector`, each naming the field under `path`. */
export function validateSelector(selector: unknown, path: string): string[] {
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) return [`${path}: must be an object with matchLabels and/or matchExpressions`];
  const s = selector as LabelSelector;
  const errors: string[] = [];
  if (s.matchLabels !== undefined) {
    if (typeof s.matchLabels !== 'object' || s.matchLabels === null || Array.isArray(s.matchLabels)) errors.push(`${path}.matchLabels: must be a map of label to value`);
    else for (const [k, v] of Object.entries(s.matchLabels)) {
      if (!isValidLabelKey(k)) errors.push(`${path}.matchLabels: "${k}" is not a valid label key`);
      if (typeof v !== 'string' || !isValidLabelValue(v)) errors.push(`${path}.matchLabels["${k}"]: ${JSON.stringify(v)} is not a valid label value`);
    }
  }
  if (s.matchExpressions !== undefined) {
    if (!Array.isArray(s.matchExpressions)) return [...errors, `${path}.matchExpressions: must be a list`];
    s.matchExpressions.forEach((e, i) => {
      const at = `${path}.matchExpressions[${i}]`;
      if (!e || typeof e.key !== 'string' || !isValidLabelKey(e.key)) errors.push(`${at}.key: ${JSON.stringify(e?.key)} is not a valid label key`);
      if (!SELECTOR_OPERATORS.includes(e?.operator)) errors.push(`${at}.operator: ${JSON.stringify(e?.operator)} is not one of ${SELECTOR_OPERATORS.join(', ')}`);
      const hasValues = Array.isArray(e?.values) && e.values.length > 0;
      if ((e?.operator === 'In' || e?.operator === 'NotIn') && !hasValues) errors.push(`${at}.values: must be non-empty for ${e.operator}`);
      if ((e?.operator === 'Exists' || e?.operator === 'DoesNotExist') && hasValues) errors.push(`${at}.values: must be empty for ${e.operator}`);
      if (e?.values !== undefined && (!Array.isArray(e.values) || e.values.some((v) => typeof v !== 'string' || !isValidLabelValue(v)))) errors.push(`${at}.values: must be valid label values`);
    });
  }
  return errors;
}

/** True when `labels` satisfy `selector`. An empty selector matches everything. */
export function matchesSelector(selector: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!selector) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, e.key);
    switch (e.operator) {
      case 'In': if (!has || !(e.values ?? []).includes(l[e.key])) return false; break;
      case 'NotIn': if (has && (e.values ?? []).includes(l[e.key])) return false; break;
      case 'Exists': if (!has) return false; break;
      case 'DoesNotExist': if (has) return false; break;
      default: return false;
    }
  }
  return true;
}

/** Re-exported from the contract: the constructs use the very same overlap rule. */
export { selectorsMayOverlap } from '../contract.js';
