import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../clock.js';

/** An expectation not seen after this long is dropped (the pod changed again, or the write was lost). */
const EXPECTATION_TIMEOUT_MS = 30_000;

interface Expected { revision: string; resourceVersion?: string; since: number }

/**
 * Upstream's sidecarcontrol.UpdateExpectations: pods this controller updated, until the cache
 * shows them on the revision written. While any is outstanding the controller does not plan
 * more updates from a cache that does not yet show its own writes.
 */
export class UpdateExpectations {
  private readonly bySet = new Map<string, Map<string, Expected>>();

  constructor(private readonly clock: Clock) {}

  expect(sidecarSet: string, revision: string, patched: V1Pod): void {
    let pods = this.bySet.get(sidecarSet);
    if (!pods) this.bySet.set(sidecarSet, (pods = new Map()));
    pods.set(key(patched), { revision, resourceVersion: patched.metadata?.resourceVersion, since: this.clock.now() });
  }

  /** The cache shows `pod` recording `podRevision`: done once that is the revision expected or the version written. */
  observe(sidecarSet: string, pod: V1Pod, podRevision: string | undefined): void {
    const pods = this.bySet.get(sidecarSet);
    const e = pods?.get(key(pod));
    if (e && (e.revision === podRevision || e.resourceVersion === pod.metadata?.resourceVersion)) pods!.delete(key(pod));
  }

  /** Nothing outstanding for `revision`; expectations of other revisions, and stale ones, are dropped. */
  satisfied(sidecarSet: string, revision: string): boolean {
    const pods = this.bySet.get(sidecarSet);
    if (!pods) return true;
    const now = this.clock.now();
    for (const [k, e] of pods) if (e.revision !== revision || now - e.since > EXPECTATION_TIMEOUT_MS) pods.delete(k);
    return pods.size === 0;
  }

  forget(sidecarSet: string): void {
    this.bySet.delete(sidecarSet);
  }
}

const key = (pod: V1Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`;
