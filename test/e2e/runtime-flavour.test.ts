/**
 * The runtime flavour on real nodes: the image `RuntimeImage` builds, pushed by
 * `kruise-ha-image publish` as a user would (test/cluster/images), run by real kubelets as the
 * manager pods, passing the same placement, routing and SidecarSet checks as upstream.
 */
import { afterAll, beforeAll, describe, expect, test, jest } from '@jest/globals';
import type { ClusterImages } from '../cluster/images/index.js';
import { doctorJson } from '../integration/support/doctor-run.js';
import { pushAppImages, type AppImages } from './support/app-images.js';
import { expectManagerPlacement, expectSidecarSetInPlace, expectWebhookEndpoints } from './support/checks.js';
import { clusterImages, e2eEnv } from './support/e2e-env.js';
import { installKruise, managerPods, NS, uninstallKruise } from './support/install.js';
import { kubectl } from './support/kube.js';
import { synthRuntime, type Synthesized } from './support/synth.js';
import { appNamespace, asList } from './support/workloads.js';

// Real pods: image pulls, kubelet restarts and rollouts take minutes, not the default 5 s.
jest.setTimeout(600_000);

const env = e2eEnv();
const kc = env.kubeconfig;
let built: ClusterImages;
let out: Synthesized;
let images: AppImages;

beforeAll(async () => {
  images = await pushAppImages(env.registry);
  built = await clusterImages();
  out = synthRuntime(env.registry, built.runtime.baseImage);
  await installKruise(kc, out);
  await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(appNamespace()) });
}, 900_000);

afterAll(async () => {
  await uninstallKruise(kc, out);
}, 600_000);

describe('the runtime flavour on real nodes', () => {
  test('its manager pods run the published image, Ready, one per zone, on the host network', async () => {
    const ready = await expectManagerPlacement(kc, 2);
    for (const p of ready) {
      expect(p.spec.containers[0]!.image).toBe(built.runtime.reference);
      expect(p.status!.containerStatuses![0]!.imageID).toContain(built.runtime.digest);
    }
  });

  test('the webhook Service routes to every ready replica through real EndpointSlices', () =>
    expectWebhookEndpoints(kc));

  test('a SidecarSet injects and upgrades in place, completed by the real container statuses', () =>
    expectSidecarSetInPlace(kc, images));

  test('kruise-ha doctor is green against it', async () => {
    await managerPods(kc);
    const report = await doctorJson(kc, NS);
    expect({ code: report.code, failing: report.failing }).toEqual({ code: 0, failing: [] });
  });
});
