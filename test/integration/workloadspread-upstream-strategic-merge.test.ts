/**
 * The strategic merge of WorkloadSpread subset patches = apimachinery v0.30's own
 * strategicpatch.StrategicMergePatch over a corev1.Pod (tools/upstream/sidecarset-oracle `smp`, the
 * call upstream's pod webhook and validating webhook make), on generated pods and patches: lists
 * merged by key (containers, env, ports, volumeMounts, volumes, tolerations replaced, finalizers as a
 * set), nested merges, `null` deletions, the `$patch` replace/delete directives on maps and list
 * items, `$retainKeys`, `$deleteFromPrimitiveList`, items without their merge key and lists of mixed
 * kinds (errors). Both sides are compared after Go's encoding would drop empty values.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { strategicMergePod } from '../../lib/runtime/workloadspread/strategic-merge.js';
import { upstreamStrategicMergeOracle } from './support/sidecarset-oracle.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const SEED = Number(process.env.WSSMP_SEED ?? 24);
const RUNS = Number(process.env.WSSMP_CASES ?? 400);

const name = fc.constantFrom('a', 'b', 'c');
const env = fc.record({ name, value: fc.constantFrom('1', '2') }, { requiredKeys: [] });
const port = fc.record(
  { containerPort: fc.constantFrom(80, 443), name: fc.constantFrom('http', 'tls') },
  { requiredKeys: [] },
);
const mount = fc.record(
  { mountPath: fc.constantFrom('/a', '/b'), name: fc.constantFrom('v1', 'v2') },
  { requiredKeys: [] },
);
const directive = fc.constantFrom(undefined, undefined, undefined, 'delete', 'replace');
const withDirective = (arb: fc.Arbitrary<Json>) =>
  fc.tuple(arb, directive).map(([o, d]) => (d ? { ...o, $patch: d } : o));
const container = fc.record(
  {
    name,
    image: fc.constantFrom('x:1', 'y:2'),
    env: fc.array(withDirective(env), { maxLength: 3 }),
    ports: fc.array(port, { maxLength: 2 }),
    volumeMounts: fc.array(mount, { maxLength: 2 }),
    args: fc.array(fc.constantFrom('-a', '-b'), { maxLength: 2 }),
    resources: fc.option(fc.record({ limits: fc.record({ cpu: fc.constantFrom('1', '2') }) }), { nil: null }),
  },
  { requiredKeys: [] },
);
const volume = fc.record(
  {
    name: fc.constantFrom('v1', 'v2'),
    emptyDir: fc.constantFrom({}, { medium: 'Memory' }),
    hostPath: fc.constantFrom(undefined, { path: '/tmp' }),
  },
  { requiredKeys: ['name'] },
);
const toleration = fc.record({ key: fc.constantFrom('k1', 'k2'), operator: fc.constant('Exists') });
const spec = fc.record(
  {
    containers: fc.array(withDirective(container), { maxLength: 3 }),
    volumes: fc.array(withDirective(volume), { maxLength: 2 }),
    tolerations: fc.array(toleration, { maxLength: 2 }),
    nodeSelector: fc.dictionary(fc.constantFrom('zone', 'pool'), fc.option(fc.constantFrom('a', 'b'), { nil: null })),
    priorityClassName: fc.option(fc.constantFrom('high', 'low'), { nil: null }),
    affinity: fc.constantFrom(undefined, { $patch: 'delete' }, { nodeAffinity: { $patch: 'replace' } }, null),
  },
  { requiredKeys: [] },
);
const metadata = fc.record(
  {
    labels: fc.dictionary(fc.constantFrom('app', 'zone'), fc.option(fc.constantFrom('a', 'b'), { nil: null })),
    annotations: fc.dictionary(fc.constantFrom('x', 'y'), fc.constantFrom('1', '2')),
    finalizers: fc.array(fc.constantFrom('f1', 'f2', 'f3'), { maxLength: 3 }),
    '$deleteFromPrimitiveList/finalizers': fc.array(fc.constantFrom('f1', 'f2'), { maxLength: 2 }),
  },
  { requiredKeys: [] },
);
const patchArb = fc.record({ metadata, spec }, { requiredKeys: [] });
const clean = (o: Json): Json => JSON.parse(JSON.stringify(o));
/** A pod (no directives): the patch generator's shape without them. */
const strip = (o: Json): Json => {
  if (Array.isArray(o)) return o.map(strip).filter((x) => !(x && typeof x === 'object' && '$patch' in x));
  if (o && typeof o === 'object') {
    const out: Json = {};
    for (const [k, v] of Object.entries(o))
      if (!k.startsWith('$') && v !== null && !(v && typeof v === 'object' && '$patch' in (v as object)))
        out[k] = strip(v);
    return out;
  }
  return o;
};
/** What Go's encoding of a decoded Pod keeps (no nulls, no empty maps or lists), map keys sorted. */
function goShape(v: Json): Json {
  if (Array.isArray(v)) {
    const items = v.map(goShape);
    return items.length ? items : undefined;
  }
  if (v && typeof v === 'object') {
    const out: Json = {};
    for (const k of Object.keys(v).sort()) {
      const y = goShape(v[k]);
      if (y !== undefined) out[k] = y;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null || v === '' ? undefined : v;
}
/** Go's encoding of a decoded Pod adds what is not omitempty; the comparison leaves those out. */
const decoded = (pod: Json): Json => {
  for (const c of pod?.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.containerPort === 0) delete p.containerPort;
  return pod;
};
/** Pods decoded by Go must have each merge-keyed list item carry its key, and unique keys. */
const podArb = patchArb.map((p) => {
  const pod = strip(clean(p));
  pod.spec ??= {};
  pod.spec.containers = (pod.spec.containers ?? []).filter(
    (c: Json, i: number, all: Json[]) => c.name && all.findIndex((x) => x.name === c.name) === i,
  );
  for (const c of pod.spec.containers) {
    c.image ??= 'x:1';
    c.env = (c.env ?? []).filter(
      (e: Json, i: number, all: Json[]) => e.name && all.findIndex((x) => x.name === e.name) === i,
    );
    c.ports = (c.ports ?? []).filter(
      (e: Json, i: number, all: Json[]) =>
        e.containerPort && all.findIndex((x) => x.containerPort === e.containerPort) === i,
    );
    c.volumeMounts = (c.volumeMounts ?? []).filter(
      (e: Json, i: number, all: Json[]) =>
        e.mountPath && e.name && all.findIndex((x) => x.mountPath === e.mountPath) === i,
    );
  }
  pod.spec.volumes = (pod.spec.volumes ?? [])
    .filter((v: Json, i: number, all: Json[]) => all.findIndex((x) => x.name === v.name) === i)
    .map((v: Json) => ({ name: v.name, emptyDir: v.emptyDir ?? {} }));
  pod.metadata ??= {};
  pod.metadata.name = 'pod';
  pod.metadata.finalizers = [...new Set(pod.metadata.finalizers ?? [])];
  // As the API server sends it (Go's encoding): no empty lists or maps.
  return goShape(pod);
});

describe(`strategic merge over a Pod = apimachinery's StrategicMergePatch (seed ${SEED}, ${RUNS} cases)`, () => {
  it('merges every generated patch as upstream does, or fails where it fails', () => {
    const cases = fc.sample(fc.tuple(podArb, patchArb), { seed: SEED, numRuns: RUNS }).map(([pod, patch]) => ({
      pod,
      patch: clean(patch),
    }));
    const theirs = upstreamStrategicMergeOracle(cases) as Array<{ pod?: Json; error?: string }>;
    const differences: string[] = [];
    let merged = 0;
    let failed = 0;
    // Go ranges over the patch map in random order: a list both added to and pruned in one patch ends
    // either way upstream (an intended difference: this runtime prunes first); those are not compared.
    const orderDependent = (c: Json) => {
      const added: Json[] = c.patch.metadata?.finalizers ?? [];
      const pruned: Json[] = c.patch.metadata?.['$deleteFromPrimitiveList/finalizers'] ?? [];
      return added.some((f) => pruned.includes(f));
    };
    let skipped = 0;
    cases.forEach((c, i) => {
      if (orderDependent(c)) {
        skipped++;
        return;
      }
      let ours: Json;
      let ourError: string | undefined;
      try {
        ours = strategicMergePod(c.pod, c.patch);
      } catch (e) {
        ourError = (e as Error).message;
      }
      const upstream = theirs[i];
      if (upstream.error !== undefined || ourError !== undefined) {
        failed++;
        if ((upstream.error === undefined) !== (ourError === undefined))
          differences.push(
            `case ${i}: ours ${ourError ?? 'merged'}, upstream ${upstream.error ?? 'merged'}: ${JSON.stringify(c)}`,
          );
        return;
      }
      merged++;
      const a = JSON.stringify(goShape(ours) ?? {});
      const b = JSON.stringify(goShape(decoded(upstream.pod)) ?? {});
      if (a !== b) differences.push(`case ${i}: ${JSON.stringify(c)}\n ours     ${a}\n upstream ${b}`);
    });
    process.stderr.write(
      `strategic merge: ${cases.length} cases, ${merged} merged, ${failed} refused, ${skipped} order-dependent upstream ` +
        `(not compared), ${differences.length} differences\n`,
    );
    expect(differences.slice(0, 5)).toEqual([]);
    expect(merged).toBeGreaterThan(RUNS / 2);
  });
});
