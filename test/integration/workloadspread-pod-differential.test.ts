// WorkloadSpread's pod path against the REAL upstream kruise-manager v1.9.1 (built from the pinned
// module by test/envtest/binaries/build.sh) on the same envtest API server: the same generated
// cases go first to upstream (its default output installed: CRDs, mpod.kb.io, vpod.kb.io,
// vpodeviction.kb.io, its controllers leading), then to this runtime (the runtime flavour installed,
// same configuration names). A case is a namespace with a target workload (Deployment with its
// ReplicaSet, ReplicaSet, Job or StatefulSet; sometimes created after the WorkloadSpread,
// sometimes of an older template), a WorkloadSpread (1 to 4 subsets: limits as numbers or
// percentages or none, required and preferred terms, tolerations, patches of metadata, of lists by
// key, of the priority class, patches that cannot merge, patches that mount a volume the template
// does not have; a target filter, its replicas path the workload's own or absent, sometimes without
// a selector (upstream then spreads no pod); Adaptive or Fixed), then
// pods created through the API server (named or generateName, selected or not, owned by the
// target, another workload or nothing, with their own affinity and tolerations), some deleted, one
// evicted, more created. Recorded per request: the decision (admitted or its HTTP code) and the pod
// as stored (server-filled fields, namespaces, UIDs and generated names normalised); after the
// controllers settle: the WorkloadSpread's status and every pod's deletion cost. This file plays
// the Deployment controller (there is none here), never the scheduler: pods stay unbound.
//
// Seeded: WSPOD_SEED=<n>, WSPOD_CASES=<n>; WSPOD_DUMP=<file> writes both recordings.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dumpRecordings, ReferenceUpstream } from './support/reference-upstream.js';
import { kubeConfig } from './support/runtime-cluster.js';
import { ApiClient } from './support/sidecarset-differential.js';
import { RUNTIME_REFERENCE_RELEASE } from '../envtest/binaries.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const SEED = Number(process.env.WSPOD_SEED ?? 2411);
const CASES = Number(process.env.WSPOD_CASES ?? 60);
const CONCURRENCY = 6;
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
const OURS_NS = 'kruise-it-wspod';
const api = new ApiClient();
const runDir = mkdtempSync(join(tmpdir(), 'wspod-'));
// The runtime's reference release (test/envtest/binaries.ts), whatever the constructs' default is.
const reference = new ReferenceUpstream({
  release: RUNTIME_REFERENCE_RELEASE,
  suffix: 'wspod',
  api,
  kc: kubeConfig(),
  runDir,
  // Earlier suites may have left the runtime flavour's CRDs under the same names (another field manager).
  foreignCrds: ['sidecarsets.apps.kruise.io', 'workloadspreads.apps.kruise.io'],
});
const log = (msg: string) => process.stderr.write(`workloadspread-pod-differential: ${msg}\n`);

/**
 * Differences accepted on purpose, each with its reason. A difference matching none fails the test.
 */
const INTENDED_DIFFERENCES: Array<{ name: string; why: string; matches: (d: Diff) => boolean }> = [
  {
    name: 'an eviction of a pod upstream has not cached yet',
    why:
      "upstream's eviction webhook reads the pod from its informer cache and answers 400 (not found) while the cache lags " +
      'behind the API server (the client retries); this runtime reads it from the API server and books the eviction at once. ' +
      'The harness waits 1 s before evicting, so this shows only under heavy load.',
    matches: (d) =>
      (/ evict /.test(d.key) && d.upstream?.status === 400 && d.ours?.allowed === true) ||
      // ... and the evicted pod is then gone in ours only.
      (/ final /.test(d.key) &&
        d.ours === undefined &&
        [...(recordings.upstream?.entries() ?? [])].some(
          ([k, o]) =>
            k.startsWith(`${d.key.split(' ')[0]} evict ${d.key.split(' ')[2]}`) &&
            o.status === 400 &&
            recordings.ours?.get(k)?.allowed === true,
        )),
  },
  {
    name: "the fake subset's deletion cost on a pod no reconcile saw",
    why:
      'a pod no subset takes carries no annotation, so (in upstream as here) its creation triggers no reconcile; whether it ' +
      "gets the fake subset's cost (-100 x (subsets + 1)) depends on a later reconcile seeing it, i.e. on the controller's " +
      'speed against the next request. The harness lets the controllers settle after each create, so this shows only under load.',
    matches: (d) =>
      / final /.test(d.key) &&
      d.upstream?.object?.subset === null &&
      d.ours?.object?.subset === null &&
      d.upstream?.object?.cost === null &&
      /^-\d00$/.test(String(d.ours?.object?.cost)),
  },
];

// ---------------------------------------------------------------- generated cases

type Kind = 'Deployment' | 'ReplicaSet' | 'Job' | 'StatefulSet' | 'CloneSet';
interface PodSpec {
  named: boolean;
  owner: 'target' | 'other' | 'none';
  selected: boolean;
  affinity: boolean;
  toleration: boolean;
}
interface Case {
  id: string;
  kind: Kind;
  replicas: number;
  workloadAfter: boolean;
  staleTemplate: boolean;
  subsets: Json[];
  filter: boolean;
  replicasPath: string | undefined;
  bareFilter: boolean;
  adaptive: boolean;
  pods: PodSpec[];
  deletes: number[];
  evict: number | undefined;
  more: PodSpec[];
}

const limitArb = fc.constantFrom(undefined, 0, 1, 2, 3, '20%', '50%', '30%');
const patchArb = fc.constantFrom(
  undefined,
  undefined,
  undefined,
  { metadata: { labels: { subset: 'x' }, annotations: { note: 'y' } } },
  { spec: { containers: [{ name: 'app', env: [{ name: 'ZONE', value: 'z' }] }] } },
  { spec: { containers: [{ name: 'extra', image: 'extra:1' }] } },
  { spec: { priorityClassName: 'high' } },
  { spec: { containers: [{ image: 'no-name:1' }] } },
  { metadata: { labels: { app: null } } },
  // Merged into the template, refused by core pod validation when upstream has the template (the
  // WorkloadSpread, 400), else by the API server on every pod of the subset; and a valid volume.
  { spec: { containers: [{ name: 'app', volumeMounts: [{ name: 'missing', mountPath: '/m' }] }] } },
  {
    spec: {
      volumes: [{ name: 'scratch', emptyDir: {} }],
      containers: [{ name: 'app', volumeMounts: [{ name: 'scratch', mountPath: '/s' }] }],
    },
  },
);
const subsetArb = fc.record({
  limit: limitArb,
  required: fc.boolean(),
  preferred: fc.boolean(),
  toleration: fc.boolean(),
  patch: patchArb,
});
const podArb: fc.Arbitrary<PodSpec> = fc.record({
  named: fc.boolean(),
  owner: fc.constantFrom('target', 'target', 'target', 'target', 'other', 'none'),
  selected: fc.constantFrom(true, true, true, false),
  affinity: fc.boolean(),
  toleration: fc.boolean(),
});
const caseArb = fc.record({
  // No CloneSet (or Advanced StatefulSet): upstream's own controllers would create their pods in its run only.
  kind: fc.constantFrom<Kind>('Deployment', 'Deployment', 'ReplicaSet', 'Job', 'StatefulSet'),
  replicas: fc.integer({ min: 0, max: 6 }),
  workloadAfter: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  staleTemplate: fc.integer({ min: 0, max: 7 }).map((n) => n === 0),
  subsets: fc.array(subsetArb, { minLength: 1, maxLength: 4 }),
  filter: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  // targetFilter.replicasPathList: the kind's own field, or one the workload does not have (upstream:
  // its pod webhook answers 500 where it reads the replicas, its controller writes no status or cost).
  replicasPath: fc.constantFrom<string | undefined>(
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
    'own',
    'spec.nope',
    'spec.template.spec.containers.3.name',
  ),
  // With a replicas path, a filter without a selector: upstream's pod webhook then selects no pod.
  bareFilter: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  adaptive: fc.boolean(),
  pods: fc.array(podArb, { minLength: 1, maxLength: 6 }),
  deletes: fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 2 }),
  evict: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
  more: fc.array(podArb, { maxLength: 2 }),
});

function generate(): Case[] {
  return fc.sample(caseArb, { seed: SEED, numRuns: CASES }).map((c, i) => {
    const subsets = c.subsets.map((s, j) => {
      const last = j === c.subsets.length - 1;
      // Upstream refuses mixed limit types, percentages on a StatefulSet, a last limit under Adaptive: mostly avoided.
      let limit = s.limit;
      if (typeof limit === 'string' && c.kind === 'StatefulSet') limit = 2;
      if (c.adaptive && last && c.subsets.length > 1) limit = undefined;
      return {
        name: `s${j}`,
        ...(limit !== undefined ? { maxReplicas: limit } : {}),
        ...(s.required
          ? { requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: [`z${j}`] }] } }
          : {}),
        ...(s.preferred
          ? {
              preferredNodeSelectorTerms: [
                {
                  weight: 10 + j,
                  preference: { matchExpressions: [{ key: 'pool', operator: 'In', values: [`p${j}`] }] },
                },
              ],
            }
          : {}),
        ...(s.toleration ? { tolerations: [{ key: `t${j}`, operator: 'Exists', effect: 'NoSchedule' }] } : {}),
        ...(s.patch ? { patch: s.patch } : {}),
      };
    });
    // One limit type per WorkloadSpread (upstream refuses mixed ones): follow the first.
    const firstType = typeof subsets.find((s) => 'maxReplicas' in s)?.maxReplicas;
    for (const s of subsets)
      if ('maxReplicas' in s && typeof s.maxReplicas !== firstType)
        (s as Json).maxReplicas = firstType === 'string' ? '20%' : 1;
    return { id: `w${i}`, ...c, subsets };
  });
}

// ---------------------------------------------------------------- objects of a case

const API: Record<Kind, { apiVersion: string; plural: string }> = {
  Deployment: { apiVersion: 'apps/v1', plural: 'deployments' },
  ReplicaSet: { apiVersion: 'apps/v1', plural: 'replicasets' },
  Job: { apiVersion: 'batch/v1', plural: 'jobs' },
  StatefulSet: { apiVersion: 'apps/v1', plural: 'statefulsets' },
  CloneSet: { apiVersion: 'apps.kruise.io/v1alpha1', plural: 'clonesets' },
};
const HASH = '6f7d8c9b5';
const podTemplate = (image: string) => ({
  metadata: { labels: { app: 'web', tier: 'front' } },
  spec: { containers: [{ name: 'app', image, env: [{ name: 'MODE', value: 'prod' }] }], restartPolicy: 'Always' },
});
const pathOf = (ns: string, apiVersion: string, plural: string, name = '') =>
  `${apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`}/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;

async function ok(method: string, path: string, body?: unknown): Promise<Json> {
  const res = await api.call(method, path, body);
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body).slice(0, 400)}`);
  return res.body;
}

/** Creates the target (and a Deployment's ReplicaSet); answers the controller reference its pods carry. */
async function createWorkload(c: Case, ns: string): Promise<Json> {
  const { apiVersion, plural } = API[c.kind];
  const selector = { matchLabels: { app: 'web' } };
  const spec: Json =
    c.kind === 'Job'
      ? {
          parallelism: c.replicas,
          selector,
          manualSelector: true,
          template: { ...podTemplate('web:1'), spec: { ...podTemplate('web:1').spec, restartPolicy: 'Never' } },
        }
      : {
          replicas: c.replicas,
          selector,
          template: podTemplate('web:1'),
          ...(c.kind === 'StatefulSet' ? { serviceName: 'web' } : {}),
        };
  const w = await ok('POST', pathOf(ns, apiVersion, plural), {
    apiVersion,
    kind: c.kind,
    metadata: { name: 'web' },
    spec,
  });
  if (c.kind !== 'Deployment') return { apiVersion, kind: c.kind, name: 'web', uid: w.metadata.uid, controller: true };
  const rs = await ok('POST', pathOf(ns, 'apps/v1', 'replicasets'), {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `web-${HASH}`,
      labels: { app: 'web', 'pod-template-hash': HASH },
      ownerReferences: [{ apiVersion, kind: 'Deployment', name: 'web', uid: w.metadata.uid, controller: true }],
    },
    spec: {
      replicas: c.replicas,
      selector: { matchLabels: { app: 'web', 'pod-template-hash': HASH } },
      template: {
        ...podTemplate(c.staleTemplate ? 'web:0' : 'web:1'),
        metadata: { labels: { app: 'web', tier: 'front', 'pod-template-hash': HASH } },
      },
    },
  });
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid, controller: true };
}

function podBody(c: Case, p: PodSpec, index: number, owner: Json | undefined, other: Json): Json {
  const name = c.kind === 'StatefulSet' ? `web-${index}` : `web-${HASH}-p${index}`;
  const ref = p.owner === 'target' ? owner : p.owner === 'other' ? other : undefined;
  const template = podTemplate('web:1');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...(p.named ? { name } : { generateName: `web-${HASH}-` }),
      labels: {
        app: 'web',
        ...(p.selected ? { tier: 'front' } : {}),
        ...(c.kind === 'Deployment' ? { 'pod-template-hash': HASH } : {}),
      },
      ...(ref ? { ownerReferences: [ref] } : {}),
    },
    spec: {
      ...template.spec,
      ...(p.affinity
        ? {
            affinity: {
              nodeAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: {
                  nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] }],
                },
              },
            },
          }
        : {}),
      ...(p.toleration ? { tolerations: [{ key: 'own', operator: 'Exists' }] } : {}),
    },
  };
}

// ---------------------------------------------------------------- recording

interface Outcome {
  allowed: boolean;
  status: number;
  object?: Json;
}
type Recording = Map<string, Outcome>;

/** A pod or status with what differs between two runs by construction normalised away. */
function normalizePod(pod: Json, names: Map<string, string>): Json {
  const out = structuredClone(pod);
  const m = out.metadata ?? {};
  for (const k of ['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'namespace', 'generation'])
    delete m[k];
  if (m.generateName) m.name = names.get(m.name) ?? m.name;
  for (const r of m.ownerReferences ?? []) r.uid = 'uid';
  const injected = m.annotations?.[MATCHED];
  if (injected) {
    const v = JSON.parse(injected);
    if (v.uid) v.uid = 'generated';
    m.annotations[MATCHED] = JSON.stringify(v);
  }
  delete out.status;
  return out;
}
/** `v` with every map's keys sorted (Go and JavaScript order a status's fields differently). */
function sorted(v: Json): Json {
  if (Array.isArray(v)) return v.map(sorted);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sorted(v[k])]),
  );
}
function normalizeStatus(status: Json, names: Map<string, string>): Json {
  const keyOf = (k: string) => names.get(k) ?? (/^[0-9a-f-]{36}$/.test(k) ? 'generated' : k);
  const subsets = (list: Json[]) =>
    (list ?? []).map((s: Json) => ({
      ...s,
      creatingPods: Object.keys(s.creatingPods ?? {})
        .map(keyOf)
        .sort(),
      deletingPods: Object.keys(s.deletingPods ?? {})
        .map(keyOf)
        .sort(),
      conditions: (s.conditions ?? []).map((c: Json) => ({ type: c.type, status: c.status })),
    }));
  return sorted({
    subsetStatuses: subsets(status?.subsetStatuses),
    versionedSubsetStatuses: Object.fromEntries(
      Object.entries(status?.versionedSubsetStatuses ?? {})
        .sort()
        .map(([v, l]) => [v, subsets(l as Json[])]),
    ),
  });
}

/** Runs one case in namespace `ns` through whichever manager serves the webhooks. */
async function runCase(c: Case, ns: string, rec: Recording): Promise<void> {
  const names = new Map<string, string>(); // generated pod name -> its stable name in the case
  await ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const other = {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    name: 'other',
    uid: 'b0c2e9a4-0000-4000-8000-000000000001',
    controller: true,
  };
  let owner: Json | undefined;
  // Upstream reads the workload (and later the evicted pod) from its informer cache, which can lag the
  // API server; this runtime reads them through the API server. The waits keep that race out of the inputs.
  if (!c.workloadAfter) owner = await createWorkload(c, ns);
  await sleep(1000);
  const ws = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'spread' },
    spec: {
      targetRef: { apiVersion: API[c.kind].apiVersion, kind: c.kind, name: 'web' },
      subsets: c.subsets,
      ...(c.filter || c.replicasPath
        ? {
            targetFilter: {
              ...(c.filter || (c.replicasPath && !c.bareFilter)
                ? { selector: { matchLabels: { tier: 'front' } } }
                : {}),
              ...(c.replicasPath
                ? {
                    replicasPathList: [
                      c.replicasPath === 'own'
                        ? `spec.${c.kind === 'Job' ? 'parallelism' : 'replicas'}`
                        : c.replicasPath,
                    ],
                  }
                : {}),
            },
          }
        : {}),
      ...(c.adaptive ? { scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 30 } } } : {}),
    },
  };
  const wsPath = pathOf(ns, 'apps.kruise.io/v1alpha1', 'workloadspreads');
  let created = await api.call('POST', wsPath, ws);
  if (created.status === 400) {
    // Refused: by a rule (both managers refuse again), or by upstream's cache not having the target
    // yet under load (seen at load 20+: upstream refused, then admitted the same WorkloadSpread). Asked
    // once more, as an operator re-applying would; only a refusal that holds is recorded.
    log(`${c.id}: WorkloadSpread refused (${String(created.body?.message ?? '').slice(0, 300)}); asking again in 3 s`);
    await sleep(3000);
    created = await api.call('POST', wsPath, ws);
  }
  rec.set(`${c.id} ws`, { allowed: created.status < 300, status: created.status });
  if (c.workloadAfter) owner = await createWorkload(c, ns);
  // Both managers' webhooks answer from the cache their controller reads: the first status written
  // proves it has the WorkloadSpread. (Unreadable limits write none: then a fixed wait.)
  if (created.status < 300) {
    for (let i = 0; i < 50; i++) {
      const got = await api.call('GET', `${wsPath}/spread`);
      if (got.body?.status?.subsetStatuses?.length) break;
      await sleep(100);
    }
  }
  const podsPath = pathOf(ns, 'v1', 'pods');
  const createPod = async (p: PodSpec, index: number, step: string) => {
    const res = await api.call('POST', podsPath, podBody(c, p, index, owner, other));
    const stable = `pod${index}`;
    if (res.status < 300) names.set(res.body.metadata.name, stable);
    rec.set(`${c.id} ${step} ${stable}`, {
      allowed: res.status < 300,
      status: res.status,
      ...(res.status < 300 ? { object: normalizePod(res.body, names) } : {}),
    });
    return res.status < 300 ? (res.body.metadata.name as string) : undefined;
  };
  const podNames: Array<string | undefined> = [];
  for (const [i, p] of c.pods.entries()) {
    podNames.push(await createPod(p, i, 'create'));
    await sleep(500); // the controllers settle (see the intended differences)
  }
  await sleep(1000);
  for (const d of [...new Set(c.deletes)]) {
    const name = podNames[d];
    if (!name) continue;
    const res = await api.call('DELETE', `${podsPath}/${name}`);
    rec.set(`${c.id} delete pod${d}`, { allowed: res.status < 300, status: res.status });
    podNames[d] = undefined;
  }
  // The controllers settle between steps: which pods a reconcile still sees decides what it keeps
  // (a version's status stays while one of its pods does), in upstream as here.
  await sleep(1000);
  if (c.evict !== undefined && podNames[c.evict]) {
    const name = podNames[c.evict]!;
    const res = await api.call('POST', `${podsPath}/${name}/eviction`, {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace: ns },
    });
    rec.set(`${c.id} evict pod${c.evict}`, { allowed: res.status < 300, status: res.status });
  }
  for (const [i, p] of c.more.entries()) await createPod(p, c.pods.length + i, 'more');
  // Settle: the controller's view stops changing (bookings resolved, costs written).
  // A booking of a pod that never shows up (deleted at once, created under a generated name) stays
  // for upstream's 30 s creation timeout in both: wait past it.
  let last = '';
  let stable = 0;
  for (let i = 0; i < 200 && stable < 8; i++) {
    await sleep(250);
    const w = await api.call('GET', `${wsPath}/spread`);
    const pods = (await ok('GET', podsPath)).items as Json[];
    const snapshot = JSON.stringify([
      w.body?.status,
      pods.map((p) => [p.metadata.name, p.metadata.annotations?.[COST]]),
    ]);
    const all = [
      ...(w.body?.status?.subsetStatuses ?? []),
      ...Object.values<Json[]>(w.body?.status?.versionedSubsetStatuses ?? {}).flat(),
    ];
    const booked = all.some(
      (s: Json) => Object.keys(s.creatingPods ?? {}).length || Object.keys(s.deletingPods ?? {}).length,
    );
    stable = snapshot === last && !booked ? stable + 1 : 0;
    last = snapshot;
  }
  const w = await api.call('GET', `${wsPath}/spread`);
  if (w.status < 300)
    rec.set(`${c.id} status`, { allowed: true, status: 200, object: normalizeStatus(w.body.status, names) });
  for (const p of ((await ok('GET', podsPath)).items as Json[]).sort((a, b) =>
    (names.get(a.metadata.name) ?? a.metadata.name).localeCompare(names.get(b.metadata.name) ?? b.metadata.name),
  ))
    rec.set(`${c.id} final ${names.get(p.metadata.name) ?? p.metadata.name}`, {
      allowed: true,
      status: 200,
      object: {
        cost: p.metadata.annotations?.[COST] ?? null,
        subset: p.metadata.annotations?.[MATCHED] ? JSON.parse(p.metadata.annotations[MATCHED]).subset : null,
      },
    });
}

async function runAll(cases: Case[], prefix: string): Promise<Recording> {
  const rec: Recording = new Map();
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const c = cases[next++];
      await runCase(c, `${prefix}-${c.id}`, rec);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return rec;
}

async function deleteNamespaces(prefix: string, cases: Case[]): Promise<void> {
  for (const c of cases) await api.call('DELETE', `/api/v1/namespaces/${prefix}-${c.id}`);
}

// ---------------------------------------------------------------- the two runs

interface Diff {
  key: string;
  upstream?: Outcome;
  ours?: Outcome;
}
let cases: Case[] = [];
const recordings: { upstream?: Recording; ours?: Recording } = {};

beforeAll(async () => {
  const t0 = Date.now();
  cases = generate();
  log(`seed ${SEED} (WSPOD_SEED=${SEED} reproduces this run), ${cases.length} cases`);
  recordings.upstream = await reference.withUpstream(() => runAll(cases, 'wspu'));
  const t1 = Date.now();
  // Ours: the runtime flavour (its own SidecarSet CRD, upstream's WorkloadSpread CRD); upstream's CloneSet CRD stays.
  await reference.removeCrd('sidecarsets.apps.kruise.io');
  // Minutes on a loaded machine: tsx compiles the runtime at start.
  recordings.ours = await reference.withOurs(OURS_NS, () => runAll(cases, 'wspo'), 240_000);
  log(`upstream run ${((t1 - t0) / 1000).toFixed(0)} s, ours ${((Date.now() - t1) / 1000).toFixed(0)} s`);
  dumpRecordings(process.env.WSPOD_DUMP, SEED, cases, recordings);
}, 1_200_000);

afterAll(async () => {
  await reference.stop();
  await deleteNamespaces('wspu', cases);
  await deleteNamespaces('wspo', cases);
  await reference.removeOutputObjects(true);
  api.close();
  rmSync(runDir, { recursive: true, force: true });
}, 300_000);

describe(`WorkloadSpread pod path = the real upstream kruise-manager, through the API server (seed ${SEED})`, () => {
  it('the generated cases reach the interesting paths on upstream', () => {
    const u = [...recordings.upstream!];
    const creates = u.filter(([k]) => / (create|more) /.test(k));
    const spread = creates.filter(([, o]) => o.object?.metadata?.annotations?.[MATCHED]);
    const refused = creates.filter(([, o]) => !o.allowed);
    const costs = u.filter(([k, o]) => k.includes(' final ') && o.object?.cost !== null);
    const wsRefused = u.filter(([k, o]) => k.endsWith(' ws') && !o.allowed);
    log(
      `upstream answered ${u.length} recorded requests: ${creates.length} pod creates (${spread.length} spread, ` +
        `${refused.length} refused), ${u.filter(([k]) => / (delete|evict) /.test(k)).length} deletions/evictions, ` +
        `${costs.length} pods given a deletion cost, ${wsRefused.length} WorkloadSpreads refused`,
    );
    // Of the pods a WorkloadSpread could spread (it was admitted, its filter has a selector, its
    // replicas path reads), more than a fifth are.
    const spreadable = new Set(
      cases
        .filter((c) => u.some(([k, o]) => k === `${c.id} ws` && o.allowed))
        .filter((c) => !c.replicasPath || (c.replicasPath === 'own' && !c.bareFilter))
        .map((c) => c.id),
    );
    expect(spread.length).toBeGreaterThan(creates.filter(([k]) => spreadable.has(k.split(' ')[0])).length / 5);
    expect(costs.length).toBeGreaterThan(0);
  });

  it("every answer of this runtime equals upstream's, except the intended differences", () => {
    const keys = new Set([...recordings.upstream!.keys(), ...recordings.ours!.keys()]);
    const diffs: Diff[] = [];
    for (const key of keys) {
      const a = recordings.upstream!.get(key);
      const b = recordings.ours!.get(key);
      if (JSON.stringify(a) !== JSON.stringify(b)) diffs.push({ key, upstream: a, ours: b });
    }
    const unexplained = diffs.filter((d) => !INTENDED_DIFFERENCES.some((i) => i.matches(d)));
    const counts = INTENDED_DIFFERENCES.map((i) => `${diffs.filter((d) => i.matches(d)).length} x ${i.name}`);
    log(
      `${keys.size} entries compared, ${diffs.length} differences, ${unexplained.length} unexplained; intended: ${counts.join(', ') || 'none'}`,
    );
    expect(
      unexplained
        .slice(0, 10)
        .map(
          (d) =>
            `${d.key}: upstream ${JSON.stringify(d.upstream)?.slice(0, 600)} ours ${JSON.stringify(d.ours)?.slice(0, 600)}`,
        ),
    ).toEqual([]);
  });
});
