/**
 * The default output of `npm run synth` (upstream kruise-manager of the default release, built from its Go module
 * into the cluster's registry) applied unmodified in one `kubectl apply --server-side` to the
 * three-zone cluster of real kubelets, then Kruise used on it as a user would.
 */
import { afterAll, beforeAll, describe, expect, test, jest } from '@jest/globals';
import { doctorJson } from '../integration/support/doctor-run.js';
import { pushAppImages, type AppImages } from './support/app-images.js';
import { clusterImages, e2eEnv } from './support/e2e-env.js';
import { expectManagerPlacement, expectSidecarSetInPlace, expectWebhookEndpoints } from './support/checks.js';
import { describePods, getJson, isReady, kubectl, pods, until } from './support/kube.js';
import { type Synthesized, synthExample } from './support/synth.js';
import {
  APP_NAMESPACE,
  advancedStatefulSet,
  appNamespace,
  asList,
  headlessService,
  imagePullJob,
  inPlaceCloneSet,
  protectedDeployment,
} from './support/workloads.js';
import { installKruise, managerPods, uninstallKruise, NS } from './support/install.js';
import { ownOperatorSuite } from './support/own-operator.js';

// Real pods: image pulls, kubelet restarts and rollouts take minutes, not the default 5 s.
jest.setTimeout(600_000);

const env = e2eEnv();
const kc = env.kubeconfig;
let out: Synthesized;
let images: AppImages;

beforeAll(async () => {
  images = await pushAppImages(env.registry);
  // openkruise/kruise-manager:<default release> (and its /kruise-daemon) as the output names it, built from the module
  await clusterImages();
  out = await synthExample('default-ha.ts');
  await installKruise(kc, out);
}, 600_000);

afterAll(async () => {
  await uninstallKruise(kc, out);
}, 600_000);

describe('the default output on real nodes', () => {
  test('manager replicas are Running and Ready, each on its own node in its own zone, on the host network', () =>
    expectManagerPlacement(kc, 2));

  test('the webhook Service routes to every ready replica through real EndpointSlices', () =>
    expectWebhookEndpoints(kc));

  test('kruise-daemon is Ready on every real node and pulls images through its node’s containerd', async () => {
    const ds = await until(
      'kruise-daemon Ready on every node',
      async () => {
        const d = await getJson<{ status: { desiredNumberScheduled: number; numberReady: number } }>(kc, [
          'daemonset',
          '-n',
          NS,
          'kruise-daemon',
        ]);
        return d.status.desiredNumberScheduled === env.nodes.length && d.status.numberReady === env.nodes.length && d;
      },
      { describe: () => describePods(kc, NS) },
    );
    expect(ds.status.numberReady).toBe(env.nodes.length);

    await kubectl(kc, ['apply', '--server-side', '-f', '-'], {
      input: asList(appNamespace(), imagePullJob(images.v2)),
    });
    const job = await until(
      'the ImagePullJob to pull onto every node',
      async () => {
        const j = await getJson<{
          status?: { desired?: number; succeeded?: number; failed?: number; failedNodes?: string[] };
        }>(kc, ['imagepulljob', '-n', APP_NAMESPACE, 'pull-everywhere']);
        if ((j.status?.failed ?? 0) > 0) throw new Error(`ImagePullJob failed on ${j.status?.failedNodes?.join(', ')}`);
        return j.status?.succeeded === env.nodes.length && j;
      },
      {
        timeoutMs: 300_000,
        describe: async () => (await kubectl(kc, ['get', 'imagepulljob', '-n', APP_NAMESPACE, '-o', 'yaml'])).stdout,
      },
    );
    expect(job.status?.desired).toBe(env.nodes.length);
    // Each node's NodeImage (written from what its kruise-daemon saw in that node's runtime) lists the image.
    for (const node of env.nodes) {
      const ni = await getJson<{
        status?: { imageStatuses?: Record<string, { tags: Array<{ tag: string; phase?: string }> }> };
      }>(kc, ['nodeimage', node.name]);
      const repo = images.v2.slice(0, images.v2.lastIndexOf(':'));
      expect(ni.status?.imageStatuses?.[repo]?.tags.map((t) => t.tag)).toContain('v2');
    }
  });

  test('kruise-ha doctor is green, and red naming the cause while a replica cannot run', async () => {
    const green = await doctorJson(kc, NS);
    expect({ code: green.code, failing: green.failing }).toEqual({ code: 0, failing: [] });

    // Leave the replacement of one replica nowhere to go: every node but the other replica's is
    // cordoned (and that one holds the host ports), so the install runs one short.
    const [victim, other] = await managerPods(kc);
    // Uncordoned later in this order, the other zones' nodes first: the spread is only preferred
    // (ScheduleAnyway), so a replacement that finds room first in the other replica's zone stays
    // there, and the doctor rightly fails replica-spread until someone moves it.
    const otherZone = env.nodes.find((n) => n.name === other!.spec.nodeName)?.zone;
    const cordoned = env.nodes
      .filter((n) => n.name !== other!.spec.nodeName)
      .sort((a, b) => Number(a.zone === otherZone) - Number(b.zone === otherZone))
      .map((n) => n.name);
    await kubectl(kc, ['cordon', ...cordoned]);
    try {
      await kubectl(kc, ['delete', 'pod', '-n', NS, victim!.metadata.name, '--wait=true']);
      const red = await until('the doctor to fail while a replica is down', async () => {
        const r = await doctorJson(kc, NS);
        return r.code === 1 && r;
      });
      expect(red.failing.length).toBeGreaterThan(0);
      const text = JSON.stringify(red.report.checks.filter((c) => c.status === 'fail'));
      expect(text).toMatch(/replica|ready|available|pending/i);
      process.stderr.write(`e2e: doctor with a replica down failed ${red.failing.join(', ')}\n`);
    } finally {
      await kubectl(kc, ['uncordon', ...cordoned]);
    }
    await managerPods(kc);
    let last: Awaited<ReturnType<typeof doctorJson>> | undefined;
    const again = await until(
      'the doctor to be green again',
      async () => {
        last = await doctorJson(kc, NS);
        return last.code === 0 && last;
      },
      {
        timeoutMs: 180_000,
        describe: async () =>
          [
            JSON.stringify(
              last?.report.checks.filter((c) => c.status !== 'pass'),
              null,
              2,
            ),
            (await kubectl(kc, ['get', 'pods,pdb', '-n', NS, '-o', 'wide'])).stdout,
            (await kubectl(kc, ['get', 'nodes', '-o', 'wide'])).stdout,
          ].join('\n'),
      },
    );
    expect(again.failing).toEqual([]);
  });
});

describe('Kruise works on it', () => {
  test('a CloneSet image change is applied in place by the real kubelet (same pod, container restarted)', async () => {
    await kubectl(kc, ['apply', '--server-side', '-f', '-'], {
      input: asList(appNamespace(), inPlaceCloneSet(images)),
    });
    const before = await until(
      'the CloneSet pods Ready',
      async () => {
        const p = await pods(kc, APP_NAMESPACE, 'app=inplace');
        return p.length === 2 && p.every(isReady) && p;
      },
      { describe: () => describePods(kc, APP_NAMESPACE) },
    );

    await kubectl(kc, ['apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: asList(inPlaceCloneSet(images, images.v2)),
    });
    const after = await until(
      'the in-place update to complete',
      async () => {
        const cs = await getJson<{ status: { updatedReadyReplicas?: number; replicas: number } }>(kc, [
          'cloneset',
          '-n',
          APP_NAMESPACE,
          'inplace',
        ]);
        const p = await pods(kc, APP_NAMESPACE, 'app=inplace');
        return cs.status.updatedReadyReplicas === 2 && p.length === 2 && p.every(isReady) && p;
      },
      { timeoutMs: 300_000, describe: () => describePods(kc, APP_NAMESPACE) },
    );

    expect(after.map((p) => p.metadata.uid).sort()).toEqual(before.map((p) => p.metadata.uid).sort());
    for (const p of after) {
      const main = p.status!.containerStatuses!.find((c) => c.name === 'main')!;
      expect(main.restartCount).toBeGreaterThanOrEqual(1);
      expect(main.imageID).toContain(images.digests.v2);
    }
  });

  test('a SidecarSet injects its sidecar into new pods and upgrades it in place', () =>
    expectSidecarSetInPlace(kc, images));

  test('an Advanced StatefulSet rolls out in place across the nodes', async () => {
    await kubectl(kc, ['apply', '--server-side', '-f', '-'], {
      input: asList(headlessService('asts'), advancedStatefulSet(images)),
    });
    const before = await until(
      'the Advanced StatefulSet Ready',
      async () => {
        const p = await pods(kc, APP_NAMESPACE, 'app=asts');
        return p.length === 3 && p.every(isReady) && p;
      },
      { describe: () => describePods(kc, APP_NAMESPACE, 'app=asts') },
    );
    await kubectl(kc, ['apply', '--server-side', '--force-conflicts', '-f', '-'], {
      input: asList(advancedStatefulSet(images, images.v2)),
    });
    const after = await until(
      'the rollout to finish',
      async () => {
        const s = await getJson<{
          status: { updatedReadyReplicas?: number; currentRevision?: string; updateRevision?: string };
        }>(kc, ['statefulsets.apps.kruise.io', '-n', APP_NAMESPACE, 'asts']);
        const p = await pods(kc, APP_NAMESPACE, 'app=asts');
        return (
          s.status.updatedReadyReplicas === 3 &&
          s.status.currentRevision === s.status.updateRevision &&
          p.length === 3 &&
          p.every((x) => isReady(x) && x.status!.containerStatuses![0]!.imageID.includes(images.digests.v2)) &&
          p
        );
      },
      { timeoutMs: 300_000, describe: () => describePods(kc, APP_NAMESPACE, 'app=asts') },
    );
    expect(after.map((p) => p.metadata.uid).sort()).toEqual(before.map((p) => p.metadata.uid).sort());
  });

  test('deletion protection refuses to delete a labelled Deployment that still has replicas', async () => {
    await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(protectedDeployment(images)) });
    const refused = await kubectl(kc, ['delete', 'deployment', '-n', APP_NAMESPACE, 'protected', '--wait=false'], {
      allowFailure: true,
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/forbidden|denied/i);
    expect(refused.stderr).toMatch(/replicas/i);
    await kubectl(kc, ['scale', 'deployment', '-n', APP_NAMESPACE, 'protected', '--replicas=0']);
    await kubectl(kc, ['delete', 'deployment', '-n', APP_NAMESPACE, 'protected']);
  });
});

// Your own operator beside this install (issue [own-operator]): one Kruise install for both (issue [test-budget]).
ownOperatorSuite();
