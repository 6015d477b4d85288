/**
 * WorkloadSpread pod deletion costs = upstream v1.9.1's own controller code, run in-process
 * (tools/upstream/sidecarset-oracle `wscost`: pkg/controller/workloadspread
 * updateDeletionCostBySubset on a fake API holding the pods, which it patches). Generated subsets
 * (limits as numbers, percentages, strings without %, unreadable ones, or none), pods per subset
 * and of no subset, with every field kubecontroller.ActivePods orders by (node, phase, readiness
 * and its time, restarts, creation time), terminated and deleting ones, and costs already set; in
 * subset order and reversed (an old workload version). Every pod's cost afterwards must be upstream's.
 * Then the same cases with one pod gone from the API server: upstream stops at the first patch
 * that fails and records PatchPodDeletionCostFailed; the writes before it, the event and its
 * message (Go's `%!d(string=…)` included) must be upstream's.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  deletionCostPatches,
  deletionCostWrites,
  FAKE_SUBSET,
  patchDeletionCostFailedMessage,
  POD_DELETION_COST,
} from '../../lib/runtime/workloadspread/deletion-cost.js';
import { upstreamWorkloadSpreadDeletionCostOracle } from './support/sidecarset-oracle.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const time = fc.constantFrom('', '2026-01-01T00:00:00Z', '2026-01-01T00:00:10Z', '2026-01-02T00:00:00Z');
const podArb = fc.record({
  node: fc.constantFrom('', 'node-a', 'node-b'),
  phase: fc.constantFrom('Pending', 'Running', 'Running', 'Unknown', 'Succeeded', 'Failed', ''),
  ready: fc.boolean(),
  readyAt: time,
  restarts: fc.integer({ min: 0, max: 2 }),
  // A native sidecar (an init container with restartPolicy Always) and its restarts, or none (Kubernetes 1.32's
  // ActivePods breaks a tie in restarts by them).
  sidecarRestarts: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
  created: time,
  deleting: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  cost: fc.constantFrom(undefined, '100', '-100', '200', '0', 'x'),
});
const subsetArb = fc.record({
  limit: fc.constantFrom(undefined, 0, 1, 2, '50%', '34%', '30', 'x%', -1),
  pods: fc.array(podArb, { maxLength: 4 }),
});
const caseArb = fc.record({
  subsets: fc.array(subsetArb, { minLength: 1, maxLength: 3 }),
  strays: fc.array(podArb, { maxLength: 2 }),
  replicas: fc.integer({ min: 0, max: 8 }),
  reverse: fc.boolean(),
});

type PodShape = typeof podArb extends fc.Arbitrary<infer T> ? T : never;

function pod(name: string, p: PodShape): Json {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'apps',
      ...(p.created ? { creationTimestamp: p.created } : {}),
      ...(p.cost !== undefined ? { annotations: { [POD_DELETION_COST]: p.cost } } : {}),
      ...(p.deleting ? { deletionTimestamp: '2026-01-03T00:00:00Z', finalizers: ['example.com/keep'] } : {}),
    },
    spec: {
      containers: [{ name: 'main', image: 'web:1' }],
      ...(p.sidecarRestarts !== undefined
        ? { initContainers: [{ name: 'proxy', image: 'proxy:1', restartPolicy: 'Always' }] }
        : {}),
      ...(p.node ? { nodeName: p.node } : {}),
    },
    status: {
      ...(p.phase ? { phase: p.phase } : {}),
      conditions: [
        { type: 'Ready', status: p.ready ? 'True' : 'False', ...(p.readyAt ? { lastTransitionTime: p.readyAt } : {}) },
      ],
      containerStatuses: [{ name: 'main', restartCount: p.restarts, ready: p.ready, image: 'web:1', imageID: '' }],
      ...(p.sidecarRestarts !== undefined
        ? {
            initContainerStatuses: [
              { name: 'proxy', restartCount: p.sidecarRestarts, ready: p.ready, image: 'proxy:1', imageID: '' },
            ],
          }
        : {}),
    },
  };
}

describe('WorkloadSpread deletion costs = upstream v1.9.1, in-process', () => {
  const cases = fc.sample(caseArb, { numRuns: 400, seed: 4242 }).map((g, i) => {
    const subsets = g.subsets.map((s, k) => ({
      name: `s${k}`,
      ...(s.limit !== undefined ? { maxReplicas: s.limit } : {}),
    }));
    const podMap: Record<string, Json[]> = Object.fromEntries(
      g.subsets.map((s, k) => [`s${k}`, s.pods.map((p, j) => pod(`c${i}-s${k}-p${j}`, p))]),
    );
    if (g.strays.length) podMap[FAKE_SUBSET] = g.strays.map((p, j) => pod(`c${i}-stray-${j}`, p));
    return {
      ws: {
        metadata: { name: 'ws', namespace: 'apps' },
        spec: { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, subsets },
      },
      podMap,
      replicas: g.replicas,
      reverse: g.reverse,
    };
  });
  const upstream = upstreamWorkloadSpreadDeletionCostOracle(cases);

  it('sets every deletion cost upstream sets', () => {
    const differences: string[] = [];
    let patched = 0;
    const values = new Set<string>();
    cases.forEach((c, i) => {
      const theirs = upstream[i] as Json;
      if (theirs.error) {
        differences.push(`case ${i}: upstream failed: ${theirs.error}`);
        return;
      }
      const patches = new Map(deletionCostPatches(c.ws, c.podMap, c.replicas, c.reverse));
      if (theirs.failed || theirs.events.length) differences.push(`case ${i}: upstream ${JSON.stringify(theirs)}`);
      patched += patches.size;
      for (const p of Object.values(c.podMap).flat()) {
        const before = p.metadata.annotations?.[POD_DELETION_COST] ?? '';
        const ours = patches.get(`apps/${p.metadata.name}`) ?? before;
        values.add(ours);
        if (ours !== theirs.costs[p.metadata.name])
          differences.push(
            `case ${i} pod ${p.metadata.name}: ours ${JSON.stringify(ours)}, upstream ${JSON.stringify(theirs.costs[p.metadata.name])}`,
          );
      }
    });
    process.stderr.write(
      `workloadspread deletion cost: ${cases.length} generated cases, ${patched} pod costs written, values ${[...values].sort().join(' ')}; ${differences.length} differ\n`,
    );
    expect(patched).toBeGreaterThan(cases.length);
    expect(values.size).toBeGreaterThan(6);
    expect(differences.slice(0, 10)).toEqual([]);
  });

  it("stops at the first patch that fails and records upstream's PatchPodDeletionCostFailed event", () => {
    // One pod per case is left out of upstream's fake API (its patch answers 404).
    const gone = cases.map((c, i) => {
      const all = Object.values(c.podMap).flat();
      return all.length ? all[(i * 7) % all.length].metadata.name : '';
    });
    const theirsAll = upstreamWorkloadSpreadDeletionCostOracle(cases.map((c, i) => ({ ...c, absent: [gone[i]] })));
    const differences: string[] = [];
    let failures = 0;
    cases.forEach((c, i) => {
      const theirs = theirsAll[i] as Json;
      if (theirs.error) {
        differences.push(`case ${i}: upstream failed: ${theirs.error}`);
        return;
      }
      // What this runtime's controller does (controller.ts): the writes in order, the event on the first failure.
      const writes = deletionCostWrites(c.ws, c.podMap, c.replicas, c.reverse);
      const failing = writes.findIndex((w) => w.pod === `apps/${gone[i]}`);
      const done = new Map((failing < 0 ? writes : writes.slice(0, failing)).map((w) => [w.pod, w.value]));
      const events =
        failing < 0
          ? []
          : [`Warning PatchPodDeletionCostFailed ${patchDeletionCostFailedMessage(c.ws, writes[failing])}`];
      if (failing >= 0) failures++;
      if (JSON.stringify(events) !== JSON.stringify(theirs.events) || failing >= 0 !== Boolean(theirs.failed))
        differences.push(`case ${i}: events ours ${JSON.stringify(events)}, upstream ${JSON.stringify(theirs)}`);
      for (const p of Object.values(c.podMap).flat()) {
        if (p.metadata.name === gone[i]) continue;
        const ours = done.get(`apps/${p.metadata.name}`) ?? p.metadata.annotations?.[POD_DELETION_COST] ?? '';
        if (ours !== theirs.costs[p.metadata.name])
          differences.push(`case ${i} pod ${p.metadata.name}: ours ${ours}, upstream ${theirs.costs[p.metadata.name]}`);
      }
    });
    process.stderr.write(
      `workloadspread deletion cost with a pod gone: ${cases.length} cases, ${failures} failed patches with their event; ${differences.length} differ\n`,
    );
    expect(failures).toBeGreaterThan(20);
    expect(differences.slice(0, 10)).toEqual([]);
  });
});
