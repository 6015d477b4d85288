import { KRUISE_CONFIGURATION } from '../../contract.js';
import { matchesSelector, validateSelector, type SelectorLike } from '../../contract/selector.js';
import { goString } from './gojson.js';
import type { SidecarSet, SidecarSetPatchPodMetadata } from './types.js';

/**
 * A patch that cannot be applied (an annotation that is not JSON under MergePatchJson): the pod is refused, as
 * upstream.
 */
export class PatchPodMetadataError extends Error {}

/** A JSON value as Go's encoding/json writes a decoded map: keys sorted, HTML characters escaped. */
function goJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'string') return goString(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${goString(k)}:${goJson(o[k])}`)
    .join(',')}}`;
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386 merge: null deletes, objects merge, anything else replaces. */
function merge(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const out: Record<string, unknown> = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

function parse(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new PatchPodMetadataError(`${what} is not JSON`);
  }
}

/** Upstream's jsonpatch.MergePatch (evanphx/json-patch) of one annotation value. */
function mergePatchJson(key: string, origin: string, patchText: string): string {
  const patch = parse(patchText, `patchPodMetadata annotation ${JSON.stringify(key)} (MergePatchJson)`);
  const doc = parse(origin, `pod annotation ${JSON.stringify(key)}, which MergePatchJson merges into,`);
  if (patch === null)
    throw new PatchPodMetadataError(`patchPodMetadata annotation ${JSON.stringify(key)} (MergePatchJson) is null`);
  if (doc === null)
    throw new PatchPodMetadataError(
      `pod annotation ${JSON.stringify(key)} is null; MergePatchJson needs a JSON object`,
    );
  if (!isMap(patch) && !Array.isArray(patch))
    throw new PatchPodMetadataError(
      `patchPodMetadata annotation ${JSON.stringify(key)} (MergePatchJson) must be a JSON object`,
    );
  return goJson(merge(isMap(doc) ? doc : {}, patch));
}

/**
 * Applies a SidecarSet's patchPodMetadata to a pod's annotations (upstream PatchPodMetadata):
 * Retain (the default) adds keys the pod lacks, Overwrite sets them, MergePatchJson merges JSON
 * into an existing non-empty value (RFC 7386) or sets it. Returns the new annotations.
 */
export function patchPodAnnotations(
  original: Record<string, string>,
  patches: SidecarSetPatchPodMetadata[] | undefined,
): Record<string, string> {
  const annotations = { ...original };
  applyPodAnnotationPatches(
    {
      get: (k) => (Object.hasOwn(annotations, k) ? annotations[k] : undefined),
      has: (k) => k in annotations,
      set: (k, v) => {
        annotations[k] = v;
      },
    },
    patches,
  );
  return annotations;
}

/** Read and write access to a pod's annotations, so a caller can record changes instead of copying the map. */
export interface AnnotationAccess {
  get(key: string): string | undefined;
  has(key: string): boolean;
  set(key: string, value: string): void;
}

/** {@link patchPodAnnotations} through `annotations`: no copy of the map per SidecarSet (a pod may carry 200,000). */
export function applyPodAnnotationPatches(
  annotations: AnnotationAccess,
  patches: SidecarSetPatchPodMetadata[] | undefined,
): void {
  for (const patch of patches ?? []) {
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      switch (patch.patchPolicy) {
        case 'Overwrite':
          annotations.set(key, value);
          break;
        case 'MergePatchJson': {
          const current = annotations.get(key);
          annotations.set(key, current ? mergePatchJson(key, current, value) : value);
          break;
        }
        default:
          if (!annotations.has(key)) annotations.set(key, value);
      }
    }
  }
}

/** The key of ConfigMap kruise-configuration holding the whitelist (upstream pkg/util/configuration/types.go). */
export const PATCH_METADATA_WHITELIST_KEY = 'SidecarSet_PatchPodMetadata_WhiteList';

/** Upstream's SidecarSetPatchMetadataWhiteList, as its value decodes. */
export interface PatchMetadataWhitelist {
  rules: Array<{ selector?: SelectorLike; allowedAnnotationKeyExprs: string[] }>;
}

/**
 * Where the whitelist comes from; `defaultsAllowed` is upstream's feature gate
 * SidecarSetPatchPodMetadataDefaultsAllowed (off by default).
 */
export interface PatchMetadataPolicy {
  /**
   * The whitelist key's value in ConfigMap kruise-configuration, or undefined when the ConfigMap or the key is absent.
   */
  whitelist?: string;
  defaultsAllowed?: boolean;
}

/** A whitelist that cannot be decoded: upstream's validating webhook refuses every patchPodMetadata then. */
export class PatchMetadataWhitelistError extends Error {
  constructor(problem: string) {
    super(`${PATCH_METADATA_WHITELIST_KEY} of ConfigMap ${KRUISE_CONFIGURATION}: ${problem}`);
  }
}

/**
 * The members of a JSON object under the field names Go's encoding/json would decode them to:
 * names match case-insensitively and a later duplicate wins; other members are ignored.
 */
function fields(value: unknown, at: string, names: string[]): Record<string, unknown> {
  if (!isMap(value)) throw new PatchMetadataWhitelistError(`${at} must be a JSON object`);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = names.find((n) => n.toLowerCase() === key.toLowerCase());
    if (name) out[name] = v;
  }
  return out;
}

/** A JSON list Go decodes into a slice: null (or absent) is empty. */
function list(value: unknown, at: string): unknown[] {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) throw new PatchMetadataWhitelistError(`${at} must be a JSON list`);
  return value;
}

function selectorOf(value: unknown, at: string): SelectorLike | undefined {
  if (value === null || value === undefined) return undefined;
  const s = fields(value, at, ['matchLabels', 'matchExpressions']);
  const matchExpressions =
    s.matchExpressions === undefined || s.matchExpressions === null
      ? undefined
      : list(s.matchExpressions, `${at}.matchExpressions`).map((e, i) =>
          fields(e, `${at}.matchExpressions[${i}]`, ['key', 'operator', 'values']),
        );
  const selector = {
    ...(s.matchLabels === null || s.matchLabels === undefined ? {} : { matchLabels: s.matchLabels }),
    ...(matchExpressions ? { matchExpressions } : {}),
  };
  const invalid = validateSelector(selector, at);
  if (invalid.length) throw new PatchMetadataWhitelistError(invalid.join('; '));
  return selector as SelectorLike;
}

/**
 * Decodes the whitelist as upstream's json.Unmarshal into SidecarSetPatchMetadataWhiteList does
 * (JSON null is an empty list or no selector), plus the selector validation upstream does before
 * matching. Throws {@link PatchMetadataWhitelistError}, naming the key and the member.
 */
export function parsePatchMetadataWhitelist(text: string): PatchMetadataWhitelist {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new PatchMetadataWhitelistError(
      `is not JSON (${(err as Error).message}); expected {"rules":[{"selector":{...},"allowedAnnotationKeyExprs":["regexp"]}]}`,
    );
  }
  if (json === null) return { rules: [] };
  const top = fields(json, 'the value', ['rules']);
  return {
    rules: list(top.rules, 'rules').map((r, i) => {
      if (r === null) return { allowedAnnotationKeyExprs: [] };
      const rule = fields(r, `rules[${i}]`, ['selector', 'allowedAnnotationKeyExprs']);
      const exprs = list(rule.allowedAnnotationKeyExprs, `rules[${i}].allowedAnnotationKeyExprs`).map((e, j) => {
        if (e !== null && typeof e !== 'string')
          throw new PatchMetadataWhitelistError(`rules[${i}].allowedAnnotationKeyExprs[${j}] must be a string`);
        return e ?? '';
      });
      const selector = selectorOf(rule.selector, `rules[${i}].selector`);
      return { ...(selector ? { selector } : {}), allowedAnnotationKeyExprs: exprs };
    }),
  };
}

/** Go's regexp.MatchString: unanchored. RE2 and JavaScript agree on the common syntax. */
function compile(expr: string, at: string): RegExp {
  try {
    return new RegExp(expr, 'u');
  } catch {
    throw new PatchMetadataWhitelistError(`${at}: ${JSON.stringify(expr)} is not a regular expression`);
  }
}

/**
 * Upstream's ValidateSidecarSetPatchMetadataWhitelist (pkg/control/sidecarcontrol/util.go): the
 * annotation keys a SidecarSet patches must each match an expression of a whitelist rule whose
 * selector matches the SidecarSet's labels. Without a whitelist (or no rule applying) it is
 * refused unless the feature gate allows it; an undecodable whitelist refuses it, naming why.
 */
export function patchMetadataWhitelistError(s: SidecarSet, policy: PatchMetadataPolicy): string | undefined {
  if (!s.spec.patchPodMetadata?.length) return undefined;
  const fix = `add the keys to ${PATCH_METADATA_WHITELIST_KEY} of ConfigMap ${KRUISE_CONFIGURATION} in the manager's namespace`;
  if (policy.whitelist === undefined)
    return policy.defaultsAllowed
      ? undefined
      : `spec.patchPodMetadata: no patch metadata whitelist is configured; ${fix}`;
  try {
    const exprs: RegExp[] = [];
    parsePatchMetadataWhitelist(policy.whitelist).rules.forEach((rule, i) => {
      if (rule.selector && !matchesSelector(rule.selector, s.metadata.labels)) return;
      exprs.push(
        ...rule.allowedAnnotationKeyExprs.map((e, j) => compile(e, `rules[${i}].allowedAnnotationKeyExprs[${j}]`)),
      );
    });
    if (exprs.length === 0)
      return policy.defaultsAllowed
        ? undefined
        : `spec.patchPodMetadata: the whitelist allows no annotation for this SidecarSet; ${fix}`;
    for (const key of s.spec.patchPodMetadata.flatMap((p) => Object.keys(p.annotations ?? {}))) {
      if (!exprs.some((r) => r.test(key)))
        return `spec.patchPodMetadata: annotation ${JSON.stringify(key)} is not allowed by the whitelist; ${fix}`;
    }
    return undefined;
  } catch (err) {
    if (!(err instanceof PatchMetadataWhitelistError)) throw err;
    return `spec.patchPodMetadata: the patch metadata whitelist cannot be used: ${err.message}; fix the ConfigMap`;
  }
}
