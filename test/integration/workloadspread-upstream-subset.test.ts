/**
 * WorkloadSpread's pod-webhook steps = upstream v1.9.1's own code, run in-process
 * (tools/upstream/sidecarset-oracle `wssubset`: pkg/util/workloadspread acquireSuitableSubset's
 * StatefulSet branch or updateSubsetForPod, then injectWorkloadSpreadIntoPod). Generated
 * WorkloadSpreads (limits as numbers, percentages or none; unschedulable subsets; statuses with
 * pods already booked; per-version statuses), pods of Deployments' ReplicaSets, CloneSets, Jobs
 * and StatefulSets (named or generateName only, with their own affinity and tolerations), on
 * CREATE, DELETE and eviction, some with a targetFilter.replicasPathList (the kind's own field, or
 * a path the workload does not have). The subset chosen, the status after (times and generated
 * UIDs aside) and the injected pod must be upstream's; a path upstream cannot read must fail here
 * with upstream's error (its pod webhook answers 500).
 *
 * Subset patches here are maps only; patches of lists by key are drawn by the pod differential
 * (workloadspread-pod-differential.test.ts) against the real upstream webhook.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { decideSubset, injectSubset } from '../../lib/runtime/workloadspread/subset.js';
import { readsWorkloadReplicas, replicasOfWorkload } from '../../lib/runtime/workloadspread/webhooks.js';
import { upstreamWorkloadSpreadSubsetOracle } from './support/sidecarset-oracle.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const TARGETS: Record<string, { apiVersion: string; podOwner: Json; replicasField: string; podLabels: Json }> = {
  Deployment: {
    apiVersion: 'apps/v1',
    podOwner: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d8f' },
    replicasField: 'replicas',
    podLabels: { 'pod-template-hash': '5d8f' },
  },
  CloneSet: {
    apiVersion: 'apps.kruise.io/v1alpha1',
    podOwner: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
    replicasField: 'replicas',
    podLabels: { 'controller-revision-hash': 'web-6c9b' },
  },
  Job: {
    apiVersion: 'batch/v1',
    podOwner: { apiVersion: 'batch/v1', kind: 'Job', name: 'web' },
    replicasField: 'parallelism',
    podLabels: {},
  },
  StatefulSet: {
    apiVersion: 'apps/v1',
    podOwner: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web' },
    replicasField: 'replicas',
    podLabels: {},
  },
};

const term = (zone: string) => ({
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [zone] }],
});

const subsetArb = (i: number) =>
  fc.record(
    {
      name: fc.constant(`s${i}`),
      requiredNodeSelectorTerm: fc.constant(term(`zone-${i}`)),
      preferredNodeSelectorTerms: fc.constant([{ weight: 10, preference: term(`zone-${i}`) }]),
      tolerations: fc.constant([{ key: `pool-${i}`, operator: 'Exists', effect: 'NoSchedule' }]),
      maxReplicas: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.constantFrom('20%', '34%', '50%')),
      patch: fc.constantFrom(
        { metadata: { labels: { subset: `s${i}` } } },
        { metadata: { annotations: { note: `s${i}`, drop: null } } },
        { spec: { priorityClassName: 'high' } },
      ),
    },
    { requiredKeys: ['name'] },
  );

const statusArb = fc.record(
  {
    missingReplicas: fc.integer({ min: -1, max: 3 }),
    unschedulable: fc.boolean(),
    creating: fc.constantFrom([], ['web-1'], ['p-a']),
    deleting: fc.constantFrom([], ['web-2'], ['p-b']),
  },
  { requiredKeys: ['missingReplicas', 'unschedulable', 'creating', 'deleting'] },
);

const caseArb = fc.record({
  kind: fc.constantFrom('Deployment', 'CloneSet', 'Job', 'StatefulSet'),
  subsets: fc.integer({ min: 1, max: 3 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => subsetArb(i)))),
  lastUnlimited: fc.boolean(),
  statuses: fc.option(fc.array(statusArb, { minLength: 3, maxLength: 3 }), { nil: undefined, freq: 2 }),
  statusVersion: fc.constantFrom('5d8f', '6c9b', 'versionIgnored', 'other'),
  replicas: fc.option(fc.integer({ min: 0, max: 10 }), { nil: undefined }),
  // targetFilter.replicasPathList: none, the kind's own field, or paths the workload does not have
  // (absent key, past the list, through a number): upstream's pod webhook then fails (500).
  replicasPath: fc.constantFrom<string | undefined>(
    undefined,
    undefined,
    undefined,
    undefined,
    'own',
    'spec.nope',
    'spec.template.spec.containers.2.image',
    'spec.selector.matchLabels.app.x',
    'spec.template.metadata.labels',
  ),
  operation: fc.constantFrom('Create', 'Create', 'Delete', 'Eviction'),
  podName: fc.constantFrom('web-0', 'web-1', 'web-2', 'web-5', 'p-a', 'p-b', ''),
  injectedSubset: fc.constantFrom('s0', 's1', 's2', 'gone'),
  podAffinity: fc.boolean(),
});

type Shape = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function build(g: Shape, i: number) {
  const t = TARGETS[g.kind];
  const subsets: Json[] = g.subsets.map((s) => ({ ...s }));
  // StatefulSets take numbers only (validation); percentages for others as generated.
  for (const s of subsets) if (g.kind === 'StatefulSet' && typeof s.maxReplicas === 'string') s.maxReplicas = 2;
  if (g.lastUnlimited) delete subsets[subsets.length - 1].maxReplicas;
  const statuses = g.statuses?.slice(0, subsets.length).map((st, k) => ({
    name: subsets[k].name,
    replicas: 0,
    missingReplicas: st.missingReplicas,
    ...(st.unschedulable
      ? { conditions: [{ type: 'Schedulable', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' }] }
      : {}),
    ...(st.creating.length
      ? { creatingPods: Object.fromEntries(st.creating.map((p) => [p, '2026-01-01T00:00:00Z'])) }
      : {}),
    ...(st.deleting.length
      ? { deletingPods: Object.fromEntries(st.deleting.map((p) => [p, '2026-01-01T00:00:00Z'])) }
      : {}),
  }));
  const ws: Json = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'apps', resourceVersion: '5', uid: `uid-${i}` },
    spec: {
      targetRef: { apiVersion: t.apiVersion, kind: g.kind, name: 'web' },
      subsets,
      ...(g.replicasPath
        ? {
            targetFilter: {
              replicasPathList: [g.replicasPath === 'own' ? `spec.${t.replicasField}` : g.replicasPath],
            },
          }
        : {}),
    },
    ...(statuses
      ? {
          status: {
            subsetStatuses: statuses,
            // A copy, as decoded from JSON: the two lists are separate objects.
            versionedSubsetStatuses: { [g.statusVersion]: structuredClone(statuses) },
          },
        }
      : {}),
  };
  const pod: Json = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(g.podName ? { name: g.podName } : { generateName: 'web-' }),
      namespace: 'apps',
      labels: { app: 'web', ...t.podLabels },
      ownerReferences: [{ ...t.podOwner, uid: 'owner', controller: true, blockOwnerDeletion: true }],
      ...(g.operation !== 'Create'
        ? {
            annotations: {
              'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset: g.injectedSubset }),
            },
          }
        : {}),
    },
    spec: {
      containers: [{ name: 'main', image: 'web:1' }],
      priority: 5,
      ...(g.podAffinity
        ? {
            tolerations: [{ key: 'own', operator: 'Exists' }],
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }],
                },
              },
            },
          }
        : {}),
    },
  };
  const workloads =
    g.replicas === undefined
      ? []
      : [
          {
            apiVersion: t.apiVersion,
            kind: g.kind,
            metadata: { name: 'web', namespace: 'apps' },
            spec: {
              [t.replicasField]: g.replicas,
              selector: { matchLabels: { app: 'web' } },
              template: {
                metadata: { labels: { app: 'web' } },
                spec: { containers: [{ name: 'main', image: 'web:1' }] },
              },
            },
          },
        ];
  return {
    ws,
    pod,
    operation: g.operation,
    ...(g.operation !== 'Create' ? { injectWS: { name: 'ws', subset: g.injectedSubset } } : {}),
    workloads,
    replicas: g.replicas ?? 0,
  };
}

/** JSON without empty objects, empty lists and nulls (Go's omitempty and zero values), keys sorted. */
function normal(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(normal) : undefined;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const n = normal((v as Record<string, unknown>)[k]);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null ? undefined : v;
}

/** A status with booking times dropped and generated UIDs named `<uid>`. */
function statusShape(status: Json, uid?: string): unknown {
  const s = structuredClone(status ?? {});
  for (const list of [s.subsetStatuses, ...Object.values(s.versionedSubsetStatuses ?? {})] as Json[][])
    for (const st of list ?? [])
      for (const m of ['creatingPods', 'deletingPods'])
        if (st[m] && !Array.isArray(st[m]))
          st[m] = Object.keys(st[m])
            .map((k) => (uid && k === uid ? '<uid>' : /^[0-9a-f-]{36}$/.test(k) ? '<uid>' : k))
            .sort();
  return normal(s);
}

/** The pod with the annotation's generated UID named `<uid>`. */
function podShape(pod: Json): unknown {
  const p = structuredClone(pod);
  const a = p?.metadata?.annotations?.['apps.kruise.io/matched-workloadspread'];
  if (a) {
    const parsed = JSON.parse(a);
    if (parsed.uid) parsed.uid = '<uid>';
    p.metadata.annotations['apps.kruise.io/matched-workloadspread'] = parsed;
  }
  return normal(p);
}

describe('WorkloadSpread pod webhook steps = upstream v1.9.1, in-process', () => {
  const cases = fc.sample(caseArb, { numRuns: 500, seed: 2424 }).map(build);
  const upstream = upstreamWorkloadSpreadSubsetOracle(cases);

  it('chooses, books and injects as upstream does', () => {
    const differences: string[] = [];
    const chosen = new Set<string>();
    let booked = 0;
    let errored = 0;
    cases.forEach((c, i) => {
      const theirs = upstream[i] as Json;
      // The replicas as the runtime's pod webhook reads them (an unreadable path: its error, a 500).
      let replicas = 0;
      let failed: string | undefined;
      try {
        if (readsWorkloadReplicas(c.ws, c.pod) && c.workloads[0]) replicas = replicasOfWorkload(c.ws, c.workloads[0]);
      } catch (e) {
        failed = (e as Error).message;
      }
      if (theirs.error || failed) {
        if (theirs.error !== failed) differences.push(`case ${i}: ours failed: ${failed}, upstream: ${theirs.error}`);
        else errored++;
        return;
      }
      const ours = decideSubset(c.ws, c.pod, {
        operation: c.operation as 'Create',
        injected: c.injectWS,
        replicas,
        now: new Date(),
        newUID: () => '00000000-0000-0000-0000-000000000000',
      });
      chosen.add(`${c.operation}:${ours.subset || 'none'}`);
      if (ours.changed) booked++;
      const mine = {
        changed: ours.changed,
        subset: ours.subset,
        generatedUID: ours.generatedUID !== undefined,
        // The status is written only when changed (upstream's in-memory copy may be initialised without being written).
        ...(ours.changed ? { status: statusShape(ours.status, ours.generatedUID) } : {}),
        ...(c.operation === 'Create' && ours.subset
          ? { pod: podShape(injectSubset(c.ws, c.pod, ours.subset, ours.generatedUID)) }
          : {}),
      };
      const expected = {
        changed: theirs.changed,
        subset: theirs.subset,
        generatedUID: theirs.generatedUID,
        ...(theirs.changed ? { status: statusShape(theirs.status) } : {}),
        ...(theirs.pod ? { pod: podShape(theirs.pod) } : {}),
      };
      if (JSON.stringify(normal(mine)) !== JSON.stringify(normal(expected)))
        differences.push(
          `case ${i}: ours ${JSON.stringify(normal(mine))}\n  upstream ${JSON.stringify(normal(expected))}`,
        );
    });
    process.stderr.write(
      `workloadspread subsets: ${cases.length} generated pod operations, ${booked} booked in the status, ${errored} failed on a replicas path (both), outcomes ${[...chosen].sort().join(' ')}; ${differences.length} differ\n`,
    );
    // The generator reaches upstream's path errors (a replicas path the workload does not have).
    expect(errored).toBeGreaterThan(5);
    expect(booked).toBeGreaterThan(cases.length / 5);
    expect(chosen.size).toBeGreaterThan(6);
    expect(differences.slice(0, 5)).toEqual([]);
  });
});
