/**
 * WorkloadSpread on real nodes, served by the runtime flavour: a Deployment spread over the
 * cluster's three zones by a WorkloadSpread rendered by the `WorkloadSpread` construct (zone-a at
 * most 1 pod, zone-b at most 1, zone-c the rest), each subset a required zone term. The real
 * scheduler must place every pod in the zone its subset names; scaling out fills zone-c; the
 * controller's deletion costs (300 / 200 / 100 by subset) make the real ReplicaSet controller's
 * scale-in remove zone-c's pods first.
 *
 * Part of the e2e tier, whose global setup starts the local cluster (4 nodes over zone-a/b/c) and
 * its images: `npm run test:e2e -- test/e2e/workloadspread.test.ts` runs this file alone.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { App, Chart, Testing } from 'cdk8s';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IntOrPercent, WorkloadSpread, WorkloadSpreadTarget } from '../../lib/index.js';
import { RuntimeImageChart, runtimeImageProps } from '../cluster/images/runtime-app.js';
import { pushAppImages, type AppImages } from './support/app-images.js';
import { clusterImages, e2eEnv } from './support/e2e-env.js';
import { installKruise, uninstallKruise } from './support/install.js';
import { describePods, getJson, isReady, kubectl, pods, until, type PodLike } from './support/kube.js';
import { outputFiles, type Synthesized } from './support/synth.js';
import { APP_NAMESPACE, appNamespace, asList, spreadDeployment } from './support/workloads.js';

jest.setTimeout(600_000);

const env = e2eEnv();
const kc = env.kubeconfig;
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
let out: Synthesized;
let images: AppImages;

function synthRuntime(baseImage: string): Synthesized {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-wspread-'));
  const app = new App({ outdir: dir });
  new RuntimeImageChart(app, 'kruise-runtime', runtimeImageProps(env.registry, baseImage));
  app.synth();
  return { dir, files: outputFiles(dir) };
}

/** The WorkloadSpread as a user writes it with the construct. */
function spreadObject(): object {
  const chart = new Chart(Testing.app(), 'spread', { namespace: APP_NAMESPACE });
  const zone = (z: string) => ({
    matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }],
  });
  new WorkloadSpread(chart, 'zones', {
    metadata: { name: 'spread-zones' },
    target: WorkloadSpreadTarget.deployment('spread'),
    subsets: [
      { name: 'zone-a', requiredNodeSelectorTerm: zone('zone-a'), maxReplicas: IntOrPercent.count(1) },
      { name: 'zone-b', requiredNodeSelectorTerm: zone('zone-b'), maxReplicas: IntOrPercent.count(1) },
      {
        name: 'zone-c',
        requiredNodeSelectorTerm: zone('zone-c'),
        patch: { metadata: { labels: { overflow: 'true' } } },
      },
    ],
  });
  return Testing.synth(chart)[0];
}

const subsetOf = (p: PodLike) => JSON.parse(p.metadata.annotations?.[MATCHED] ?? '{}').subset as string | undefined;

async function zonesByNode(): Promise<Map<string, string>> {
  const nodes = await getJson<{ items: Array<{ metadata: { name: string; labels: Record<string, string> } }> }>(kc, [
    'nodes',
  ]);
  return new Map(nodes.items.map((n) => [n.metadata.name, n.metadata.labels['topology.kubernetes.io/zone']]));
}

/** `count` Ready pods of the Deployment, each on a node of the zone its subset names. */
async function spreadPods(count: number): Promise<PodLike[]> {
  const zones = await zonesByNode();
  return until(
    `${count} spread pods Ready in their subsets' zones`,
    async () => {
      const p = (await pods(kc, APP_NAMESPACE, 'app=spread')).filter((x) => !x.metadata.deletionTimestamp);
      return (
        p.length === count &&
        p.every((x) => isReady(x) && subsetOf(x) !== undefined && zones.get(x.spec.nodeName!) === subsetOf(x)) &&
        p
      );
    },
    { timeoutMs: 300_000, describe: () => describePods(kc, APP_NAMESPACE, 'app=spread') },
  );
}

const scale = (replicas: number) =>
  kubectl(kc, ['-n', APP_NAMESPACE, 'scale', 'deployment/spread', `--replicas=${replicas}`]);

beforeAll(async () => {
  images = await pushAppImages(env.registry);
  const built = await clusterImages();
  out = synthRuntime(built.runtime.baseImage);
  await installKruise(kc, out);
  await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(appNamespace()) });
  // The WorkloadSpread first: pods created before it are not spread by the webhook.
  await until('the WorkloadSpread admitted', async () => {
    const r = await kubectl(kc, ['apply', '--server-side', '-f', '-'], {
      input: asList(spreadObject()),
      allowFailure: true,
    });
    return r.code === 0;
  });
}, 900_000);

afterAll(async () => {
  await kubectl(
    kc,
    ['-n', APP_NAMESPACE, 'delete', 'deployment/spread', 'workloadspread/spread-zones', '--ignore-not-found'],
    {
      allowFailure: true,
    },
  );
  await uninstallKruise(kc, out);
}, 600_000);

describe('WorkloadSpread on real nodes (runtime flavour)', () => {
  test('the real scheduler places each pod in the zone its subset names, within each limit', async () => {
    await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(spreadDeployment(images, 3)) });
    const p = await spreadPods(3);
    expect(p.map(subsetOf).sort()).toEqual(['zone-a', 'zone-b', 'zone-c']);
    expect(p.find((x) => subsetOf(x) === 'zone-c')!.metadata.labels?.overflow).toBe('true');
    const ws = await until('the subset statuses', async () => {
      const w = await getJson<{
        status?: { subsetStatuses?: Array<{ name: string; replicas: number; missingReplicas: number }> };
      }>(kc, ['-n', APP_NAMESPACE, 'workloadspread', 'spread-zones']);
      const s = w.status?.subsetStatuses ?? [];
      return s.map((x) => x.replicas).join() === '1,1,1' && s;
    });
    expect(ws.map((s) => s.missingReplicas)).toEqual([0, 0, -1]);
  });

  test('scaling out fills the unlimited subset; deletion costs rank the subsets', async () => {
    await scale(5);
    const p = await spreadPods(5);
    expect(p.map(subsetOf).sort()).toEqual(['zone-a', 'zone-b', 'zone-c', 'zone-c', 'zone-c']);
    const costs = await until('deletion costs on every pod', async () => {
      const now = (await pods(kc, APP_NAMESPACE, 'app=spread')).filter((x) => !x.metadata.deletionTimestamp);
      const c = now.map((x) => [subsetOf(x), x.metadata.annotations?.[COST]] as const);
      return c.length === 5 && c.every(([, v]) => v !== undefined) && c;
    });
    for (const [subset, cost] of costs)
      expect(cost).toBe({ 'zone-a': '300', 'zone-b': '200', 'zone-c': '100' }[subset!]);
  });

  test("scaling in removes the lowest-cost subset's pods first (the real ReplicaSet controller reads the costs)", async () => {
    await scale(2);
    const p = await spreadPods(2);
    expect(p.map(subsetOf).sort()).toEqual(['zone-a', 'zone-b']);
  });
});
