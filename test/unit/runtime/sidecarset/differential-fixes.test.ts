// Differences from the real upstream kruise-manager v1.8.3 found by
// test/integration/sidecarset-differential.test.ts, each pinned here against upstream's source.
import { describe, expect, it } from '@jest/globals';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { findConflicts, validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';
import {
  SidecarSetAnnotations,
  upstreamNamespacesOverlap,
  upstreamSelectorsOverlap,
} from '../../../../lib/contract.js';
import { injectSidecars } from '../../../../lib/runtime/sidecarset/inject.js';
import { sidecarSetValidatingWebhook } from '../../../../lib/runtime/sidecarset/webhooks.js';
import type { AdmissionRequest } from '../../../../lib/runtime/webhook/admission.js';
import { Logger } from '../../../../lib/runtime/log.js';

const base = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
  metadata: { name: 's' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }], ...spec },
});

describe("the SidecarSet upstream stores (pkg/webhook/sidecarset/mutating: a patch to Go's encoding of the defaulted object)", () => {
  it('drops empty omitempty lists and encodes sidecars as Go does (apis/apps/v1alpha1/sidecarset_types.go)', () => {
    const s = defaultSidecarSet(
      base({
        containers: [{ name: 'proxy', image: 'proxy:1', env: [], volumeMounts: [], transferEnv: [] }],
        initContainers: [],
        imagePullSecrets: [],
      }),
    );
    expect(s.spec.containers).toEqual([
      {
        name: 'proxy',
        image: 'proxy:1',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
        podInjectPolicy: 'BeforeAppContainer',
        upgradeStrategy: { upgradeType: 'ColdUpgrade' },
        shareVolumePolicy: { type: 'disabled' },
      },
    ]);
    expect(s.spec).not.toHaveProperty('initContainers');
    expect(s.spec).not.toHaveProperty('imagePullSecrets');
  });

  it('stores injectionStrategy as {} (a struct, which omitempty never omits)', () => {
    expect(defaultSidecarSet(base({})).spec.injectionStrategy).toEqual({});
    expect(defaultSidecarSet(base({ injectionStrategy: { paused: true } })).spec.injectionStrategy).toEqual({
      paused: true,
    });
  });

  it('defaults volumes as core/v1 does (apis/apps/defaults/pod.go SetDefaultPodVolumes)', () => {
    const s = defaultSidecarSet(
      base({
        volumes: [
          { name: 'bare' },
          { name: 'cm', configMap: { name: 'a' } },
          { name: 'sec', secret: { secretName: 'b', defaultMode: 256 } },
          { name: 'host', hostPath: { path: '/x' } },
          { name: 'down', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
          { name: 'proj', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
        ],
      }),
    );
    expect(s.spec.volumes).toEqual([
      { name: 'bare', emptyDir: {} },
      { name: 'cm', configMap: { name: 'a', defaultMode: 420 } },
      { name: 'sec', secret: { secretName: 'b', defaultMode: 256 } },
      { name: 'host', hostPath: { path: '/x', type: '' } },
      {
        name: 'down',
        downwardAPI: {
          defaultMode: 420,
          items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } }],
        },
      },
      {
        name: 'proj',
        projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }] },
      },
    ]);
  });
});

describe('SidecarSet UPDATE (pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go validateSidecarContainerConflict)', () => {
  // The rule runs inside validateSidecarSet when the webhook passes the stored object; only its own findings count
  // here.
  const updateConflicts = (next: SidecarSet, previous: SidecarSet) =>
    validateSidecarSet(next, { previous }).filter((e) => /stored SidecarSet|is immutable/.test(e));
  const stored = defaultSidecarSet(
    base({
      containers: [
        { name: 'proxy', image: 'proxy:1' },
        { name: 'agent', image: 'agent:1' },
      ],
    }),
  );
  const withContainers = (containers: SidecarSet['spec']['containers']) => defaultSidecarSet(base({ containers }));

  it('accepts changing images or dropping a container', () => {
    expect(updateConflicts(withContainers([{ name: 'proxy', image: 'proxy:2' }]), stored)).toEqual([]);
  });

  it('refuses a container the stored SidecarSet does not have (adding or renaming)', () => {
    expect(
      updateConflicts(
        withContainers([
          { name: 'proxy', image: 'proxy:1' },
          { name: 'logger', image: 'l:1' },
        ]),
        stored,
      ),
    ).toEqual([
      expect.stringMatching(/^spec\.containers\[1\]\.name: container "logger" is not in the stored SidecarSet/),
    ]);
  });

  it('refuses a changed upgradeType, and ignores init containers', () => {
    const changed = withContainers([
      { name: 'proxy', image: 'proxy:1', upgradeStrategy: { upgradeType: 'HotUpgrade' } },
    ]);
    expect(updateConflicts(changed, stored)).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.upgradeStrategy\.upgradeType: is immutable \(was "ColdUpgrade"\)/),
    ]);
    expect(
      updateConflicts(
        defaultSidecarSet(
          base({ containers: stored.spec.containers, initContainers: [{ name: 'new-init', image: 'i:1' }] }),
        ),
        stored,
      ),
    ).toEqual([]);
  });

  it('is enforced by the validating webhook on UPDATE only', async () => {
    const hook = sidecarSetValidatingWebhook({ sidecarSets: () => [stored], namespaceLabels: () => ({}) });
    const renamed = withContainers([{ name: 'renamed', image: 'proxy:1' }]);
    const review = (operation: 'CREATE' | 'UPDATE') =>
      ({
        uid: 'u',
        apiVersion: 'admission.k8s.io/v1',
        operation,
        kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'SidecarSet' },
        resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'sidecarsets' },
        name: 's',
        userInfo: { username: 't' },
        object: renamed,
        ...(operation === 'UPDATE' ? { oldObject: stored } : {}),
        dryRun: false,
      }) as unknown as AdmissionRequest;
    const ctx = { signal: new AbortController().signal, logger: new Logger({}, 'error') };
    expect((await hook.handle(review('UPDATE'), ctx)).allowed).toBe(false);
    expect((await hook.handle(review('CREATE'), ctx)).allowed).toBe(true);
  });
});

describe('which SidecarSets upstream deems overlapping (lib/contract/sidecarset.ts)', () => {
  const ml = (matchLabels: Record<string, string>) => ({ matchLabels });
  const ex = (key: string, operator: string, values?: string[]) => ({
    matchExpressions: [{ key, operator, ...(values ? { values } : {}) }],
  });
  // pkg/util/selector_test.go TestSelectorConflict, as facts.
  it.each([
    [ml({ a: 'h' }), ml({ a: 'h' }), true],
    [ml({ a: 'h' }), ml({ a: 'i' }), false],
    [ml({ a: 'h' }), ml({ b: 'i' }), true],
    [ml({ a: 'h', b: 'i', c: 'j' }), ml({ a: 'h', b: 'x', c: 'j' }), false],
    [ml({ a: 'h' }), ex('a', 'In', ['h', 'i', 'j']), true],
    [ml({ a: 'h' }), ex('a', 'In', ['i', 'j']), false],
    [ex('a', 'NotIn', ['h', 'i']), ml({ a: 'h' }), false],
    [ml({ a: 'h' }), ex('a', 'Exists'), true],
    [ex('a', 'DoesNotExist'), ml({ a: 'h' }), false],
    // Found by the differential test: Exists on a key the other selector never names is "disjoint" upstream.
    [ml({ app: 'web' }), ex('tier', 'Exists'), false],
  ])('upstreamSelectorsOverlap(%j, %j) is %s', (a, b, overlap) => {
    expect(upstreamSelectorsOverlap(a, b)).toBe(overlap);
  });

  // pkg/webhook/sidecarset/validating/utils.go isSidecarSetNamespaceOverlapping, v1.9.1: on the v1beta1 forms.
  it('reads namespaces as upstream v1.9.1 does: a namespace is a metadata.name selector, overlap is syntax alone', () => {
    const teamA = { matchLabels: { team: 'a' } };
    const teamB = { matchLabels: { team: 'b' } };
    expect(upstreamNamespacesOverlap({ namespace: 'apps' }, { namespace: 'other' })).toBe(false);
    expect(upstreamNamespacesOverlap({ namespace: 'apps' }, { namespace: 'apps' })).toBe(true);
    // Different keys are never disjoint, whatever the namespaces' labels (v1.8.3 looked the namespace up).
    expect(upstreamNamespacesOverlap({ namespace: 'other' }, { namespaceSelector: teamA })).toBe(true);
    expect(upstreamNamespacesOverlap({ namespaceSelector: teamA }, { namespace: 'apps' })).toBe(true);
    expect(upstreamNamespacesOverlap({ namespaceSelector: teamA }, { namespaceSelector: teamB })).toBe(false);
    expect(upstreamNamespacesOverlap({}, { namespace: 'apps' })).toBe(true);
    // The namespace wins over a namespaceSelector beside it (ConvertTo).
    expect(
      upstreamNamespacesOverlap({ namespace: 'apps', namespaceSelector: teamA }, { namespaceSelector: teamB }),
    ).toBe(true);
    expect(upstreamNamespacesOverlap({ namespace: 'apps', namespaceSelector: teamA }, { namespace: 'other' })).toBe(
      false,
    );
    const byName = { matchLabels: { 'kubernetes.io/metadata.name': 'apps' } };
    expect(upstreamNamespacesOverlap({ namespaceSelector: byName }, { namespace: 'other' })).toBe(false);
    expect(upstreamNamespacesOverlap({ namespaceSelector: byName }, { namespace: 'apps' })).toBe(true);
  });

  it("the runtime's conflict check uses them: conflicts exactly where upstream v1.9.1 sees overlapping namespaces", () => {
    const a = defaultSidecarSet(base({ namespace: 'apps', volumes: [{ name: 'v', emptyDir: {} }] }));
    const b = defaultSidecarSet({
      ...base({
        namespaceSelector: { matchLabels: { team: 'b' } },
        volumes: [{ name: 'v', configMap: { name: 'x' } }],
      }),
      metadata: { name: 'b' },
    });
    const c = defaultSidecarSet({ ...base({ namespace: 'other' }), metadata: { name: 'c' } });
    const conflicts = [
      expect.stringMatching(/^spec\.containers: container "proxy"/),
      expect.stringMatching(/^spec\.volumes: volume "v" differs/),
    ];
    expect(findConflicts(b, [a])).toEqual(conflicts);
    expect(findConflicts(a, [b])).toEqual(conflicts);
    expect(findConflicts(c, [a])).toEqual([]);
  });
});

describe('pod hash annotations (pkg/control/sidecarcontrol/util.go: a Go map, marshalled with sorted keys)', () => {
  it('list SidecarSets by name, whatever the injection order', () => {
    const scoped = defaultSidecarSet({
      ...base({ namespace: 'apps', containers: [{ name: 'b', image: 'b:1' }] }),
      metadata: { name: 'zz' },
    });
    const wide = defaultSidecarSet({
      ...base({ containers: [{ name: 'a', image: 'a:1' }] }),
      metadata: { name: 'aa' },
    });
    const pod = {
      metadata: { name: 'p', namespace: 'apps', labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'm:1' }] },
    };
    const { pod: injected } = injectSidecars(pod, [scoped, wide], new Date(0));
    for (const key of [SidecarSetAnnotations.hash, SidecarSetAnnotations.hashWithoutImage]) {
      expect(Object.keys(JSON.parse(injected.metadata!.annotations![key]) as object)).toEqual(['aa', 'zz']);
    }
  });
});

describe('SidecarSet validation found missing by the differential test (pkg/webhook/sidecarset/validating validateContainersForSidecarSet: core/v1 pod rules)', () => {
  const valid = (spec: Partial<SidecarSet['spec']>) => validateSidecarSet(base(spec));
  it('refuses duplicate port names in a container', () => {
    expect(
      valid({
        containers: [
          {
            name: 'proxy',
            image: 'p:1',
            ports: [
              { name: 'p', containerPort: 1 },
              { name: 'p', containerPort: 2 },
            ],
          },
        ],
      }),
    ).toEqual([expect.stringMatching(/^spec\.containers\[0\]\.ports\[1\]\.name: "p" is duplicated/)]);
    expect(
      valid({ containers: [{ name: 'proxy', image: 'p:1', ports: [{ containerPort: 1 }, { containerPort: 2 }] }] }),
    ).toEqual([]);
  });

  it('refuses a request over its limit, comparing quantities', () => {
    const withResources = (resources: object) => valid({ containers: [{ name: 'proxy', image: 'p:1', resources }] });
    expect(withResources({ limits: { cpu: '1' }, requests: { cpu: '2' } })).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.resources\.requests\.cpu: "2" must be less than or equal/),
    ]);
    expect(withResources({ limits: { cpu: '1', memory: '1Gi' }, requests: { cpu: '500m', memory: '1024Mi' } })).toEqual(
      [],
    );
    expect(withResources({ limits: { memory: '1e3' }, requests: { memory: '1k' } })).toEqual([]);
    expect(withResources({ limits: { memory: '1k' }, requests: { memory: '1Ki' } })).toHaveLength(1);
  });

  it('accepts any namespace string, as upstream (one that is not a valid name selects no pod)', () => {
    expect(valid({ namespace: 'Bad_NS' })).toEqual([]);
  });

  it('stores an empty image pull secret name as {} (LocalObjectReference name is omitempty)', () => {
    expect(defaultSidecarSet(base({ imagePullSecrets: [{ name: '' }, { name: 'r' }] })).spec.imagePullSecrets).toEqual([
      {},
      { name: 'r' },
    ]);
  });
});

describe('more core/v1 container rules upstream applies to sidecars (k8s pkg/apis/core/validation: validateEnv, validateProbe)', () => {
  const container = (extra: object) =>
    validateSidecarSet(base({ containers: [{ name: 'proxy', image: 'p:1', ...extra }] }));
  it('refuses an env var name core/v1 refuses', () => {
    expect(container({ env: [{ name: '1 BAD', value: 'x' }] })).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.env\[0\]\.name: "1 BAD" is not a valid environment variable name/),
    ]);
    expect(
      container({
        env: [
          { name: 'my.env-name', value: 'x' },
          { name: '_X1', value: 'y' },
        ],
      }),
    ).toEqual([]);
  });
  it('wants exactly one handler per probe', () => {
    expect(container({ livenessProbe: { periodSeconds: 3 } })).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.livenessProbe: must specify a handler type/),
    ]);
    expect(container({ readinessProbe: { exec: { command: ['true'] }, tcpSocket: { port: 1 } } })).toEqual([
      expect.stringMatching(/may not specify more than one handler type \(has exec, tcpSocket\)/),
    ]);
    expect(container({ startupProbe: { grpc: { port: 1 } } })).toEqual([]);
  });
});

describe('hash annotations carried by a new pod (pkg/webhook/pod/mutating/sidecarset.go: read, then re-encoded as SidecarSetUpgradeSpec)', () => {
  const set = defaultSidecarSet(base({}));
  const pod = (annotations: Record<string, string>) => ({
    metadata: { name: 'p', namespace: 'apps', labels: { app: 'web' }, annotations },
    spec: { containers: [{ name: 'main', image: 'm:1' }] },
  });
  const read = (p: { metadata?: { annotations?: Record<string, string> } }) =>
    JSON.parse(p.metadata!.annotations![SidecarSetAnnotations.hash]) as Record<string, unknown>;

  it('writes the older flat form as upstream converts it: zero timestamp and no list, both null', () => {
    const { pod: out } = injectSidecars(
      pod({ [SidecarSetAnnotations.hash]: '{"old":"h1"}' }),
      [set],
      new Date('2026-11-23T10:00:00.456Z'),
    );
    expect(JSON.stringify(read(out))).toBe(
      '{"old":{"updateTimestamp":null,"hash":"h1","sidecarSetName":"old","sidecarList":null},' +
        `"s":{"updateTimestamp":"2026-11-23T10:00:00Z","hash":"${set.metadata.annotations![SidecarSetAnnotations.hash]}","sidecarSetName":"s","sidecarList":["proxy"]}}`,
    );
  });

  it('re-encodes map entries in Go field order, keeping controllerRevision', () => {
    const carried = {
      old: {
        sidecarList: ['x'],
        controllerRevision: 'old-1',
        sidecarSetName: 'old',
        hash: 'h',
        updateTimestamp: '2026-01-01T00:00:00Z',
      },
    };
    const { pod: out } = injectSidecars(
      pod({ [SidecarSetAnnotations.hash]: JSON.stringify(carried) }),
      [set],
      new Date(0),
    );
    expect(JSON.stringify(read(out).old)).toBe(
      '{"updateTimestamp":"2026-01-01T00:00:00Z","hash":"h","sidecarSetName":"old","sidecarList":["x"],"controllerRevision":"old-1"}',
    );
  });
});
