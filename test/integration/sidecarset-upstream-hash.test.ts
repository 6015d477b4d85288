/**
 * Differential test of SidecarSet defaulting and revision hashing against upstream's own code
 * (github.com/openkruise/kruise v1.9.1: apis/apps/defaults/v1alpha1.go SetDefaultsSidecarSet,
 * pkg/control/sidecarcontrol/hash.go, as its mutating webhook pkg/webhook/sidecarset/mutating
 * runs them). Generated SidecarSets cover the container fields the runtime supports; for each,
 * the defaulted containers, the two revision annotations the defaulting webhook records, and
 * the hashes of the undefaulted object must be identical to upstream's. Identical hashes are
 * what make pods injected by either side recognised and updatable in place by the other.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { SidecarSetAnnotations } from '../../lib/contract.js';
import { defaultSidecarSet } from '../../lib/runtime/sidecarset/defaults.js';
import { encode, upstreamSidecarSetHash } from '../../lib/runtime/sidecarset/gojson.js';
import { GO_ROOT } from '../../lib/runtime/sidecarset/gojson.generated.js';
import type { SidecarSet } from '../../lib/runtime/sidecarset/types.js';
import { validateSidecarSet } from '../../lib/runtime/sidecarset/validate.js';
import { upstreamSidecarSetOracle } from './support/sidecarset-oracle.js';

const CASES = 600;
const name = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);
const text = fc.constantFrom('plain', 'a<b>&c', 'ünïcode', '', ' spaced ', '$(VAR)', 'quote"s');
const image = fc.constantFrom(
  'proxy:1',
  'proxy',
  'proxy:latest',
  'registry.local:5000/team/proxy:2',
  'proxy@sha256:' + 'a'.repeat(64),
  'docker.io/library/nginx:1.27',
);
const quantity = fc.constantFrom<string | number>(
  '100m',
  '0.1',
  '1000m',
  '1024Mi',
  '1536Mi',
  '1Gi',
  '1000k',
  '0',
  '512',
  '1.5Gi',
  '0.5Ki',
  '1e3',
  '1000',
  1,
  0.25,
  '1n',
  '250u',
  '2',
);
const resources = fc
  .record(
    {
      limits: fc.dictionary(fc.constantFrom('cpu', 'memory', 'ephemeral-storage'), quantity, { maxKeys: 3 }),
      requests: fc.dictionary(fc.constantFrom('cpu', 'memory'), quantity, { maxKeys: 2 }),
    },
    { requiredKeys: [] },
  )
  .map(({ limits, requests }) => ({
    // Valid for upstream too, which refuses a request over its limit (core/v1): a resource is requested or limited
    // here, not both.
    ...(limits ? { limits } : {}),
    ...(requests
      ? { requests: Object.fromEntries(Object.entries(requests).filter(([k]) => !limits || !(k in limits))) }
      : {}),
  }));
const httpGet = fc.record(
  {
    port: fc.oneof(fc.integer({ min: 1, max: 65535 }), fc.constantFrom('http', 'admin')),
    path: fc.constantFrom('/healthz', '/'),
    scheme: fc.constantFrom('HTTP', 'HTTPS'),
    host: fc.constant('localhost'),
  },
  { requiredKeys: ['port'] },
);
const probe = fc
  .record({
    httpGet: fc.option(httpGet, { nil: undefined }),
    initialDelaySeconds: fc.option(fc.integer({ min: 0, max: 30 }), { nil: undefined }),
    periodSeconds: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    failureThreshold: fc.option(fc.integer({ min: 1, max: 5 }), { nil: undefined }),
  })
  .map((p) => (p.httpGet ? p : { ...p, exec: { command: ['true'] } }));
const env = fc.oneof(
  fc.record({ name, value: text }, { requiredKeys: ['name'] }),
  fc.record({
    name,
    valueFrom: fc.record({
      fieldRef: fc.record(
        { fieldPath: fc.constantFrom('metadata.name', 'spec.nodeName'), apiVersion: fc.constant('v1') },
        { requiredKeys: ['fieldPath'] },
      ),
    }),
  }),
);
const container = fc.record(
  {
    name,
    image,
    command: fc.array(text, { maxLength: 2 }),
    args: fc.array(text, { maxLength: 3 }),
    workingDir: fc.constantFrom('/work', '/'),
    env: fc.array(env, { maxLength: 3 }),
    // Port names unique in a container, as core/v1 (and so upstream) requires.
    ports: fc.uniqueArray(
      fc.record(
        {
          containerPort: fc.integer({ min: 1, max: 65535 }),
          name: fc.constantFrom('http', 'admin'),
          protocol: fc.constantFrom('TCP', 'UDP'),
        },
        { requiredKeys: ['containerPort'] },
      ),
      { maxLength: 2, selector: (p) => p.name ?? p.containerPort },
    ),
    resources,
    // Mount paths unique in a container, as core/v1 (and so upstream) requires.
    volumeMounts: fc.uniqueArray(
      fc.record(
        {
          name,
          mountPath: fc.constantFrom('/data', '/etc/conf'),
          readOnly: fc.boolean(),
          subPath: fc.constantFrom('x', ''),
        },
        { requiredKeys: ['name', 'mountPath'] },
      ),
      { maxLength: 2, selector: (m) => m.mountPath },
    ),
    livenessProbe: probe,
    readinessProbe: probe,
    lifecycle: fc.record({
      preStop: fc.oneof(
        fc.record({ exec: fc.record({ command: fc.array(text, { minLength: 1, maxLength: 2 }) }) }),
        fc.record({ httpGet }),
      ),
    }),
    imagePullPolicy: fc.constantFrom('Always', 'IfNotPresent', 'Never'),
    terminationMessagePolicy: fc.constantFrom('File', 'FallbackToLogsOnError'),
    securityContext: fc.record(
      { runAsUser: fc.integer({ min: 0, max: 2000 }), privileged: fc.boolean(), readOnlyRootFilesystem: fc.boolean() },
      { requiredKeys: [] },
    ),
    stdin: fc.boolean(),
    tty: fc.boolean(),
    podInjectPolicy: fc.constantFrom('BeforeAppContainer', 'AfterAppContainer'),
    shareVolumePolicy: fc.record({ type: fc.constantFrom('enabled', 'disabled') }),
    upgradeStrategy: fc.record({ upgradeType: fc.constant('ColdUpgrade') }),
    transferEnv: fc.array(fc.record({ sourceContainerName: name, envName: name }), { maxLength: 2 }),
    restartPolicy: fc.constant('Always'),
  },
  { requiredKeys: ['name', 'image'] },
);

const sidecarSet = fc
  .record({
    containers: fc.uniqueArray(container, { minLength: 1, maxLength: 3, selector: (c) => c.name }),
    initContainers: fc.uniqueArray(container, { maxLength: 2, selector: (c) => c.name }),
    partition: fc.option(fc.constantFrom(0, 2, '50%'), { nil: undefined }),
  })
  .map(({ containers, initContainers, partition }): SidecarSet => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'generated' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      // restartPolicy is only for init containers (native sidecars); keep it off the others.
      containers: containers.map(({ restartPolicy: _, ...c }) => c) as SidecarSet['spec']['containers'],
      ...(initContainers.length
        ? {
            // Probes and lifecycle hooks only on native sidecars, as core/v1 (and so upstream) requires.
            initContainers: initContainers
              .filter((c) => !containers.some((o) => o.name === c.name))
              .map((c) =>
                c.restartPolicy === 'Always'
                  ? c
                  : (({ livenessProbe: _l, readinessProbe: _r, lifecycle: _h, ...rest }) => rest)(c),
              ) as SidecarSet['spec']['containers'],
          }
        : {}),
      // A native sidecar init container needs updateStrategy NotUpdate (both validators).
      ...(partition !== undefined || initContainers.some((c) => c.restartPolicy === 'Always')
        ? {
            updateStrategy: {
              ...(partition !== undefined ? { partition } : {}),
              ...(initContainers.some((c) => c.restartPolicy === 'Always') ? { type: 'NotUpdate' as const } : {}),
            },
          }
        : {}),
      // Sidecars may mount only spec.volumes (both validators refuse anything else).
      volumes: [
        ...new Set([...containers, ...initContainers].flatMap((c) => (c.volumeMounts ?? []).map((m) => m.name))),
      ].map((n) => ({ name: n, emptyDir: {} })),
    },
  }));

/** JSON with sorted keys: key order is not a difference. */
const sorted = (v: unknown): string =>
  Array.isArray(v)
    ? `[${v.map(sorted).join(',')}]`
    : v && typeof v === 'object'
      ? `{${Object.keys(v)
          .sort()
          .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
          .map((k) => `${JSON.stringify(k)}:${sorted((v as Record<string, unknown>)[k])}`)
          .join(',')}}`
      : JSON.stringify(v);

/** The first path at which two JSON values differ, for a readable failure. */
function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (sorted(a) === sorted(b)) return undefined;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return `${path}: ours ${JSON.stringify(a)}, upstream ${JSON.stringify(b)}`;
}

/** Upstream's Go value of a container list, decoded back: Go's zero values and field set. */
const asGo = (containers: unknown) =>
  JSON.parse(encode(containers ?? [], `[]${GO_ROOT}`, 'spec.containers')) as unknown;

describe('SidecarSet defaulting and revision hash = upstream v1.9.1, differentially', () => {
  const samples = fc.sample(sidecarSet, { numRuns: CASES, seed: 20261123 });
  const oracle = upstreamSidecarSetOracle(samples);

  it(`generates ${CASES} SidecarSets the runtime's validator admits`, () => {
    const refused = samples.map((s) => validateSidecarSet(s)).filter((e) => e.length > 0);
    expect(refused).toEqual([]);
    expect(oracle.filter((o) => o.error)).toEqual([]);
  });

  it('hashes the undefaulted SidecarSet as upstream does', () => {
    const diff = samples.flatMap((s, i) => {
      const ours = { hash: upstreamSidecarSetHash(s.spec), withoutImage: upstreamSidecarSetHash(s.spec, true) };
      return ours.hash === oracle[i].raw.hash && ours.withoutImage === oracle[i].raw.withoutImage
        ? []
        : [{ i, spec: s.spec, ours, upstream: oracle[i].raw }];
    });
    expect(diff.slice(0, 3)).toEqual([]);
  });

  it("defaults containers and the update strategy as upstream does, and records upstream's revision annotations", () => {
    const diff = samples.flatMap((s, i) => {
      const ours = defaultSidecarSet(s);
      const up = oracle[i].defaulted;
      const got = {
        containers: asGo(ours.spec.containers),
        initContainers: ours.spec.initContainers ? asGo(ours.spec.initContainers) : undefined,
        updateStrategy: ours.spec.updateStrategy,
        revisionHistoryLimit: ours.spec.revisionHistoryLimit,
        hash: ours.metadata.annotations?.[SidecarSetAnnotations.hash],
        withoutImage: ours.metadata.annotations?.[SidecarSetAnnotations.hashWithoutImage],
      };
      const want = {
        containers: up.spec.containers,
        initContainers: up.spec.initContainers,
        updateStrategy: up.spec.updateStrategy,
        revisionHistoryLimit: up.spec.revisionHistoryLimit,
        hash: up.hash,
        withoutImage: up.withoutImage,
      };
      const d = firstDifference(got, want);
      return d ? [`case ${i}: ${d}`] : [];
    });
    expect(diff.slice(0, 10)).toEqual([]);
  });
});
