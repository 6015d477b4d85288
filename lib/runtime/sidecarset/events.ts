import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import type { EventSource } from '../informer/index.js';
import type { SidecarSet } from './types.js';

/** `source` with only the updates `relevant` keeps (adds and deletes all pass), as a controller-runtime predicate. */
export function filterUpdates<T extends KubernetesObject>(
  source: EventSource<T>,
  relevant: (oldObj: T, newObj: T) => boolean,
): EventSource<T> {
  return {
    waitForSync: (signal) => source.waitForSync(signal),
    addEventHandler: (handler) =>
      source.addEventHandler({
        ...handler,
        onUpdate: (oldObj, newObj) => {
          if (relevant(oldObj, newObj)) handler.onUpdate?.(oldObj, newObj);
        },
      }),
  };
}

/**
 * As upstream's SidecarSet watch: a new generation (or deletion) is a change; a status write, the
 * controller's own on most reconciles, is not (it would only trigger a reconcile with nothing to do).
 * Labels count too: the custom-version label is copied to the latest revision.
 */
export function sidecarSetChanged(a: SidecarSet, b: SidecarSet): boolean {
  return (
    a.metadata.generation !== b.metadata.generation ||
    !!a.metadata.deletionTimestamp !== !!b.metadata.deletionTimestamp ||
    JSON.stringify(a.metadata.labels ?? {}) !== JSON.stringify(b.metadata.labels ?? {})
  );
}

/**
 * What of a pod the rollout reads (upstream's pod event handler reacts to a subset: readiness,
 * deletion, consistency, labels): an update that changes none of it (a condition's probe time,
 * an unrelated annotation) does not reconcile the SidecarSet.
 */
export function podRolloutView(p: V1Pod): string {
  const a = p.metadata?.annotations ?? {};
  return JSON.stringify([
    p.metadata?.deletionTimestamp ?? null,
    p.metadata?.labels ?? {},
    p.spec?.nodeName ?? '',
    p.status?.phase ?? '',
    Object.keys(a)
      .filter((k) => k.startsWith('kruise.io/sidecarset-'))
      .sort()
      .map((k) => [k, a[k]]),
    (p.spec?.containers ?? []).map((c) => [c.name, c.image]),
    (p.status?.conditions ?? []).filter((c) => c.type === 'Ready').map((c) => [c.status, c.lastTransitionTime]),
    (p.status?.containerStatuses ?? []).map((c) => [c.name, c.image, c.imageID, c.ready, c.restartCount]),
  ]);
}

export const podChanged = (a: V1Pod, b: V1Pod) => podRolloutView(a) !== podRolloutView(b);
