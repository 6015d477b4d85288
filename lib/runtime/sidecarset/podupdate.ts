import type { V1Pod } from '@kubernetes/client-node';
import { SidecarSetAnnotations } from '../../contract.js';
import { readHashAnnotation, sidecarSetHash } from './hash.js';
import { patchPodAnnotations } from './metadata.js';
import { INPLACE_UPDATE_STATE, sidecarContainerNames } from './rollout.js';
import type { SidecarSet, SidecarSetHashEntry } from './types.js';

/** metav1.Time on the wire: RFC 3339 in seconds, UTC; the zero time is `null`. */
const goTime = (t: string | undefined) => (t ? new Date(t).toISOString().replace(/\.\d{3}Z$/, 'Z') : null);

/** One SidecarSetUpgradeSpec as Go's encoding/json writes it (struct field order, omitempty). */
function goUpgradeSpec(e: Partial<SidecarSetHashEntry>): string {
  return JSON.stringify({
    updateTimestamp: goTime(e.updateTimestamp),
    hash: e.hash ?? '',
    sidecarSetName: e.sidecarSetName ?? '',
    sidecarList: e.sidecarList?.length ? e.sidecarList : null,
    ...(e.controllerRevision ? { controllerRevision: e.controllerRevision } : {}),
  });
}

/** A Go map: keys sorted. */
const goMap = (m: Record<string, string>) =>
  `{${Object.keys(m)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${m[k]}`)
    .join(',')}}`;

const pointer = (key: string) => `/metadata/annotations/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** True when the pod's hash annotation is upstream's old format, name -> hash string. */
function isOldFormat(raw: string | undefined): boolean {
  try {
    return Object.values(JSON.parse(raw ?? '{}') as object).some((v) => typeof v === 'string');
  } catch {
    return false;
  }
}

/**
 * The JSON Patch that updates one pod in place, as upstream's updatePodSidecarContainer: each
 * sidecar's image set to the SidecarSet's, the pod's `kruise.io/sidecarset-hash` entry set to the
 * latest revision (and `latestRevision`, the ControllerRevision name), and the imageIDs the
 * kubelet ran before the change recorded in `kruise.io/sidecarset-inplace-update-state`, which
 * is how completion is detected. It starts with a `test` on resourceVersion, so a pod changed
 * since we read it is not patched blindly (409 → requeue and re-read).
 */
export function inPlaceUpdatePatch(s: SidecarSet, pod: V1Pod, now: Date, latestRevision?: string): object[] {
  const ops: object[] = [{ op: 'test', path: '/metadata/resourceVersion', value: pod.metadata?.resourceVersion }];
  const changed: string[] = [];
  for (const sidecar of s.spec.containers ?? []) {
    const i = (pod.spec?.containers ?? []).findIndex((c) => c.name === sidecar.name);
    if (i < 0 || pod.spec!.containers[i].image === sidecar.image) continue;
    ops.push({ op: 'replace', path: `/spec/containers/${i}/image`, value: sidecar.image });
    changed.push(sidecar.name);
  }
  const annotations = pod.metadata?.annotations ?? {};
  if (!pod.metadata?.annotations) ops.push({ op: 'add', path: '/metadata/annotations', value: {} });
  const timestamp = now.toISOString();
  const oldFormat = isOldFormat(annotations[SidecarSetAnnotations.hash]);
  const entries = (key: string) =>
    Object.fromEntries(
      Object.entries(readHashAnnotation(annotations, key))
        // Upstream converts the old format with the current SidecarSet's name and the time of conversion.
        .map(([name, e]) => [
          name,
          goUpgradeSpec(oldFormat ? { hash: e.hash, updateTimestamp: timestamp, sidecarSetName: s.metadata.name } : e),
        ]),
    );
  const hashes = entries(SidecarSetAnnotations.hash);
  hashes[s.metadata.name] = goUpgradeSpec({
    updateTimestamp: timestamp,
    hash: sidecarSetHash(s),
    sidecarSetName: s.metadata.name,
    sidecarList: sidecarContainerNames(s),
    controllerRevision: latestRevision,
  });
  ops.push({ op: 'add', path: pointer(SidecarSetAnnotations.hash), value: goMap(hashes) });
  if (oldFormat && annotations[SidecarSetAnnotations.hashWithoutImage]) {
    ops.push({
      op: 'add',
      path: pointer(SidecarSetAnnotations.hashWithoutImage),
      value: goMap(entries(SidecarSetAnnotations.hashWithoutImage)),
    });
  }
  const state = inPlaceUpdateState(s, pod, changed, timestamp);
  ops.push({ op: 'add', path: pointer(INPLACE_UPDATE_STATE), value: state });
  // Upstream (updatePodSidecarAndHash) re-applies the SidecarSet's patchPodMetadata to the updated pod, after the
  // annotations above; a MergePatchJson that cannot merge fails the update (thrown: the reconcile retries).
  if (s.spec.patchPodMetadata?.length) {
    const written: Record<string, string> = { ...annotations };
    for (const op of ops as Array<{ op: string; path: string; value: unknown }>) {
      const key = op.path.startsWith('/metadata/annotations/') ? op.path.slice(22) : undefined;
      if (key && typeof op.value === 'string') written[key.replace(/~1/g, '/').replace(/~0/g, '~')] = op.value;
    }
    const patched = patchPodAnnotations(written, s.spec.patchPodMetadata);
    for (const [key, value] of Object.entries(patched))
      if (written[key] !== value) ops.push({ op: 'add', path: pointer(key), value });
  }
  return ops;
}

interface UpdateState {
  revision?: string;
  updateTimestamp?: string;
  lastContainerStatuses?: Record<string, { imageID?: string }>;
}

/**
 * Upstream UpdatePodAnnotationsInUpgrade: keeps an earlier record of this SidecarSet and adds the changed containers'
 * imageIDs.
 */
function inPlaceUpdateState(s: SidecarSet, pod: V1Pod, changed: string[], timestamp: string): string {
  let states: Record<string, UpdateState> = {};
  try {
    const parsed = JSON.parse(pod.metadata?.annotations?.[INPLACE_UPDATE_STATE] ?? '{}') as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) states = parsed as Record<string, UpdateState>;
  } catch {
    /* upstream logs and starts afresh */
  }
  const own = states[s.metadata.name] ?? { revision: sidecarSetHash(s), updateTimestamp: timestamp };
  const last = { ...own.lastContainerStatuses };
  const imageIDs = new Map((pod.status?.containerStatuses ?? []).map((c) => [c.name, c.imageID ?? '']));
  for (const name of changed) last[name] = imageIDs.get(name) ? { imageID: imageIDs.get(name) } : {};
  const encoded = Object.fromEntries(Object.entries(states).map(([name, st]) => [name, JSON.stringify(st)]));
  encoded[s.metadata.name] = JSON.stringify({
    ...own,
    revision: own.revision ?? '',
    updateTimestamp: goTime(own.updateTimestamp),
    lastContainerStatuses: Object.fromEntries(
      Object.keys(last)
        .sort()
        .map((k) => [k, last[k]]),
    ),
  });
  return goMap(encoded);
}
