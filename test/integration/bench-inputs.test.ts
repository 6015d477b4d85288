/**
 * The benchmarks' inputs against a real API server (issue #29): every pod a benchmark reviews or creates names owners
 * that exist, with their UIDs, up the whole chain (ReplicaSet -> Deployment). A benchmark pod naming an owner that
 * does not exist made upstream's pod webhook call the API server at every admission, which no real cluster does.
 */
import { describe, expect, it } from '@jest/globals';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { createInputs } from '../../bench/compare.js';
import { createWorkload, missingOwners, type OwnerKind } from '../../bench/inputs.js';
import { fleetWorkload, restartStatus } from '../../bench/sidecarset-rollout.js';
import { kubeConfig } from './support/runtime-cluster.js';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const podsOf = (reviews: string[]) =>
  reviews.map((r) => (JSON.parse(r) as { request: { object: V1Pod } }).request.object);

describe("benchmark inputs: every pod's owners exist", () => {
  it('compare: direct reviews, API-server creates, and the real-limit pods (Job, DaemonSet, custom workload)', async () => {
    const namespace = 'bench-inputs-compare';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const inputs = await createInputs(kc, namespace);
    const pods = [
      ...podsOf(inputs.direct),
      ...Array.from({ length: 64 }, (_, i) => inputs.api.pod(i)),
      ...Object.values(inputs.realLimit).flatMap(podsOf),
    ];
    expect(pods.length).toBe(64 * 5);
    const problems = (await Promise.all(pods.map((p) => missingOwners(kc, namespace, p)))).flat();
    expect(problems).toEqual([]);
    // Each pod has exactly one controller reference, of the kind its workload makes pods through.
    const kinds = new Set(pods.map((p) => p.metadata!.ownerReferences!.filter((o) => o.controller)[0].kind));
    expect([...kinds].sort()).toEqual(['DaemonSet', 'Job', 'ReplicaSet', 'Worker']);
    // A Deployment's pods go through its ReplicaSet: pod-template-hash label, generateName `<replicaset>-`.
    const direct = podsOf(inputs.direct)[0];
    const rs = direct.metadata!.ownerReferences![0].name;
    expect(direct.metadata!.generateName).toBe(`${rs}-`);
    expect(rs).toBe(`shop-${direct.metadata!.labels!['pod-template-hash']}`);
    // The created pods are accepted by the API server as they are (dry run).
    for (const p of [inputs.api.pod(0), ...Object.values(inputs.realLimit).map((r) => podsOf(r)[0])])
      await core.createNamespacedPod({ namespace, body: p, dryRun: 'All' });
  }, 120_000);

  it('the rollout fleet', async () => {
    const namespace = 'bench-inputs-rollout';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    const fleet = await fleetWorkload(kc, namespace);
    const created = await core.createNamespacedPod({ namespace, body: fleet.pod(0) });
    expect(await missingOwners(kc, namespace, created)).toEqual([]);
    expect(fleet.objects.map((o) => o.kind)).toEqual(['Deployment', 'ReplicaSet']);
  }, 60_000);

  it.each<OwnerKind>(['Deployment', 'Job', 'DaemonSet', 'Custom'])(
    'finds a missing or replaced %s owner',
    async (kind) => {
      const namespace = `bench-inputs-missing-${kind.toLowerCase()}`;
      await core.createNamespace({ body: { metadata: { name: namespace } } });
      const w = await createWorkload(kc, namespace, 'app', { kind });
      const pod = w.pod(0);
      expect(await missingOwners(kc, namespace, pod)).toEqual([]);
      const ref = pod.metadata!.ownerReferences![0];
      const invented = {
        ...pod,
        metadata: { ...pod.metadata, ownerReferences: [{ ...ref, name: `${ref.name}-gone` }] },
      };
      expect((await missingOwners(kc, namespace, invented)).join('\n')).toMatch(/which does not exist \(404\)/);
      const otherUid = { ...pod, metadata: { ...pod.metadata, ownerReferences: [{ ...ref, uid: 'not-its-uid' }] } };
      expect((await missingOwners(kc, namespace, otherUid)).join('\n')).toMatch(/but that object's uid is/);
    },
    60_000,
  );
});

describe("the rollout benchmark's kubelet restarts a container as a kubelet does", () => {
  const pod: V1Pod = {
    metadata: { name: 'p', namespace: 'n' },
    spec: {
      containers: [
        { name: 'app', image: 'shop:1' },
        { name: 'fleet-proxy', image: 'proxy:2' },
      ],
    },
    status: {
      containerStatuses: [
        { name: 'app', image: 'docker.io/library/shop:1', imageID: 'shop@sha256:a', ready: true, restartCount: 0 },
        {
          name: 'fleet-proxy',
          image: 'docker.io/library/proxy:1',
          imageID: 'proxy@sha256:1',
          ready: true,
          restartCount: 0,
        },
      ],
    },
  };
  type Status = {
    status: {
      conditions: Array<{ type: string; status: string }>;
      containerStatuses: Array<{ name: string; image: string; imageID: string; ready: boolean; restartCount: number }>;
    };
  };
  const ready = (s: Status) => s.status.conditions.find((c) => c.type === 'Ready')!.status;
  const proxy = (s: Status) => s.status.containerStatuses.find((c) => c.name === 'fleet-proxy')!;

  it('first stopped: not Ready, the old image and imageID, one more restart', () => {
    const s = restartStatus(pod, 'fleet-proxy', 'stopped') as Status;
    expect(ready(s)).toBe('False');
    expect(proxy(s)).toMatchObject({
      image: 'docker.io/library/proxy:1',
      imageID: 'proxy@sha256:1',
      ready: false,
      restartCount: 1,
    });
    expect(s.status.containerStatuses.find((c) => c.name === 'app')).toMatchObject({
      imageID: 'shop@sha256:a',
      ready: true,
    });
  });

  it('then running: Ready, the new image with a new imageID', () => {
    const s = restartStatus(pod, 'fleet-proxy', 'running') as Status;
    expect(ready(s)).toBe('True');
    expect(proxy(s)).toMatchObject({ image: 'docker.io/library/proxy:2', ready: true, restartCount: 1 });
    expect(proxy(s).imageID).toMatch(/^docker\.io\/library\/proxy@sha256:[0-9a-f]{64}$/);
  });
});
