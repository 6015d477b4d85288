// Upstream OpenKruise v1.8.3's own WorkloadSpread pod-webhook tables, ported as cases against
// lib/runtime/workloadspread/subset.ts. Source: pkg/util/workloadspread/workloadspread_test.go,
// tests TestWorkloadSpreadMutatingPod (the cases by name, on workloadSpreadDemo and podDemo;
// owner matching and the API writes are the caller's, not these functions'), TestGetPodVersion,
// TestGetParentNameAndOrdinal, TestPatchMetadata and TestInitializedSubsetStatuses (the
// percentage cases, replicas given).
import { describe, expect, it } from '@jest/globals';
import {
  decideSubset,
  initialSubsetStatuses,
  injectSubset,
  ordinalOf,
  podVersion,
  readInjected,
  VERSION_IGNORED,
  type SubsetContext,
} from '../../../../lib/runtime/workloadspread/subset.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const NOW = new Date('2026-11-26T00:00:00Z');
const T = '2026-11-26T00:00:00Z';

function podDemo(): Json {
  return {
    metadata: {
      name: 'test-pod-1',
      namespace: 'default',
      annotations: {},
      ownerReferences: [
        {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'CloneSet',
          name: 'cloneset-test',
          controller: true,
          uid: 'a03e',
        },
      ],
    },
    spec: { containers: [{ name: 'nginx', image: 'nginx:1.15.1' }] },
  };
}

const subsetA = () => ({
  name: 'subset-a',
  requiredNodeSelectorTerm: {
    matchExpressions: [
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['ack'] },
      { key: 'sigma.ali/resource-pool', operator: 'In', values: ['lark'] },
    ],
    matchFields: [
      { key: 'metadata.name', operator: 'In', values: ['i-8vbhlh6rte2w5d1k2sgn', 'i-8vbhlh6rte2vnxlq8ztc'] },
    ],
  },
  preferredNodeSelectorTerms: [
    {
      weight: 5,
      preference: {
        matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['cn-zhangjiakou-a'] }],
      },
    },
  ],
  tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }],
  patch: { metadata: { labels: { subset: 'subset-a' }, annotations: { subset: 'subset-a' } } },
  maxReplicas: 5,
});

function workloadSpreadDemo(missing = 5): Json {
  const status = () => [
    { name: 'subset-a', replicas: 0, missingReplicas: missing, creatingPods: {}, deletingPods: {} },
  ];
  return {
    metadata: { name: 'test-ws', namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cloneset-test' },
      subsets: [subsetA()],
    },
    status: {
      observedGeneration: 10,
      subsetStatuses: status(),
      versionedSubsetStatuses: { [VERSION_IGNORED]: status() },
    },
  };
}

const create: SubsetContext = { operation: 'Create', now: NOW, newUID: () => 'generated' };
const del = (op: 'Delete' | 'Eviction', subset = 'subset-a'): SubsetContext => ({
  operation: op,
  injected: { name: 'test-ws', subset },
  now: NOW,
  newUID: () => 'generated',
});
const versioned = (d: { status: Json }) => d.status.versionedSubsetStatuses[VERSION_IGNORED];

describe('TestWorkloadSpreadMutatingPod', () => {
  it('operation = create, matched workloadSpread, MissingReplicas = 5', () => {
    const ws = workloadSpreadDemo();
    const d = decideSubset(ws, podDemo(), create);
    expect(d).toMatchObject({ changed: true, subset: 'subset-a' });
    expect(versioned(d)[0]).toMatchObject({ missingReplicas: 4, creatingPods: { 'test-pod-1': T } });
    const pod = injectSubset(ws, podDemo(), d.subset);
    expect(pod.metadata.labels).toEqual({ subset: 'subset-a' });
    expect(pod.metadata.annotations).toEqual({
      subset: 'subset-a',
      'apps.kruise.io/matched-workloadspread': '{"name":"test-ws","subset":"subset-a"}',
    });
    expect(pod.spec.tolerations).toEqual(subsetA().tolerations);
    expect(pod.spec.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [subsetA().requiredNodeSelectorTerm] },
        preferredDuringSchedulingIgnoredDuringExecution: subsetA().preferredNodeSelectorTerms,
      },
    });
  });

  it('operation = create, matched workloadSpread, subset-a MissingReplicas = 0, subset-b MissingReplicas = -1', () => {
    const ws = workloadSpreadDemo(0);
    const b = {
      name: 'subset-b',
      requiredNodeSelectorTerm: {
        matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['cn-zhangjiakou-b'] }],
      },
    };
    ws.spec.subsets.push(b);
    versioned(ws).push({ name: 'subset-b', replicas: 0, missingReplicas: -1, creatingPods: {}, deletingPods: {} });
    const d = decideSubset(ws, podDemo(), create);
    expect(d).toMatchObject({ changed: false, subset: 'subset-b' });
    const pod = injectSubset(ws, podDemo(), d.subset);
    expect(pod.metadata.annotations).toEqual({
      'apps.kruise.io/matched-workloadspread': '{"name":"test-ws","subset":"subset-b"}',
    });
    expect(pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      b.requiredNodeSelectorTerm,
    ]);
  });

  it('operation = create, matched workloadSpread, MissingReplicas = 0', () => {
    expect(decideSubset(workloadSpreadDemo(0), podDemo(), create)).toMatchObject({ changed: false, subset: '' });
  });

  it('operation = create, matched workloadSpread, MissingReplicas = -1', () => {
    const d = decideSubset(workloadSpreadDemo(-1), podDemo(), create);
    expect(d).toMatchObject({ changed: false, subset: 'subset-a' });
  });

  it('operation = create, matched workloadSpread, MissingReplicas = 4, creatingPods[test-pod-1]', () => {
    const ws = workloadSpreadDemo(4);
    versioned(ws)[0].creatingPods = { 'test-pod-1': T };
    expect(decideSubset(ws, podDemo(), create)).toMatchObject({ changed: false, subset: 'subset-a' });
  });

  it.each(['Delete', 'Eviction'] as const)('operation = %s, matched workloadSpread, MissingReplicas = 0', (op) => {
    const d = decideSubset(workloadSpreadDemo(0), podDemo(), del(op));
    expect(d).toMatchObject({ changed: true, subset: 'subset-a' });
    expect(versioned(d)[0]).toMatchObject({ missingReplicas: 1, deletingPods: { 'test-pod-1': T } });
  });

  it('operation = delete, not matched workloadSpread subset, MissingReplicas = 0', () => {
    expect(decideSubset(workloadSpreadDemo(0), podDemo(), del('Delete', 'subset-b'))).toMatchObject({ changed: false });
  });

  it('operation = delete, matched workloadSpread, MissingReplicas = 0, DeletingPods[test-pod-1]', () => {
    const ws = workloadSpreadDemo(0);
    versioned(ws)[0].deletingPods = { 'test-pod-1': T };
    expect(decideSubset(ws, podDemo(), del('Delete'))).toMatchObject({ changed: false });
  });

  it('operation = delete, matched workloadSpread, MissingReplicas = -1', () => {
    expect(decideSubset(workloadSpreadDemo(-1), podDemo(), del('Delete'))).toMatchObject({
      changed: false,
      subset: 'subset-a',
    });
  });

  it('operation = create, pod priority class name is patched', () => {
    const ws = workloadSpreadDemo();
    ws.spec.subsets[0] = { name: 'subset-a', maxReplicas: 5, patch: { spec: { priorityClassName: 'low' } } };
    const pod = podDemo();
    pod.spec.priority = 10000;
    pod.spec.priorityClassName = 'high';
    const out = injectSubset(ws, pod, 'subset-a');
    expect(out.spec.priority).toBeUndefined();
    expect(out.spec.priorityClassName).toBe('low');
    expect(out.spec.affinity).toEqual({ nodeAffinity: {} });
  });

  it('TestWorkloadSpreadCreatePodWithoutFullName: a pod with generateName only is booked under a generated UID', () => {
    const pod = podDemo();
    delete pod.metadata.name;
    pod.metadata.generateName = 'test-pod-';
    const d = decideSubset(workloadSpreadDemo(), pod, create);
    expect(d).toMatchObject({ changed: true, subset: 'subset-a', generatedUID: 'generated' });
    expect(versioned(d)[0].creatingPods).toEqual({ generated: T });
    expect(injectSubset(workloadSpreadDemo(), pod, 'subset-a', 'generated').metadata.annotations).toMatchObject({
      'apps.kruise.io/matched-workloadspread': '{"name":"test-ws","subset":"subset-a","uid":"generated"}',
    });
  });
});

describe('TestGetPodVersion', () => {
  const deploymentPod = (labels: Json) => ({
    metadata: {
      labels,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'workload-xyz', controller: true }],
    },
  });
  it.each([
    ['short hash only', { 'controller-revision-hash': '5474f59575' }, '5474f59575'],
    ['long hash only', { 'controller-revision-hash': 'workload-xyz-5474f59575' }, '5474f59575'],
    ['template hash only', { 'pod-template-hash': '5474f59575' }, '5474f59575'],
    [
      'template hash and long hash',
      { 'controller-revision-hash': 'workload-xyz-5474f59575', 'pod-template-hash': '5474f59575' },
      '5474f59575',
    ],
  ])('%s', (_, labels, version) => {
    expect(podVersion(deploymentPod(labels))).toBe(version);
  });
  it('ignored pod (owned by a CloneSet)', () => {
    const pod = podDemo();
    pod.metadata.labels = { 'controller-revision-hash': 'workload-xyz-5474f59575', 'pod-template-hash': 'version-1' };
    expect(podVersion(pod)).toBe(VERSION_IGNORED);
  });
});

describe('TestGetParentNameAndOrdinal', () => {
  it('reads the ordinal of sample-0 .. sample-499', () => {
    for (let i = 0; i < 500; i++) expect(ordinalOf(`sample-${i}`)).toBe(i);
  });
});

describe('TestPatchMetadata', () => {
  it('merges labels and annotations into a pod without them', () => {
    const ws = {
      metadata: { name: 'ws' },
      spec: {
        subsets: [
          { name: 'a', patch: { metadata: { labels: { subset: 'subset-a' }, annotations: { subset: 'subset-a' } } } },
        ],
      },
    };
    const pod = injectSubset(
      ws,
      {
        metadata: { name: 'test-pod-1', namespace: 'default' },
        spec: { containers: [{ name: 'nginx', image: 'nginx:1.15.1' }] },
      },
      'a',
    );
    expect(pod.metadata.labels.subset).toBe('subset-a');
    expect(pod.metadata.annotations.subset).toBe('subset-a');
  });
  it('merges a list patch by its key (strategic merge over a Pod), appending new items', () => {
    const ws = {
      metadata: { name: 'ws' },
      spec: {
        subsets: [
          {
            name: 'a',
            patch: {
              spec: {
                containers: [
                  { name: 'nginx', env: [{ name: 'ZONE', value: 'a' }] },
                  { name: 'extra', image: 'extra:1' },
                ],
              },
            },
          },
        ],
      },
    };
    const pod = injectSubset(ws, podDemo(), 'a');
    const names = pod.spec.containers.map((c: { name: string }) => c.name);
    expect(names).toEqual(['nginx', 'extra']);
    expect(pod.spec.containers[0].image).toBe('nginx:1.15.1');
    expect(pod.spec.containers[0].env).toEqual([{ name: 'ZONE', value: 'a' }]);
  });
  it('refuses a list item without its merge key, naming the key (upstream: 500 on the pod)', () => {
    const ws = {
      metadata: { name: 'ws' },
      spec: { subsets: [{ name: 'a', patch: { spec: { containers: [{ image: 'x' }] } } }] },
    };
    expect(() => injectSubset(ws, podDemo(), 'a')).toThrow(/does not contain declared merge key: name/);
  });
});

describe('TestInitializedSubsetStatuses (percentages of 10 replicas, and absolute numbers)', () => {
  const spread = (max: unknown[]) => ({
    spec: { subsets: max.map((m, i) => ({ name: `subset-${i}`, ...(m === undefined ? {} : { maxReplicas: m }) })) },
  });
  it('20% / 30% / 50% of 10 is 2 / 3 / 5 (rounded up)', () => {
    expect(initialSubsetStatuses(spread(['20%', '30%', '50%']), 10).map((s) => s.missingReplicas)).toEqual([2, 3, 5]);
  });
  it('absolute numbers whatever the replicas, -1 for an unlimited subset', () => {
    expect(initialSubsetStatuses(spread([1, 2, undefined]), 5).map((s) => s.missingReplicas)).toEqual([1, 2, -1]);
  });
  it('34% of 10 rounds up to 4', () => {
    expect(initialSubsetStatuses(spread(['34%']), 10)[0].missingReplicas).toBe(4);
  });
});

describe('readInjected (getInjectWorkloadSpreadFromPod: Go encoding/json into InjectWorkloadSpread)', () => {
  const pod = (a: string) => ({ metadata: { annotations: { 'apps.kruise.io/matched-workloadspread': a } } });
  it('reads keys case-insensitively, the last one winning (upstream tests write {"Name":…,"Subset":…})', () => {
    expect(readInjected(pod('{"Name":"ws","Subset":"a","UID":"u","uid":"v"}'))).toEqual({
      name: 'ws',
      subset: 'a',
      uid: 'v',
    });
  });
  it('reads nothing from a value of another type, a non-object or an absent annotation', () => {
    expect(readInjected(pod('{"name":"ws","subset":3}'))).toBeUndefined();
    expect(readInjected(pod('["ws"]'))).toBeUndefined();
    expect(readInjected(pod('not json'))).toBeUndefined();
    expect(readInjected({ metadata: {} })).toBeUndefined();
    expect(readInjected(pod('{"name":null,"subset":"a","other":1}'))).toEqual({ name: '', subset: 'a' });
  });
});
