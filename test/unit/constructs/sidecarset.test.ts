import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { sidecarSetCrd } from '../../../lib/constructs/crds/runtime-crds.js';
import {
  InjectRevision,
  InjectRevisionPolicy,
  IntOrPercent,
  PatchPolicy,
  PodInjectPolicy,
  ShareVolumePolicy,
  SidecarSet,
  SidecarSetProps,
  SidecarSetUpdateStrategy,
  SourceContainerName,
  UpdatePriority,
} from '../../../lib/constructs/features/sidecarset.js';
import { validateSidecarSet } from '../../../lib/runtime/sidecarset/validate.js';
import { crdSchema, validateAgainstCrd } from '../structural-schema.js';
import { Manifest } from './synth.js';

const proxy = { name: 'proxy', image: 'envoyproxy/envoy:v1.31.0' };

function synth(props: Partial<SidecarSetProps> = {}): Manifest {
  const chart = new Chart(Testing.app(), 'test');
  new SidecarSet(chart, 'mesh', { selector: { matchLabels: { app: 'web' } }, containers: [proxy], ...props });
  const [object, ...rest] = Testing.synth(chart);
  expect(rest).toEqual([]);
  return object;
}

/** Everything the API accepts, as a user would write it. */
const full: SidecarSetProps = {
  metadata: { name: 'mesh-proxy', labels: { team: 'platform' } },
  selector: { matchLabels: { mesh: 'on' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['batch'] }] },
  namespaceSelector: { matchLabels: { 'istio-injection': 'enabled' } },
  containers: [
    {
      name: 'proxy',
      image: 'envoyproxy/envoy:v1.31.0',
      podInjectPolicy: PodInjectPolicy.BEFORE_APP_CONTAINER,
      args: ['--config-path', '/etc/envoy/envoy.yaml'],
      ports: [{ name: 'admin', containerPort: 15000 }],
      resources: { requests: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('64Mi') } },
      volumeMounts: [{ name: 'envoy-config', mountPath: '/etc/envoy' }],
      readinessProbe: { httpGet: { path: '/ready', port: k8s.IntOrString.fromNumber(15000) } },
    },
    {
      name: 'log-shipper',
      image: 'fluent/fluent-bit:3.1',
      podInjectPolicy: PodInjectPolicy.AFTER_APP_CONTAINER,
      shareVolumePolicy: ShareVolumePolicy.ENABLED,
      transferEnv: [
        { sourceContainerName: 'app', envName: 'APP_NAME' },
        { sourceContainerName: 'app', envNames: ['TZ', 'LANG'] },
      ],
      env: [{ name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }],
    },
  ],
  initContainers: [
    { name: 'iptables', image: 'example.com/mesh-init:1', securityContext: { capabilities: { add: ['NET_ADMIN'] } } },
  ],
  volumes: [{ name: 'envoy-config', configMap: { name: 'envoy' } }],
  imagePullSecrets: ['regcred'],
  updateStrategy: SidecarSetUpdateStrategy.rollingUpdate({
    // A non-zero partition and a selector exclude each other (upstream's validating webhook).
    maxUnavailable: IntOrPercent.percent(20),
    partition: IntOrPercent.count(0),
    paused: false,
    selector: { matchLabels: { canary: 'true' } },
  }),
  injectionStrategy: { paused: false },
  revisionHistoryLimit: 5,
};

describe('SidecarSet', () => {
  it('matches the snapshot (every prop)', () => {
    expect(synth(full)).toMatchSnapshot();
  });

  it('renders a cluster-scoped apps.kruise.io/v1alpha1 SidecarSet that our CRD accepts, pruning nothing', () => {
    const crd = sidecarSetCrd().manifest;
    for (const object of [
      synth(),
      synth(full),
      synth({ updateStrategy: SidecarSetUpdateStrategy.notUpdate(), containers: undefined, initContainers: [proxy] }),
    ]) {
      expect([object.apiVersion, object.kind, object.metadata.namespace]).toEqual([
        'apps.kruise.io/v1alpha1',
        'SidecarSet',
        undefined,
      ]);
      expect(validateAgainstCrd(crd, object)).toEqual([]);
      // spec keeps unknown fields (so the webhook can name them): check the keys ourselves.
      expect(Object.keys(object.spec).filter((k) => !crdSchema(crd).properties.spec.properties[k])).toEqual([]);
    }
  });

  it("renders priority and scatter under upstream's names, and the runtime accepts them", () => {
    const weighted = synth({
      updateStrategy: SidecarSetUpdateStrategy.rollingUpdate({
        priority: UpdatePriority.weighted([{ weight: 50, selector: { matchLabels: { tier: 'gold' } } }]),
        scatter: [{ key: 'zone', value: '*' }],
      }),
    });
    expect(weighted.spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'gold' } } }] },
      scatterStrategy: [{ key: 'zone', value: '*' }],
    });
    const ordered = synth({
      updateStrategy: SidecarSetUpdateStrategy.rollingUpdate({ priority: UpdatePriority.ordered(['rank']) }),
    });
    expect(ordered.spec.updateStrategy.priorityStrategy).toEqual({ orderPriority: [{ orderedKey: 'rank' }] });
    for (const object of [weighted, ordered]) {
      expect(validateSidecarSet(object)).toEqual([]);
      expect(validateAgainstCrd(sidecarSetCrd().manifest, object)).toEqual([]);
    }
  });

  it('renders only what was set, plus the sidecar position (upstream default: before the apps)', () => {
    expect(synth().spec).toEqual({
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'proxy', image: 'envoyproxy/envoy:v1.31.0', podInjectPolicy: 'BeforeAppContainer' }],
    });
  });

  it('renders the upstream field names and shapes', () => {
    const { metadata, spec } = synth(full);
    expect(metadata).toEqual({ name: 'mesh-proxy', labels: { team: 'platform' } });
    expect(spec.containers[0]).toMatchObject({
      resources: { requests: { cpu: '100m', memory: '64Mi' } },
      readinessProbe: { httpGet: { port: 15000 } },
    });
    expect(spec.containers[1]).toMatchObject({
      podInjectPolicy: 'AfterAppContainer',
      shareVolumePolicy: { type: 'enabled' },
      transferEnv: [
        { sourceContainerName: 'app', envName: 'APP_NAME' },
        { sourceContainerName: 'app', envNames: ['TZ', 'LANG'] },
      ],
    });
    expect(spec.initContainers).toEqual([
      { name: 'iptables', image: 'example.com/mesh-init:1', securityContext: { capabilities: { add: ['NET_ADMIN'] } } },
    ]);
    expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      maxUnavailable: '20%',
      partition: 0,
      paused: false,
      selector: { matchLabels: { canary: 'true' } },
    });
    expect(spec.injectionStrategy).toEqual({ paused: false });
    expect(spec.revisionHistoryLimit).toBe(5);
  });

  it('renders NotUpdate, a paused injection and a namespace', () => {
    const { spec } = synth({
      updateStrategy: SidecarSetUpdateStrategy.notUpdate(),
      injectionStrategy: { paused: true },
      namespace: 'apps',
    });
    expect([spec.updateStrategy, spec.injectionStrategy, spec.namespace]).toEqual([
      { type: 'NotUpdate' },
      { paused: true },
      'apps',
    ]);
  });

  it('renders the injection features as upstream spells them, valid for the CRD and the runtime webhook', () => {
    const object = synth({
      metadata: { name: 'canary' },
      containers: [
        {
          ...proxy,
          transferEnv: [{ sourceContainerNameFrom: SourceContainerName.fromLabel('main-container'), envName: 'TZ' }],
        },
      ],
      injectionStrategy: { revision: InjectRevision.customVersion('v1', InjectRevisionPolicy.PARTIAL) },
      patchPodMetadata: [
        { annotations: { 'mesh/config': '{"proxy":1}' }, patchPolicy: PatchPolicy.MERGE_PATCH_JSON },
        { annotations: { 'mesh/owner': 'platform' } },
      ],
    });
    const { spec, metadata } = object;
    expect(spec.injectionStrategy).toEqual({ revision: { customVersion: 'v1', policy: 'Partial' } });
    expect(spec.containers[0].transferEnv).toEqual([
      {
        sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['main-container']" } },
        envName: 'TZ',
      },
    ]);
    expect(spec.patchPodMetadata).toEqual([
      { annotations: { 'mesh/config': '{"proxy":1}' }, patchPolicy: 'MergePatchJson' },
      { annotations: { 'mesh/owner': 'platform' }, patchPolicy: 'Retain' },
    ]);
    expect(validateAgainstCrd(sidecarSetCrd().manifest, object)).toEqual([]);
    const whitelist = '{"rules":[{"allowedAnnotationKeyExprs":["^mesh/"]}]}';
    expect(validateSidecarSet({ metadata, spec }, { patchMetadata: { whitelist } })).toEqual([]);
    expect(
      synth({ injectionStrategy: { revision: InjectRevision.revisionName('mesh-abc') } }).spec.injectionStrategy,
    ).toEqual({ revision: { revisionName: 'mesh-abc', policy: 'Always' } });
  });

  it('rejects bad injection features at synth with the rule the manager applies', () => {
    expect(() => SourceContainerName.fromAnnotation('bad key')).toThrow(
      /sourceContainerNameFrom: fieldPath: "bad key" is not a valid annotation key/,
    );
    expect(() => InjectRevision.customVersion('')).toThrow(/injectionStrategy\.revision\.customVersion: is empty/);
    expect(() =>
      synth({
        patchPodMetadata: [
          { annotations: { a: '1' } },
          { annotations: { a: '2' }, patchPolicy: PatchPolicy.OVERWRITE },
        ],
      }),
    ).toThrow(/patchPodMetadata\[1\]\.annotations: key "a" is already patched by an earlier entry/);
    expect(() => synth({ patchPodMetadata: [{ annotations: {} }] })).toThrow(
      /patchPodMetadata\[0\]\.annotations: is required/,
    );
    // Upstream validates volumes as pod volumes: exactly one source (the contract's rule, shared with the webhook).
    expect(() => synth({ volumes: [{ name: 'certs' }] })).toThrow(
      /volumes\[0\]: has no volume source; set one, e.g. emptyDir: \{\} \(the manager refuses it, as upstream\)/,
    );
  });

  it('exposes its ApiObject, name and container names', () => {
    const chart = new Chart(Testing.app(), 'test');
    const s = new SidecarSet(chart, 'mesh', full);
    expect([s.apiObject.kind, s.name, s.containerNames]).toEqual([
      'SidecarSet',
      'mesh-proxy',
      ['proxy', 'log-shipper', 'iptables'],
    ]);
    expect(
      new SidecarSet(chart, 'generated', {
        selector: { matchLabels: { app: 'other' } },
        containers: [{ name: 'other', image: 'x:1' }],
        namespace: 'elsewhere',
      }).name,
    ).toMatch(/^test-generated-/);
  });

  it('renders int-or-percent values as Kubernetes does', () => {
    expect([IntOrPercent.count(3), IntOrPercent.percent(25)].map((v) => [v.toString(), v._toKube()])).toEqual([
      ['3', 3],
      ['25%', '25%'],
    ]);
  });
});

describe('SidecarSet validation', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'a namespace in metadata',
      () => synth({ metadata: { name: 'x', namespace: 'apps' } }),
      /^metadata\.namespace: is set, but a SidecarSet is cluster-scoped \(got "apps"\)\. Fix: remove metadata\.namespace/,
    ],
    [
      'a bad name',
      () => synth({ metadata: { name: 'Mesh_Proxy' } }),
      /^metadata\.name: is not a valid DNS subdomain .*\(got "Mesh_Proxy"\)\. Fix:/,
    ],
    [
      'no containers at all',
      () => synth({ containers: [] }),
      /^containers: is empty, and so is initContainers.*\(got \[\]\)\. Fix: add at least one container/,
    ],
    [
      'a container without an image',
      () => synth({ containers: [{ name: 'proxy' }] }),
      /^containers\[0\]\.image: is required.*\(got undefined\)\. Fix: set image/,
    ],
    [
      'a bad container name',
      () => synth({ containers: [{ name: 'Proxy', image: 'x' }] }),
      /^containers\[0\]\.name: is not a valid DNS label .*\(got "Proxy"\)/,
    ],
    [
      'a name used twice',
      () => synth({ initContainers: [{ name: 'proxy', image: 'x' }] }),
      /^initContainers\[0\]\.name: is already used by containers\[0\] \(got "proxy"\)\. Fix: give every container and init container its own name/,
    ],
    [
      'transferEnv without a variable',
      () => synth({ containers: [{ ...proxy, transferEnv: [{ sourceContainerName: 'app' }] }] }),
      /^containers\[0\]\.transferEnv\[0\]: names no env var to copy .*Fix: set envName, or envNames/,
    ],
    [
      'transferEnv without a source',
      () => synth({ containers: [{ ...proxy, transferEnv: [{ sourceContainerName: '', envName: 'TZ' }] }] }),
      /^containers\[0\]\.transferEnv\[0\]\.sourceContainerName: is required/,
    ],
    [
      'an unknown selector operator',
      () => synth({ selector: { matchExpressions: [{ key: 'app', operator: 'Equals', values: ['web'] }] } }),
      /^selector\.matchExpressions\[0\]\.operator: is not a selector operator \(got "Equals"\)\. Fix: use one of In, NotIn, Exists, DoesNotExist/,
    ],
    [
      'In without values',
      () => synth({ selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }),
      /^selector\.matchExpressions\[0\]\.values: must not be empty for In/,
    ],
    [
      'a bad label value',
      () => synth({ selector: { matchLabels: { app: 'web app' } } }),
      /^selector\.matchLabels\["app"\]: is not a valid label value \(got "web app"\)/,
    ],
    [
      'namespace with namespaceSelector',
      () => synth({ namespace: 'apps', namespaceSelector: { matchLabels: { mesh: 'on' } } }),
      /^namespaceSelector: cannot be combined with namespace: upstream v1.8.3 refuses the pair, v1.9.1 and the runtime keep namespace and silently drop namespaceSelector .*Fix: set either namespace or namespaceSelector/,
    ],
    ['a bad namespace', () => synth({ namespace: 'Apps' }), /^namespace: is not a valid DNS label/],
    [
      'kube-system',
      () => synth({ namespace: 'kube-system' }),
      /^namespace: is never injected: the manager leaves kube-system .*Fix: choose an application namespace/,
    ],
    [
      'a duplicated volume',
      () =>
        synth({
          volumes: [
            { name: 'v', emptyDir: {} },
            { name: 'v', emptyDir: {} },
          ],
        }),
      /^volumes\[1\]\.name: is duplicated \(got "v"\)/,
    ],
    [
      'a bad pull secret',
      () => synth({ imagePullSecrets: ['Reg Cred'] }),
      /^imagePullSecrets\[0\]: is not a valid DNS subdomain/,
    ],
    [
      'a negative history limit',
      () => synth({ revisionHistoryLimit: -1 }),
      /^revisionHistoryLimit: must be an integer >= 0 \(got -1\)/,
    ],
    [
      'maxUnavailable 0',
      () => SidecarSetUpdateStrategy.rollingUpdate({ maxUnavailable: IntOrPercent.percent(0) }),
      /^updateStrategy\.maxUnavailable: would never let a ready pod be updated \(got "0%"\)\. Fix: use at least IntOrPercent\.count\(1\)/,
    ],
    [
      'a bad update selector',
      () =>
        SidecarSetUpdateStrategy.rollingUpdate({
          selector: { matchExpressions: [{ key: 'canary', operator: 'Exists', values: ['x'] }] },
        }),
      /^updateStrategy\.selector\.matchExpressions\[0\]\.values: must be empty for Exists/,
    ],
    // Upstream's UpdatePriorityStrategy / UpdateScatterStrategy FieldsValidation (rules in the contract):
    [
      'a priority weight above 100',
      () => UpdatePriority.weighted([{ weight: 101, selector: { matchLabels: { tier: 'gold' } } }]),
      /^updateStrategy\.priorityStrategy\.weightPriority\[0\]\.weight: must be a whole number from 0 to 100/,
    ],
    [
      'a weighted priority with an empty selector',
      () => UpdatePriority.weighted([{ weight: 10, selector: {} }]),
      /^updateStrategy\.priorityStrategy\.weightPriority\[0\]\.matchSelector: can not be empty/,
    ],
    [
      'a bad weighted priority selector',
      () => UpdatePriority.weighted([{ weight: 10, selector: { matchLabels: { 'bad key': 'x' } } }]),
      /^updateStrategy\.priority\.weighted\[0\]\.selector\.matchLabels: is not a valid label key/,
    ],
    [
      'an empty ordered key',
      () => UpdatePriority.ordered(['']),
      /^updateStrategy\.priorityStrategy\.orderPriority\[0\]\.orderedKey: can not be empty/,
    ],
    [
      'a scatter term twice',
      () =>
        SidecarSetUpdateStrategy.rollingUpdate({
          scatter: [
            { key: 'zone', value: 'a' },
            { key: 'zone', value: 'a' },
          ],
        }),
      /^updateStrategy\.scatterStrategy\[1\]: duplicated key=zone value=a/,
    ],
    [
      'a percentage above 100',
      () => IntOrPercent.percent(120),
      /^IntOrPercent\.percent: must be a whole percentage from 0 to 100 \(got 120\)/,
    ],
    ['a negative count', () => IntOrPercent.count(-1), /^IntOrPercent\.count: must be a whole number >= 0 \(got -1\)/],
    // Upstream's validating webhook (pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go):
    [
      'an empty selector',
      () => synth({ selector: {} }),
      /^selector: is empty \(got \{\}\)\. Fix: select the pods to inject/,
    ],
    [
      'a partition with an update selector',
      () =>
        SidecarSetUpdateStrategy.rollingUpdate({
          partition: IntOrPercent.count(2),
          selector: { matchLabels: { canary: 'true' } },
        }),
      /^updateStrategy\.partition: partition and selector cannot be used together \(upstream refuses it\); set one \(got "2"\)/,
    ],
    [
      'a native sidecar init container with RollingUpdate',
      () => synth({ initContainers: [{ name: 'native', image: 'x:1', restartPolicy: 'Always' }] }),
      /^initContainers\[0\]\.restartPolicy: is a native sidecar .*Fix: set updateStrategy: SidecarSetUpdateStrategy\.notUpdate\(\)/,
    ],
    [
      'a mount of a volume the SidecarSet does not have',
      () => synth({ containers: [{ ...proxy, volumeMounts: [{ name: 'nowhere', mountPath: '/x' }] }] }),
      /^containers\[0\]\.volumeMounts\[0\]\.name: is not a volume of the SidecarSet; add it to volumes or remove the mount \(got "nowhere"\)/,
    ],
  ];

  it.each(cases)('rejects %s, naming the prop, the value and the fix', (_name, build, message) => {
    expect(build).toThrow(message);
  });

  it('rejects two SidecarSets injecting the same container into pods both may select, at synth', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    new SidecarSet(chart, 'a', { selector: { matchLabels: { app: 'web' } }, containers: [proxy] });
    // Upstream (pkg/util/selector.go IsSelectorOverlapping) deems `tier Exists` disjoint from `app: web` (a key the
    // other never names), `app Exists` not.
    new SidecarSet(chart, 'b', {
      selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] },
      containers: [proxy],
    });
    // Disjoint: different values of the same key, or different namespaces.
    new SidecarSet(chart, 'c', { selector: { matchLabels: { app: 'db' } }, namespace: 'apps', containers: [proxy] });
    new SidecarSet(chart, 'd', {
      selector: { matchLabels: { app: 'web' } },
      namespace: 'other',
      containers: [{ name: 'metrics', image: 'm:1' }],
    });
    expect(() => app.synth()).toThrow(
      /containers: "proxy" of SidecarSet test\/a is also injected by test\/b into pods both select;.*Fix: rename the container/,
    );
    try {
      app.synth();
    } catch (e) {
      const message = (e as Error).message;
      expect(message).not.toMatch(/test\/a is also injected by test\/c/);
      expect(message).not.toMatch(/test\/d/);
    }
  });

  it('as upstream (validateSidecarConflict): same-named volumes that differ conflict, an init container and a container of one name do not', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    const selector = { matchLabels: { app: 'web' } };
    new SidecarSet(chart, 'a', {
      selector,
      containers: [{ ...proxy, volumeMounts: [{ name: 'conf', mountPath: '/conf' }] }],
      volumes: [{ name: 'conf', emptyDir: {} }],
    });
    new SidecarSet(chart, 'b', {
      selector,
      containers: [{ name: 'agent', image: 'a:1', volumeMounts: [{ name: 'conf', mountPath: '/conf' }] }],
      initContainers: [{ name: 'proxy', image: 'init:1' }],
      volumes: [{ name: 'conf', configMap: { name: 'x' } }],
    });
    expect(() => app.synth()).toThrow(
      /volumes: "conf" of SidecarSet test\/a differs from the volume of that name in test\/b into pods both select;.*Fix: make the volumes identical or rename one/,
    );
    try {
      app.synth();
    } catch (e) {
      expect((e as Error).message).not.toMatch(/containers: "proxy"/);
    }
  });
});
