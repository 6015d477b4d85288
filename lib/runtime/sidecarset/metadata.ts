import { matchesSelector, validateSelector, type LabelSelector } from '../selector.js';
import { goString } from './gojson.js';
import type { SidecarSet, SidecarSetPatchPodMetadata } from './types.js';

/** A patch that cannot be applied (an annotation that is not JSON under MergePatchJson): the pod is refused, as upstream. */
export class PatchPodMetadataError extends Error {}

/** A JSON value as Go's encoding/json writes a decoded map: keys sorted, HTML characters escaped. */
function goJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'string') return goString(v);
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o).sort().map((k) => `${goString(k)}:${goJson(o[k])}`).join(',')}}`;
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
  if (patch === null) throw new PatchPodMetadataError(`patchPodMetadata annotation ${JSON.stringify(key)} (MergePatchJson) is null`);
  if (doc === null) throw new PatchPodMetadataError(`pod annotation ${JSON.stringify(key)} is null; MergePatchJson needs a JSON object`);
  if (!isMap(patch) && !Array.isArray(patch)) throw new PatchPodMetadataError(`patchPodMetadata annotation ${JSON.stringify(key)} (MergePatchJson) must be a JSON object`);
  return goJson(merge(isMap(doc) ? doc : {}, patch));
}

/**
 * Applies a SidecarSet's patchPodMetadata to a pod's annotations (upstream PatchPodMetadata):
 * Retain (the default) adds keys the pod lacks, Overwrite sets them, MergePatchJson merges JSON
 * into an existing non-empty value (RFC 7386) or sets it. Returns the new annotations.
 */
export function patchPodAnnotations(original: Record<string, string>, patches: SidecarSetPatchPodMetadata[] | undefined): Record<string, string> {
  const annotations = { ...original };
  for (const patch of patches ?? []) {
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      switch (patch.patchPolicy) {
        case 'Overwrite': annotations[key] = value; break;
        case 'MergePatchJson': annotations[key] = annotations[key] ? mergePatchJson(key, annotations[key], value) : value; break;
        default: if (!(key in annotations)) annotations[key] = value;
      }
    }
  }
  return annotations;
}

/** Upstream's whitelist (ConfigMap kruise-configuration, key SidecarSet_PatchPodMetadata_WhiteList). */
export interface PatchMetadataWhitelist {
  rules?: Array<{ selector?: LabelSelector; allowedAnnotationKeyExprs?: string[] }>;
}

/** Where the whitelist comes from; `defaultsAllowed` is upstream's feature gate SidecarSetPatchPodMetadataDefaultsAllowed (off by default). */
export interface PatchMetadataPolicy {
  /** The whitelist's JSON text, or undefined when there is none. */
  whitelist?: string;
  defaultsAllowed?: boolean;
}

/** Go's regexp.MatchString: unanchored. RE2 and JavaScript agree on the common syntax. */
function compile(expr: string): RegExp {
  try {
    return new RegExp(expr, 'u');
  } catch {
    throw new Error(`allowedAnnotationKeyExprs: ${JSON.stringify(expr)} is not a regular expression`);
  }
}

/**
 * Upstream's ValidateSidecarSetPatchMetadataWhitelist: the annotation keys a SidecarSet patches must
 * each match an expression of a whitelist rule whose selector matches the SidecarSet's labels.
 * Without a whitelist (or no rule applying) it is refused unless the feature gate allows it.
 */
export function patchMetadataWhitelistError(s: SidecarSet, policy: PatchMetadataPolicy): string | undefined {
  if (!s.spec.patchPodMetadata?.length) return undefined;
  const fix = 'add the keys to SidecarSet_PatchPodMetadata_WhiteList of ConfigMap kruise-configuration';
  if (policy.whitelist === undefined) return policy.defaultsAllowed ? undefined : `spec.patchPodMetadata: no patch metadata whitelist is configured; ${fix}`;
  try {
    const list = JSON.parse(policy.whitelist) as PatchMetadataWhitelist;
    const exprs: RegExp[] = [];
    for (const rule of list?.rules ?? []) {
      if (rule.selector) {
        const invalid = validateSelector(rule.selector, 'selector');
        if (invalid.length) return `spec.patchPodMetadata: the whitelist has an invalid rule (${invalid.join('; ')})`;
        if (!matchesSelector(rule.selector, s.metadata.labels)) continue;
      }
      exprs.push(...(rule.allowedAnnotationKeyExprs ?? []).map(compile));
    }
    if (exprs.length === 0) return policy.defaultsAllowed ? undefined : `spec.patchPodMetadata: the whitelist allows no annotation for this SidecarSet; ${fix}`;
    for (const key of s.spec.patchPodMetadata.flatMap((p) => Object.keys(p.annotations ?? {}))) {
      if (!exprs.some((r) => r.test(key))) return `spec.patchPodMetadata: annotation ${JSON.stringify(key)} is not allowed by the whitelist; ${fix}`;
    }
    return undefined;
  } catch (err) {
    return `spec.patchPodMetadata: the patch metadata whitelist cannot be read (${(err as Error).message})`;
  }
}
