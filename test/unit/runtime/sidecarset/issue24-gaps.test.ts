// SidecarSets upstream v1.8.3 refuses and this runtime admitted (issue 24, "what SidecarSet's
// differential test did not reach"), and the in-place update that did not re-apply
// patchPodMetadata. Each case cites the upstream code that decides it.
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import { injectSidecars } from '../../../../lib/runtime/sidecarset/inject.js';
import { inPlaceUpdatePatch } from '../../../../lib/runtime/sidecarset/podupdate.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';
import { applyPatch } from './upstream-fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** A valid SidecarSet, defaulted as the mutating webhook stores it; `change` breaks one thing. */
function stored(change: (s: Json) => void = () => undefined): SidecarSet {
  const s: Json = {
    metadata: { name: 'proxy-set' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'proxy', image: 'proxy:1', volumeMounts: [{ name: 'conf', mountPath: '/conf' }] }],
      volumes: [
        { name: 'conf', emptyDir: {} },
        { name: 'logs', emptyDir: {} },
      ],
    },
  };
  change(s);
  return defaultSidecarSet(s as SidecarSet);
}

const errorsOf = (change: (s: Json) => void) => validateSidecarSet(stored(change));
const proxy = (s: Json) => s.spec.containers[0];

describe('sidecars are refused as core pod validation refuses them (validateContainersForSidecarSet -> ValidatePodCreate)', () => {
  it('accepts the valid base', () => {
    expect(errorsOf(() => undefined)).toEqual([]);
  });

  it.each<[string, (s: Json) => void, RegExp]>([
    [
      'containerPort out of range',
      (s) => (proxy(s).ports = [{ containerPort: 70000 }]),
      /ports\[0\]\.containerPort: 70000 must be between 1 and 65535/,
    ],
    ['containerPort missing', (s) => (proxy(s).ports = [{ name: 'admin' }]), /ports\[0\]\.containerPort: is required/],
    ['hostPort out of range', (s) => (proxy(s).ports = [{ containerPort: 80, hostPort: 65536 }]), /hostPort: 65536/],
    [
      'port name over 15 characters',
      (s) => (proxy(s).ports = [{ containerPort: 80, name: 'metrics-endpoint' }]),
      /ports\[0\]\.name: "metrics-endpoint" must be no more than 15 characters/,
    ],
    [
      'port name without a letter',
      (s) => (proxy(s).ports = [{ containerPort: 80, name: '8080' }]),
      /at least one letter/,
    ],
    ['port name with --', (s) => (proxy(s).ports = [{ containerPort: 80, name: 'a--b' }]), /consecutive hyphens/],
    [
      'port protocol unknown',
      (s) => (proxy(s).ports = [{ containerPort: 80, protocol: 'HTTP' }]),
      /protocol: "HTTP" must be one of TCP, UDP, SCTP/,
    ],
    [
      'resource name not standard',
      (s) => (proxy(s).resources = { limits: { gpu: '1' } }),
      /resources\.limits\.gpu: "gpu" must be a standard resource/,
    ],
    [
      'resource name invalid',
      (s) => (proxy(s).resources = { requests: { 'a/b/c': '1' } }),
      /"a\/b\/c" is not a valid resource name/,
    ],
    [
      'negative quantity',
      (s) => (proxy(s).resources = { requests: { cpu: '-1' } }),
      /requests\.cpu: "-1" must be greater than or equal to 0/,
    ],
    [
      'extended resource request without limit',
      (s) => (proxy(s).resources = { requests: { 'example.com/gpu': '1' } }),
      /a limit of example.com\/gpu must be set/,
    ],
    [
      'extended resource fractional',
      (s) => (proxy(s).resources = { limits: { 'example.com/gpu': '500m' } }),
      /must be an integer/,
    ],
    [
      'imagePullPolicy unknown',
      (s) => (proxy(s).imagePullPolicy = 'Sometimes'),
      /imagePullPolicy: "Sometimes" must be Always, IfNotPresent or Never/,
    ],
    [
      'terminationMessagePolicy unknown',
      (s) => (proxy(s).terminationMessagePolicy = 'Log'),
      /terminationMessagePolicy: "Log"/,
    ],
    [
      'duplicate mountPath',
      (s) => proxy(s).volumeMounts.push({ name: 'logs', mountPath: '/conf' }),
      /volumeMounts\[1\]\.mountPath: "\/conf" must be unique/,
    ],
    [
      'absolute subPath',
      (s) => (proxy(s).volumeMounts[0].subPath = '/etc'),
      /subPath: "\/etc" must be a relative path/,
    ],
    ['subPath with ..', (s) => (proxy(s).volumeMounts[0].subPath = 'a/../..'), /must not contain '\.\.'/],
    [
      'mountPropagation unknown',
      (s) => (proxy(s).volumeMounts[0].mountPropagation = 'Both'),
      /mountPropagation: "Both"/,
    ],
    [
      'negative probe period',
      (s) => (proxy(s).livenessProbe = { exec: { command: ['true'] }, periodSeconds: -1 }),
      /livenessProbe\.periodSeconds: -1 must be greater than or equal to 0/,
    ],
    [
      'negative initialDelaySeconds',
      (s) => (proxy(s).readinessProbe = { tcpSocket: { port: 80 }, initialDelaySeconds: -5 }),
      /readinessProbe\.initialDelaySeconds: -5/,
    ],
    [
      'liveness successThreshold not 1',
      (s) => (proxy(s).livenessProbe = { exec: { command: ['true'] }, successThreshold: 2 }),
      /livenessProbe\.successThreshold: 2 must be 1/,
    ],
    [
      'probe port out of range',
      (s) => (proxy(s).readinessProbe = { httpGet: { port: 0 } }),
      /readinessProbe\.httpGet\.port: 0 must be between 1 and 65535/,
    ],
    [
      'probe port name invalid',
      (s) => (proxy(s).readinessProbe = { tcpSocket: { port: 'Admin_Port' } }),
      /tcpSocket\.port: "Admin_Port"/,
    ],
    [
      'exec probe without command',
      (s) => (proxy(s).livenessProbe = { exec: {} }),
      /livenessProbe\.exec\.command: is required/,
    ],
    [
      'probe terminationGracePeriodSeconds 0',
      (s) => (proxy(s).livenessProbe = { exec: { command: ['x'] }, terminationGracePeriodSeconds: 0 }),
      /terminationGracePeriodSeconds: must be greater than 0/,
    ],
    [
      'preStop without a handler',
      (s) => (proxy(s).lifecycle = { preStop: {} }),
      /lifecycle\.preStop: must specify a handler type/,
    ],
    [
      'image with surrounding spaces',
      (s) => (proxy(s).image = ' proxy:1'),
      /image: " proxy:1" must not have leading or trailing whitespace/,
    ],
    [
      'env valueFrom with value',
      (s) => (proxy(s).env = [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]),
      /env\[0\]\.valueFrom: may not be specified/,
    ],
    [
      'init container with a probe',
      (s) => (
        (s.spec.initContainers = [{ name: 'init', image: 'i:1', readinessProbe: { exec: { command: ['x'] } } }]),
        (s.spec.updateStrategy = { type: 'NotUpdate' })
      ),
      /initContainers\[0\]\.readinessProbe: may not be set for init containers/,
    ],
    [
      'two sidecars on one host port',
      (s) => (
        (proxy(s).ports = [{ containerPort: 80, hostPort: 8080 }]),
        s.spec.containers.push({ name: 'b', image: 'b:1', ports: [{ containerPort: 81, hostPort: 8080 }] })
      ),
      /host port \/TCP\/8080 is used by more than one container/,
    ],
  ])('%s', (_, change, message) => {
    const errors = errorsOf(change);
    expect(errors).toContainEqual(expect.stringMatching(message));
  });
});

describe('names upstream refuses (validateSidecarSetName: ^[a-zA-Z0-9-]+$, at most 63)', () => {
  it.each([
    ['x'.repeat(64), /is 64 characters; a SidecarSet name may have at most 63/],
    ['proxy.v1', /must consist of alphanumeric characters or '-'/],
  ])('refuses %s', (name, message) => {
    expect(errorsOf((s) => (s.metadata.name = name))).toEqual([expect.stringMatching(message)]);
  });
  it('accepts 63 characters, capitals and digits', () => {
    expect(errorsOf((s) => (s.metadata.name = 'A1-' + 'x'.repeat(60)))).toEqual([]);
  });
});

describe('empty selectors upstream refuses (validateSelector: "empty selector is not valid for sidecarset")', () => {
  it('refuses namespaceSelector: {}', () => {
    expect(errorsOf((s) => (s.spec.namespaceSelector = {}))).toEqual([
      expect.stringMatching(/^spec\.namespaceSelector: is empty/),
    ]);
  });
  it('refuses updateStrategy.selector: {} under RollingUpdate (also the default type), not under NotUpdate', () => {
    expect(errorsOf((s) => (s.spec.updateStrategy = { selector: {} }))).toEqual([
      expect.stringMatching(/^spec\.updateStrategy\.selector: is empty/),
    ]);
    expect(errorsOf((s) => (s.spec.updateStrategy = { type: 'RollingUpdate', selector: {} }))).toHaveLength(1);
    // validateSidecarSetUpdateStrategy checks nothing under NotUpdate: neither the selector nor the partition.
    expect(errorsOf((s) => (s.spec.updateStrategy = { type: 'NotUpdate', selector: {}, partition: '1.5' }))).toEqual(
      [],
    );
  });
});

describe('UPDATE (validateSidecarContainerConflict)', () => {
  it('refuses adding a container to a SidecarSet that had only init containers', () => {
    const initOnly = (s: Json) => {
      s.spec.containers = [];
      s.spec.initContainers = [{ name: 'init', image: 'i:1' }];
    };
    const previous = stored(initOnly);
    delete (previous.spec as Json).containers;
    const next = stored((s) => (s.spec.initContainers = [{ name: 'init', image: 'i:1' }]));
    expect(validateSidecarSet(next, { previous })).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.name: container "proxy" is not in the stored SidecarSet/),
    ]);
    expect(validateSidecarSet(stored(initOnly), { previous })).toEqual([]);
  });
});

describe('in-place update re-applies patchPodMetadata (sidecarset_processor.go updatePodSidecarAndHash)', () => {
  const v1 = stored((s) => {
    s.spec.patchPodMetadata = [
      { annotations: { 'example.com/kept': 'v1' }, patchPolicy: 'Retain' },
      { annotations: { 'example.com/forced': 'v1' }, patchPolicy: 'Overwrite' },
    ];
  });
  const pod: V1Pod = {
    metadata: { name: 'p', namespace: 'apps', resourceVersion: '3', labels: { app: 'web' } },
    spec: { containers: [{ name: 'app', image: 'app:1' }] },
  };
  const injected = injectSidecars(pod, [v1], new Date(0)).pod;

  it('sets an Overwrite annotation again and adds a Retain one the pod lost, keeping a Retain one it has', () => {
    const v2 = structuredClone(v1);
    v2.spec.containers![0].image = 'proxy:2';
    v2.spec.patchPodMetadata = [
      { annotations: { 'example.com/kept': 'v2', 'example.com/new': 'v2' }, patchPolicy: 'Retain' },
      { annotations: { 'example.com/forced': 'v2' }, patchPolicy: 'Overwrite' },
    ];
    const before = structuredClone(injected);
    before.metadata!.annotations!['example.com/forced'] = 'changed-by-user';
    const after = applyPatch(before, inPlaceUpdatePatch(v2, before, new Date(1000)));
    expect(after.spec!.containers.find((c) => c.name === 'proxy')!.image).toBe('proxy:2');
    expect(after.metadata!.annotations).toMatchObject({
      'example.com/kept': 'v1',
      'example.com/new': 'v2',
      'example.com/forced': 'v2',
    });
  });

  it('adds no operation when the annotations already say what the patch says', () => {
    const v2 = structuredClone(v1);
    v2.spec.containers![0].image = 'proxy:2';
    const ops = inPlaceUpdatePatch(v2, injected, new Date(1000)) as Array<{ path: string }>;
    expect(ops.filter((o) => o.path.includes('example.com'))).toEqual([]);
  });
});
