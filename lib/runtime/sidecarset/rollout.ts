import type { V1Pod } from '@kubernetes/client-node';
import { SidecarSetAnnotations } from '../../contract.js';
import { matchesSelector } from '../../contract/selector.js';
import {
  podSidecarSetHash,
  podSidecarSetHashWithoutImage,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
} from './hash.js';
import type { SidecarSet, SidecarSetStatus } from './types.js';
import { sortUpdateIndexes } from './updatesort.js';

/** Pod annotation: per SidecarSet, the revision and the imageIDs the kubelet ran before an in-place update. */
export const INPLACE_UPDATE_STATE = 'kruise.io/sidecarset-inplace-update-state';

/**
 * Where one matched pod stands against the SidecarSet's latest revision, in upstream's terms
 * (pkg/control/sidecarcontrol/sidecarset_control.go).
 */
export interface PodState {
  pod: V1Pod;
  /** Records the latest revision (IsPodSidecarUpdated). */
  updated: boolean;
  /** Differs from the latest revision in images at most (IsSidecarSetUpgradable's canUpgrade). */
  upgradable: boolean;
  /** Not updated and upgradable: an in-place update can bring it to the latest revision. */
  inPlaceUpdatable: boolean;
  /**
   * No Ready sidecar is still inconsistent, so no earlier update is in flight (IsSidecarSetUpgradable's consistent).
   */
  settled: boolean;
  /** Running with its Ready condition True (IsPodReady). */
  ready: boolean;
  /** Its sidecars run what the spec asks for (IsPodStateConsistent). */
  consistent: boolean;
}

function isPodReady(pod: V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** Active pods: not being deleted and not finished. */
export function isPodActive(pod: V1Pod): boolean {
  return !pod.metadata?.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

/** The sidecar container names a SidecarSet puts in pods (GetSidecarContainersInPod). */
export function sidecarContainerNames(s: SidecarSet): string[] {
  return [...new Set((s.spec.containers ?? []).map((c) => c.name))].sort();
}

/**
 * A pod is matched when it is active, lists the SidecarSet as injected and has all its sidecars (upstream
 * getMatchingPods).
 */
export function isPodInjectedAndConsistent(s: SidecarSet, pod: V1Pod): boolean {
  const injected = (pod.metadata?.annotations?.[SidecarSetAnnotations.injectedList] ?? '').split(',');
  return (
    isPodActive(pod) &&
    injected.includes(s.metadata.name) &&
    (s.spec.containers ?? []).every((c) => pod.spec?.containers.some((pc) => pc.name === c.name))
  );
}

interface ImageRef {
  repo: string;
  tag: string;
  digest: string;
}

const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-zA-Z0-9=_-]+$/;

/**
 * An image reference split as upstream's util.ParseImage does with distribution's
 * reference.Parse: no normalization (`nginx` stays `nginx`), no default tag; undefined when the
 * reference does not parse.
 */
export function parseImage(image: string): ImageRef | undefined {
  let rest = image;
  let digest = '';
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest) || (digest.startsWith('sha256:') && !/^sha256:[a-f0-9]{64}$/.test(digest)))
      return undefined;
  }
  let tag = '';
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) [rest, tag] = [rest.slice(0, colon), rest.slice(colon + 1)];
  if (!rest || /[A-Z\s]/.test(rest.split('/').slice(1).join('/') || rest)) return undefined;
  return { repo: rest, tag, digest };
}

/** Upstream's util.IsContainerImageEqual: repo and digest when both are digests, else repo and tag. */
export function isContainerImageEqual(a: string, b: string): boolean {
  const [x, y] = [parseImage(a), parseImage(b)];
  if (!x || !y) return false;
  if (x.digest && y.digest) return x.repo === y.repo && x.digest === y.digest;
  return x.repo === y.repo && x.tag === y.tag;
}

interface InPlaceUpdateState {
  revision?: string;
  updateTimestamp?: string;
  lastContainerStatuses?: Record<string, { imageID?: string }>;
}

function readUpdateStates(pod: V1Pod): Record<string, InPlaceUpdateState> | undefined | 'malformed' {
  const raw = pod.metadata?.annotations?.[INPLACE_UPDATE_STATE];
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, InPlaceUpdateState>)
      : 'malformed';
  } catch {
    return 'malformed';
  }
}

/**
 * Whether the kubelet has run the in-place update (upstream IsSidecarContainerUpdateCompleted):
 * a container is still updating while its imageID is the one recorded before the update and its
 * reported image is not the spec's. No record means never updated in place: complete.
 */
export function isSidecarUpdateCompleted(pod: V1Pod, sidecarSetName: string, containers: string[]): boolean {
  const states = readUpdateStates(pod);
  if (states === undefined) return true;
  if (states === 'malformed') return false;
  const last = states[sidecarSetName]?.lastContainerStatuses ?? {};
  const specImage = new Map((pod.spec?.containers ?? []).map((c) => [c.name, c.image]));
  return (pod.status?.containerStatuses ?? []).every(
    (cs) =>
      !containers.includes(cs.name) ||
      !(cs.name in last) ||
      last[cs.name].imageID !== cs.imageID ||
      specImage.get(cs.name) === cs.image,
  );
}

const stripScheme = (imageID: string) => (imageID.includes('://') ? imageID.split('://')[1] : imageID);

/**
 * Upstream IsPodStateConsistent: as many container statuses as containers; sidecars with digest
 * images must report that digest; otherwise the in-place update record decides.
 */
export function isPodStateConsistent(s: SidecarSet, pod: V1Pod, containers = sidecarContainerNames(s)): boolean {
  if ((pod.spec?.containers.length ?? 0) !== (pod.status?.containerStatuses?.length ?? 0)) return false;
  const imageIDs = new Map((pod.status?.containerStatuses ?? []).map((c) => [c.name, stripScheme(c.imageID ?? '')]));
  for (const c of pod.spec?.containers ?? []) {
    if (!containers.includes(c.name)) continue;
    if (!parseImage(c.image ?? '')?.digest) return isSidecarUpdateCompleted(pod, s.metadata.name, containers);
    const id = imageIDs.get(c.name);
    if (id === undefined || !isContainerImageEqual(c.image!, id)) return false;
  }
  return true;
}

/**
 * States of cached pods, which are frozen and replaced (never mutated) on change: a reconcile
 * recomputes only the pods that changed since the last one, while the SidecarSet's revision is
 * the same (its status, which changes on most reconciles of a rollout, does not matter here).
 */
const stateMemo = new WeakMap<V1Pod, { revision: string; state: PodState }>();

export function podState(s: SidecarSet, pod: V1Pod): PodState {
  const cacheable = Object.isFrozen(pod);
  const revision = cacheable
    ? `${s.metadata.name}\0${sidecarSetHash(s)}\0${sidecarSetHashWithoutImage(s)}\0${sidecarContainerNames(s).join(',')}`
    : '';
  const memo = cacheable ? stateMemo.get(pod) : undefined;
  if (memo && memo.revision === revision) return memo.state;
  const state = computePodState(s, pod);
  if (cacheable) stateMemo.set(pod, { revision, state });
  return state;
}

function computePodState(s: SidecarSet, pod: V1Pod): PodState {
  const updated = podSidecarSetHash(pod.metadata?.annotations, s.metadata.name) === sidecarSetHash(s);
  const upgradable =
    podSidecarSetHashWithoutImage(pod.metadata?.annotations, s.metadata.name) === sidecarSetHashWithoutImage(s);
  const readyContainers = new Set((pod.status?.containerStatuses ?? []).filter((c) => c.ready).map((c) => c.name));
  const settled =
    upgradable &&
    sidecarContainerNames(s).every((name) => !readyContainers.has(name) || isPodStateConsistent(s, pod, [name]));
  return {
    pod,
    updated,
    upgradable,
    inPlaceUpdatable: !updated && upgradable,
    settled,
    ready: isPodReady(pod),
    consistent: isPodStateConsistent(s, pod),
  };
}

/** Kubernetes' GetScaledValueFromIntOrPercent: a whole number as is, a percentage of `total` rounded up or down. */
export function scaled(value: number | string | undefined, total: number, fallback: number, roundUp: boolean): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number') return value;
  if (!value.endsWith('%'))
    throw new Error(`${JSON.stringify(value)} is not a whole number or a percentage like "10%"`);
  const exact = (Number(value.slice(0, -1)) * total) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/**
 * Upstream util.CalculatePartitionReplicas: rounded up (a non-zero percentage keeps at least one
 * pod), below 100% at least one pod updates, and clamped to [0, total].
 */
export function partitionReplicas(partition: number | string | undefined, total: number): number {
  if (partition === undefined) return 0;
  let value = scaled(partition, total, 0, true);
  if (total > 1 && value === total && typeof partition === 'string' && partition !== '100%') value = total - 1;
  return Math.max(Math.min(value, total), 0);
}

/**
 * Which pods to update in place now (upstream sidecarset_strategy.go GetNextUpgradePods and
 * calculateUpgradeCount, after UpdateSidecarSet's NotUpdate/finished/paused checks). Candidates
 * are not updated, selected, upgradable and settled, in {@link sortUpdateIndexes} order; the
 * last `partition` of them wait. maxUnavailable (default 1, percentages rounded up) bounds the
 * updated pods not yet consistent or ready plus the ready candidates taken; not-ready candidates
 * cost nothing and go first.
 */
export function planUpdates(s: SidecarSet, states: PodState[]): V1Pod[] {
  const strategy = s.spec.updateStrategy ?? {};
  const updatedCount = states.filter((p) => p.updated).length;
  if (strategy.type === 'NotUpdate' || updatedCount >= states.length || strategy.paused) return [];
  const pods = states.map((p) => p.pod);
  const waiting = states.flatMap((p, i) =>
    !p.updated &&
    (!strategy.selector || matchesSelector(strategy.selector, p.pod.metadata?.labels)) &&
    p.upgradable &&
    p.settled
      ? [i]
      : [],
  );
  const ordered = sortUpdateIndexes(strategy, pods, waiting);
  const partition = partitionReplicas(strategy.partition, states.length);
  if (ordered.length - partition <= 0) return [];
  const maxUnavailable = scaled(strategy.maxUnavailable, states.length, 1, true);
  let unavailable = states.filter((p) => p.updated && (!p.consistent || !p.ready)).length;
  const chosen: V1Pod[] = [];
  for (const i of ordered.slice(0, ordered.length - partition)) {
    if (!states[i].ready) {
      chosen.push(pods[i]);
      continue;
    }
    if (unavailable >= maxUnavailable) break;
    unavailable++;
    chosen.push(pods[i]);
  }
  return chosen;
}

/** Upstream calculateStatus: ready counts pods ready and consistent; updatedReady those also updated. */
export function computeStatus(
  s: SidecarSet,
  states: PodState[],
  latestRevision: string,
  collisionCount = 0,
): SidecarSetStatus {
  return {
    observedGeneration: s.metadata.generation,
    matchedPods: states.length,
    updatedPods: states.filter((p) => p.updated).length,
    readyPods: states.filter((p) => p.ready && p.consistent).length,
    updatedReadyPods: states.filter((p) => p.updated && p.ready && p.consistent).length,
    latestRevision,
    collisionCount,
  };
}

/**
 * Selected, not updated, and differing in more than images: upstream's notUpgradablePods (they wait for recreation).
 */
export function notUpgradablePods(s: SidecarSet, states: PodState[]): V1Pod[] {
  const selector = s.spec.updateStrategy?.selector;
  return states
    .filter((p) => !p.updated && !p.upgradable && (!selector || matchesSelector(selector, p.pod.metadata?.labels)))
    .map((p) => p.pod);
}
