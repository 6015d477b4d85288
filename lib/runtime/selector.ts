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

/**
 * A selector in its string form (`a=b,c!=d,e in (x,y),f notin (z),g,!h`, as a Scale's
 * status.selector carries it) as a LabelSelector (metav1.ParseToLabelSelector); undefined when it
 * does not parse. The empty string selects everything.
 */
export function parseSelectorString(text: string): LabelSelector | undefined {
  const out: Required<LabelSelector> = { matchLabels: {}, matchExpressions: [] };
  // Split on commas outside parentheses.
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) return undefined;
    if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  if (depth !== 0) return undefined;
  parts.push(current);
  if (parts.length === 1 && parts[0].trim() === '') return out;
  for (const raw of parts) {
    const part = raw.trim();
    let m: RegExpMatchArray | null;
    if ((m = part.match(/^([^\s=!(),]+)\s+(in|notin)\s+\(([^()]*)\)$/))) {
      const values = m[3]
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      out.matchExpressions.push({ key: m[1], operator: m[2] === 'in' ? 'In' : 'NotIn', values });
    } else if ((m = part.match(/^([^\s=!(),]+)\s*!=\s*([^\s=!(),]*)$/))) {
      out.matchExpressions.push({ key: m[1], operator: 'NotIn', values: [m[2]] });
    } else if ((m = part.match(/^([^\s=!(),]+)\s*==?\s*([^\s=!(),]*)$/))) {
      out.matchLabels[m[1]] = m[2];
    } else if ((m = part.match(/^!\s*([^\s=!(),]+)$/))) {
      out.matchExpressions.push({ key: m[1], operator: 'DoesNotExist' });
    } else if ((m = part.match(/^([^\s=!(),]+)$/))) {
      out.matchExpressions.push({ key: m[1], operator: 'Exists' });
    } else return undefined;
  }
  return out;
}
