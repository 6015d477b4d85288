import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../clock.js';

/** An expectation not seen after this long is dropped (the pod changed again, or the write was lost). */
const EXPECTATION_TIMEOUT_MS = 30_000;

interface Expected {
  revision: string;
  resourceVersion?: string;
  since: number;
}

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

  /**
   * Nothing outstanding for `revision`: each expected pod, as the cache shows it (`cached`), is
   * gone, records the revision written, or is the version written. Expectations of other
   * revisions, and stale ones, are dropped.
   */
  satisfied(
    sidecarSet: string,
    revision: string,
    cached: (namespace: string, name: string) => V1Pod | undefined,
    podRevision: (pod: V1Pod) => string | undefined,
  ): boolean {
    const pods = this.bySet.get(sidecarSet);
    if (!pods) return true;
    const now = this.clock.now();
    for (const [k, e] of pods) {
      const [namespace, name] = k.split('/');
      const pod = cached(namespace, name);
      const seen = !pod || e.revision === podRevision(pod) || e.resourceVersion === pod.metadata?.resourceVersion;
      if (seen || e.revision !== revision || now - e.since > EXPECTATION_TIMEOUT_MS) pods.delete(k);
    }
    return pods.size === 0;
  }

  forget(sidecarSet: string): void {
    this.bySet.delete(sidecarSet);
  }
}

const key = (pod: V1Pod) => `${pod.metadata?.namespace}/${pod.metadata?.name}`;
