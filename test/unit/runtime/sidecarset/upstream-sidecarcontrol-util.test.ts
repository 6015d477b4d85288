/**
 * Upstream OpenKruise v1.9.1's pkg/control/sidecarcontrol/util_test.go, the injection side, ported
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

describe('TestPodMatchedSidecarSet (v1.9.1: namespaces matched by their labels only)', () => {
  const pod: V1Pod = { metadata: { name: 'test-pod', labels: { app: 'nginx' }, namespace: 'app1' } };
  const set = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
    metadata: { name: 'sidecarset-test' },
    spec: { selector: { matchLabels: { app: 'nginx' } }, ...spec },
  });
  // Each case's Namespace objects (getNs), by name; a Namespace not listed does not exist.
  it.each<[string, SidecarSet, Record<string, Record<string, string>>, boolean]>([
    ['test1', set({}), {}, true],
    ['test2', set({ namespaceSelector: { matchLabels: { ns: 'app1' } } }), { app1: { ns: 'app1' } }, true],
    ['test3', set({ namespaceSelector: { matchLabels: { ns: 'app2' } } }), { app1: { ns: 'app1' } }, false],
    [
      'test4',
      set({ namespaceSelector: { matchLabels: { app: 'app1' } } }),
      { app1: { app: 'app1' }, app2: { app: 'app2' } },
      true,
    ],
    [
      'test5',
      set({ namespaceSelector: { matchLabels: { app: 'app2' } } }),
      { app1: { app: 'app1' }, app2: { app: 'app2' } },
      false,
    ],
  ])('%s', (_name, s, namespaces, expected) => {
    expect(sidecarSetMatchesPod(s, pod, namespaces[pod.metadata!.namespace!])).toBe(expected);
  });

  it("matches a v1alpha1 spec.namespace as upstream's conversion does: by the namespace's metadata.name label", () => {
    const labelled = { 'kubernetes.io/metadata.name': 'app1' };
    expect(sidecarSetMatchesPod(set({ namespace: 'app1' }), pod, labelled)).toBe(true);
    expect(sidecarSetMatchesPod(set({ namespace: 'app2' }), pod, labelled)).toBe(false);
    // The namespace wins over a namespaceSelector beside it.
    expect(
      sidecarSetMatchesPod(set({ namespace: 'app1', namespaceSelector: { matchLabels: { x: 'y' } } }), pod, labelled),
    ).toBe(true);
    // A Namespace without the label, or not in the cache, is selected by nothing (v1.8.3 compared the names).
    expect(sidecarSetMatchesPod(set({ namespace: 'app1' }), pod, {})).toBe(false);
    expect(sidecarSetMatchesPod(set({ namespace: 'app1' }), pod, undefined)).toBe(false);
    expect(sidecarSetMatchesPod(set({ namespaceSelector: { matchLabels: {} } }), pod, undefined)).toBe(false);
  });
});
