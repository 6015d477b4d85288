/**
 * How the WorkloadSpread controller puts pods into subsets = upstream v1.9.1's own code, run
 * in-process (tools/upstream/sidecarset-oracle `wsgroup`: pkg/controller/workloadspread
 * groupPodBySubset on a fake API holding the pods and nodes, which it patches). Generated nodes
 * (zone and pool labels, numeric labels for Gt/Lt, taints of every effect), subsets (required terms
 * with every operator and matchFields, preferred terms, tolerations, limits, metadata and spec
 * patches), pods annotated for this or another WorkloadSpread or not at all, on a node, an unknown
 * node or none, with their own node affinity and tolerations. The pods of each subset and every
 * pod's labels and annotations afterwards must be upstream's.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { deepStrictEqual } from 'node:assert';
import { FAKE_SUBSET } from '../../lib/runtime/workloadspread/deletion-cost.js';
import { groupPodsBySubset } from '../../lib/runtime/workloadspread/match.js';
import { upstreamWorkloadSpreadGroupOracle } from './support/sidecarset-oracle.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const ZONES = ['zone-a', 'zone-b', 'zone-c'];
const nodeArb = fc.record({
  zone: fc.constantFrom(...ZONES),
  pool: fc.constantFrom(undefined, 'spot', 'ondemand'),
  cores: fc.constantFrom(undefined, '4', '16', 'many'),
  taint: fc.constantFrom(undefined, 'NoSchedule', 'PreferNoSchedule', 'NoExecute'),
});
const requirementArb = fc.oneof(
  fc.record({
    key: fc.constant('topology.kubernetes.io/zone'),
    operator: fc.constantFrom('In', 'NotIn'),
    values: fc.subarray(ZONES, { minLength: 1 }),
  }),
  fc.record({ key: fc.constant('pool'), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
  fc.record({
    key: fc.constant('cores'),
    operator: fc.constantFrom('Gt', 'Lt'),
    values: fc.constantFrom(['8'], ['x']),
  }),
  fc.record({
    key: fc.constant('pool'),
    operator: fc.constant('In'),
    values: fc.constantFrom(['spot'], ['bad value!']),
  }),
);
const termArb = fc.record(
  {
    matchExpressions: fc.array(requirementArb, { maxLength: 2 }),
    matchFields: fc.constantFrom(
      undefined,
      [{ key: 'metadata.name', operator: 'In', values: ['node-0'] }],
      [{ key: 'metadata.name', operator: 'NotIn', values: ['node-1'] }],
      [{ key: 'spec.unschedulable', operator: 'In', values: [''] }],
    ),
  },
  { requiredKeys: [] },
);
const subsetArb = fc.record(
  {
    requiredNodeSelectorTerm: termArb,
    // Preferred terms with valid values only: upstream's controller panics on one it cannot parse.
    preferredNodeSelectorTerms: fc.array(
      fc.record({
        weight: fc.integer({ min: 1, max: 100 }),
        preference: fc.record({
          matchExpressions: fc.constant([{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-b'] }]),
        }),
      }),
      { maxLength: 1 },
    ),
    tolerations: fc.constantFrom(
      [{ key: 'dedicated', operator: 'Exists' }],
      [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
      [{ operator: 'Exists' }],
    ),
    maxReplicas: fc.constantFrom(0, 1, 3, '50%', 'x%'),
    patch: fc.constantFrom(
      { metadata: { labels: { tier: 'a' } } },
      { metadata: { labels: { app: 'web' }, annotations: { note: 'x' } } },
      { metadata: { labels: {} } },
      { spec: { priorityClassName: 'high' } },
      { spec: { schedulerName: 'default-scheduler' } },
    ),
  },
  { requiredKeys: [] },
);
const podArb = fc.record({
  annotation: fc.constantFrom(undefined, 'mine', 'mine-gone-subset', 'other-ws', 'empty-subset', 'garbage'),
  node: fc.constantFrom(undefined, 'node-0', 'node-1', 'node-2', 'node-9'),
  tier: fc.boolean(),
  priorityClass: fc.boolean(),
  ownAffinity: fc.boolean(),
  tolerates: fc.boolean(),
});
const caseArb = fc.record({
  nodes: fc.array(nodeArb, { minLength: 3, maxLength: 3 }),
  subsets: fc.array(subsetArb, { minLength: 1, maxLength: 3 }),
  pods: fc.array(podArb, { minLength: 1, maxLength: 6 }),
  replicas: fc.integer({ min: 0, max: 6 }),
  ignorePatch: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
});

function build(g: typeof caseArb extends fc.Arbitrary<infer T> ? T : never, i: number) {
  const nodes = g.nodes.map((n, k) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: `node-${k}`,
      labels: {
        'topology.kubernetes.io/zone': n.zone,
        ...(n.pool ? { pool: n.pool } : {}),
        ...(n.cores ? { cores: n.cores } : {}),
      },
    },
    ...(n.taint ? { spec: { taints: [{ key: 'dedicated', value: 'web', effect: n.taint }] } } : {}),
  }));
  const subsets = g.subsets.map((s, k) => ({ name: `s${k}`, ...s }));
  const ws = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: {
      name: 'ws',
      namespace: 'apps',
      ...(g.ignorePatch
        ? { annotations: { 'workloadspread.kruise.io/ignore-patch-existing-pods-metadata': 'True' } }
        : {}),
    },
    spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
  };
  const annotationOf: Record<string, string | undefined> = {
    mine: JSON.stringify({ name: 'ws', subset: 's0' }),
    'mine-gone-subset': JSON.stringify({ name: 'ws', subset: 'gone' }),
    'other-ws': JSON.stringify({ name: 'other', subset: 's0' }),
    'empty-subset': JSON.stringify({ name: 'ws', subset: '' }),
    garbage: '{not json',
  };
  const pods = g.pods.map((p, k) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `c${i}-p${k}`,
      namespace: 'apps',
      labels: { app: 'web', ...(p.tier ? { tier: 'a' } : {}) },
      ...(p.annotation ? { annotations: { 'apps.kruise.io/matched-workloadspread': annotationOf[p.annotation] } } : {}),
    },
    spec: {
      containers: [{ name: 'main', image: 'web:1' }],
      ...(p.node ? { nodeName: p.node } : {}),
      ...(p.priorityClass ? { priorityClassName: 'high' } : {}),
      ...(p.tolerates ? { tolerations: [{ key: 'dedicated', operator: 'Exists' }] } : {}),
      ...(p.ownAffinity
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['zone-a', 'zone-b'] },
                      ],
                    },
                  ],
                },
              },
            },
          }
        : {}),
    },
  }));
  return { ws, pods, nodes, replicas: g.replicas };
}

/** A strategic merge of a metadata patch into labels and annotations (maps: merge, null deletes). */
function applyMetadata(pod: Json, patch: Json): { labels: Json; annotations: Json } {
  const merge = (a: Json, b: Json) => {
    const out = { ...(a ?? {}) };
    for (const [k, v] of Object.entries(b ?? {}))
      if (v === null) delete out[k];
      else out[k] = v;
    return out;
  };
  return {
    labels: merge(pod.metadata.labels, patch.metadata.labels),
    annotations: merge(pod.metadata.annotations, patch.metadata.annotations),
  };
}

const orEmpty = (m: Json) => (m && Object.keys(m).length ? m : {});

describe('WorkloadSpread pod grouping = upstream v1.9.1, in-process', () => {
  const cases = fc.sample(caseArb, { numRuns: 400, seed: 2626 }).map(build);
  const upstream = upstreamWorkloadSpreadGroupOracle(cases);

  it('puts the same pods in the same subsets and patches the same metadata', () => {
    const differences: string[] = [];
    let matchedByNode = 0;
    const placed = new Set<string>();
    cases.forEach((c, i) => {
      const theirs = upstream[i] as Json;
      if (theirs.error) {
        differences.push(`case ${i}: upstream failed: ${theirs.error}`);
        return;
      }
      const nodes = Object.fromEntries(c.nodes.map((n) => [n.metadata.name, n]));
      const ours = groupPodsBySubset(c.ws, c.pods, c.replicas, nodes);
      matchedByNode += ours.patches.length;
      const mine = Object.fromEntries(
        Object.entries(ours.podMap).map(([k, v]) => [k, v.map((p: Json) => p.metadata.name)]),
      );
      for (const [k, v] of Object.entries(mine)) if (v.length) placed.add(k === FAKE_SUBSET ? 'fake' : 'subset');
      try {
        deepStrictEqual(mine, theirs.podMap);
      } catch {
        differences.push(`case ${i}: pods ${JSON.stringify(mine)} vs upstream ${JSON.stringify(theirs.podMap)}`);
      }
      const patched = new Map(ours.patches.map(({ pod, patch }) => [pod.metadata.name, applyMetadata(pod, patch)]));
      for (const pod of c.pods) {
        const after = patched.get(pod.metadata.name) ?? {
          labels: pod.metadata.labels,
          annotations: pod.metadata.annotations,
        };
        const t = theirs.pods[pod.metadata.name];
        const ourMeta = [orEmpty(after.labels), orEmpty(after.annotations)];
        const theirMeta = [orEmpty(t?.labels), orEmpty(t?.annotations)];
        try {
          deepStrictEqual(ourMeta, theirMeta);
        } catch {
          differences.push(
            `case ${i} ${pod.metadata.name}: metadata ${JSON.stringify(ourMeta)} vs upstream ${JSON.stringify(theirMeta)}`,
          );
        }
      }
    });
    process.stderr.write(
      `workloadspread grouping: ${cases.length} generated cases, ${matchedByNode} pods matched to a subset by their node; ${differences.length} differ\n`,
    );
    expect(matchedByNode).toBeGreaterThan(cases.length / 4);
    expect(placed.size).toBe(2);
    expect(differences.slice(0, 6)).toEqual([]);
  });
});
