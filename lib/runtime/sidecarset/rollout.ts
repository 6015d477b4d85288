import type { V1Pod } from '@kubernetes/client-node';
import { SidecarSetAnnotations } from '../../contract.js';
import { matchesSelector } from '../selector.js';
import { podSidecarSetHash, podSidecarSetHashWithoutImage, readHashAnnotation, sidecarSetHash, sidecarSetHashWithoutImage } from './hash.js';
import type { SidecarSet, SidecarSetStatus } from './types.js';

/** Where one matched pod stands against the SidecarSet's latest revision. */
export interface PodState {
  pod: V1Pod;
  /** Records the latest revision. */
  updated: boolean;
  /** Only images differ from the latest revision: updatable in place. */
  inPlaceUpdatable: boolean;
  /** The pod's Ready condition is True. */
  ready: boolean;
  /** Its sidecar containers report the images the pod spec asks for (the kubelet finished). */
  consistent: boolean;
}

export function isPodReady(pod: V1Pod): boolean {
  return (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Active pods: not being deleted and not finished. */
export function isPodActive(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

function sidecarNames(s: SidecarSet, pod: V1Pod): string[] {
  return readHashAnnotation(pod.metadata?.annotations, SidecarSetAnnotations.hash)[s.metadata.name]?.sidecarList ?? (s.spec.containers ?? []).map((c) => c.name);
}

interface ImageRef { repo: string; tag?: string; digest?: string }

/**
 * Parses an image reference with Docker's normalization: `nginx:1` is
 * `docker.io/library/nginx:1`, no tag and no digest means `:latest`.
 */
export function parseImage(image: string): ImageRef {
  let rest = image.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) [rest, digest] = [rest.slice(0, at), rest.slice(at + 1)];
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) [rest, tag] = [rest.slice(0, colon), rest.slice(colon + 1)];
  const slash = rest.indexOf('/');
  const first = slash < 0 ? '' : rest.slice(0, slash);
  const hasDomain = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  let domain = hasDomain ? first : 'docker.io';
  let path = hasDomain ? rest.slice(slash + 1) : rest;
  if (domain === 'index.docker.io') domain = 'docker.io';
  if (domain === 'docker.io' && !path.includes('/')) path = `library/${path}`;
  return { repo: `${domain}/${path}`, tag: tag ?? (digest ? undefined : 'latest'), digest };
}

/**
 * True when the kubelet reports it runs the image the spec asks for. Kubelets report the
 * normalized reference (`docker.io/library/proxy:1` for `proxy:1`) and sometimes only a digest,
 * so references are compared as upstream's IsContainerImageEqual does, not as strings.
 */
export function imageMatches(wanted: string, running: string | undefined, imageId?: string): boolean {
  if (!running) return false;
  if (running === wanted) return true;
  const w = parseImage(wanted);
  const r = parseImage(running);
  if (w.digest) return r.digest === w.digest || (imageId ?? '').endsWith(`@${w.digest}`);
  return w.repo === r.repo && w.tag === r.tag;
}

function imagesConsistent(s: SidecarSet, pod: V1Pod): boolean {
  return sidecarNames(s, pod).every((name) => {
    const wanted = pod.spec?.containers.find((c) => c.name === name)?.image;
    const status = pod.status?.containerStatuses?.find((c) => c.name === name);
    return wanted === undefined || imageMatches(wanted, status?.image, status?.imageID);
  });
}

export function podState(s: SidecarSet, pod: V1Pod): PodState {
  const updated = podSidecarSetHash(pod.metadata?.annotations, s.metadata.name) === sidecarSetHash(s);
  return {
    pod,
    updated,
    inPlaceUpdatable: !updated && podSidecarSetHashWithoutImage(pod.metadata?.annotations, s.metadata.name) === sidecarSetHashWithoutImage(s),
    ready: isPodReady(pod),
    consistent: imagesConsistent(s, pod),
  };
}

/** Scales an int-or-percent against `total`; percentages round up when `roundUp`. */
export function scaled(value: number | string | undefined, total: number, fallback: number, roundUp: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') return value;
  const percent = Number(value.replace('%', ''));
  const exact = (percent * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** Ready and running the images its spec asks for: what maxUnavailable protects. */
export function isAvailable(p: PodState): boolean {
  return p.ready && p.consistent;
}

/**
 * Which pods to update in place now. Pods already unavailable (not ready, or not yet running
 * the images their spec asks for, whichever revision that is) count against maxUnavailable;
 * they go first because updating them costs no availability. `partition` pods stay on the old
 * revision (a percentage rounds down, as upstream).
 */
export function planUpdates(s: SidecarSet, states: PodState[]): V1Pod[] {
  const strategy = s.spec.updateStrategy ?? {};
  if (strategy.type === 'NotUpdate' || strategy.paused) return [];
  const scope = strategy.selector ? states.filter((p) => matchesSelector(strategy.selector, p.pod.metadata?.labels)) : states;
  const total = states.length;
  const maxUnavailable = Math.max(1, scaled(strategy.maxUnavailable, total, 1, false));
  const partition = scaled(strategy.partition, total, 0, false);
  let quota = Math.max(0, total - partition - states.filter((p) => p.updated).length);
  let unavailable = states.filter((p) => !isAvailable(p)).length;
  const candidates = scope.filter((p) => p.inPlaceUpdatable)
    .sort((a, b) => Number(isAvailable(a)) - Number(isAvailable(b)) || (a.pod.metadata?.name ?? '').localeCompare(b.pod.metadata?.name ?? ''));
  const chosen: V1Pod[] = [];
  for (const c of candidates) {
    if (quota === 0) break;
    if (isAvailable(c)) {
      if (unavailable >= maxUnavailable) continue;
      unavailable++;
    }
    chosen.push(c.pod);
    quota--;
  }
  return chosen;
}

/** Status counts for the matched pods. */
export function computeStatus(s: SidecarSet, states: PodState[]): SidecarSetStatus {
  return {
    observedGeneration: s.metadata.generation,
    matchedPods: states.length,
    updatedPods: states.filter((p) => p.updated).length,
    readyPods: states.filter((p) => p.ready).length,
    updatedReadyPods: states.filter((p) => p.updated && p.ready && p.consistent).length,
    latestRevision: sidecarSetHash(s),
  };
}

/**
 * The JSON Patch that updates one pod in place: new sidecar images and the new revision in the
 * hash annotation. It starts with a `test` on resourceVersion, so a pod changed since we read
 * it is not patched blindly (409 → requeue and re-read).
 */
export function inPlaceUpdatePatch(s: SidecarSet, pod: V1Pod, now: Date): object[] {
  const ops: object[] = [{ op: 'test', path: '/metadata/resourceVersion', value: pod.metadata?.resourceVersion }];
  const names = new Set(sidecarNames(s, pod));
  (pod.spec?.containers ?? []).forEach((c, i) => {
    const desired = (s.spec.containers ?? []).find((d) => d.name === c.name);
    if (names.has(c.name) && desired && desired.image !== c.image) ops.push({ op: 'replace', path: `/spec/containers/${i}/image`, value: desired.image });
  });
  const hashes = readHashAnnotation(pod.metadata?.annotations, SidecarSetAnnotations.hash);
  const entry = hashes[s.metadata.name];
  hashes[s.metadata.name] = { ...entry, sidecarSetName: s.metadata.name, sidecarList: [...names], hash: sidecarSetHash(s), updateTimestamp: now.toISOString() };
  ops.push({ op: 'add', path: `/metadata/annotations/${SidecarSetAnnotations.hash.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: JSON.stringify(hashes) });
  return ops;
}
