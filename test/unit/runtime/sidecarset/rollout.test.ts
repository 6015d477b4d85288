import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { sidecarSetHash } from '../../../../lib/runtime/sidecarset/hash.js';
import { injectSidecars } from '../../../../lib/runtime/sidecarset/inject.js';
import { inPlaceUpdatePatch } from '../../../../lib/runtime/sidecarset/podupdate.js';
import {
  computeStatus,
  isContainerImageEqual,
  isPodInjectedAndConsistent,
  parseImage,
  partitionReplicas,
  planUpdates,
  podState,
  scaled,
} from '../../../../lib/runtime/sidecarset/rollout.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { applyPatch } from './upstream-fixtures.js';

const now = new Date('2026-11-21T00:00:00Z');
const v1: SidecarSet = {
  metadata: { name: 's', generation: 2 },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }] },
};
const withImage = (image: string, strategy: SidecarSet['spec']['updateStrategy'] = {}): SidecarSet => ({
  ...v1,
  spec: { ...v1.spec, containers: [{ name: 'proxy', image }], updateStrategy: strategy },
});
const digest = (image: string) =>
  `docker-pullable://${image.split(':')[0]}@sha256:${image.endsWith('1') ? 'a'.repeat(64) : 'b'.repeat(64)}`;

/** A pod injected at v1, with the kubelet's status: Running, Ready, running what its spec says; `age` seconds old. */
function pod(name: string, ready = true, labels: Record<string, string> = {}, age = 100): V1Pod {
  const base: V1Pod = {
    metadata: {
      name,
      namespace: 'apps',
      resourceVersion: '7',
      labels: { app: 'web', ...labels },
      creationTimestamp: new Date(now.getTime() - age * 1000),
    },
    spec: { containers: [{ name: 'app', image: 'web:1' }] },
  };
  const injected = injectSidecars(base, [v1], now).pod;
  injected.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: injected.spec!.containers.map((c) => ({
      name: c.name,
      image: c.image!,
      imageID: digest(c.image!),
      ready,
      restartCount: 0,
    })),
  };
  return injected;
}
/** `p` updated in place to `s` by this runtime; the kubelet has not restarted the sidecar yet. */
const patched = (s: SidecarSet, p: V1Pod) => applyPatch(p, inPlaceUpdatePatch(s, p, now));
/** The kubelet reports the new image running. */
function restarted(p: V1Pod): V1Pod {
  const out = structuredClone(p);
  for (const cs of out.status!.containerStatuses!) {
    const spec = out.spec!.containers.find((c) => c.name === cs.name)!.image!;
    if (spec !== cs.image) Object.assign(cs, { image: `docker.io/library/${spec}`, imageID: digest(spec) });
  }
  return out;
}
const names = (pods: V1Pod[]) => pods.map((p) => p.metadata!.name);
const plan = (s: SidecarSet, pods: V1Pod[]) =>
  names(
    planUpdates(
      s,
      pods.map((p) => podState(s, p)),
    ),
  );

describe('planUpdates', () => {
  it('updates at most maxUnavailable ready pods at a time, newest first', () => {
    const s = withImage('proxy:2', { maxUnavailable: 2 });
    expect(
      plan(s, [pod('p3', true, {}, 30), pod('p1', true, {}, 10), pod('p2', true, {}, 20), pod('p4', true, {}, 40)]),
    ).toEqual(['p1', 'p2']);
  });

  it('takes not-ready pods first, without counting them against maxUnavailable', () => {
    const s = withImage('proxy:2', { maxUnavailable: 1 });
    expect(plan(s, [pod('a'), pod('b', false), pod('c', false)])).toEqual(['b', 'c', 'a']);
    // maxUnavailable 0 (upstream accepts it): only pods that are not ready anyway.
    expect(plan(withImage('proxy:2', { maxUnavailable: 0 }), [pod('a'), pod('b', false)])).toEqual(['b']);
  });

  it('counts updated pods whose sidecar has not restarted yet against maxUnavailable, and detects completion by imageID', () => {
    const s = withImage('proxy:2', { maxUnavailable: 1 });
    const a = patched(s, pod('a'));
    expect(podState(s, a)).toEqual(expect.objectContaining({ updated: true, consistent: false }));
    expect(plan(s, [a, pod('b')])).toEqual([]);
    expect(podState(s, restarted(a))).toEqual(expect.objectContaining({ updated: true, consistent: true }));
    expect(plan(s, [restarted(a), pod('b')])).toEqual(['b']);
  });

  it('does not update again a pod whose earlier update is still in flight (ready sidecar, old imageID)', () => {
    const v2 = withImage('proxy:2');
    const z = patched(v2, pod('z'));
    const v3 = withImage('proxy:3', { maxUnavailable: 3 });
    expect(podState(v3, z)).toEqual(expect.objectContaining({ updated: false, upgradable: true, settled: false }));
    expect(plan(v3, [pod('b'), z])).toEqual(['b']);
  });

  it('keeps partition pods on the old revision, and honours paused, NotUpdate and the update selector', () => {
    const pods = ['a', 'b', 'c', 'd'].map((n, i) => pod(n, true, n === 'd' ? { canary: 'yes' } : {}, 100 - i));
    const by = (strategy: SidecarSet['spec']['updateStrategy']) => plan(withImage('proxy:2', strategy), pods);
    expect(by({ maxUnavailable: 4, partition: 3 })).toEqual(['d']);
    expect(by({ maxUnavailable: 4, partition: '50%' })).toEqual(['d', 'c']);
    expect(by({ maxUnavailable: 4, paused: true })).toEqual([]);
    expect(by({ maxUnavailable: 4, type: 'NotUpdate' })).toEqual([]);
    expect(by({ maxUnavailable: 4, selector: { matchLabels: { canary: 'yes' } } })).toEqual(['d']);
  });

  it('rounds a partition percentage up and keeps at least one pod updating below 100%, as upstream', () => {
    const s = withImage('proxy:2', { maxUnavailable: 10, partition: '25%' });
    expect(
      plan(
        s,
        Array.from({ length: 10 }, (_, i) => pod(`p${i}`)),
      ),
    ).toHaveLength(7);
    expect([
      partitionReplicas('99%', 5),
      partitionReplicas('100%', 5),
      partitionReplicas(180, 100),
      partitionReplicas('1%', 5),
      partitionReplicas(undefined, 5),
    ]).toEqual([4, 5, 100, 1, 0]);
  });

  it('leaves pods whose other fields differ for recreation', () => {
    const s: SidecarSet = {
      ...v1,
      spec: { ...v1.spec, containers: [{ name: 'proxy', image: 'proxy:2', args: ['--new'] }] },
    };
    const state = podState(s, pod('a'));
    expect([state.updated, state.upgradable]).toEqual([false, false]);
    expect(planUpdates(s, [state])).toEqual([]);
  });

  it('matches only active pods that list the SidecarSet as injected and carry all its sidecars', () => {
    const p = pod('a');
    expect(isPodInjectedAndConsistent(v1, p)).toBe(true);
    expect(isPodInjectedAndConsistent({ ...v1, metadata: { name: 'other' } }, p)).toBe(false);
    expect(
      isPodInjectedAndConsistent(v1, {
        ...p,
        spec: { containers: p.spec!.containers.filter((c) => c.name !== 'proxy') },
      }),
    ).toBe(false);
    expect(isPodInjectedAndConsistent(v1, { ...p, status: { ...p.status, phase: 'Succeeded' } })).toBe(false);
  });
});

describe('status and patches', () => {
  it('counts matched, updated, ready (and consistent) and updated-ready pods, with the revision name', () => {
    const s = withImage('proxy:2');
    const pods = [pod('a'), pod('b', false), patched(s, pod('c')), restarted(patched(s, pod('d')))];
    expect(
      computeStatus(
        s,
        pods.map((p) => podState(s, p)),
        's-abc',
      ),
    ).toEqual({
      observedGeneration: 2,
      matchedPods: 4,
      updatedPods: 2,
      readyPods: 2,
      updatedReadyPods: 1,
      latestRevision: 's-abc',
      collisionCount: 0,
    });
  });

  it('patches only the sidecar image, the revision and the in-place update record, guarded by resourceVersion', () => {
    const s = withImage('proxy:2');
    const ops = inPlaceUpdatePatch(s, pod('a'), now, 's-rev') as Array<{ op: string; path: string; value: string }>;
    expect(ops.slice(0, 2)).toEqual([
      { op: 'test', path: '/metadata/resourceVersion', value: '7' },
      { op: 'replace', path: '/spec/containers/1/image', value: 'proxy:2' },
    ]);
    expect(ops[2].path).toBe('/metadata/annotations/kruise.io~1sidecarset-hash');
    expect(JSON.parse(ops[2].value).s).toEqual({
      updateTimestamp: '2026-11-21T00:00:00Z',
      hash: sidecarSetHash(s),
      sidecarSetName: 's',
      sidecarList: ['proxy'],
      controllerRevision: 's-rev',
    });
    // Nothing else: the image, the two annotations and the guard are the whole patch.
    expect(ops.map((o) => `${o.op} ${o.path}`)).toEqual([
      'test /metadata/resourceVersion',
      'replace /spec/containers/1/image',
      'add /metadata/annotations/kruise.io~1sidecarset-hash',
      'add /metadata/annotations/kruise.io~1sidecarset-inplace-update-state',
    ]);
    expect(JSON.parse(ops[3].value)).toEqual({
      s: {
        revision: sidecarSetHash(s),
        updateTimestamp: '2026-11-21T00:00:00Z',
        lastContainerStatuses: { proxy: { imageID: digest('proxy:1') } },
      },
    });
  });

  it("compares image references as upstream's util.IsContainerImageEqual (no normalization)", () => {
    expect(parseImage('nginx')).toEqual({ repo: 'nginx', tag: '', digest: '' });
    expect(parseImage('registry:5000/team/proxy:1.2')).toEqual({
      repo: 'registry:5000/team/proxy',
      tag: '1.2',
      digest: '',
    });
    expect(parseImage('proxy@sha256:abc')).toBeUndefined();
    expect(isContainerImageEqual('test-image@sha256:' + 'a'.repeat(64), 'test-image@sha256:' + 'a'.repeat(64))).toBe(
      true,
    );
    expect(isContainerImageEqual('proxy:1', 'docker.io/library/proxy:1')).toBe(false);
    expect(isContainerImageEqual('proxy:1', 'proxy:1')).toBe(true);
  });

  it('scales int-or-percent like Kubernetes, and names a bad value', () => {
    expect([
      scaled('25%', 10, 0, false),
      scaled('25%', 10, 0, true),
      scaled(3, 10, 0, true),
      scaled(undefined, 10, 1, true),
    ]).toEqual([2, 3, 3, 1]);
    expect(() => scaled('25', 10, 0, true)).toThrow('"25" is not a whole number or a percentage');
  });
});

describe('hash memoization', () => {
  it('gives frozen (cached) and unfrozen SidecarSets the same hashes, and sees edits of unfrozen ones', () => {
    const frozen = Object.freeze({ ...withImage('proxy:9'), spec: Object.freeze(withImage('proxy:9').spec) });
    const plain = withImage('proxy:9');
    expect([sidecarSetHash(frozen), sidecarSetHash(frozen)]).toEqual([sidecarSetHash(plain), sidecarSetHash(plain)]);
    plain.spec.containers![0].image = 'proxy:10';
    expect(sidecarSetHash(plain)).not.toBe(sidecarSetHash(frozen));
  });
});
