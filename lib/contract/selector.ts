/**
 * Kubernetes label selectors, for both rooms: their syntax (a prop error at synth, a denial naming the field in the
 * runtime's webhooks) and their meaning (the runtime's webhooks and controllers, the doctor's checks). The one
 * selector module: every rule about selectors is here once.
 */
import { describeProblem, type Problem } from './problems.js';
import { DNS_SUBDOMAIN } from './values.js';

/** Label selector operators (the Kubernetes set). */
export const SELECTOR_OPERATORS: readonly string[] = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$/;

/**
 * Kubernetes' label key syntax (`[prefix/]name`). Shared so the constructs never accept a
 * selector the runtime's webhook would reject.
 */
export function isValidLabelKey(key: string): boolean {
  const parts = key.split('/');
  if (parts.length > 2) return false;
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  return LABEL_NAME.test(name) && (prefix === undefined || (prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix)));
}

/** Kubernetes' label value syntax (empty, or at most 63 letters, digits, `-`, `_`, `.`). */
export function isValidLabelValue(value: string): boolean {
  return value === '' || LABEL_NAME.test(value);
}

const KEY_FIX = 'use [prefix/]name, name at most 63 characters of letters, digits, "-", "_", "."';
const VALUE_FIX = 'use at most 63 letters, digits, "-", "_", ".", starting and ending with a letter or digit';

/**
 * Kubernetes' label selector rules, for the construct (a prop error at synth) and the runtime's
 * webhooks (a denial naming the field): every problem with `selector`, fields under `field`.
 */
export function selectorProblems(field: string, selector: unknown): Problem[] {
  const problem = (f: string, value: unknown, message: string, fix: string): Problem => ({
    field: f,
    value,
    message,
    fix,
  });
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) {
    return [
      problem(
        field,
        selector,
        'must be an object with matchLabels and/or matchExpressions',
        'e.g. { matchLabels: { app: "web" } }',
      ),
    ];
  }
  const s = selector as { matchLabels?: unknown; matchExpressions?: unknown };
  const out: Problem[] = [];
  if (s.matchLabels !== undefined) {
    if (typeof s.matchLabels !== 'object' || s.matchLabels === null || Array.isArray(s.matchLabels)) {
      out.push(
        problem(`${field}.matchLabels`, s.matchLabels, 'must be a map of label to value', 'e.g. { app: "web" }'),
      );
    } else {
      for (const [k, v] of Object.entries(s.matchLabels)) {
        if (!isValidLabelKey(k)) out.push(problem(`${field}.matchLabels`, k, 'is not a valid label key', KEY_FIX));
        if (typeof v !== 'string' || !isValidLabelValue(v))
          out.push(problem(`${field}.matchLabels["${k}"]`, v, 'is not a valid label value', VALUE_FIX));
      }
    }
  }
  if (s.matchExpressions === undefined) return out;
  if (!Array.isArray(s.matchExpressions))
    return [
      ...out,
      problem(
        `${field}.matchExpressions`,
        s.matchExpressions,
        'must be a list',
        'e.g. [{ key: "app", operator: "In", values: ["web"] }]',
      ),
    ];
  s.matchExpressions.forEach((e: { key?: unknown; operator?: unknown; values?: unknown } | null | undefined, i) => {
    const at = `${field}.matchExpressions[${i}]`;
    if (typeof e?.key !== 'string' || !isValidLabelKey(e.key))
      out.push(problem(`${at}.key`, e?.key, 'is not a valid label key', KEY_FIX));
    const operator = e?.operator;
    if (!SELECTOR_OPERATORS.includes(operator as string))
      out.push(
        problem(
          `${at}.operator`,
          operator,
          'is not a selector operator',
          `use one of ${SELECTOR_OPERATORS.join(', ')}`,
        ),
      );
    const values = e?.values;
    const count = Array.isArray(values) ? values.length : 0;
    if ((operator === 'In' || operator === 'NotIn') && count === 0) {
      out.push(
        problem(
          `${at}.values`,
          values,
          `must not be empty for ${operator}`,
          'list at least one value, or use Exists/DoesNotExist',
        ),
      );
    }
    if ((operator === 'Exists' || operator === 'DoesNotExist') && count > 0)
      out.push(problem(`${at}.values`, values, `must be empty for ${operator}`, 'remove values, or use In/NotIn'));
    if (values !== undefined && !Array.isArray(values))
      out.push(problem(`${at}.values`, values, 'must be a list of label values', 'e.g. ["web"]'));
    if (Array.isArray(values)) {
      values.forEach((v: unknown, j) => {
        if (typeof v !== 'string' || !isValidLabelValue(v))
          out.push(problem(`${at}.values[${j}]`, v, 'is not a valid label value', VALUE_FIX));
      });
    }
  });
  return out;
}

/**
 * The label-selector shape both rooms use (structurally what cdk8s' k8s.LabelSelector and the
 * API's LabelSelector are).
 */
export interface SelectorLike {
  readonly matchLabels?: { readonly [key: string]: string };
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

/**
 * True when `labels` satisfy `selector`, with Kubernetes' meaning (metav1.LabelSelectorAsSelector): an absent
 * selector selects nothing, an empty one everything. A caller whose API defaults an absent selector to "every
 * object" (a webhook's namespaceSelector) says so by passing `?? {}`.
 */
export function matchesSelector(
  selector: SelectorLike | undefined,
  labels: { readonly [key: string]: string } | undefined,
): boolean {
  if (!selector) return false;
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (have[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const present = Object.prototype.hasOwnProperty.call(have, e.key);
    const values = e.values ?? [];
    switch (e.operator) {
      case 'In':
        if (!present || !values.includes(have[e.key])) return false;
        break;
      case 'NotIn':
        if (present && values.includes(have[e.key])) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        return false; // the API server rejects unknown operators; never "matches"
    }
  }
  return true;
}

/** Every problem with `selector` as one message each, naming the field under `path` (for the runtime's denials). */
export function validateSelector(selector: unknown, path: string): string[] {
  return selectorProblems(path, selector).map(describeProblem);
}

/**
 * A selector in its string form (`a=b,c!=d,e in (x,y),f notin (z),g,!h`, as a Scale's
 * status.selector carries it) as a LabelSelector (metav1.ParseToLabelSelector); undefined when it
 * does not parse. The empty string selects everything.
 */
export function parseSelectorString(text: string): SelectorLike | undefined {
  const out: {
    matchLabels: Record<string, string>;
    matchExpressions: Array<{ key: string; operator: string; values?: string[] }>;
  } = { matchLabels: {}, matchExpressions: [] };
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
