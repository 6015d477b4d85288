// Upstream OpenKruise v1.8.3's own WorkloadSpread validation tables, ported as cases against the
// contract rules (lib/contract/workloadspread.ts) the runtime and the construct share. Source:
// pkg/webhook/workloadspread/validating/workloadspread_validation_test.go, tests
// TestValidateWorkloadSpreadCreate (success cases 0-6, error cases by name),
// TestValidateWorkloadSpreadTargetRefUpdate and TestValidateWorkloadSpreadConflict. Upstream's
// field `preferredSchedulingTerms` is named here as the JSON field, `preferredNodeSelectorTerms`.
// The patch-against-template cases (Test_validateWorkloadSpreadSubsets) need the workload and are
// not a contract rule.
import { describe, expect, it } from '@jest/globals';
import {
  workloadSpreadConflict,
  workloadSpreadSpecProblems,
  workloadSpreadTargetChanged,
} from '../../../lib/contract/workloadspread.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const zone = (operator: string, value: string) => ({
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator, values: [value] }],
});
const ecs = [{ key: 'ecs', operator: 'Exists' }];
const annotate = (subset: string) => ({ metadata: { annotations: { subset } } });
const patchResource = {
  spec: { containers: [{ name: 'main', resources: { limits: { cpu: '2', memory: '8000Mi' } } }] },
};

/** workloadSpreadDemo of the upstream test file. */
function demo(): Json {
  return {
    metadata: { name: 'workloadSpread', namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'demo' },
      subsets: [
        {
          name: 'subset-a',
          maxReplicas: 50,
          requiredNodeSelectorTerm: zone('In', 'zone-a'),
          tolerations: ecs,
          patch: annotate('subset-a'),
        },
        {
          name: 'subset-b',
          maxReplicas: 50,
          requiredNodeSelectorTerm: zone('In', 'zone-b'),
          tolerations: ecs,
          patch: annotate('subset-b'),
        },
        { name: 'subset-c', requiredNodeSelectorTerm: zone('In', 'zone-c') },
      ],
    },
  };
}

const fields = (spec: Json) => workloadSpreadSpecProblems(spec).map(([f]) => f);

describe('TestValidateWorkloadSpreadCreate: success cases', () => {
  const two = (a: Json, b: Json) => [
    { name: 'subset-a', patch: annotate('subset-a'), ...a },
    { name: 'subset-b', patch: annotate('subset-b'), ...b },
  ];
  const cases: Array<[string, Json]> = [
    [
      'success case 0: CloneSet, Fixed, NotIn terms',
      {
        targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'test' },
        subsets: two(
          { maxReplicas: 50, requiredNodeSelectorTerm: zone('NotIn', 'zone-a'), tolerations: ecs },
          { requiredNodeSelectorTerm: zone('NotIn', 'zone-a'), tolerations: ecs },
        ),
        scheduleStrategy: { type: 'Fixed' },
      },
    ],
    [
      'success case 1: apps/v1 StatefulSet',
      {
        targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'demo' },
        subsets: two({ maxReplicas: 50 }, {}),
      },
    ],
    [
      'success case 2: apps.kruise.io/v1alpha1 StatefulSet',
      {
        targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'StatefulSet', name: 'demo' },
        subsets: two({ maxReplicas: 50 }, {}),
      },
    ],
    [
      'success case 3: apps.kruise.io/v1beta1 StatefulSet',
      {
        targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'demo' },
        subsets: two({ maxReplicas: 50 }, {}),
      },
    ],
    [
      'success case 4: Deployment, Adaptive 30 s, preferred terms, resource patches',
      {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'test' },
        subsets: [
          {
            name: 'subset-a',
            maxReplicas: 50,
            preferredNodeSelectorTerms: [{ weight: 20, preference: zone('NotIn', 'zone-a') }],
            tolerations: ecs,
            patch: patchResource,
          },
          {
            name: 'subset-b',
            requiredNodeSelectorTerm: zone('In', 'zone-b'),
            tolerations: ecs,
            patch: patchResource,
          },
        ],
        scheduleStrategy: {
          type: 'Adaptive',
          adaptive: { rescheduleCriticalSeconds: 30, disableSimulationSchedule: true },
        },
      },
    ],
    [
      'success case 5: Job, 50% + 50%',
      {
        targetRef: { apiVersion: 'batch/v1', kind: 'Job', name: 'test' },
        subsets: two(
          { maxReplicas: '50%', requiredNodeSelectorTerm: zone('In', 'zone-a'), tolerations: ecs },
          { maxReplicas: '50%', requiredNodeSelectorTerm: zone('In', 'zone-b'), tolerations: ecs },
        ),
      },
    ],
    [
      'success case 6: Job, 50% + 50% + the rest, Adaptive',
      {
        targetRef: { apiVersion: 'batch/v1', kind: 'Job', name: 'test' },
        subsets: [
          ...two(
            { maxReplicas: '50%', requiredNodeSelectorTerm: zone('In', 'zone-a'), tolerations: ecs },
            { maxReplicas: '50%', requiredNodeSelectorTerm: zone('In', 'zone-b'), tolerations: ecs },
          ),
          { name: 'subset-c', tolerations: ecs, patch: annotate('subset-c') },
        ],
        scheduleStrategy: {
          type: 'Adaptive',
          adaptive: { rescheduleCriticalSeconds: 30, disableSimulationSchedule: true },
        },
      },
    ],
  ];
  it.each(cases)('%s', (_, spec) => {
    expect(workloadSpreadSpecProblems(spec)).toEqual([]);
  });
  it('the demo itself', () => {
    expect(workloadSpreadSpecProblems(demo().spec)).toEqual([]);
  });
});

describe('TestValidateWorkloadSpreadCreate: error cases (name, and the field upstream reports)', () => {
  const adaptive = (seconds: number, type = 'Adaptive') => ({
    type,
    adaptive: { rescheduleCriticalSeconds: seconds, disableSimulationSchedule: true },
  });
  const existsWithValue = { matchExpressions: [{ key: 'key', operator: 'Exists', values: ['unexpected'] }] };
  const cases: Array<[string, (s: Json) => void, string]> = [
    ['targetRef is nil', (s) => delete s.targetRef, 'spec.targetRef'],
    ["targetRef's APIVersion is nil", (s) => (s.targetRef.apiVersion = ''), 'spec.targetRef'],
    // Upstream's "Kind is nil" and "Name is nil" cases clear the APIVersion (as their code has it); ported as named.
    ["targetRef's Kind is nil", (s) => (s.targetRef.kind = ''), 'spec.targetRef'],
    ["targetRef's Name is nil", (s) => (s.targetRef.name = ''), 'spec.targetRef'],
    ['subsets is nil', (s) => delete s.subsets, 'spec.subsets'],
    [
      'statefulset group error',
      (s) => (s.targetRef = { apiVersion: 'rollouts.kruise.io/v2', kind: 'StatefulSet', name: 'demo' }),
      'spec.targetRef.apiVersion',
    ],
    [
      'statefulset subset is percentage',
      (s) => {
        s.targetRef = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'demo' };
        s.subsets[0].maxReplicas = '50%';
      },
      'spec.subsets[0].maxReplicas',
    ],
    ["subset[0]'name is empty", (s) => (s.subsets[0].name = ''), 'spec.subsets[0].name'],
    ["subset[1]'name is empty", (s) => (s.subsets[1].name = ''), 'spec.subsets[1].name'],
    [
      "subset[1]'name is conflict with subsets[0]",
      (s) => (s.subsets[0].name = s.subsets[1].name),
      'spec.subsets[1].name',
    ],
    [
      'requiredNodeSelectorTerm are not valid',
      (s) => (s.subsets[0].requiredNodeSelectorTerm = existsWithValue),
      'spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values',
    ],
    [
      "preferredSchedulingTerms' weight are not valid",
      (s) => (s.subsets[0].preferredNodeSelectorTerms = [{ weight: 101, preference: existsWithValue }]),
      'spec.subsets[0].preferredNodeSelectorTerms[0].weight',
    ],
    [
      'preferredSchedulingTerms are not valid',
      (s) => (s.subsets[0].preferredNodeSelectorTerms = [{ weight: 50, preference: existsWithValue }]),
      'spec.subsets[0].preferredNodeSelectorTerms[0].preference.matchExpressions[0].values',
    ],
    ["subset-a's maxReplicas < 0", (s) => (s.subsets[0].maxReplicas = -100), 'spec.subsets[0].maxReplicas'],
    ["subset-a's maxReplicas = 0.2%", (s) => (s.subsets[0].maxReplicas = '0.2%'), 'spec.subsets[0].maxReplicas'],
    ["subset-a's maxReplicas = 50.2%", (s) => (s.subsets[0].maxReplicas = '50.2%'), 'spec.subsets[0].maxReplicas'],
    ["subset-a's maxReplicas = 101%", (s) => (s.subsets[0].maxReplicas = '101%'), 'spec.subsets[0].maxReplicas'],
    [
      "subset-a's maxReplicas = 40%, subset-b's maxReplicas = 70%",
      (s) => {
        s.subsets[0].maxReplicas = '40%';
        s.subsets[1].maxReplicas = '70%';
      },
      'spec.subsets[1].maxReplicas',
    ],
    [
      "subset-a's maxReplicas = 40%, subset-b's maxReplicas = 20%,, subset-c's maxReplicas = 20%",
      (s) => {
        s.subsets[0].maxReplicas = '40%';
        s.subsets[1].maxReplicas = '20%';
        s.subsets[2].maxReplicas = '20%';
      },
      'spec.subsets[0].maxReplicas',
    ],
    ["subset-a's maxReplicas = -1%", (s) => (s.subsets[0].maxReplicas = '-1%'), 'spec.subsets[0].maxReplicas'],
    [
      "scheduleStrategy's type is not valid",
      (s) => (s.scheduleStrategy = { type: 'random' }),
      'spec.scheduleStrategy.type',
    ],
    [
      'rescheduleCriticalSeconds = -1',
      (s) => (s.scheduleStrategy = adaptive(-1)),
      'spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds',
    ],
    [
      'rescheduleCriticalSeconds < 0',
      (s) => (s.scheduleStrategy = adaptive(-20)),
      'spec.scheduleStrategy.adaptive.rescheduleCriticalSeconds',
    ],
    [
      "scheduleStrategy's type is not matched",
      (s) => (s.scheduleStrategy = adaptive(20, 'Fixed')),
      'spec.scheduleStrategy.type',
    ],
    [
      "the last subset's maxReplicas is not nil when using adaptive",
      (s) => {
        s.scheduleStrategy = adaptive(20);
        s.subsets[2].maxReplicas = 50;
      },
      'spec.scheduleStrategy.adaptive',
    ],
  ];
  it.each(cases)('%s', (_, change, field) => {
    const ws = demo();
    change(ws.spec);
    expect(fields(ws.spec)).toContain(field);
  });
});

describe('TestValidateWorkloadSpreadTargetRefUpdate', () => {
  const old = demo().spec.targetRef;
  it.each([
    ['update group', { ...old, apiVersion: 'apps/v1' }],
    ['update kind', { ...old, kind: 'Deployment' }],
    ['update name', { ...old, name: 'deploy-1' }],
  ])('%s', (_, targetRef) => {
    expect(workloadSpreadTargetChanged(targetRef, old)).toBe(true);
  });
  it('a new version of the same group is no change', () => {
    expect(workloadSpreadTargetChanged({ ...old, apiVersion: 'apps.kruise.io/v1beta1' }, old)).toBe(false);
  });
});

describe('TestValidateWorkloadSpreadConflict', () => {
  const others = ['test1', 'test2', 'test3'].map((name, i) => ({
    name: `ws-${i + 1}`,
    targetRef: { ...demo().spec.targetRef, name },
  }));
  it.each<[string, Json]>([
    ['group is different', { ...demo().spec.targetRef, apiVersion: 'apps/v1' }],
    ['kind is different', { ...demo().spec.targetRef, kind: 'Deployment' }],
    ['name is different', { ...demo().spec.targetRef, name: 'test' }],
  ])('success: %s', (_, targetRef) => {
    expect(workloadSpreadConflict({ name: 'workloadSpread', targetRef }, others)).toBeUndefined();
  });
  it('error: the same workload as ws-1', () => {
    expect(workloadSpreadConflict({ name: 'workloadSpread', targetRef: others[0].targetRef }, others)).toBe('ws-1');
  });
});
