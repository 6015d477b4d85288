/**
 * Upstream OpenKruise v1.8.3's tests of injectionStrategy.revision, transferEnv
 * sourceContainerNameFrom and patchPodMetadata, ported as facts. Each `describe` names the
 * upstream file and test function.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1ControllerRevision, V1Pod } from '@kubernetes/client-node';
import { sidecarSetConflicts, sourceContainerFieldRefProblem } from '../../../../lib/contract.js';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import {
  InjectionRevisionError,
  revisionToInject,
  type SidecarSetRevisionSource,
} from '../../../../lib/runtime/sidecarset/injection-revision.js';
import { injectSidecars, sidecarSetMatchesPod } from '../../../../lib/runtime/sidecarset/inject.js';
import { patchMetadataWhitelistError, patchPodAnnotations } from '../../../../lib/runtime/sidecarset/metadata.js';
import type { SidecarSet, SidecarSetPatchPodMetadata } from '../../../../lib/runtime/sidecarset/types.js';
import { conflictView, validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';
import { pod1, sidecarSet1 } from './upstream-pod-mutating.fixtures.js';

const now = new Date('2026-11-23T00:00:00Z');
const revisionsOf = (...list: V1ControllerRevision[]): SidecarSetRevisionSource => ({
  get: (name) => list.find((r) => r.metadata?.name === name),
  list: (set) => list.filter((r) => r.metadata?.labels?.['kruise.io/sidecarset-name'] === set),
});
/** A ControllerRevision as upstream records one (labels, `$patch: replace` spec). */
const revision = (name: string, set: string, spec: Record<string, unknown>): V1ControllerRevision => ({
  metadata: {
    name,
    namespace: 'kruise-system',
    labels: { 'kruise.io/sidecarset-name': set, 'apps.kruise.io/sidecarset-custom-version': name },
  },
  revision: 1,
  data: { spec: { $patch: 'replace', ...spec } },
});
/** Upstream's sidecarsetMutatingPod at CREATE, with `random` for the Partial draw. */
function mutate(pod: V1Pod, sets: SidecarSet[], revisions: SidecarSetRevisionSource, random = () => 0.5): V1Pod {
  const matching = sets.filter((s) => !s.spec.injectionStrategy?.paused && sidecarSetMatchesPod(s, pod, {}));
  return injectSidecars(
    pod,
    matching.map((s) => revisionToInject(s, pod, revisions, random)),
    now,
  ).pod;
}

describe('pkg/webhook/pod/mutating/sidecarset_test.go TestInjectionStrategyRevision', () => {
  it('injects the revision a customVersion names (Always)', () => {
    const s = sidecarSet1();
    s.spec.injectionStrategy = { revision: { customVersion: 'sidecarset1-12345', policy: 'Always' } };
    const recorded = revision('sidecarset1-12345', 'sidecarset1', {
      initContainers: [{ name: 'init-2', image: 'busybox:1.0.0' }],
      containers: [
        {
          name: 'dns-f',
          image: 'dns-f-image:1.0',
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'disabled' },
        },
      ],
    });
    const out = mutate(pod1(), [s], revisionsOf(recorded));
    expect(out.spec!.containers.length + out.spec!.initContainers!.length).toBe(1 + 1 + 2);
    // Upstream records the revision the pod got (status.latestRevision of the restored SidecarSet).
    expect(JSON.parse(out.metadata!.annotations!['kruise.io/sidecarset-hash']).sidecarset1.controllerRevision).toBe(
      'sidecarset1-12345',
    );
  });
});

describe('pkg/webhook/pod/mutating/sidecarset_test.go TestCanarySidecarSetInjection', () => {
  const canarySet = (): SidecarSet => ({
    metadata: { name: 'sidecarset1' },
    spec: {
      selector: { matchLabels: { app: 'demo' } },
      containers: [{ name: 'sidecar', image: 'sidecar-image:canary' }],
      updateStrategy: { selector: { matchLabels: { canary: 'true' } } },
      injectionStrategy: { revision: { customVersion: 'sidecarset1-12345', policy: 'Partial' } },
    },
  });
  const stable = revision('sidecarset1-12345', 'sidecarset1', {
    containers: [{ name: 'sidecar', image: 'sidecar-image:stable' }],
  });
  const pod = (labels: Record<string, string>): V1Pod => ({
    metadata: { name: 'p', namespace: 'default', labels: { app: 'demo', ...labels } },
    spec: { containers: [{ name: 'app', image: 'demo' }] },
  });
  const withStrategy = (change: Partial<NonNullable<SidecarSet['spec']['updateStrategy']>>) => {
    const s = canarySet();
    s.spec.updateStrategy = { ...s.spec.updateStrategy, ...change };
    return s;
  };
  it.each<[string, V1Pod, SidecarSet, SidecarSetRevisionSource, string | undefined]>([
    ['stable pod', pod({}), canarySet(), revisionsOf(stable), 'sidecar-image:stable'],
    ['canary without partition', pod({ canary: 'true' }), canarySet(), revisionsOf(stable), 'sidecar-image:canary'],
    [
      'canary with partition 100%',
      pod({ canary: 'true' }),
      withStrategy({ partition: '100%' }),
      revisionsOf(stable),
      'sidecar-image:stable',
    ],
    [
      'canary with partition 0%',
      pod({ canary: 'true' }),
      withStrategy({ partition: '0%' }),
      revisionsOf(stable),
      'sidecar-image:canary',
    ],
    [
      'canary with bad partition',
      pod({ canary: 'true' }),
      withStrategy({ partition: 'abc%' }),
      revisionsOf(stable),
      undefined,
    ],
    ['canary no history', pod({ canary: 'true' }), canarySet(), revisionsOf(), undefined],
    [
      'canary with bad selector',
      pod({ canary: 'true' }),
      withStrategy({ selector: { matchExpressions: [{ key: 'somekey', operator: 'badOp' as 'In' }] } }),
      revisionsOf(stable),
      undefined,
    ],
    [
      'canary paused',
      pod({ canary: 'true' }),
      withStrategy({ partition: '0%', paused: true }),
      revisionsOf(stable),
      'sidecar-image:stable',
    ],
  ])('%s', (_name, p, s, revisions, image) => {
    // Go's rand.Float64 is in [0, 1): 0.5 is "some draw"; 100% always picks the pinned revision, 0% never.
    if (image === undefined) expect(() => mutate(p, [s], revisions)).toThrow(InjectionRevisionError);
    else expect(mutate(p, [s], revisions).spec!.containers.map((c) => c.image)).toEqual(['demo', image]);
  });
});

describe('pkg/webhook/pod/mutating/sidecarset_test.go TestInjectMetadata', () => {
  it('patches pod annotations from every SidecarSet, MergePatchJson merging, Retain keeping', () => {
    const demo1 = sidecarSet1();
    demo1.spec.patchPodMetadata = [
      { patchPolicy: 'MergePatchJson', annotations: { key1: '{"log-agent":1}' } },
      { patchPolicy: 'Retain', annotations: { key: 'envoy=1,log=2' } },
    ];
    const demo2 = sidecarSet1();
    demo2.metadata.name = 'sidecarset2';
    demo2.spec.patchPodMetadata = [{ patchPolicy: 'MergePatchJson', annotations: { key1: '{"envoy":2}' } }];
    const out = mutate(pod1(), [demo1, demo2], revisionsOf());
    expect([out.metadata!.annotations!.key1, out.metadata!.annotations!.key]).toEqual([
      '{"envoy":2,"log-agent":1}',
      'envoy=1,log=2',
    ]);
  });
});

describe('pkg/control/sidecarcontrol/util_test.go TestPatchPodMetadata', () => {
  it.each<[string, Record<string, string>, SidecarSetPatchPodMetadata[], Record<string, string>]>([
    [
      'add pod annotation',
      {},
      [
        { patchPolicy: 'Retain', annotations: { key1: 'value1' } },
        { patchPolicy: 'Overwrite', annotations: { key2: 'value2' } },
      ],
      { key1: 'value1', key2: 'value2' },
    ],
    [
      'add pod annotation, exist',
      { key1: 'old', key2: 'old' },
      [
        { patchPolicy: 'Retain', annotations: { key1: 'value1' } },
        { patchPolicy: 'Overwrite', annotations: { key2: 'value2' } },
      ],
      { key1: 'old', key2: 'value2' },
    ],
    [
      'json merge pod annotation',
      { key1: '{"log-agent":1}', key2: '{"log-agent":1}' },
      [
        {
          patchPolicy: 'MergePatchJson',
          annotations: { key1: '{"log-agent":1}', key2: '{"envoy":2}', key3: '{"probe":5}' },
        },
      ],
      { key1: '{"log-agent":1}', key2: '{"envoy":2,"log-agent":1}', key3: '{"probe":5}' },
    ],
    [
      'json merge pod annotation, skip',
      { key1: '{"log-agent":1}' },
      [{ patchPolicy: 'MergePatchJson', annotations: { key1: '{"log-agent":1}' } }],
      { key1: '{"log-agent":1}' },
    ],
  ])('%s', (_name, annotations, patches, expected) => {
    expect(patchPodAnnotations(annotations, patches)).toEqual(expected);
  });
});

describe('pkg/control/sidecarcontrol/util_test.go TestValidateSidecarSetPatchMetadataWhitelist', () => {
  const demo = (patch: boolean): SidecarSet => ({
    metadata: { name: 'test-sidecarset', labels: { app: 'sidecar' } },
    spec: {
      selector: { matchLabels: { app: 'nginx' } },
      containers: [{ name: 'c', image: 'i' }],
      ...(patch ? { patchPodMetadata: [{ annotations: { key1: 'value1' } }] } : {}),
    },
  });
  it.each<[string, boolean, string | undefined, boolean]>([
    ['validate sidecarSet no patch Metadata', false, undefined, false],
    ['validate sidecarSet whitelist failed-1', true, undefined, true],
    ['validate sidecarSet whitelist success-1', true, '{"rules":[{"allowedAnnotationKeyExprs":["key.*"]}]}', false],
    ['validate sidecarSet whitelist failed-2', true, '{"rules":[{"allowedAnnotationKeyExprs":["key2"]}]}', true],
    [
      'validate sidecarSet whitelist failed-3',
      true,
      '{"rules":[{"allowedAnnotationKeyExprs":["key.*"],"selector":{"matchLabels":{"app":"other"}}}]}',
      true,
    ],
    [
      'validate sidecarSet whitelist success-2',
      true,
      '{"rules":[{"allowedAnnotationKeyExprs":["key.*"],"selector":{"matchLabels":{"app":"sidecar"}}}]}',
      false,
    ],
  ])('%s', (_name, patch, whitelist, refused) => {
    expect(patchMetadataWhitelistError(demo(patch), { whitelist }) !== undefined).toBe(refused);
  });
});

describe('pkg/control/sidecarcontrol/util_test.go TestConvertDownwardAPIFieldLabel (as validation of sourceContainerNameFrom)', () => {
  it.each<[string, string, boolean]>([
    ['v2', 'metadata.name', false],
    ['v1', 'invalid-label', false],
    ['v1', 'metadata.name', false],
    ['v1', 'metadata.annotations', false],
    ['v1', 'metadata.labels', false],
    ['v1', "metadata.annotations['myAnnoKey']", true],
    ['v1', "metadata.labels['myLabelKey']", true],
  ])('%s %s', (apiVersion, fieldPath, ok) => {
    expect(sourceContainerFieldRefProblem({ apiVersion, fieldPath }) === undefined).toBe(ok);
  });
});

describe('pkg/control/sidecarcontrol/util_test.go TestExtractContainerNameFromFieldPath and TestGetSidecarTransferEnvs', () => {
  const pod = (labels: Record<string, string>, annotations: Record<string, string>): V1Pod => ({
    metadata: { name: 'test-pod-1', namespace: 'default', labels, annotations },
    spec: { containers: [{ name: 'main', image: 'main:v1', env: [{ name: 'test-env', value: 'test-value' }] }] },
  });
  const sidecarSet = (transfer: object): SidecarSet => ({
    metadata: { name: 's' },
    spec: {
      selector: { matchLabels: { x: 'y' } },
      containers: [
        { name: 'cold-sidecar', image: 'cold-image:v1', transferEnv: [{ envName: 'test-env', ...transfer }] },
      ],
    },
  });
  const transferred = (p: V1Pod, s: SidecarSet) =>
    injectSidecars(p, [s], now)
      .pod.spec!.containers.find((c) => c.name === 'cold-sidecar')!
      .env!.filter((e) => e.name !== 'IS_INJECTED');
  it.each<[string, V1Pod, object, number]>([
    ['sourceContainerName', pod({ app: 'nginx' }, {}), { sourceContainerName: 'main' }, 1],
    [
      "fieldRef metadata.labels['app']",
      pod({ app: 'main' }, {}),
      { sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['app']" } } },
      1,
    ],
    [
      "fieldRef metadata.annotations['app']",
      pod({ app: 'main' }, { app: 'main' }),
      { sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['app']" } } },
      1,
    ],
    // TestExtractContainerNameFromFieldPath: a missing label names container "": nothing is copied.
    [
      'fieldRef to a missing label',
      pod({}, {}),
      { sourceContainerNameFrom: { fieldRef: { apiVersion: 'v1', fieldPath: "metadata.labels['test-label']" } } },
      0,
    ],
  ])('%s', (_name, p, transfer, count) => {
    expect(transferred(p, sidecarSet(transfer))).toHaveLength(count);
  });
});

describe('pkg/webhook/sidecarset/validating/sidecarset_validating_test.go TestValidateSidecarSet (injection features)', () => {
  const container = {
    name: 'test-sidecar',
    image: 'test-image',
    podInjectPolicy: 'BeforeAppContainer' as const,
    shareVolumePolicy: { type: 'disabled' as const },
  };
  const set = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
    metadata: { name: 'test-sidecarset' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      updateStrategy: { type: 'NotUpdate' },
      containers: [container],
      ...spec,
    },
  });
  // Upstream's fake client holds revisions test-sidecarset-01234 and -56789, unlabelled.
  const revisions = revisionsOf(
    {
      metadata: { name: 'test-sidecarset-01234' },
      revision: 1,
      data: { spec: { $patch: 'replace', containers: [container] } },
    },
    {
      metadata: { name: 'test-sidecarset-56789' },
      revision: 2,
      data: { spec: { $patch: 'replace', containers: [container] } },
    },
  );
  const context = { revisions, patchMetadata: { defaultsAllowed: true } };
  it.each<[string, SidecarSet, string]>([
    [
      'wrong-metadata',
      set({
        patchPodMetadata: [
          { annotations: { key1: 'value1' }, patchPolicy: 'MergePatchJson' },
          { annotations: { key1: 'value1' }, patchPolicy: 'Overwrite' },
        ],
      }),
      'spec.patchPodMetadata[1].annotations',
    ],
    [
      'wrong-name-injectionStrategy',
      set({ injectionStrategy: { revision: { customVersion: 'normal-sidecarset-01234' } } }),
      'spec.injectionStrategy.revision',
    ],
    [
      'not-existing-injectionStrategy',
      set({ injectionStrategy: { revision: { revisionName: 'test-sidecarset-678235', policy: 'Always' } } }),
      'spec.injectionStrategy.revision',
    ],
  ])('%s: rejected, naming the field', (_name, s, field) => {
    const errors = validateSidecarSet(s, context);
    expect(errors).toHaveLength(1);
    expect(errors[0].startsWith(field)).toBe(true);
  });
  it('accepts a revisionName that exists', () => {
    expect(
      validateSidecarSet(
        set({ injectionStrategy: { revision: { revisionName: 'test-sidecarset-01234', policy: 'Always' } } }),
        context,
      ),
    ).toEqual([]);
  });
});

describe('pkg/webhook/sidecarset/validating/sidecarset_validating_test.go TestSidecarSetPodMetadataConflict', () => {
  const view = (name: string, patchPodMetadata: SidecarSetPatchPodMetadata[]) =>
    conflictView({ metadata: { name }, spec: { selector: { matchLabels: { a: 'b' } }, patchPodMetadata } });
  it.each<[string, SidecarSetPatchPodMetadata[], SidecarSetPatchPodMetadata[], number]>([
    [
      'sidecarset annotation key conflict',
      [{ patchPolicy: 'Overwrite', annotations: { key1: 'value1' } }],
      [{ patchPolicy: 'MergePatchJson', annotations: { key1: 'value1' } }],
      1,
    ],
    [
      'sidecarset annotation key different',
      [{ patchPolicy: 'Retain', annotations: { key1: 'value1' } }],
      [{ patchPolicy: 'Overwrite', annotations: { key2: 'value2' } }],
      0,
    ],
    [
      'sidecarset annotation key same, and json',
      [{ patchPolicy: 'MergePatchJson', annotations: { 'oom-score': '{"log-agent": 1}' } }],
      [{ patchPolicy: 'MergePatchJson', annotations: { 'oom-score': '{"envoy": 1}' } }],
      0,
    ],
  ])('%s', (_name, mine, theirs, expected) => {
    expect(
      sidecarSetConflicts(view('sidecarset2', mine), view('sidecarset1', theirs)).flatMap((c) => c.names),
    ).toHaveLength(expected);
  });
});

describe('pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go TestSidecarSetDefault (injection features)', () => {
  it('defaults patchPolicy to Retain and the revision policy to Always, and hashes as upstream', () => {
    const s = defaultSidecarSet({
      metadata: { name: 'sidecarset-test', resourceVersion: '123' },
      spec: {
        containers: [{ name: 'dns-f', image: 'dns:1.0' }],
        patchPodMetadata: [{ annotations: { key1: 'value1' } }],
        injectionStrategy: { revision: { customVersion: '1' } },
      },
    });
    expect(s.spec.patchPodMetadata![0].patchPolicy).toBe('Retain');
    expect(s.spec.injectionStrategy!.revision!.policy).toBe('Always');
    expect(s.metadata.annotations).toEqual({
      'kruise.io/sidecarset-hash': '6wbd76bd7984x24fb4f44fv9222cw9v9bcf85x766744wddd4zwx927zzz2zb684',
      'kruise.io/sidecarset-hash-without-image': '82684vwf9d4cb4wz4vffx4ddfbb47ww4z4wwxdbwb8w2zbb7zvf4524cdd49bv94',
    });
  });
});

describe('a recorded revision this runtime cannot restore', () => {
  it('is an InjectionRevisionError naming the revision (the pod is refused, never injected from garbage)', () => {
    const s = sidecarSet1();
    s.spec.injectionStrategy = { revision: { revisionName: 'broken' } };
    const broken = revision('broken', 'sidecarset1', { containers: [{ name: 'dns-f', image: 7 }] });
    expect(() => revisionToInject(s, pod1(), revisionsOf(broken), () => 0)).toThrow(
      /ControllerRevision "broken" records containers upstream's types cannot hold/,
    );
    expect(() =>
      revisionToInject(s, pod1(), revisionsOf({ metadata: { name: 'broken' }, revision: 1 }), () => 0),
    ).toThrow(/ControllerRevision "broken" has no data\.spec/);
  });
});
