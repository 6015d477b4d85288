/**
 * Checks both flavours must pass on real nodes: where the manager runs, how the webhook is
 * routed, and the SidecarSet life cycle completed by the real kubelet's container statuses.
 */
import { expect } from '@jest/globals';
import type { AppImages } from './app-images.js';
import { managerPods, podNames, readyWebhookEndpoints } from './install.js';
import { describePods, getJson, isReady, kubectl, pods, until, type PodLike } from './kube.js';
import { APP_NAMESPACE, SIDECARSET_NAME, asList, sidecarDeployment, sidecarSet } from './workloads.js';

/** `replicas` manager pods Ready, each on its own node and zone, on the host network, never restarted. */
export async function expectManagerPlacement(kc: string, replicas: number): Promise<PodLike[]> {
  const ready = await managerPods(kc);
  const nodes = await getJson<{ items: Array<{ metadata: { name: string; labels: Record<string, string> } }> }>(kc, [
    'nodes',
  ]);
  const zoneOf = new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels['topology.kubernetes.io/zone']]));
  expect(ready.length).toBe(replicas);
  expect(new Set(ready.map((p) => p.spec.nodeName)).size).toBe(replicas);
  expect(new Set(ready.map((p) => zoneOf.get(p.spec.nodeName!))).size).toBe(replicas);
  for (const p of ready) {
    expect(p.spec.hostNetwork).toBe(true);
    // host network: the pod's address is its node's
    expect(p.status?.podIP).toBe(p.status?.hostIP);
    for (const c of p.status?.containerStatuses ?? [])
      expect({ container: c.name, restarts: c.restartCount }).toEqual({ container: c.name, restarts: 0 });
  }
  return ready;
}

export { readyWebhookEndpoints, webhookEndpointsReady } from './install.js';

/** The webhook Service's EndpointSlices list exactly the Ready replicas. */
export async function expectWebhookEndpoints(kc: string): Promise<void> {
  const ready = await managerPods(kc);
  expect(await readyWebhookEndpoints(kc)).toEqual(podNames(ready));
}

/**
 * A SidecarSet injects into a Deployment's new pods (through the pod webhook, reached by the API
 * server via the Service), then upgrades the sidecar in place: same pods, the sidecar restarted
 * by the kubelet on the new image (its reported imageID), the app container untouched.
 */
export async function expectSidecarSetInPlace(kc: string, images: AppImages): Promise<void> {
  await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(sidecarSet(images)) });
  await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(sidecarDeployment(images)) });
  const injected = await until(
    'pods with the sidecar Ready',
    async () => {
      const p = await pods(kc, APP_NAMESPACE, 'app=with-sidecar');
      return p.length === 2 && p.every(isReady) && p;
    },
    { describe: () => describePods(kc, APP_NAMESPACE, 'app=with-sidecar') },
  );
  for (const p of injected) expect(p.spec.containers.map((c) => c.name)).toEqual(['sidecar', 'main']);

  await kubectl(kc, ['apply', '--server-side', '--force-conflicts', '-f', '-'], {
    input: asList(sidecarSet(images, images.v2)),
  });
  const sidecarOf = (pod: PodLike) => pod.status?.containerStatuses?.find((c) => c.name === 'sidecar');
  const upgraded = await until(
    'the sidecar upgraded in place on every pod',
    async () => {
      const ss = await getJson<{ status: { updatedPods?: number; updatedReadyPods?: number } }>(kc, [
        'sidecarset',
        SIDECARSET_NAME,
      ]);
      const p = await pods(kc, APP_NAMESPACE, 'app=with-sidecar');
      const done = (pod: PodLike) => isReady(pod) && !!sidecarOf(pod)?.imageID.includes(images.digests.v2);
      return ss.status.updatedReadyPods === 2 && p.length === 2 && p.every(done) && p;
    },
    { timeoutMs: 300_000, describe: () => describePods(kc, APP_NAMESPACE, 'app=with-sidecar') },
  );
  expect(upgraded.map((p) => p.metadata.uid).sort()).toEqual(injected.map((p) => p.metadata.uid).sort());
  for (const p of upgraded) {
    expect(sidecarOf(p)!.restartCount).toBeGreaterThanOrEqual(1);
    expect(p.status!.containerStatuses!.find((c) => c.name === 'main')!.restartCount).toBe(0);
  }
}
