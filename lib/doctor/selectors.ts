/** Kubernetes label-selector semantics, for judging selectors against live labels. */

export interface LabelSelectorLike {
  readonly matchLabels?: { readonly [key: string]: string };
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

/** True when `labels` satisfy `selector`; an absent or empty selector matches everything. */
export function matches(
  selector: LabelSelectorLike | undefined,
  labels: { readonly [key: string]: string } | undefined,
): boolean {
  const have = labels ?? {};
  for (const [key, value] of Object.entries(selector?.matchLabels ?? {})) {
    if (have[key] !== value) return false;
  }
  for (const e of selector?.matchExpressions ?? []) {
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
