import { describe, expect, it } from '@jest/globals';
import { ApiObject, Chart, Duration, Testing } from 'cdk8s';
import { workloadSpreadCrd } from '../../../lib/constructs/crds/runtime-crds.js';
import { IntOrPercent } from '../../../lib/constructs/features/sidecarset-update.js';
import {
  WorkloadSpread,
  WorkloadSpreadProps,
  WorkloadSpreadScheduleStrategy,
  WorkloadSpreadTarget,
} from '../../../lib/constructs/features/workloadspread.js';
import { validateWorkloadSpread } from '../../../lib/runtime/workloadspread/validate.js';
import { validateAgainstCrd } from '../structural-schema.js';
import { Manifest } from './synth.js';

const zone = (z: string) => ({
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }],
});
const threeZones = (): WorkloadSpreadProps => ({
  target: WorkloadSpreadTarget.deployment('web'),
  subsets: [
    { name: 'zone-a', requiredNodeSelectorTerm: zone('a'), maxReplicas: IntOrPercent.count(2) },
    { name: 'zone-b', requiredNodeSelectorTerm: zone('b'), maxReplicas: IntOrPercent.count(2) },
    { name: 'zone-c', requiredNodeSelectorTerm: zone('c'), patch: { metadata: { labels: { zone: 'c' } } } },
  ],
});

function synth(props: Partial<WorkloadSpreadProps> = {}): Manifest {
  const chart = new Chart(Testing.app(), 'test', { namespace: 'apps' });
  new WorkloadSpread(chart, 'spread', { ...threeZones(), ...props });
  const [object, ...rest] = Testing.synth(chart);
  expect(rest).toEqual([]);
  return object;
}

describe('WorkloadSpread construct', () => {
  it('renders what the manager admits, valid against the CRD it serves', () => {
    const ws = synth({
      scheduleStrategy: WorkloadSpreadScheduleStrategy.adaptive({ rescheduleCritical: Duration.seconds(30) }),
    });
    expect(ws.apiVersion).toBe('apps.kruise.io/v1alpha1');
    expect(ws.kind).toBe('WorkloadSpread');
    expect(ws.spec.targetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    expect(ws.spec.subsets.map((s: { maxReplicas?: unknown }) => s.maxReplicas)).toEqual([2, 2, undefined]);
    expect(ws.spec.scheduleStrategy).toEqual({ type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } });
    expect(validateWorkloadSpread(ws)).toEqual([]);
    expect(validateAgainstCrd(workloadSpreadCrd().manifest, ws)).toEqual([]);
  });

  it('renders percentages, a target filter and the kinds upstream spreads', () => {
    const ws = synth({
      target: WorkloadSpreadTarget.cloneSet('web'),
      subsets: [
        { name: 'a', maxReplicas: IntOrPercent.percent(40) },
        { name: 'b', maxReplicas: IntOrPercent.percent(60) },
      ],
      targetSelector: { matchLabels: { tier: 'front' } },
      targetReplicasPaths: ['spec.replicas'],
    });
    expect(ws.spec.subsets.map((s: { maxReplicas?: unknown }) => s.maxReplicas)).toEqual(['40%', '60%']);
    expect(ws.spec.targetFilter).toEqual({
      selector: { matchLabels: { tier: 'front' } },
      replicasPathList: ['spec.replicas'],
    });
    for (const [target, apiVersion, kind] of [
      [WorkloadSpreadTarget.replicaSet('x'), 'apps/v1', 'ReplicaSet'],
      [WorkloadSpreadTarget.job('x'), 'batch/v1', 'Job'],
      [WorkloadSpreadTarget.statefulSet('x'), 'apps/v1', 'StatefulSet'],
      [WorkloadSpreadTarget.advancedStatefulSet('x'), 'apps.kruise.io/v1beta1', 'StatefulSet'],
    ] as const) {
      expect([target.apiVersion, target.kind]).toEqual([apiVersion, kind]);
    }
  });

  it('targets a workload of the chart by its object', () => {
    const chart = new Chart(Testing.app(), 'test');
    const deployment = new ApiObject(chart, 'web', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
    });
    const target = WorkloadSpreadTarget.of(deployment);
    expect([target.apiVersion, target.kind, target.name]).toEqual(['apps/v1', 'Deployment', 'web']);
    const pod = new ApiObject(chart, 'pod', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    expect(() => WorkloadSpreadTarget.of(pod)).toThrow(
      /^target: is not a kind WorkloadSpread spreads \(got "v1\/Pod"\)\. Fix: target a /,
    );
  });

  it("refuses at synth what the manager's webhook refuses, naming the prop, the value and the fix (the contract's rules)", () => {
    expect(() =>
      synth({
        subsets: [
          { name: 'a', maxReplicas: IntOrPercent.count(1) },
          { name: 'b', maxReplicas: IntOrPercent.percent(50) },
        ],
      }),
    ).toThrow(
      /^subsets\[1\]\.maxReplicas: the maxReplicas of all subsets must be of one type .*\(got "50%"\)\. Fix: give every limited subset/,
    );
    expect(() => synth({ subsets: [{ name: 'a' }, { name: 'a' }] })).toThrow(
      /^subsets\[1\]\.name: duplicated subset name "a" \(got "a"\)/,
    );
    expect(() => synth({ subsets: [] })).toThrow(
      /^subsets: at least one subset is required .*Fix: add at least one subset/,
    );
    expect(() =>
      synth({
        subsets: [
          { name: 'a', maxReplicas: IntOrPercent.count(1) },
          { name: 'b', maxReplicas: IntOrPercent.count(1) },
        ],
        scheduleStrategy: WorkloadSpreadScheduleStrategy.adaptive(),
      }),
    ).toThrow(/^scheduleStrategy\.adaptive: the last subset's maxReplicas must not be set under the Adaptive strategy/);
    expect(() => synth({ subsets: [{ name: 'a', tolerations: [{ key: 'k', operator: 'Sometimes' }] }] })).toThrow(
      /^subsets\[0\]\.tolerations\[0\]\.operator: "Sometimes" must be Equal or Exists/,
    );
    expect(() =>
      synth({
        subsets: [{ name: 'a', requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'Near' }] } }],
      }),
    ).toThrow(
      /^subsets\[0\]\.requiredNodeSelectorTerm\.matchExpressions\[0\]\.operator: "Near" is not a valid selector operator/,
    );
    expect(() => IntOrPercent.percent(120)).toThrow(/^IntOrPercent\.percent: must be a whole percentage/);
  });

  it('fails validation when two WorkloadSpreads of the app spread one workload in one namespace', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test', { namespace: 'apps' });
    new WorkloadSpread(chart, 'one', threeZones());
    new WorkloadSpread(chart, 'two', threeZones());
    expect(() => app.synth()).toThrow(/target: WorkloadSpread test\/two and test\/one spread the same workload/);
  });
});
