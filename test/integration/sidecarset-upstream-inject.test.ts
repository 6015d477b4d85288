/**
 * Differential test of pod injection against upstream's own pod webhook code
 * (github.com/openkruise/kruise v1.9.1 pkg/webhook/pod/mutating/sidecarset.go, run in-process by
 * tools/upstream/sidecarset-oracle on a fake client holding the same SidecarSets and Namespaces).
 * Generated SidecarSets (defaulted by this runtime, which test/integration/
 * sidecarset-upstream-hash.test.ts proves equal to upstream's defaulting) and pods over the
 * supported fields; the injected pods must be identical, modulo INTENDED_DIFFERENCES.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { SidecarSetAnnotations } from '../../lib/contract.js';
import { defaultSidecarSet } from '../../lib/runtime/sidecarset/defaults.js';
import { injectSidecars, sidecarSetMatchesPod } from '../../lib/runtime/sidecarset/inject.js';
import { inPlaceUpdatePatch } from '../../lib/runtime/sidecarset/podupdate.js';
import { podState } from '../../lib/runtime/sidecarset/rollout.js';
import type { SidecarSet } from '../../lib/runtime/sidecarset/types.js';
import { findConflicts, validateSidecarSet } from '../../lib/runtime/sidecarset/validate.js';
import {
  upstreamInjectionOracle,
  upstreamStateOracle,
  upstreamValidationOracle,
  APPS_NAMESPACE_LABELS,
  APPS_NAMESPACE,
} from './support/sidecarset-oracle.js';
import { draw } from '../support/draw.js';

// The injection draw: full 400, and the budget is the same 400: measured, 150 cases saved only
// 1.4 s (jest 6.7 s at 150, 8.0 s at 400, load 6-7 on 2 shared cores). The seed still changes
// with the commit and is printed, so coverage accumulates. The other draws in this file are unchanged.
const INJECT_DRAW = draw('sidecarset-upstream-inject', {
  full: 400,
  budget: 400,
  modules: ['lib/runtime/sidecarset', 'test/integration/support/sidecarset-oracle.ts'],
  fallbackSeed: 1123,
  file: 'test/integration/sidecarset-upstream-inject.test.ts',
});
const CASES = INJECT_DRAW.numRuns;
const APP_ENV = ['APP_NAME', 'TZ', 'POD_IP'];
// 'main' is also the pod's container: upstream replaces it in place.
const sidecarName = fc.constantFrom('proxy', 'agent', 'logger', 'main');
const volumeName = fc.constantFrom('conf', 'logs', 'data', 'cache');
const env = fc.record({ name: fc.constantFrom('MODE', 'TZ', 'LEVEL'), value: fc.constantFrom('a', 'b') });
const mount = fc.record({
  name: volumeName,
  mountPath: fc.constantFrom('/conf', '/logs', '/data', '/cache', '/var/x'),
});
const sidecar = fc.record(
  {
    name: sidecarName,
    image: fc.constantFrom('proxy:1', 'agent:2', 'logger:latest'),
    env: fc.uniqueArray(env, { maxLength: 2, selector: (e) => e.name }),
    volumeMounts: fc.uniqueArray(mount, { maxLength: 2, selector: (m) => m.mountPath }),
    podInjectPolicy: fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
    shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
    transferEnv: fc.array(
      fc.record({
        sourceContainerName: fc.constantFrom('main', 'helper', 'missing'),
        envName: fc.constantFrom(...APP_ENV),
      }),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: ['name', 'image'] },
);
const volume = fc.record({ name: volumeName, emptyDir: fc.constant({}) });
// An empty selector is refused by both validators and matches no pod in either (checked below).
const selector = fc.constantFrom(
  { matchLabels: { app: 'web' } },
  { matchLabels: { app: 'db' } },
  { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
  { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'db'] }] },
);

const sidecarSetArb = (name: string) =>
  fc
    .record(
      {
        selector,
        containers: fc.uniqueArray(sidecar, { minLength: 1, maxLength: 2, selector: (c) => c.name }),
        // Init containers, some native sidecars (restartPolicy: Always).
        initContainers: fc.uniqueArray(
          fc.record(
            {
              name: fc.constantFrom('init-a', 'init-b', 'setup'),
              image: fc.constantFrom('init:1', 'init:2'),
              restartPolicy: fc.constantFrom('Always', undefined),
              shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
              volumeMounts: fc.uniqueArray(mount, { maxLength: 1, selector: (m) => m.mountPath }),
              transferEnv: fc.array(
                fc.record({
                  sourceContainerName: fc.constantFrom('main', 'helper'),
                  envName: fc.constantFrom(...APP_ENV),
                }),
                { maxLength: 1 },
              ),
            },
            { requiredKeys: ['name', 'image'] },
          ),
          { maxLength: 2, selector: (c) => c.name },
        ),
        volumes: fc.uniqueArray(volume, { maxLength: 3, selector: (v) => v.name }),
        imagePullSecrets: fc.uniqueArray(fc.record({ name: fc.constantFrom('regcred', 'other') }), {
          maxLength: 2,
          selector: (s) => s.name,
        }),
        namespace: fc.option(fc.constantFrom('apps', 'other'), { nil: undefined }),
      },
      { requiredKeys: ['selector', 'containers'] },
    )
    .map((spec) => {
      // Sidecars may mount only spec.volumes (both validators refuse anything else): add the missing ones.
      const volumes = [...(spec.volumes ?? [])];
      for (const m of [...spec.containers, ...(spec.initContainers ?? [])].flatMap((c) => c.volumeMounts ?? []))
        if (!volumes.some((v) => v.name === m.name)) volumes.push({ name: m.name, emptyDir: {} });
      // A native sidecar init container needs updateStrategy NotUpdate (both validators).
      const native = (spec.initContainers ?? []).some((c) => c.restartPolicy === 'Always');
      return {
        ...spec,
        ...(volumes.length ? { volumes } : {}),
        ...(native ? { updateStrategy: { type: 'NotUpdate' as const } } : {}),
      };
    })
    .map((spec): SidecarSet =>
      defaultSidecarSet({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name },
        spec: spec as SidecarSet['spec'],
      }),
    );

const appContainer = (name: string) =>
  fc.record(
    {
      name: fc.constant(name),
      image: fc.constant(`${name}:1`),
      env: fc.uniqueArray(fc.record({ name: fc.constantFrom(...APP_ENV), value: fc.constantFrom('x', 'y') }), {
        maxLength: 3,
        selector: (e) => e.name,
      }),
      volumeMounts: fc.uniqueArray(mount, { maxLength: 2, selector: (m) => m.mountPath }),
    },
    { requiredKeys: ['name', 'image'] },
  );

const podArb = fc
  .record({
    labels: fc.constantFrom<Record<string, string>>({ app: 'web' }, { app: 'db' }, { app: 'web', tier: 'front' }),
    containers: fc.oneof(fc.tuple(appContainer('main')), fc.tuple(appContainer('main'), appContainer('helper'))),
    volumes: fc.uniqueArray(volume, { maxLength: 2, selector: (v) => v.name }),
    imagePullSecrets: fc.uniqueArray(fc.record({ name: fc.constantFrom('regcred', 'own') }), {
      maxLength: 2,
      selector: (s) => s.name,
    }),
  })
  .map(({ labels, containers, volumes, imagePullSecrets }): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'apps', labels },
    spec: {
      containers,
      ...(volumes.length ? { volumes } : {}),
      ...(imagePullSecrets.length ? { imagePullSecrets } : {}),
    } as V1Pod['spec'],
  }));

const caseArb = fc.record({
  sets: fc.tuple(sidecarSetArb('s-a'), fc.option(sidecarSetArb('s-b'), { nil: undefined })),
  pod: podArb,
});

/** Go's zero values dropped and the timestamps in the hash annotations blanked: what both sides mean. */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? v.map(normalize) : undefined;
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      let x = (v as Record<string, unknown>)[k];
      if ((k === SidecarSetAnnotations.hash || k === SidecarSetAnnotations.hashWithoutImage) && typeof x === 'string') {
        x = Object.fromEntries(
          Object.entries(JSON.parse(x) as Record<string, Record<string, unknown>>).map(([n, e]) => [
            n,
            { ...e, updateTimestamp: '' },
          ]),
        );
      }
      const n = normalize(x);
      if (n !== undefined) out[k] = n;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v === null || v === '' || v === false ? undefined : v;
}

function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])]) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: ours ${JSON.stringify(a)}, upstream ${JSON.stringify(b)}`;
}

describe(`pod injection = upstream v1.9.1 pod webhook, differentially (${INJECT_DRAW.replay})`, () => {
  const now = new Date('2026-11-23T00:00:00Z');
  const samples = fc
    .sample(caseArb, { numRuns: CASES, seed: INJECT_DRAW.seed })
    .map(({ sets, pod }) => ({ sets: sets.filter((s): s is SidecarSet => !!s), pod }));
  const namespaces = [APPS_NAMESPACE];
  const upstream = upstreamInjectionOracle(samples.map(({ sets, pod }) => ({ sidecarSets: sets, namespaces, pod })));

  it(`generates ${CASES} cases whose SidecarSets the runtime admits, and upstream answers each`, () => {
    expect(samples.flatMap(({ sets }) => sets.flatMap((s) => validateSidecarSet(s)))).toEqual([]);
    expect(upstream.filter((u) => u.error).slice(0, 3)).toEqual([]);
    // The generator reaches the interesting part: most cases inject something.
    expect(samples.filter((_, i) => !upstream[i].skip).length).toBeGreaterThan(CASES / 3);
  });

  it('an empty selector matches no pod, in upstream and here', () => {
    const empty = defaultSidecarSet({
      metadata: { name: 'empty' },
      spec: { selector: {}, containers: [{ name: 'proxy', image: 'proxy:1' }] },
    });
    const pod = samples[0].pod;
    const [answer] = upstreamInjectionOracle([{ sidecarSets: [empty], namespaces, pod }]);
    expect(answer.skip).toBe(true);
    expect(sidecarSetMatchesPod(empty, pod, APPS_NAMESPACE_LABELS)).toBe(false);
    expect(validateSidecarSet(empty)).toEqual([expect.stringMatching(/^spec\.selector: is empty; /)]);
  });

  it('injects exactly what upstream injects', () => {
    const diffs = samples.flatMap(({ sets, pod }, i) => {
      const matching = sets.filter((s) => sidecarSetMatchesPod(s, pod, APPS_NAMESPACE_LABELS));
      const ours = injectSidecars(pod, matching, now).pod;
      const d = firstDifference(normalize(ours), normalize({ ...upstream[i].pod, apiVersion: 'v1', kind: 'Pod' }));
      return d ? [`case ${i}: ${d}`] : [];
    });
    expect(diffs.slice(0, 12)).toEqual([]);
  });
});

/** Applies the JSON Patch ops {@link inPlaceUpdatePatch} emits (test, replace, add) to a copy. */
function applyPatch<T>(doc: T, ops: object[]): T {
  const out = structuredClone(doc) as Record<string, unknown>;
  for (const { op, path, value } of ops as Array<{ op: string; path: string; value: unknown }>) {
    const keys = path
      .split('/')
      .slice(1)
      .map((k) => k.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = keys.pop()!;
    const parent = keys.reduce<Record<string, unknown>>((o, k) => o[k] as Record<string, unknown>, out);
    if (op === 'test') {
      if (JSON.stringify(parent[last]) !== JSON.stringify(value)) throw new Error(`test ${path} failed`);
      continue;
    }
    if (op !== 'add' && op !== 'replace') throw new Error(`op ${op} not expected from inPlaceUpdatePatch`);
    parent[last] = value;
  }
  return out as T;
}

describe('interoperability with upstream v1.9.1: pods injected by either are updated in place by the other', () => {
  const now = new Date('2026-11-23T00:00:00Z');
  const namespaces = [APPS_NAMESPACE];
  // One SidecarSet selecting the pod, then a new revision that changes only images.
  const samples = fc
    .sample(fc.record({ set: sidecarSetArb('s'), pod: podArb }), { numRuns: 300, seed: 42 })
    .map(({ set, pod }) => ({
      set: {
        ...set,
        // Every namespace: the generated one is stored as a namespaceSelector (defaultSidecarSet, as v1.9.1 reads it).
        spec: {
          ...set.spec,
          selector: { matchLabels: { app: pod.metadata!.labels!.app } },
          namespace: undefined,
          namespaceSelector: undefined,
        },
      },
      pod,
    }))
    .map(({ set, pod }) => ({ set: defaultSidecarSet({ metadata: { name: 's' }, spec: set.spec }), pod }));
  const v2 = (s: SidecarSet): SidecarSet =>
    defaultSidecarSet({
      metadata: { name: s.metadata.name },
      spec: { ...s.spec, containers: s.spec.containers!.map((c) => ({ ...c, image: `${c.image}-v2` })) },
    });
  const byUpstream = upstreamInjectionOracle(samples.map(({ set, pod }) => ({ sidecarSets: [set], namespaces, pod })));

  it('a pod upstream injected: this runtime sees it on the old revision, updates it in place, and upstream then sees it updated', () => {
    const problems: string[] = [];
    const updatedPods: Array<{ sidecarSet: object; pod: object }> = [];
    samples.forEach(({ set }, i) => {
      const pod = byUpstream[i].pod as unknown as V1Pod;
      const next = v2(set);
      const before = podState(set, pod);
      const stale = podState(next, pod);
      if (!before.updated) problems.push(`case ${i}: upstream's pod is not on the current revision for this runtime`);
      if (stale.updated || !stale.inPlaceUpdatable)
        problems.push(
          `case ${i}: after an image-only change, this runtime does not see upstream's pod as updatable in place`,
        );
      const after = applyPatch(
        { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } },
        inPlaceUpdatePatch(next, { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } }, now),
      );
      if (!podState(next, after).updated) problems.push(`case ${i}: this runtime does not see its own update`);
      updatedPods.push({ sidecarSet: next, pod: after });
    });
    expect(problems.slice(0, 5)).toEqual([]);
    const seen = upstreamStateOracle(updatedPods);
    expect(
      seen
        .map((s, i) => (s.updated ? undefined : `case ${i}: ${JSON.stringify(s)}`))
        .filter(Boolean)
        .slice(0, 5),
    ).toEqual([]);
  });

  it('a pod this runtime injected: upstream sees it on the current revision, and upgradable in place after an image-only change', () => {
    const ours = samples.map(({ set, pod }) => injectSidecars(pod, [set], now).pod);
    const current = upstreamStateOracle(samples.map(({ set }, i) => ({ sidecarSet: set, pod: ours[i] })));
    const next = upstreamStateOracle(samples.map(({ set }, i) => ({ sidecarSet: v2(set), pod: ours[i] })));
    const problems = samples.flatMap((_, i) => [
      ...(current[i].updated
        ? []
        : [`case ${i}: upstream does not see the pod on the current revision (${JSON.stringify(current[i])})`]),
      ...(!next[i].updated && next[i].upgradable
        ? []
        : [`case ${i}: upstream does not see the pod as upgradable in place (${JSON.stringify(next[i])})`]),
    ]);
    expect(problems.slice(0, 5)).toEqual([]);
  });
});

/** One change to a valid SidecarSet; some keep it valid, most break one rule. */
const MUTATIONS: Record<string, (s: SidecarSet) => void> = {
  none: () => undefined,
  'duplicate container name': (s) => {
    s.spec.containers!.push({ ...s.spec.containers![0], image: 'dup:1' });
  },
  'container name not a DNS label': (s) => {
    s.spec.containers![0].name = 'Bad_Name';
  },
  'no image': (s) => {
    delete (s.spec.containers![0] as { image?: string }).image;
  },
  'mount of a missing volume': (s) => {
    s.spec.containers![0].volumeMounts = [{ name: 'nowhere', mountPath: '/nowhere' }];
  },
  'duplicate volume name': (s) => {
    s.spec.volumes = [
      { name: 'v', emptyDir: {} },
      { name: 'v', emptyDir: {} },
    ];
  },
  'empty selector': (s) => {
    s.spec.selector = {};
  },
  'namespace and namespaceSelector': (s) => {
    s.spec.namespace = 'apps';
    s.spec.namespaceSelector = { matchLabels: { team: 'a' } };
  },
  'partition 120%': (s) => {
    s.spec.updateStrategy = { ...s.spec.updateStrategy, partition: '120%' };
  },
  'maxUnavailable 0': (s) => {
    s.spec.updateStrategy = { ...s.spec.updateStrategy, maxUnavailable: 0 };
  },
  'maxUnavailable 50%': (s) => {
    s.spec.updateStrategy = { ...s.spec.updateStrategy, maxUnavailable: '50%' };
  },
  'NotUpdate strategy': (s) => {
    s.spec.updateStrategy = { ...s.spec.updateStrategy, type: 'NotUpdate' };
  },
  'update selector': (s) => {
    s.spec.updateStrategy = { ...s.spec.updateStrategy, selector: { matchLabels: { canary: 'true' } } };
  },
  'negative revisionHistoryLimit': (s) => {
    s.spec.revisionHistoryLimit = -1;
  },
  'selector expression In without values': (s) => {
    s.spec.selector = { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] };
  },
  'transferEnv from a missing container': (s) => {
    s.spec.containers![0].transferEnv = [{ sourceContainerName: 'nope', envName: 'X' }];
  },
  'shareVolumePolicy enabled': (s) => {
    s.spec.containers![0].shareVolumePolicy = { type: 'enabled' };
  },
};
/** Changes to the candidate relative to the existing SidecarSet (same selector, so their pods overlap). */
const CONFLICTS: Record<string, (s: SidecarSet, existing: SidecarSet) => void> = {
  none: () => undefined,
  'same container name': (s, e) => {
    s.spec.selector = e.spec.selector;
    s.spec.namespace = e.spec.namespace;
    s.spec.containers![0].name = e.spec.containers![0].name;
  },
  'init container named like their container': (s, e) => {
    s.spec.selector = e.spec.selector;
    s.spec.namespace = e.spec.namespace;
    s.spec.containers = s.spec.containers!.filter((c) => c.name !== e.spec.containers![0].name);
    s.spec.initContainers = [{ name: e.spec.containers![0].name, image: 'init:1' }];
    s.spec.updateStrategy = { ...s.spec.updateStrategy, type: 'NotUpdate' };
    if (s.spec.containers.length === 0) s.spec.containers = [{ name: 'zz-other', image: 'z:1' }];
  },
  'same volume name, different source': (s, e) => {
    s.spec.selector = e.spec.selector;
    s.spec.namespace = e.spec.namespace;
    e.spec.volumes = [
      ...(e.spec.volumes ?? []).filter((v) => v.name !== 'shared'),
      { name: 'shared', configMap: { name: 'a' } },
    ];
    s.spec.volumes = [...(s.spec.volumes ?? []).filter((v) => v.name !== 'shared'), { name: 'shared', emptyDir: {} }];
  },
  'same volume, identical': (s, e) => {
    s.spec.selector = e.spec.selector;
    s.spec.namespace = e.spec.namespace;
    e.spec.volumes = [...(e.spec.volumes ?? []).filter((v) => v.name !== 'shared'), { name: 'shared', emptyDir: {} }];
    s.spec.volumes = [...(s.spec.volumes ?? []).filter((v) => v.name !== 'shared'), { name: 'shared', emptyDir: {} }];
  },
  'disjoint namespaces': (s, e) => {
    s.spec.selector = e.spec.selector;
    s.spec.namespace = 'apps';
    e.spec.namespace = 'other';
    s.spec.containers![0].name = e.spec.containers![0].name;
  },
};

/**
 * Where this runtime's validation still differs from upstream's, each with its reason. The test
 * fails if a difference appears that is not listed, or a listed one disappears.
 */
// None left: partitions above 100%, maxUnavailable 0 and any revisionHistoryLimit are accepted as upstream
// does, now that the rollout rounds and uses them as upstream (test/unit/runtime/sidecarset/upstream-strategy.test.ts).
const KNOWN_VALIDATION_DIFFERENCES: Record<string, string> = {};

describe('SidecarSet validation = upstream v1.9.1 validating webhook, differentially', () => {
  const namespaces = [APPS_NAMESPACE];
  const samples = fc
    .sample(
      fc.record({
        object: sidecarSetArb('candidate'),
        existing: fc.option(sidecarSetArb('existing'), { nil: undefined }),
        mutation: fc.constantFrom(...Object.keys(MUTATIONS)),
        conflict: fc.constantFrom(...Object.keys(CONFLICTS)),
      }),
      { numRuns: 700, seed: 7 },
    )
    .map(({ object, existing, mutation, conflict }) => {
      const mutated = structuredClone(object);
      const other = existing && structuredClone(existing);
      MUTATIONS[mutation](mutated);
      if (other) CONFLICTS[conflict](mutated, other);
      // Both sides see SidecarSets as stored: defaulted (so volumes compare as upstream stores them).
      const stored = (s: SidecarSet) => defaultSidecarSet({ metadata: { name: s.metadata.name }, spec: s.spec });
      return {
        object: stored(mutated),
        existing: other ? [stored(other)] : [],
        mutation: other && conflict !== 'none' ? `${mutation} + ${conflict}` : mutation,
      };
    });
  const upstream = upstreamValidationOracle(samples.map(({ object, existing }) => ({ existing, namespaces, object })));

  it('accepts and refuses exactly what upstream does', () => {
    const mismatches = new Map<string, string[]>();
    samples.forEach(({ object, existing, mutation }, i) => {
      const ours = [...validateSidecarSet(object), ...findConflicts(object, existing)];
      const theirs = upstream[i].errors ?? [upstream[i].error!];
      if ((ours.length === 0) === (theirs.length === 0)) return;
      const key = `${mutation.split(' + ')[0]}: ${ours.length ? 'we refuse, upstream accepts' : 'we accept, upstream refuses'}`;
      mismatches.set(key, [
        ...(mismatches.get(key) ?? []),
        `case ${i} (${mutation}): ours ${JSON.stringify(ours.slice(0, 2))} upstream ${JSON.stringify(theirs.slice(0, 2))}`,
      ]);
    });
    // The generator reaches each conflict on an otherwise valid SidecarSet, and upstream judges it as named.
    const verdicts = (name: string) =>
      samples.flatMap((c, i) => (c.mutation === `none + ${name}` ? [(upstream[i].errors ?? []).length === 0] : []));
    for (const name of [
      'same container name',
      'init container named like their container',
      'same volume name, different source',
    ])
      expect(verdicts(name)).toContain(false);
    for (const name of ['same volume, identical', 'disjoint namespaces']) expect(verdicts(name)).toContain(true);
    const unexplained = [...mismatches].filter(([k]) => !(k in KNOWN_VALIDATION_DIFFERENCES));
    expect(unexplained.map(([k, v]) => `${k} (${v.length}), e.g. ${v[0]}`)).toEqual([]);
    expect([...mismatches.keys()].sort()).toEqual(Object.keys(KNOWN_VALIDATION_DIFFERENCES).sort());
  });
});
