// WorkloadSpread end to end: the real manager (lib/runtime/main.ts) runs as a child process against
// the envtest API server, installed from the constructs (runtime flavour: the WorkloadSpread CRD,
// vworkloadspread.kb.io, mpod.kb.io, vpod.kb.io and vpodeviction.kb.io), its webhook Service routed
// to it on loopback. There are no kube controllers here: this file plays the Deployment controller
// (a ReplicaSet owned by the Deployment, pods owned by the ReplicaSet, created through the API
// server and so through the admission chain) and the scheduler (nodeName on the pods it places).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { envtest } from '../envtest/state.js';
import { ManagerProcess } from './support/manager-process.js';
import { addEndpoint, installRuntime, kubeConfig, uninstallWebhooks } from './support/runtime-cluster.js';
import { ApiClient } from './support/sidecarset-differential.js';
import { waitFor } from './support/sidecarset.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const kc = kubeConfig();
const api = new ApiClient();
const INSTALL_NS = 'kruise-it-wspread';
const NS = 'wspread-it-apps';
const HASH = '5d8c7f9b6';
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
const WS_PATH = `/apis/apps.kruise.io/v1alpha1/namespaces/${NS}/workloadspreads`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
let m0: ManagerProcess;
let rsUid = '';

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'web:1', env: [{ name: 'MODE', value: 'prod' }] }] },
};

async function ok(method: string, path: string, body?: unknown, contentType?: string): Promise<Json> {
  const res = await api.call(method, path, body, contentType);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
  return res.body;
}

const zoneTerm = (zone: string) => ({
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }],
});

const spread = {
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'web-spread', namespace: NS },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    subsets: [
      {
        name: 'zone-a',
        requiredNodeSelectorTerm: zoneTerm('zone-a'),
        maxReplicas: 2,
        patch: { metadata: { labels: { zone: 'a' } } },
      },
      {
        name: 'zone-b',
        requiredNodeSelectorTerm: zoneTerm('zone-b'),
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
        maxReplicas: 2,
        patch: { metadata: { labels: { zone: 'b' } } },
      },
      {
        name: 'zone-c',
        requiredNodeSelectorTerm: zoneTerm('zone-c'),
        // A list patch, merged by key into the pod (upstream's strategic merge).
        patch: { spec: { containers: [{ name: 'app', env: [{ name: 'ZONE', value: 'c' }] }] } },
      },
    ],
  },
};

/** A pod of the ReplicaSet, as the ReplicaSet controller would create it. */
const podOf = (name: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name,
    labels: { app: 'web', 'pod-template-hash': HASH },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${HASH}`, uid: rsUid, controller: true }],
  },
  spec: structuredClone(template.spec),
});

const subsetOf = (pod: Json) => JSON.parse(pod.metadata.annotations?.[MATCHED] ?? '{}').subset;
const getWs = () => ok('GET', `${WS_PATH}/web-spread`);
const statusOf = (ws: Json) =>
  (ws.status?.subsetStatuses ?? []).map((s: Json) => [
    s.name,
    s.replicas,
    s.missingReplicas,
    Object.keys(s.creatingPods ?? {}).length,
  ]);

beforeAll(async () => {
  await installRuntime(kc, INSTALL_NS);
  await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  for (const zone of ['zone-a', 'zone-b', 'zone-c'])
    await ok('POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `wspread-${zone}`, labels: { 'topology.kubernetes.io/zone': zone } },
    });
  const deployment = await ok('POST', `/apis/apps/v1/namespaces/${NS}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web' },
    spec: { replicas: 6, selector: { matchLabels: { app: 'web' } }, template },
  });
  // The ReplicaSet of the Deployment's template, as its controller would write it.
  const rs = await ok('POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `web-${HASH}`,
      labels: { app: 'web', 'pod-template-hash': HASH },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: deployment.metadata.uid, controller: true },
      ],
    },
    spec: {
      replicas: 6,
      selector: { matchLabels: { app: 'web', 'pod-template-hash': HASH } },
      template: { ...deployment.spec.template, metadata: { labels: { app: 'web', 'pod-template-hash': HASH } } },
    },
  });
  rsUid = rs.metadata.uid;
  m0 = await ManagerProcess.start({ name: 'ws-m0', kubeconfigPath: envtest().kubeconfigPath, namespace: INSTALL_NS });
  await m0.waitReady();
  await waitFor('m0 to lead', async () => ((await m0.leading()) ? true : undefined));
  await addEndpoint(kc, INSTALL_NS, m0.name, m0.ports.webhook);
}, 180_000);

afterAll(async () => {
  await m0?.stop();
  await uninstallWebhooks(kc);
  await api.call('DELETE', PODS);
  await api.call('DELETE', `${WS_PATH}/web-spread`);
  for (const zone of ['zone-a', 'zone-b', 'zone-c']) await api.call('DELETE', `/api/v1/nodes/wspread-${zone}`);
  await api.call('DELETE', `/api/v1/namespaces/${NS}`);
  api.close();
}, 60_000);

describe('WorkloadSpread served by the runtime', () => {
  it('refuses an invalid WorkloadSpread at write, naming the field (its own rules and the patch merged into the template)', async () => {
    const bad = structuredClone(spread);
    bad.metadata.name = 'bad';
    (bad.spec.subsets[2] as Json).patch = { spec: { containers: [{ image: 'no-name:1' }] } };
    (bad.spec.subsets[0] as Json).maxReplicas = -1;
    const res = await api.call('POST', WS_PATH, bad);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/admission webhook "vworkloadspread.kb.io" denied the request/);
    expect(res.body.message).toMatch(/spec\.subsets\[0\]\.maxReplicas/);
  }, 90_000);

  it('spreads pods created through the API server over the subsets in order, injecting each subset', async () => {
    await ok('POST', WS_PATH, spread);
    // The webhook answers from the cache the controller reads too (one process): once the controller has
    // written a status, the webhook sees the WorkloadSpread. (A dry-run create is never spread, as upstream.)
    await waitFor('the controller to see the WorkloadSpread', async () =>
      (await getWs()).status?.subsetStatuses?.length === 3 ? true : undefined,
    );
    const dry = await ok('POST', `${PODS}?dryRun=All`, podOf('probe'));
    expect(dry.metadata.annotations?.[MATCHED]).toBeUndefined();
    const pods: Json[] = [];
    for (let i = 0; i < 6; i++) pods.push(await ok('POST', PODS, podOf(`web-${HASH}-p${i}`)));
    expect(pods.map(subsetOf)).toEqual(['zone-a', 'zone-a', 'zone-b', 'zone-b', 'zone-c', 'zone-c']);
    for (const pod of pods) {
      const zone = subsetOf(pod);
      const terms = pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
      expect(terms).toEqual([zoneTerm(zone)]);
      expect(JSON.parse(pod.metadata.annotations[MATCHED]).name).toBe('web-spread');
    }
    expect(pods[0].metadata.labels.zone).toBe('a');
    expect(pods[2].spec.tolerations).toEqual(
      expect.arrayContaining([{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }]),
    );
    // zone-c's list patch merged by name into the app container, its own env kept.
    expect(pods[4].spec.containers[0].env).toEqual([
      { name: 'ZONE', value: 'c' },
      { name: 'MODE', value: 'prod' },
    ]);
  }, 90_000);

  it('keeps status.subsetStatuses: replicas and missing replicas per subset, the webhook bookings settled', async () => {
    const ws = await waitFor(
      'the controller to count the pods',
      async () => {
        const w = await getWs();
        const s = JSON.stringify(statusOf(w));
        return s ===
          JSON.stringify([
            ['zone-a', 2, 0, 0],
            ['zone-b', 2, 0, 0],
            ['zone-c', 2, -1, 0],
          ])
          ? w
          : undefined;
      },
      60_000,
    );
    expect(ws.status.observedGeneration).toBe(ws.metadata.generation);
    expect(Object.keys(ws.status.versionedSubsetStatuses ?? {})).toEqual([HASH]);
  }, 90_000);

  it('sets pod deletion costs so that a scale-in removes pods from the last subsets first', async () => {
    // The scheduler's part: bind each pod to its zone's node.
    const pods = (await ok('GET', PODS)).items as Json[];
    for (const pod of pods)
      await ok('POST', `${PODS}/${pod.metadata.name}/binding`, {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: pod.metadata.name },
        target: { apiVersion: 'v1', kind: 'Node', name: `wspread-${subsetOf(pod)}` },
      });
    const costs = await waitFor(
      'deletion costs on every pod',
      async () => {
        const items = (await ok('GET', PODS)).items as Json[];
        const byZone = items.map((p) => [subsetOf(p), p.metadata.annotations?.[COST]]);
        return byZone.every(([, c]) => c !== undefined) ? byZone : undefined;
      },
      60_000,
    );
    const costOf = (zone: string) => new Set(costs.filter(([z]) => z === zone).map(([, c]) => c));
    expect([...costOf('zone-a')]).toEqual(['300']);
    expect([...costOf('zone-b')]).toEqual(['200']);
    expect([...costOf('zone-c')]).toEqual(['100']);
  }, 90_000);

  it('books deletions and evictions so the next pods refill the subsets they left', async () => {
    const pods = (await ok('GET', PODS)).items as Json[];
    const a = pods.find((p) => subsetOf(p) === 'zone-a')!;
    const b = pods.find((p) => subsetOf(p) === 'zone-b')!;
    await ok('DELETE', `${PODS}/${a.metadata.name}`);
    await ok('POST', `${PODS}/${b.metadata.name}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: b.metadata.name, namespace: NS },
    });
    const refill = [await ok('POST', PODS, podOf(`web-${HASH}-r0`)), await ok('POST', PODS, podOf(`web-${HASH}-r1`))];
    expect(refill.map(subsetOf).sort()).toEqual(['zone-a', 'zone-b']);
    await waitFor(
      'the counts after the refill',
      async () => {
        const s = JSON.stringify(statusOf(await getWs()));
        return s ===
          JSON.stringify([
            ['zone-a', 2, 0, 0],
            ['zone-b', 2, 0, 0],
            ['zone-c', 2, -1, 0],
          ])
          ? true
          : undefined;
      },
      60_000,
    );
  }, 90_000);

  it('refuses a second WorkloadSpread on the same workload', async () => {
    const twin = structuredClone(spread);
    twin.metadata.name = 'twin';
    const res = await api.call('POST', WS_PATH, twin);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/web-spread/);
  }, 90_000);

  it("records upstream's CreatePodFailed event on the WorkloadSpread when a booked pod never appears (30 s)", async () => {
    // A zone-a pod is deleted, so zone-a has room (deleted pods stay here, terminating: no kubelet
    // confirms them); then a pod named as a zone-b one: the webhook books it in zone-a (creatingPods
    // of its version; an unlimited subset books none), then the API server refuses it (409). Its
    // booking expires 30 s later, with upstream's event.
    const pods = ((await ok('GET', PODS)).items as Json[]).filter((p) => !p.metadata.deletionTimestamp);
    await ok('DELETE', `${PODS}/${pods.find((p) => subsetOf(p) === 'zone-a')!.metadata.name}`);
    await waitFor('zone-a to have room', async () =>
      (await getWs()).status.subsetStatuses[0].missingReplicas === 1 ? true : undefined,
    );
    const taken = pods.find((p) => subsetOf(p) === 'zone-b')!.metadata.name;
    const res = await api.call('POST', PODS, podOf(taken));
    expect(res.status).toBe(409);
    expect(Object.keys((await getWs()).status.versionedSubsetStatuses[HASH][0].creatingPods ?? {})).toEqual([taken]);
    const event = await waitFor(
      'the CreatePodFailed event',
      async () =>
        ((await ok('GET', `/api/v1/namespaces/${NS}/events`, undefined)).items as Json[]).find(
          (e) => e.reason === 'CreatePodFailed' && e.involvedObject?.name === 'web-spread',
        ),
      60_000,
      1_000,
    );
    expect(event).toMatchObject({
      type: 'Warning',
      message: `Pod ${NS}/${taken} was expected to be created but it wasn't`,
      involvedObject: { kind: 'WorkloadSpread', apiVersion: 'apps.kruise.io/v1alpha1', namespace: NS },
      source: { component: 'workloadspread-controller' },
      reportingComponent: 'workloadspread-controller',
      count: 1,
    });
    expect(statusOf(await getWs())).toEqual([
      ['zone-a', 1, 1, 0],
      ['zone-b', 2, 0, 0],
      ['zone-c', 2, -1, 0],
    ]);
  }, 90_000);
});

describe('WorkloadSpread on a custom workload listed in kruise-configuration', () => {
  const GAMES = 'wspread-it-games';
  const GROUP = 'game.example.io';
  const GSS = `/apis/${GROUP}/v1alpha1/namespaces/${GAMES}/gameserversets`;
  const GAME_WS = `/apis/apps.kruise.io/v1alpha1/namespaces/${GAMES}/workloadspreads`;
  const GAME_PODS = `/api/v1/namespaces/${GAMES}/pods`;
  const CONFIG = `/api/v1/namespaces/${INSTALL_NS}/configmaps`;
  const CRD = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions`;
  let gssUid = '';
  const gameSpread = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'gss-spread', namespace: GAMES },
    spec: {
      targetRef: { apiVersion: `${GROUP}/v1alpha1`, kind: 'GameServerSet', name: 'gss' },
      subsets: [
        { name: 'zone-a', requiredNodeSelectorTerm: zoneTerm('zone-a'), maxReplicas: '50%' },
        { name: 'zone-b', requiredNodeSelectorTerm: zoneTerm('zone-b') },
      ],
    },
  };
  const gamePod = (name: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { game: 'gss' },
      ownerReferences: [
        { apiVersion: `${GROUP}/v1alpha1`, kind: 'GameServerSet', name: 'gss', uid: gssUid, controller: true },
      ],
    },
    spec: { containers: [{ name: 'game', image: 'game:1' }] },
  });

  beforeAll(async () => {
    // A custom workload kind with a scale subresource, as OpenKruise Game's GameServerSet.
    await ok('POST', CRD, {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `gameserversets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: {
          plural: 'gameserversets',
          singular: 'gameserverset',
          kind: 'GameServerSet',
          listKind: 'GameServerSetList',
        },
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            subresources: {
              status: {},
              scale: {
                specReplicasPath: '.spec.replicas',
                statusReplicasPath: '.status.replicas',
                labelSelectorPath: '.status.selector',
              },
            },
          },
        ],
      },
    });
    await waitFor('the GameServerSet CRD to be served', async () =>
      (await api.call('GET', `/apis/${GROUP}/v1alpha1`)).status === 200 ? true : undefined,
    );
    await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GAMES } });
    const gss = await ok('POST', GSS, {
      apiVersion: `${GROUP}/v1alpha1`,
      kind: 'GameServerSet',
      metadata: { name: 'gss' },
      spec: { replicas: 4 },
    });
    gssUid = gss.metadata.uid;
  }, 60_000);

  afterAll(async () => {
    await api.call('DELETE', `${CONFIG}/kruise-configuration`);
    await api.call('DELETE', GAME_PODS);
    await api.call('DELETE', `${GAME_WS}/gss-spread`);
    await api.call('DELETE', `/api/v1/namespaces/${GAMES}`);
    await api.call('DELETE', `${CRD}/gameserversets.${GROUP}`);
  }, 60_000);

  it('refuses the kind until the whitelist lists it, naming the ConfigMap key', async () => {
    const res = await api.call('POST', GAME_WS, gameSpread);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(/spec\.targetRef: .*WorkloadSpread_Watch_Custom_Workload_WhiteList/);
  }, 30_000);

  it('admits it once listed, spreads the pods it owns by the percentage of its replicasPath, and keeps the status from its scale subresource', async () => {
    await ok('POST', CONFIG, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kruise-configuration' },
      data: {
        WorkloadSpread_Watch_Custom_Workload_WhiteList: JSON.stringify({
          workloads: [{ Group: GROUP, Version: 'v1alpha1', Kind: 'GameServerSet', replicasPath: 'spec.replicas' }],
        }),
      },
    });
    // The manager's cache of the ConfigMap catches up within moments.
    await waitFor('the WorkloadSpread to be admitted', async () => {
      const res = await api.call('POST', GAME_WS, gameSpread);
      return res.status === 201 ? true : undefined;
    });
    // 50% of spec.replicas (4) is 2 in zone-a; the rest go to zone-b.
    const placed: string[] = [];
    for (let i = 0; i < 3; i++) placed.push(subsetOf(await ok('POST', GAME_PODS, gamePod(`gss-${i}`))));
    expect(placed).toEqual(['zone-a', 'zone-a', 'zone-b']);
    const pod = await ok('GET', `${GAME_PODS}/gss-2`);
    expect(JSON.stringify(pod.spec.affinity)).toContain('zone-b');
    await waitFor('the status from the scale subresource', async () => {
      const ws = await ok('GET', `${GAME_WS}/gss-spread`);
      return JSON.stringify(statusOf(ws)) ===
        JSON.stringify([
          ['zone-a', 2, 0, 0],
          ['zone-b', 1, -1, 0],
        ])
        ? true
        : undefined;
    });
  }, 60_000);
});
