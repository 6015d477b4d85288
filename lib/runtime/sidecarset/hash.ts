import { createHash } from 'node:crypto';
import { SidecarSetAnnotations } from '../../contract.js';
import type { SidecarSet, SidecarSetHashEntry } from './types.js';

/** JSON with sorted keys, so equal specs hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

function digest(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex').slice(0, 20);
}

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

/** The revision of a SidecarSet's sidecar containers: what a pod must run to be "updated". */
export function sidecarSetHash(s: SidecarSet): string {
  return memoized(s, 'hash', () => digest(s.spec.containers ?? []));
}

/**
 * The same hash with images blanked: equal for two revisions that differ only in images, which
 * is exactly when a pod can be updated in place (a container image is mutable; nothing else is).
 */
export function sidecarSetHashWithoutImage(s: SidecarSet): string {
  return memoized(s, 'withoutImage', () => digest((s.spec.containers ?? []).map((c) => ({ ...c, image: '' }))));
}

/** Reads one of the JSON hash annotations; a malformed one reads as empty (never throws). */
export function readHashAnnotation(annotations: Record<string, string> | undefined, key: string): Record<string, SidecarSetHashEntry> {
  const raw = annotations?.[key];
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, SidecarSetHashEntry>) : {};
  } catch {
    return {};
  }
}

/** The revision of `sidecarSetName` recorded on a pod, if any. */
export function podSidecarSetHash(annotations: Record<string, string> | undefined, sidecarSetName: string): string | undefined {
  return readHashAnnotation(annotations, SidecarSetAnnotations.hash)[sidecarSetName]?.hash;
}

export function podSidecarSetHashWithoutImage(annotations: Record<string, string> | undefined, sidecarSetName: string): string | undefined {
  return readHashAnnotation(annotations, SidecarSetAnnotations.hashWithoutImage)[sidecarSetName]?.hash;
}
