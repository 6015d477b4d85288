// Watch recovery of a real manager process: kube-apiserver is SIGKILLed and restarted under it
// (every watch cut mid-stream, every kept-alive connection dead), the SidecarSet changes right
// after the API server is back (while the manager is still reconnecting), and the manager's
// cache converges: pods created through the API server get the new sidecar version. /healthz
// stays healthy or becomes healthy again; the process never exits.
//
// Leader election is given long timings here (renew deadline 30s) so that a slow API server
// restart on a loaded machine cannot make the leader step down (and exit, by design): this file
// is about the watches; tests/integration/manager-ha.test.ts covers the Lease.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Names, Paths, SecretKeys } from '../../lib/contract.js';
import { envtest, restartApiServer } from '../envtest/state.js';
import {
  containerImage,
  createSidecarSet,
  deletePods,
  deleteSidecarSet,
  podBody,
  podReview,
  postReview,
  reviewPatch,
  setSidecarImage,
  until,
  type SidecarSetParams,
} from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import {
  addEndpoint,
  installRuntime,
  kubeConfig,
  removeEndpoint,
  uninstallWebhooks,
} from './support/runtime-cluster.js';

const SLOW = 90_000; // bound for waits on the API server; never a speed assertion
const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const suffix = randomBytes(3).toString('hex');
const ns = `watch-${suffix}`;
const podsNs = `watch-pods-${suffix}`;
const sidecarSet: SidecarSetParams = {
  name: `watch-${suffix}`,
  namespace: podsNs,
  appLabel: `watch-${suffix}`,
  container: `sidecar-${suffix}`,
  image: 'registry.invalid/sidecar:v1',
};
let manager: ManagerProcess;
let caPem = '';
let seq = 0;

/** The sidecar image `manager` injects right now, asked directly (no API server involved). */
async function injectedImage(): Promise<string | undefined> {
  const res = await postReview(
    manager.ports.webhook,
    Paths.mutatePod,
    caPem,
    podReview(podBody('probe', sidecarSet.appLabel), podsNs),
  );
  // The container arrives as `add /spec/containers/<i>` (or the whole list); find it whatever the shape.
  const containers = reviewPatch(res.body)
    .filter((op) => op.path.startsWith('/spec/containers'))
    .flatMap((op) => (Array.isArray(op.value) ? op.value : [op.value]) as Array<{ name?: string; image?: string }>);
  return containers.find((c) => c?.name === sidecarSet.container)?.image;
}

/** Creates a pod through the API server; the sidecar image it came back with. */
async function createdImage(): Promise<string | undefined> {
  const pod = await core.createNamespacedPod({ namespace: podsNs, body: podBody(`p-${seq++}`, sidecarSet.appLabel) });
  return containerImage(pod, sidecarSet.container);
}

beforeAll(async () => {
  await installRuntime(kc, ns);
  await core.createNamespace({ body: { metadata: { name: podsNs } } });
  manager = await ManagerProcess.start({
    name: 'watch-a',
    kubeconfigPath: envtest().kubeconfigPath,
    namespace: ns,
    args: [
      '--leader-election-lease-duration=40s',
      '--leader-election-renew-deadline=30s',
      '--leader-election-retry-period=2s',
    ],
  });
  await manager.waitReady();
  await addEndpoint(kc, ns, manager.name, manager.ports.webhook);
  const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
  caPem = Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8');
  await createSidecarSet(kc, sidecarSet);
  await until('the manager to inject v1', async () => (await injectedImage()) === sidecarSet.image, SLOW, 100);
}, 120_000);

afterAll(async () => {
  await manager?.stop();
  await removeEndpoint(kc, ns, manager?.name ?? '');
  await deleteSidecarSet(kc, sidecarSet.name);
  // Webhooks first: vpod.kb.io (pod DELETE, failurePolicy Fail) has no replica left to answer.
  await uninstallWebhooks(kc);
  await deletePods(kc, podsNs);
}, 60_000);

describe('manager watches across a kube-apiserver crash', () => {
  it('converges on a SidecarSet changed right after the API server came back, and stays or returns healthy', async () => {
    expect(await createdImage()).toBe(sidecarSet.image);

    // Probe liveness the whole time, as a kubelet would.
    const healthz: Array<{ at: number; status: number | string }> = [];
    let probing = true;
    const prober = (async () => {
      while (probing) {
        healthz.push({
          at: Date.now(),
          status: await manager.get('/healthz').then(
            (r) => r.status,
            (e: Error) => e.message,
          ),
        });
        await sleep(200);
      }
    })();

    const killedAt = Date.now();
    await restartApiServer('kill');
    const backAt = Date.now();
    const v2 = 'registry.invalid/sidecar:v2';
    await setSidecarImage(kc, sidecarSet, v2); // the manager is most likely still reconnecting its watches

    // Its webhook answers from its cache, so the change shows up there once the watch resumed...
    await until('the manager to inject v2', async () => (await injectedImage()) === v2, SLOW, 200);
    const convergedAt = Date.now();
    // ...and in pods created through the API server.
    expect(await createdImage()).toBe(v2);
    await until('/healthz to be healthy', async () => (await manager.get('/healthz')).status === 200, SLOW, 200);
    probing = false;
    await prober;

    expect(manager.child.exitCode).toBeNull();
    expect((await manager.get('/readyz')).status).toBe(200);
    const unhealthy = healthz.filter((h) => h.status !== 200);
    process.stderr.write(
      `kube-apiserver down/restarting for ${backAt - killedAt}ms; manager injected the new version ${convergedAt - backAt}ms after it was back; ` +
        `/healthz probed ${healthz.length}×, not 200 ${unhealthy.length}× (${[...new Set(unhealthy.map((h) => h.status))].join(', ') || '-'})\n`,
    );
    expect(healthz.at(-1)?.status).toBe(200);
    // The manager noticed the cut and re-established its watches (nothing was silently lost).
    expect(manager.logs()).toMatch(/"msg":"list\/watch failed; retrying with backoff"/);
  }, 180_000);
});
