import { SidecarSetAnnotations } from '../../contract.js';
import { upstreamSidecarSetHash } from './gojson.js';
import type { SidecarSet, SidecarSetHashEntry } from './types.js';

/**
 * Hashes of frozen SidecarSets (informer-cache objects, which are deep-frozen and replaced,
 * never mutated, on change). A reconcile asks for them once per matched pod.
 */
const memo = new WeakMap<SidecarSet, { hash?: string; withoutImage?: string }>();

function memoized(s: SidecarSet, key: 'hash' | 'withoutImage', compute: () => string): string {
  if (!Object.isFrozen(s) || !Object.isFrozen(s.spec)) return compute();
  let entry = memo.get(s);
  if (!entry) memo.set(s, (entry = {}));
  return (entry[key] ??= compute());
}

/**
 * The revision of a SidecarSet's sidecar containers: what a pod must run to be "updated". As
 * upstream (sidecarcontrol.GetSidecarSetRevision), the SidecarSet's own `kruise.io/sidecarset-hash`
 * annotation, which either side's defaulting webhook writes with upstream's algorithm; computed the
 * same way when absent (a SidecarSet stored before any webhook saw it).
 */
export function sidecarSetHash(s: SidecarSet): string {
  return (
    s.metadata.annotations?.[SidecarSetAnnotations.hash] || memoized(s, 'hash', () => upstreamSidecarSetHash(s.spec))
  );
}

/**
 * The same with images blanked: equal for two revisions that differ only in images, which is
 * exactly when a pod can be updated in place (a container image is mutable; nothing else is).
 */
export function sidecarSetHashWithoutImage(s: SidecarSet): string {
  return (
    s.metadata.annotations?.[SidecarSetAnnotations.hashWithoutImage] ||
    memoized(s, 'withoutImage', () => upstreamSidecarSetHash(s.spec, true))
  );
}

/** Reads one of the JSON hash annotations; a malformed one reads as empty (never throws). */
export function readHashAnnotation(
  annotations: Record<string, string> | undefined,
  key: string,
): Record<string, SidecarSetHashEntry> {
  const raw = annotations?.[key];
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    // Upstream's older format, a map of name -> hash string, still read (and rewritten) by upstream.
    return Object.fromEntries(
      Object.entries(parsed).map(([name, v]) => [
        name,
        typeof v === 'string'
          ? { hash: v, sidecarSetName: name, sidecarList: [], updateTimestamp: '' }
          : (v as SidecarSetHashEntry),
      ]),
    );
  } catch {
    return {};
  }
}

/** The revision of `sidecarSetName` recorded on a pod, if any. */
export function podSidecarSetHash(
  annotations: Record<string, string> | undefined,
  sidecarSetName: string,
): string | undefined {
  return readHashAnnotation(annotations, SidecarSetAnnotations.hash)[sidecarSetName]?.hash;
}

export function podSidecarSetHashWithoutImage(
  annotations: Record<string, string> | undefined,
  sidecarSetName: string,
): string | undefined {
  return readHashAnnotation(annotations, SidecarSetAnnotations.hashWithoutImage)[sidecarSetName]?.hash;
}
