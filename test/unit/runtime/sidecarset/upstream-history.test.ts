/**
 * Upstream's revision-history tables, ported as facts: pkg/controller/sidecarset/sidecarset_processor_test.go
 * (TestGetActiveRevisions, TestTruncateHistory) and pkg/control/sidecarcontrol/util_test.go
 * (TestIsSidecarContainerUpdateCompleted, TestGetPodSidecarSetRevision, TestUpdatePodSidecarSetHash:
 * the cold-upgrade cases; hot upgrade is refused by this runtime), OpenKruise v1.8.3.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1ControllerRevision, V1Pod } from '@kubernetes/client-node';
import { podSidecarSetHash, podSidecarSetHashWithoutImage } from '../../../../lib/runtime/sidecarset/hash.js';
import { registerLatestRevision, truncateHistory } from '../../../../lib/runtime/sidecarset/history.js';
import { inPlaceUpdatePatch } from '../../../../lib/runtime/sidecarset/podupdate.js';
import {
  historySidecarSet,
  InjectionRevisionError,
  type SidecarSetRevisionSource,
} from '../../../../lib/runtime/sidecarset/injection-revision.js';
import { RevisionLabels } from '../../../../lib/runtime/sidecarset/revisions.js';
import { isSidecarUpdateCompleted } from '../../../../lib/runtime/sidecarset/rollout.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { fakeApps, NS } from './fake-api.js';
import { applyPatch, factoryPods, factorySidecarSet } from './upstream-fixtures.js';

describe('TestGetActiveRevisions (sidecarset_processor_test.go)', () => {
  it('creates revision 1, then 2 for a changed spec, renumbers the equal one 3 on rollback, and keeps revisionHistoryLimit', async () => {
    const { store, deps } = fakeApps();
    const s = { ...factorySidecarSet(), metadata: { ...factorySidecarSet().metadata, uid: '1223344' } };
    expect(store.get((await registerLatestRevision(deps, s, [])).name)!.revision).toBe(1);
    const changed: SidecarSet = {
      ...s,
      spec: {
        ...s.spec,
        initContainers: [{ name: 'emptyInitC' }],
        volumes: [{ name: 'emptyVolume' }],
        imagePullSecrets: [{ name: 'emptySecret' }],
      },
    };
    for (let i = 0; i < 5; i++) {
      const latest = store.get((await registerLatestRevision(deps, changed, [])).name)!;
      expect(latest.revision).toBe(2);
      expect(Object.keys((latest.data as { spec: object }).spec)).toEqual(
        expect.arrayContaining(['volumes', 'containers', 'initContainers', 'imagePullSecrets']),
      );
    }
    for (let i = 0; i < 5; i++) expect(store.get((await registerLatestRevision(deps, s, [])).name)!.revision).toBe(3);
    for (let i = 0; i < 100; i++)
      await registerLatestRevision(
        deps,
        { ...s, spec: { ...s.spec, containers: [{ name: 'test-sidecar', image: `${i}` }] } },
        [],
      );
    expect(store.size).toBe(10);
  });
});

describe('TestTruncateHistory (sidecarset_processor_test.go)', () => {
  const s: SidecarSet = {
    ...factorySidecarSet(),
    metadata: { ...factorySidecarSet().metadata, name: 'sidecar', uid: '1223344' },
  };
  const reset = (usedCount: number): [V1Pod[], V1ControllerRevision[]] => {
    const pods = factoryPods(100, 0, 0).map((p, i) => ({
      ...p,
      metadata: {
        ...p.metadata,
        annotations: {
          ...p.metadata!.annotations,
          'kruise.io/sidecarset-hash': JSON.stringify({
            sidecar: { controllerRevision: `sidecar-${(i % usedCount) + 1}` },
          }),
        },
      },
    }));
    const revisions = Array.from({ length: 15 }, (_, i): V1ControllerRevision => ({
      metadata: { name: `sidecar-${i + 1}`, namespace: NS },
      revision: i + 1,
    }));
    return [pods, revisions];
  };
  it.each([1, 2, 3, 4, 5, 6, 7, 8, 9])('succeeds when %i revisions are in use', async (used) => {
    const [pods, revisions] = reset(used);
    expect(await truncateHistory(fakeApps().deps, s, pods, revisions)).toBe(10);
  });
  it.each([
    [10, 11],
    [11, 12],
    [14, 15],
    [15, 15],
    [20, 15],
  ])('keeps revisions in use: %i in use leave %i', async (used, left) => {
    const [pods, revisions] = reset(used);
    expect(await truncateHistory(fakeApps().deps, s, pods, revisions)).toBe(left);
  });
  it('deletes exactly the oldest revisions no pod uses', async () => {
    const { store, deps } = fakeApps();
    const [pods, revisions] = reset(8);
    for (const r of revisions) store.set(r.metadata!.name!, r);
    expect(await truncateHistory(deps, s, pods, revisions)).toBe(10);
    expect([...store.values()].sort((a, b) => a.revision - b.revision).map((r) => r.metadata!.name)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 14, 15].map((i) => `sidecar-${i}`),
    );
  });
});

describe('revision lookup (injectionStrategy.revision, upstream GetHistorySidecarSet)', () => {
  it('finds a revision the controller wrote, by name or newest custom version, and restores the SidecarSet as it was', async () => {
    const { store, deps } = fakeApps();
    // What the webhook reads: the ControllerRevision cache (here the fake API's store).
    const source: SidecarSetRevisionSource = {
      get: (name) => [...store.values()].find((r) => r.metadata?.name === name),
      list: (set) => [...store.values()].filter((r) => r.metadata?.labels?.[RevisionLabels.sidecarSet] === set),
    };
    const v1: SidecarSet = {
      ...factorySidecarSet(),
      metadata: { ...factorySidecarSet().metadata, labels: { 'apps.kruise.io/sidecarset-custom-version': 'c1' } },
    };
    const first = await registerLatestRevision(deps, v1, []);
    const v2: SidecarSet = {
      ...v1,
      metadata: { ...v1.metadata, annotations: { 'kruise.io/sidecarset-hash': 'ccc' }, labels: {} },
      spec: { ...v1.spec, containers: [{ name: 'test-sidecar', image: 'test-image:v3' }] },
    };
    await registerLatestRevision(deps, v2, []);
    expect(historySidecarSet(v2, { revisionName: first.name }, source).status?.latestRevision).toBe(first.name);
    expect(() => historySidecarSet(v2, { revisionName: 'missing' }, source)).toThrow(InjectionRevisionError);
    const restored = historySidecarSet(v2, { customVersion: 'c1' }, source);
    expect(restored.spec.containers).toEqual([
      expect.objectContaining({ name: 'test-sidecar', image: 'test-image:v2' }),
    ]);
    expect(restored.metadata.annotations!['kruise.io/sidecarset-hash']).toBe('bbb');
    expect(restored.status?.latestRevision).toBe(first.name);
  });
});

describe('TestIsSidecarContainerUpdateCompleted (util_test.go, cold sidecar cases)', () => {
  const pod: V1Pod = {
    metadata: { name: 'test-pod-1', namespace: 'default', annotations: {}, resourceVersion: '495711227' },
    spec: {
      containers: [
        { name: 'main', image: 'main:v1' },
        { name: 'cold-sidecar', image: 'cold-sidecar:v1' },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: [
        { name: 'main', image: 'main:v1', imageID: '4120593193b4', ready: true, restartCount: 0 },
        {
          name: 'cold-sidecar',
          image: 'cold-sidecar:v1',
          imageID: 'docker-pullable://cold-sidecar@sha256:9ead06a1362e',
          ready: true,
          restartCount: 0,
        },
      ],
    },
  } as V1Pod;
  const s: SidecarSet = {
    metadata: { name: 'test-sidecarset', annotations: { 'kruise.io/sidecarset-hash': 'bbb' } },
    spec: { containers: [{ name: 'cold-sidecar', image: 'cold-sidecar:v2' }] },
  };
  const upgraded = applyPatch(pod, inPlaceUpdatePatch(s, pod, new Date()));
  const done = structuredClone(upgraded);
  done.status!.containerStatuses![1].imageID = 'docker-pullable://cold-sidecar@sha256:7223aa0f3a7a';
  it.each([
    ['only inject sidecar, not upgrade', pod, true],
    ['upgrade cold sidecar, upgrade not completed', upgraded, false],
    ['upgrade cold sidecar, upgrade completed', done, true],
  ] as const)('%s', (_n, p, completed) => {
    expect(isSidecarUpdateCompleted(p, 'test-sidecarset', ['cold-sidecar'])).toBe(completed);
  });
});

describe('TestGetPodSidecarSetRevision and TestUpdatePodSidecarSetHash (util_test.go)', () => {
  const s: SidecarSet = {
    metadata: {
      name: 'test-sidecarset',
      annotations: {
        'kruise.io/sidecarset-hash': 'bbb',
        'kruise.io/sidecarset-hash-without-image': 'without-image-aaa',
      },
    },
    spec: { containers: [{ name: 'cold-sidecar', image: 'cold-image:v1' }] },
  };
  const cases = [
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
  ] as const;
  const podWith = (hash: string, withoutImage: string): V1Pod => ({
    metadata: {
      name: 'p',
      namespace: 'default',
      annotations: { 'kruise.io/sidecarset-hash': hash, 'kruise.io/sidecarset-hash-without-image': withoutImage },
    },
    spec: { containers: [{ name: 'cold-sidecar', image: 'cold-image:v0' }] },
  });
  it.each(cases)('reads: %s', (_n, hash, withoutImage, revision, withoutImageRevision) => {
    const p = podWith(hash, withoutImage);
    expect([
      podSidecarSetHash(p.metadata!.annotations, 'test-sidecarset'),
      podSidecarSetHashWithoutImage(p.metadata!.annotations, 'test-sidecarset'),
    ]).toEqual([revision, withoutImageRevision]);
  });
  it.each(cases)('writes: %s', (_n, hash, withoutImage, _r, withoutImageRevision) => {
    const after = applyPatch(
      podWith(hash, withoutImage),
      inPlaceUpdatePatch(s, podWith(hash, withoutImage), new Date()),
    );
    expect(podSidecarSetHash(after.metadata!.annotations, 'test-sidecarset')).toBe('bbb');
    if (withoutImageRevision)
      expect(podSidecarSetHashWithoutImage(after.metadata!.annotations, 'test-sidecarset')).toBe(withoutImageRevision);
  });
});
