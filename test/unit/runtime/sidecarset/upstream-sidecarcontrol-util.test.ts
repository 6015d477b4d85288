/**
 * Upstream OpenKruise v1.8.3's pkg/control/sidecarcontrol/util_test.go, the injection side, ported
 * as facts (the feature tables of that file are in upstream-injection-features.test.ts). Out of
 * this runtime's injection scope: TestIsSidecarContainerUpdateCompleted and TestUpdatePodSidecarSetHash
 * (the controller side, owned by the rollout work) and their HotUpgrade cases (HotUpgrade is refused).
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { podSidecarSetHash, podSidecarSetHashWithoutImage } from '../../../../lib/runtime/sidecarset/hash.js';
import { sidecarSetMatchesPod } from '../../../../lib/runtime/sidecarset/inject.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

describe('TestGetPodSidecarSetRevision', () => {
  it.each([
    [
      'normal sidecarSet revision',
      '{"test-sidecarset":{"hash":"aaa"}}',
      '{"test-sidecarset":{"hash":"without-image-aaa"}}',
      'aaa',
      'without-image-aaa',
    ],
    [
      'older sidecarSet revision',
      '{"test-sidecarset": "aaa"}',
      '{"test-sidecarset": "without-image-aaa"}',
      'aaa',
      'without-image-aaa',
    ],
    ['failed sidecarSet revision', 'failed-sidecarset-hash', 'failed-sidecarset-hash', undefined, undefined],
  ])('%s', (_name, hash, withoutImage, expected, expectedWithoutImage) => {
    const annotations = { 'kruise.io/sidecarset-hash': hash, 'kruise.io/sidecarset-hash-without-image': withoutImage };
    // Upstream returns "" for "no revision"; this runtime returns undefined.
    expect(podSidecarSetHash(annotations, 'test-sidecarset')).toBe(expected);
    expect(podSidecarSetHashWithoutImage(annotations, 'test-sidecarset')).toBe(expectedWithoutImage);
  });
});

describe('TestPodMatchedSidecarSet', () => {
  const namespaceLabels: Record<string, Record<string, string>> = { app1: { app: 'app1' }, app2: { app: 'app2' } };
  const pod: V1Pod = { metadata: { name: 'test-pod', labels: { app: 'nginx' }, namespace: 'app1' } };
  const set = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
    metadata: { name: 'sidecarset-test' },
    spec: { selector: { matchLabels: { app: 'nginx' } }, ...spec },
  });
  it.each<[string, SidecarSet, boolean]>([
    ['test1', set({}), true],
    ['test2', set({ namespace: 'app1' }), true],
    ['test3', set({ namespace: 'app2' }), false],
    ['test4', set({ namespaceSelector: { matchLabels: { app: 'app1' } } }), true],
    ['test5', set({ namespaceSelector: { matchLabels: { app: 'app2' } } }), false],
  ])('%s', (_name, s, expected) => {
    expect(sidecarSetMatchesPod(s, pod, namespaceLabels[pod.metadata!.namespace!])).toBe(expected);
  });
});
