// Upstream OpenKruise v1.9.1's TestSubsetPodDeletionCost (pkg/controller/workloadspread/
// workloadspread_controller_test.go), its first four cases, ported against
// lib/runtime/workloadspread/deletion-cost.ts. Upstream calls syncSubsetPodDeletionCost with a
// subset index; here the pods are given to that subset (named s0, s1: upstream's are unnamed).
// Identical pods keep their order (a stable sort), so the first is the one over the limit.
import { describe, expect, it } from '@jest/globals';
import { deletionCostPatches } from '../../../../lib/runtime/workloadspread/deletion-cost.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const pods = (n: number): Json[] =>
  Array.from({ length: n }, (_, i) => ({
    metadata: { name: `test-pods-${i}`, namespace: 'default' },
    spec: { nodeName: 'node-1' },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  }));
const ws = {
  spec: {
    subsets: [
      { name: 's0', maxReplicas: 3 },
      { name: 's1', maxReplicas: 3 },
    ],
  },
};
const costs = (index: number, n: number) =>
  deletionCostPatches(ws, { [`s${index}`]: pods(n) }, 6, false).map(([, v]) => v);

describe('TestSubsetPodDeletionCost', () => {
  it('pods number == maxReplicas, subsetsLen = 2, subsetIndex = 0, maxReplicas is 3, pods number is 3', () => {
    expect(costs(0, 3)).toEqual(['200', '200', '200']);
  });
  it('pods number == maxReplicas, subsetsLen = 2, subsetIndex = 1, maxReplicas is 3, pods number is 3', () => {
    expect(costs(1, 3)).toEqual(['100', '100', '100']);
  });
  it('pods number == maxReplicas, subsetsLen = 2, subsetIndex = 0, maxReplicas is 3, pods number is 4', () => {
    expect(deletionCostPatches(ws, { s0: pods(4) }, 6, false)).toEqual([
      ['default/test-pods-1', '200'],
      ['default/test-pods-2', '200'],
      ['default/test-pods-3', '200'],
      ['default/test-pods-0', '-100'],
    ]);
  });
  it('pods number == maxReplicas, subsetsLen = 2, subsetIndex = 1, maxReplicas is 3, pods number is 4', () => {
    expect(new Map(deletionCostPatches(ws, { s1: pods(4) }, 6, false)).get('default/test-pods-0')).toBe('-200');
    expect(costs(1, 4).filter((v) => v === '100')).toHaveLength(3);
  });
  it("breaks a tie in restarts by the native sidecars' restarts (Kubernetes 1.32, upstream v1.9.1)", () => {
    const p = pods(4);
    p[2].spec.initContainers = [{ name: 'proxy', image: 'proxy:1', restartPolicy: 'Always' }];
    p[2].status.initContainerStatuses = [{ name: 'proxy', restartCount: 3 }];
    // An init container that is not a sidecar does not count.
    p[1].spec.initContainers = [{ name: 'setup', image: 'setup:1' }];
    p[1].status.initContainerStatuses = [{ name: 'setup', restartCount: 5 }];
    expect(new Map(deletionCostPatches(ws, { s0: p }, 6, false)).get('default/test-pods-2')).toBe('-100');
  });
  it('an old version reverses the subset order, and a pod already at its cost is not patched', () => {
    expect(costs(0, 1)).toEqual(['200']);
    expect(deletionCostPatches(ws, { s0: pods(1) }, 6, true).map(([, v]) => v)).toEqual(['100']);
    const p = pods(1);
    p[0].metadata.annotations = { 'controller.kubernetes.io/pod-deletion-cost': '200' };
    expect(deletionCostPatches(ws, { s0: p }, 6, false)).toEqual([]);
  });
});
