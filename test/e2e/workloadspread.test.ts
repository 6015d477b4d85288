/**
 * WorkloadSpread on real nodes, served by the runtime flavour: a Deployment spread over the
 * cluster's three zones by a WorkloadSpread rendered by the `WorkloadSpread` construct (zone-a at
 * most 1 pod, zone-b at most 1, zone-c the rest), each subset a required zone term. The real
 * scheduler must place every pod in the zone its subset names; scaling out fills zone-c; the
 * controller's deletion costs (300 / 200 / 100 by subset) make the real ReplicaSet controller's
 * scale-in remove zone-c's pods first.
 *
 * Zone loss (the [ha-drills] fault, run with the drills that wait out the node monitor's grace:
 * KRUISE_HA_DRILLS=all or a list naming `ws-zone`): a second Deployment spread by an Adaptive
 * WorkloadSpread, all of whose pods are in one zone's subset; every node of that zone is cut off;
 * the taint-based eviction replaces them, the replacements stay unschedulable in the lost zone,
 * and the WorkloadSpread controller marks that subset unschedulable and deletes them, so the next
 * ones land in the other zones' subset.
 *
 * Part of the e2e tier, whose global setup starts the local cluster (4 nodes over zone-a/b/c) and
 * its images: `npm run test:e2e -- test/e2e/workloadspread.test.ts` runs this file alone.
 */
import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { App, Chart, Testing } from 'cdk8s';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Duration } from 'cdk8s';
import { IntOrPercent, WorkloadSpread, WorkloadSpreadScheduleStrategy, WorkloadSpreadTarget } from '../../lib/index.js';
import { localCluster, setLink } from '../cluster/state.js';
import { RuntimeImageChart, runtimeImageProps } from '../cluster/images/runtime-app.js';
import { pushAppImages, type AppImages } from './support/app-images.js';
import { clusterImages, e2eEnv } from './support/e2e-env.js';
import { installKruise, MANAGER_SELECTOR, NS, uninstallKruise } from './support/install.js';
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

/** Whether KRUISE_HA_DRILLS selects the zone-loss step (as the drills that wait out the node monitor's grace). */
const drills = process.env.KRUISE_HA_DRILLS ?? '';
const zoneLossSelected = drills === 'all' || drills.split(',').some((d) => d.trim() === 'ws-zone');

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
    [
      '-n',
      APP_NAMESPACE,
      'delete',
      'deployment/spread',
      'workloadspread/spread-zones',
      'deployment/adaptive',
      'workloadspread/spread-adaptive',
      '--ignore-not-found',
    ],
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

/** The Adaptive WorkloadSpread of the zone-loss step: `lost` (at most 2) in one zone, `others` the rest. */
function adaptiveSpreadObject(lostZone: string, otherZones: string[]): object {
  const chart = new Chart(Testing.app(), 'adaptive', { namespace: APP_NAMESPACE });
  const inZones = (zones: string[]) => ({
    matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: zones }],
  });
  new WorkloadSpread(chart, 'adaptive', {
    metadata: { name: 'spread-adaptive' },
    target: WorkloadSpreadTarget.deployment('adaptive'),
    subsets: [
      { name: 'lost', requiredNodeSelectorTerm: inZones([lostZone]), maxReplicas: IntOrPercent.count(2) },
      { name: 'others', requiredNodeSelectorTerm: inZones(otherZones) },
    ],
    scheduleStrategy: WorkloadSpreadScheduleStrategy.adaptive({ rescheduleCritical: Duration.seconds(20) }),
  });
  return Testing.synth(chart)[0];
}

/** The spread Deployment renamed `adaptive`: pods evicted 5 s after their node is unreachable (default 300 s). */
function adaptiveDeployment(): object {
  const d = spreadDeployment(images, 2) as {
    metadata: { name: string };
    spec: {
      selector: { matchLabels: Record<string, string> };
      template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
    };
  };
  d.metadata.name = 'adaptive';
  d.spec.selector.matchLabels = { app: 'adaptive' };
  d.spec.template.metadata.labels = { app: 'adaptive' };
  d.spec.template.spec.tolerations = ['node.kubernetes.io/unreachable', 'node.kubernetes.io/not-ready'].map((key) => ({
    key,
    operator: 'Exists',
    effect: 'NoExecute',
    tolerationSeconds: 5,
  }));
  return d;
}

describe('zone loss under an Adaptive WorkloadSpread (drill, KRUISE_HA_DRILLS=all or ws-zone)', () => {
  (zoneLossSelected ? test : test.skip)(
    "a lost zone's pods are replaced, found unschedulable there and moved to the other zones' subset",
    async () => {
      const state = localCluster();
      const zones = [...new Set(state.nodes.map((n) => n.zone))].sort();
      // The zone to lose: one that does not hold every Ready manager replica (the webhook must keep serving).
      const managers = (await pods(kc, NS, MANAGER_SELECTOR)).filter(isReady);
      const zoneOfNode = new Map(state.nodes.map((n) => [n.name, n.zone]));
      const managerZones = managers.map((m) => zoneOfNode.get(m.spec.nodeName!));
      const lostZone = zones.find((z) => managerZones.some((mz) => mz !== z)) ?? zones[0];
      const otherZones = zones.filter((z) => z !== lostZone);
      const lostNodes = state.nodes.filter((n) => n.zone === lostZone);
      const subsetPods = async (subset: string) =>
        (await pods(kc, APP_NAMESPACE, 'app=adaptive')).filter(
          (p) => !p.metadata.deletionTimestamp && subsetOf(p) === subset && isReady(p),
        );

      await until('the Adaptive WorkloadSpread admitted', async () => {
        const r = await kubectl(kc, ['apply', '--server-side', '-f', '-'], {
          input: asList(adaptiveSpreadObject(lostZone, otherZones)),
          allowFailure: true,
        });
        return r.code === 0;
      });
      await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(adaptiveDeployment()) });
      const before = await until(
        `2 pods Ready in ${lostZone} (subset lost)`,
        async () => {
          const p = await subsetPods('lost');
          return p.length === 2 && p.every((x) => zoneOfNode.get(x.spec.nodeName!) === lostZone) && p;
        },
        { timeoutMs: 300_000, describe: () => describePods(kc, APP_NAMESPACE, 'app=adaptive') },
      );

      const cutAt = Date.now();
      lostNodes.forEach((n) => setLink(n.netns, false));
      let moved: PodLike[];
      let notReadyS: number;
      try {
        notReadyS = await until(
          `${lostZone}'s nodes NotReady`,
          async () => {
            const all = await Promise.all(
              lostNodes.map((n) =>
                getJson<{ status: { conditions: Array<{ type: string; status: string }> } }>(kc, ['node', n.name]),
              ),
            );
            return (
              all.every((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status !== 'True')) &&
              (Date.now() - cutAt) / 1000
            );
          },
          { timeoutMs: 180_000 },
        );
        moved = await until(
          "2 pods Ready in the other zones' subset",
          async () => {
            const p = await subsetPods('others');
            return p.length === 2 && p.every((x) => otherZones.includes(zoneOfNode.get(x.spec.nodeName!)!)) && p;
          },
          { timeoutMs: 600_000, intervalMs: 2_000, describe: () => describePods(kc, APP_NAMESPACE, 'app=adaptive') },
        );
        const ws = await getJson<{
          status?: { subsetStatuses?: Array<{ name: string; conditions?: Array<{ type: string; status: string }> }> };
        }>(kc, ['-n', APP_NAMESPACE, 'workloadspread', 'spread-adaptive']);
        const lost = ws.status?.subsetStatuses?.find((s) => s.name === 'lost');
        expect(lost?.conditions?.find((c) => c.type === 'Schedulable')?.status).toBe('False');
      } finally {
        lostNodes.forEach((n) => setLink(n.netns, true));
      }
      const movedS = (Date.now() - cutAt) / 1000;
      process.stderr.write(
        `workloadspread zone loss: ${lostZone} (${lostNodes.map((n) => n.name).join(', ')}) cut off; NotReady after ${notReadyS.toFixed(1)} s; ` +
          `pods ${before.map((p) => p.metadata.name).join(', ')} replaced by ${moved.map((p) => `${p.metadata.name} on ${p.spec.nodeName}`).join(', ')} after ${movedS.toFixed(1)} s\n`,
      );
      expect(new Set(moved.map((p) => p.metadata.name)).size).toBe(2);
      expect(moved.some((p) => before.some((b) => b.metadata.name === p.metadata.name))).toBe(false);
      await until(
        `${lostZone}'s nodes Ready again`,
        async () => {
          const all = await Promise.all(
            lostNodes.map((n) =>
              getJson<{ status: { conditions: Array<{ type: string; status: string }> } }>(kc, ['node', n.name]),
            ),
          );
          return all.every((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));
        },
        { timeoutMs: 300_000 },
      );
    },
    1_200_000,
  );
});
