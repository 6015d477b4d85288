/**
 * Generated inputs of the differential test against the real upstream kruise-manager
 * (test/integration/sidecarset-differential.test.ts): per case one or two SidecarSets, maybe an
 * update of the first, and one or two pods. Every object is raw (not defaulted): the API server
 * sends it through each side's own webhooks. Cases cannot see each other: each SidecarSet selects
 * `scdiff-case: <id>` (a matchLabels key, so upstream's overlap check also finds them disjoint),
 * and only that case's pods carry it.
 *
 * Excluded (refused by name by this runtime): injectionStrategy.revision, sourceContainerNameFrom,
 * patchPodMetadata, priority/scatter strategies, HotUpgrade.
 */
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { INVALID_FIELDS } from './sidecarset-invalid-fields.js';

export const CASE_LABEL = 'scdiff-case';
export const RUN_LABEL = 'scdiff-run';
/** Two namespaces with labels, for `namespace` and `namespaceSelector`. */
export const NAMESPACES = { 'scdiff-apps': { team: 'a' }, 'scdiff-other': { team: 'b' } } as const;
const NS = Object.keys(NAMESPACES) as Array<keyof typeof NAMESPACES>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface DiffCase {
  id: string;
  /** Created in this order (the second is judged against the first). */
  sets: Json[];
  /** A new spec for sets[0], sent as a JSON Patch `replace /spec` once every set exists. */
  update?: Json;
  pods: V1Pod[];
}

const APP_ENV = ['APP_NAME', 'TZ', 'POD_NAME'];
/** `arb` one time in four, else absent. */
const rarely = <T>(arb: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: arb, weight: 1 });
const volumeName = fc.constantFrom('conf', 'logs', 'data', 'cache');
const mountArb = fc.record(
  {
    name: volumeName,
    mountPath: fc.constantFrom('/conf', '/logs', '/data', '/cache', '/var/x'),
    subPathExpr: rarely(fc.constantFrom('$(POD_NAME)', '$(APP_NAME)/x')),
    readOnly: rarely(fc.constant(true)),
  },
  { requiredKeys: ['name', 'mountPath'] },
);
const mountsArb = fc.uniqueArray(mountArb, { maxLength: 2, selector: (m) => m.mountPath });
const transferArb = fc.array(
  fc.oneof(
    fc.record({
      sourceContainerName: fc.constantFrom('main', 'helper', 'missing'),
      envName: fc.constantFrom(...APP_ENV),
    }),
    fc.record({
      sourceContainerName: fc.constantFrom('main', 'helper'),
      envNames: fc.uniqueArray(fc.constantFrom(...APP_ENV), { minLength: 1, maxLength: 2 }),
    }),
  ),
  { maxLength: 2 },
);
const envArb = fc.uniqueArray(
  fc.oneof(
    fc.record({ name: fc.constantFrom('MODE', 'TZ', 'LEVEL'), value: fc.constantFrom('a', 'b') }),
    fc.record({ name: fc.constant('MY_POD'), valueFrom: fc.constant({ fieldRef: { fieldPath: 'metadata.name' } }) }),
  ),
  { maxLength: 2, selector: (e) => e.name },
);
/** Fields core/v1 and upstream default or canonicalise (quantities, probes, ports, pull policy). */
const containerExtrasArb = fc.record(
  {
    resources: rarely(
      fc.constantFrom(
        { limits: { cpu: '0.5', memory: '1024Mi' } },
        { requests: { cpu: '100m', memory: '1e3' } },
        { limits: { cpu: '2' }, requests: { cpu: '1500m' } },
      ),
    ),
    ports: rarely(fc.constant([{ containerPort: 15000, name: 'admin' }])),
    readinessProbe: rarely(
      fc.constantFrom(
        { httpGet: { port: 15000 } },
        { tcpSocket: { port: 'admin' }, periodSeconds: 5 },
        { exec: { command: ['true'] } },
      ),
    ),
    command: rarely(fc.constant(['/bin/run', '--flag'])),
    imagePullPolicy: rarely(fc.constantFrom('Always', 'Never')),
  },
  { requiredKeys: [] },
);

const sidecarArb = fc
  .record(
    {
      name: fc.constantFrom('proxy', 'agent', 'logger', 'main'), // `main` is also the pod's container
      image: fc.constantFrom('proxy:1', 'agent:2', 'logger:latest'),
      env: envArb,
      volumeMounts: mountsArb,
      podInjectPolicy: fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
      shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
      transferEnv: transferArb,
      extras: containerExtrasArb,
    },
    { requiredKeys: ['name', 'image', 'extras'] },
  )
  .map(({ extras, ...c }) => ({ ...c, ...extras }));

const initArb = fc.record(
  {
    name: fc.constantFrom('init-a', 'setup', 'init-b', 'proxy'), // `proxy` is also a container name: refused
    image: fc.constantFrom('init:1', 'init:2'),
    restartPolicy: fc.constantFrom('Always', undefined),
    podInjectPolicy: fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
    shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
    volumeMounts: mountsArb,
    transferEnv: transferArb,
  },
  { requiredKeys: ['name', 'image'] },
);

const volumeArb = fc.oneof(
  fc.record({ name: volumeName, emptyDir: fc.constant({}) }),
  fc.record({ name: volumeName, configMap: fc.record({ name: fc.constantFrom('cm-a', 'cm-b') }) }),
  fc.record({
    name: volumeName,
    secret: fc.record(
      { secretName: fc.constant('s-a'), defaultMode: rarely(fc.constant(256)) },
      { requiredKeys: ['secretName'] },
    ),
  }),
  fc.record({ name: volumeName, hostPath: fc.constant({ path: '/var/log' }) }),
  fc.record({
    name: volumeName,
    downwardAPI: fc.constant({ items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] }),
  }),
);

const expressionArb = fc.constantFrom(
  { key: 'app', operator: 'In', values: ['web', 'db'] },
  { key: 'app', operator: 'NotIn', values: ['db'] },
  { key: 'app', operator: 'Exists' },
  { key: 'tier', operator: 'Exists' },
  { key: 'tier', operator: 'DoesNotExist' },
);

const SCOPES: Json[] = [
  {},
  {},
  {},
  {},
  { namespace: NS[0] },
  { namespace: NS[0] },
  { namespace: NS[1] },
  { namespaceSelector: { matchLabels: { team: 'a' } } },
  { namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['a'] }] } },
  { namespace: NS[0], namespaceSelector: { matchLabels: { team: 'a' } } },
];

/**
 * Invalid inputs, each breaking one rule. Left out: the differences the oracle test
 * (sidecarset-upstream-inject.test.ts KNOWN_VALIDATION_DIFFERENCES) already tracks as "to fix":
 * partition over 100%, maxUnavailable 0, a negative revisionHistoryLimit.
 */
const MUTATIONS: Record<string, (spec: Json) => void> = {
  'container name not a DNS label': (spec) => {
    spec.containers[0].name = 'Bad_Name';
  },
  'no image': (spec) => {
    delete spec.containers[0].image;
  },
  'duplicate volume': (spec) => {
    spec.volumes = [...(spec.volumes ?? []), { name: 'dup', emptyDir: {} }, { name: 'dup', emptyDir: {} }];
  },
  'In without values': (spec) => {
    spec.selectorExtra = { key: 'app', operator: 'In', values: [] };
  },
  'unknown operator': (spec) => {
    spec.selectorExtra = { key: 'app', operator: 'Near', values: ['web'] };
  },
  'env name invalid': (spec) => {
    spec.containers[0].env = [{ name: '1 BAD', value: 'x' }];
  },
  'relative mountPath': (spec) => {
    spec.volumes = [...(spec.volumes ?? []), { name: 'rel', emptyDir: {} }];
    spec.containers[0].volumeMounts = [{ name: 'rel', mountPath: 'rel/path' }];
  },
  'duplicate port name': (spec) => {
    spec.containers[0].ports = [
      { name: 'p', containerPort: 1 },
      { name: 'p', containerPort: 2 },
    ];
  },
  'podInjectPolicy unknown': (spec) => {
    spec.containers[0].podInjectPolicy = 'Sideways';
  },
  'shareVolumePolicy unknown': (spec) => {
    spec.containers[0].shareVolumePolicy = { type: 'maybe' };
  },
  'updateStrategy type unknown': (spec) => {
    spec.updateStrategy = { type: 'Sometimes' };
  },
  'namespace not a name': (spec) => {
    spec.namespace = 'Bad_NS';
    delete spec.namespaceSelector;
  },
  'empty pull secret name': (spec) => {
    spec.imagePullSecrets = [{ name: '' }];
  },
  'no containers at all': (spec) => {
    spec.containers = [];
    delete spec.initContainers;
  },
  'resources request over limit': (spec) => {
    spec.containers[0].resources = { limits: { cpu: '1' }, requests: { cpu: '2' } };
  },
  'probe without handler': (spec) => {
    spec.containers[0].livenessProbe = { periodSeconds: 3 };
  },
};

const specRecord = fc.record({
  matchLabels: fc.constantFrom<Record<string, string>>({}, { app: 'web' }, { app: 'db' }),
  matchExpressions: fc.uniqueArray(expressionArb, { maxLength: 2, selector: (e) => e.key }),
  containers: fc.uniqueArray(sidecarArb, { minLength: 1, maxLength: 2, selector: (c) => c.name }),
  initContainers: fc.uniqueArray(initArb, { maxLength: 2, selector: (c) => c.name }),
  volumes: fc.uniqueArray(volumeArb, { maxLength: 3, selector: (v) => v.name }),
  imagePullSecrets: fc.uniqueArray(fc.record({ name: fc.constantFrom('regcred', 'other') }), {
    maxLength: 2,
    selector: (s) => s.name,
  }),
  // Where it injects: anywhere (4 in 10), a namespace (3), a namespace selector (2), or both (1, refused).
  scope: fc.integer({ min: 0, max: 9 }),
  // One SidecarSet in ten has injection paused.
  pausedPick: fc.integer({ min: 0, max: 9 }),
  updateStrategy: fc.constantFrom(
    undefined,
    { type: 'NotUpdate' },
    { type: 'RollingUpdate', partition: 1, maxUnavailable: 2 },
    { type: 'RollingUpdate', partition: '30%', maxUnavailable: '50%' },
    { selector: { matchLabels: { canary: 'true' } } },
    { paused: true },
    { partition: 2, selector: { matchLabels: { canary: 'true' } } },
  ),
  revisionHistoryLimit: rarely(fc.constantFrom(0, 5)),
  // Mostly valid: sometimes a mount without its volume, or a native sidecar without NotUpdate.
  keepBroken: fc.integer({ min: 0, max: 9 }),
  // One spec in ten breaks one more rule (the schema's, the validator's, or core/v1's).
  mutation: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 9 },
    { arbitrary: fc.constantFrom(...Object.keys(MUTATIONS)), weight: 1 },
  ),
});

type SpecShape = typeof specRecord extends fc.Arbitrary<infer T> ? T : never;

function buildSpec(g: SpecShape) {
  const spec: Json = {
    containers: g.containers,
    ...(g.initContainers.length ? { initContainers: g.initContainers } : {}),
    ...(g.imagePullSecrets.length ? { imagePullSecrets: g.imagePullSecrets } : {}),
    ...SCOPES[g.scope],
    ...(g.pausedPick === 0 ? { injectionStrategy: { paused: true } } : {}),
    ...(g.updateStrategy ? { updateStrategy: g.updateStrategy } : {}),
    ...(g.revisionHistoryLimit !== undefined ? { revisionHistoryLimit: g.revisionHistoryLimit } : {}),
  };
  const volumes = [...g.volumes];
  const broken = g.keepBroken === 0;
  if (!broken) {
    for (const m of [...g.containers, ...g.initContainers].flatMap((c) => c.volumeMounts ?? []))
      if (!volumes.some((v) => v.name === m.name)) volumes.push({ name: m.name, emptyDir: {} });
    if (g.initContainers.some((c) => c.restartPolicy === 'Always')) spec.updateStrategy = { type: 'NotUpdate' };
  }
  if (volumes.length) spec.volumes = volumes;
  if (g.mutation) MUTATIONS[g.mutation](spec);
  return { spec, matchLabels: g.matchLabels, matchExpressions: g.matchExpressions };
}

const specArb = specRecord.map(buildSpec);
/** Valid SidecarSets only: nothing kept broken, no mutation, injection not paused, no namespace scope. */
const validSpecArb = specRecord.map((g) =>
  buildSpec({ ...g, keepBroken: 1, mutation: undefined, pausedPick: 1, scope: 0 }),
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
      volumeMounts: fc.uniqueArray(
        fc.record({ name: volumeName, mountPath: fc.constantFrom('/conf', '/logs', '/data', '/srv') }),
        { maxLength: 2, selector: (m) => m.mountPath },
      ),
    },
    { requiredKeys: ['name', 'image'] },
  );

const podArb = fc.record({
  namespace: fc.constantFrom(...NS),
  labels: fc.constantFrom<Record<string, string>>({ app: 'web' }, { app: 'db' }, { app: 'web', tier: 'front' }, {}),
  containers: fc.oneof(fc.tuple(appContainer('main')), fc.tuple(appContainer('main'), appContainer('helper'))),
  initContainers: rarely(fc.tuple(fc.record({ name: fc.constant('prep'), image: fc.constant('prep:1') }))),
  imagePullSecrets: fc.uniqueArray(fc.record({ name: fc.constantFrom('regcred', 'own') }), {
    maxLength: 2,
    selector: (s) => s.name,
  }),
  ignore: fc.integer({ min: 0, max: 19 }).map((n) => n === 0), // one pod in 20 opts out of injection
  // Some pods arrive with hash annotations of another SidecarSet (copied from an injected pod): upstream's map form, or
  // its older flat form.
  carried: rarely(fc.constantFrom('map', 'flat')),
});

const LEGACY = 'legacy-set';
const CARRIED: Record<string, Record<string, string>> = {
  map: {
    'kruise.io/sidecarset-hash': JSON.stringify({
      [LEGACY]: { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h1', sidecarSetName: LEGACY, sidecarList: ['old'] },
    }),
    'kruise.io/sidecarset-hash-without-image': JSON.stringify({
      [LEGACY]: { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h2', sidecarSetName: LEGACY, sidecarList: ['old'] },
    }),
    'kruise.io/sidecarset-injected-list': LEGACY,
  },
  flat: {
    'kruise.io/sidecarset-hash': JSON.stringify({ [LEGACY]: 'h1' }),
    'kruise.io/sidecarset-hash-without-image': JSON.stringify({ [LEGACY]: 'h2' }),
  },
};

type PodShape = typeof podArb extends fc.Arbitrary<infer T> ? T : never;

const caseArb = fc.record({
  sets: fc.tuple(specArb, fc.option(specArb, { nil: undefined, freq: 2 })),
  // Half the cases update their first SidecarSet: new images, an added env var, or a new spec (often refused: renamed
  // containers).
  update: fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 4 },
    { arbitrary: fc.constant('image' as const), weight: 2 },
    { arbitrary: fc.constant('env' as const), weight: 1 },
    { arbitrary: specArb, weight: 1 },
  ),
  pods: fc.oneof(fc.tuple(podArb), fc.tuple(podArb, podArb)),
});

function sidecarSet(
  id: string,
  name: string,
  g: { spec: Json; matchLabels: Record<string, string>; matchExpressions: Json[] },
  run: string,
): Json {
  const { selectorExtra, ...spec } = g.spec;
  const expressions = [...g.matchExpressions, ...(selectorExtra ? [selectorExtra] : [])];
  const selector: Json = {
    matchLabels: { [CASE_LABEL]: id, ...g.matchLabels },
    ...(expressions.length ? { matchExpressions: expressions } : {}),
  };
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, labels: { [RUN_LABEL]: run } },
    spec: { selector, ...spec },
  };
}

function pod(id: string, name: string, p: PodShape): V1Pod {
  const containers = p.containers.map((c) => ({
    ...c,
    env: c.env?.length ? c.env : undefined,
    volumeMounts: c.volumeMounts?.length ? c.volumeMounts : undefined,
  }));
  const volumes = [...new Set(containers.flatMap((c) => c.volumeMounts ?? []).map((m) => m.name))].map((n) => ({
    name: n,
    emptyDir: {},
  }));
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: p.namespace,
      labels: { [CASE_LABEL]: id, ...p.labels },
      ...(p.ignore || p.carried
        ? {
            annotations: {
              ...(p.ignore ? { 'kruise.io/sidecarset-inject-ignore': 'true' } : {}),
              ...(p.carried ? CARRIED[p.carried] : {}),
            },
          }
        : {}),
    },
    spec: {
      containers: JSON.parse(JSON.stringify(containers)) as NonNullable<V1Pod['spec']>['containers'],
      ...(p.initContainers ? { initContainers: p.initContainers } : {}),
      ...(volumes.length ? { volumes } : {}),
      ...(p.imagePullSecrets.length ? { imagePullSecrets: p.imagePullSecrets } : {}),
    },
  };
}

/**
 * One case per change of support/sidecarset-invalid-fields.ts (every field upstream's validation
 * reads), each applied to a valid generated SidecarSet, with one pod: the generator reaches every
 * rule, not only those the random mutations above happen to hit.
 */
export function generateInvalidFieldCases(seed: number, run: string): DiffCase[] {
  const fields = Object.entries(INVALID_FIELDS);
  const valid = fc.sample(validSpecArb, { numRuns: fields.length, seed });
  const pods = fc.sample(podArb, { numRuns: fields.length, seed: seed + 1 });
  return fields.map(([, change], i) => {
    const id = `f${i}`;
    const g = valid[i];
    const set = sidecarSet(id, `${id}-a`, structuredClone(g), run);
    change(set);
    return { id, sets: [set], pods: [pod(id, `${id}-p0`, pods[i])] };
  });
}

/** `count` cases from `seed` (same seed, same cases), every name prefixed so a run is recognisable. */
export function generateCases(count: number, seed: number, run: string): DiffCase[] {
  return fc.sample(caseArb, { numRuns: count, seed }).map((g, i) => {
    const id = `c${i}`;
    const sets = [
      sidecarSet(id, `${id}-a`, g.sets[0], run),
      ...(g.sets[1] ? [sidecarSet(id, `${id}-b`, g.sets[1], run)] : []),
    ];
    let update: Json | undefined;
    if (g.update === 'image') {
      update = structuredClone(sets[0].spec);
      update.containers = update.containers.map((c: Json) => ({ ...c, image: `${c.image}-v2` }));
    } else if (g.update === 'env') {
      update = structuredClone(sets[0].spec);
      update.containers = update.containers.map((c: Json) => ({
        ...c,
        env: [...(c.env ?? []), { name: 'UPDATED', value: 'yes' }],
      }));
    } else if (g.update) {
      update = sidecarSet(id, `${id}-a`, g.update, run).spec;
    }
    return { id, sets, ...(update ? { update } : {}), pods: g.pods.map((p, k) => pod(id, `${id}-p${k}`, p)) };
  });
}
