import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { sidecarSetHash } from '../../../../lib/runtime/sidecarset/hash.js';
import { injectSidecars } from '../../../../lib/runtime/sidecarset/inject.js';
import { computeStatus, imageMatches, inPlaceUpdatePatch, parseImage, planUpdates, podState, scaled } from '../../../../lib/runtime/sidecarset/rollout.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

const now = new Date('2026-11-21T00:00:00Z');
const v1: SidecarSet = { metadata: { name: 's', generation: 2 }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }] } };
const withImage = (image: string, strategy: SidecarSet['spec']['updateStrategy'] = {}): SidecarSet =>
  ({ ...v1, spec: { ...v1.spec, containers: [{ name: 'proxy', image }], updateStrategy: strategy } });

/** A pod injected at v1, acting as the kubelet: Ready and running what its spec says. */
function pod(name: string, ready = true, labels: Record<string, string> = {}): V1Pod {
  const base: V1Pod = { metadata: { name, namespace: 'apps', resourceVersion: '7', labels: { app: 'web', ...labels } }, spec: { containers: [{ name: 'app', image: 'web:1' }] } };
  const injected = injectSidecars(base, [v1], now).pod;
  injected.status = {
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: injected.spec!.containers.map((c) => ({ name: c.name, image: c.image!, imageID: '', ready, restartCount: 0 })),
  };
  return injected;
}
const names = (pods: V1Pod[]) => pods.map((p) => p.metadata!.name);

describe('planUpdates', () => {
  it('updates at most maxUnavailable ready pods at a time, in name order', () => {
    const s = withImage('proxy:2', { maxUnavailable: 2 });
    const pods = ['p3', 'p1', 'p2', 'p4'].map((n) => pod(n));
    expect(names(planUpdates(s, pods.map((p) => podState(s, p))))).toEqual(['p1', 'p2']);
  });

  it('counts pods already unavailable and updates not-ready pods first', () => {
    const s = withImage('proxy:2', { maxUnavailable: 1 });
    const pods = [pod('a'), pod('b', false), pod('c')];
    expect(names(planUpdates(s, pods.map((p) => podState(s, p))))).toEqual(['b']);
  });

  it('waits while an updated pod has not yet run the new image', () => {
    const s = withImage('proxy:2', { maxUnavailable: 1 });
    // The controller patched pod a (new image + revision); the kubelet still runs proxy:1.
    const patched = pod('a');
    patched.metadata!.annotations!['kruise.io/sidecarset-hash'] = JSON.stringify({ s: { hash: sidecarSetHash(s), sidecarList: ['proxy'] } });
    patched.spec!.containers[1].image = 'proxy:2';
    const states = [patched, pod('b')].map((p) => podState(s, p));
    expect(states[0]).toEqual(expect.objectContaining({ updated: true, consistent: false }));
    expect(planUpdates(s, states)).toEqual([]);
  });

  it('keeps partition pods on the old revision, and honours paused, NotUpdate and the update selector', () => {
    const pods = ['a', 'b', 'c', 'd'].map((n) => pod(n, true, n === 'd' ? { canary: 'yes' } : {}));
    const plan = (strategy: SidecarSet['spec']['updateStrategy']) => names(planUpdates(withImage('proxy:2', strategy), pods.map((p) => podState(withImage('proxy:2', strategy), p))));
    expect(plan({ maxUnavailable: 4, partition: 3 })).toEqual(['a']);
    expect(plan({ maxUnavailable: 4, partition: '50%' })).toEqual(['a', 'b']);
    expect(plan({ maxUnavailable: 4, paused: true })).toEqual([]);
    expect(plan({ maxUnavailable: 4, type: 'NotUpdate' })).toEqual([]);
    expect(plan({ maxUnavailable: 4, selector: { matchLabels: { canary: 'yes' } } })).toEqual(['d']);
  });

  it('rounds a partition percentage down, as upstream (25% of 10 keeps 2 pods)', () => {
    const s = withImage('proxy:2', { maxUnavailable: 10, partition: '25%' });
    const pods = Array.from({ length: 10 }, (_, i) => pod(`p${i}`));
    expect(planUpdates(s, pods.map((p) => podState(s, p)))).toHaveLength(8);
  });

  it('counts a pod still restarting into an older revision as unavailable', () => {
    // proxy:2 was patched into pod z; the kubelet still runs proxy:1 when proxy:3 arrives.
    const v2 = withImage('proxy:2');
    const z = pod('z');
    z.metadata!.annotations!['kruise.io/sidecarset-hash'] = JSON.stringify({ s: { hash: sidecarSetHash(v2), sidecarList: ['proxy'] } });
    z.spec!.containers[1].image = 'proxy:2';
    const v3 = withImage('proxy:3', { maxUnavailable: 1 });
    const states = [pod('b'), pod('c'), z].map((p) => podState(v3, p));
    expect(states[2]).toEqual(expect.objectContaining({ updated: false, ready: true, consistent: false }));
    // z costs nothing more (it is already unavailable); b as well would make two at once.
    expect(names(planUpdates(v3, states))).toEqual(['z']);
  });

  it('reads the kubelet\'s normalized image names as the images the spec asks for', () => {
    const s = withImage('proxy:2', { maxUnavailable: 1 });
    const patched = pod('a');
    patched.metadata!.annotations!['kruise.io/sidecarset-hash'] = JSON.stringify({ s: { hash: sidecarSetHash(s), sidecarList: ['proxy'] } });
    patched.spec!.containers[1].image = 'proxy:2';
    patched.status!.containerStatuses![1].image = 'docker.io/library/proxy:2';
    const states = [patched, pod('b')].map((p) => podState(s, p));
    expect(states[0]).toEqual(expect.objectContaining({ updated: true, consistent: true }));
    expect(names(planUpdates(s, states))).toEqual(['b']);
  });

  it('leaves pods whose other fields differ for recreation', () => {
    const s: SidecarSet = { ...v1, spec: { ...v1.spec, containers: [{ name: 'proxy', image: 'proxy:2', args: ['--new'] }] } };
    const state = podState(s, pod('a'));
    expect([state.updated, state.inPlaceUpdatable]).toEqual([false, false]);
    expect(planUpdates(s, [state])).toEqual([]);
  });
});

describe('status and patches', () => {
  it('counts matched, updated, ready and updated-ready pods', () => {
    expect(computeStatus(v1, [pod('a'), pod('b', false)].map((p) => podState(v1, p)))).toEqual({
      observedGeneration: 2, matchedPods: 2, updatedPods: 2, readyPods: 1, updatedReadyPods: 1, latestRevision: expect.any(String),
    });
  });

  it('patches only the sidecar image and the revision, guarded by resourceVersion', () => {
    const s = withImage('proxy:2');
    const ops = inPlaceUpdatePatch(s, pod('a'), now) as Array<{ op: string; path: string; value: unknown }>;
    expect(ops[0]).toEqual({ op: 'test', path: '/metadata/resourceVersion', value: '7' });
    expect(ops[1]).toEqual({ op: 'replace', path: '/spec/containers/1/image', value: 'proxy:2' });
    expect(ops[2].path).toBe('/metadata/annotations/kruise.io~1sidecarset-hash');
    expect(JSON.parse(ops[2].value as string).s.hash).toBe(computeStatus(s, []).latestRevision);
  });

  it('compares image references as the kubelet reports them', () => {
    expect(parseImage('nginx')).toEqual({ repo: 'docker.io/library/nginx', tag: 'latest', digest: undefined });
    expect(parseImage('registry:5000/team/proxy:1.2')).toEqual({ repo: 'registry:5000/team/proxy', tag: '1.2', digest: undefined });
    expect(parseImage('localhost/proxy@sha256:abc')).toEqual({ repo: 'localhost/proxy', tag: undefined, digest: 'sha256:abc' });
    expect(imageMatches('proxy:1', 'docker.io/library/proxy:1')).toBe(true);
    expect(imageMatches('team/proxy', 'index.docker.io/team/proxy:latest')).toBe(true);
    expect(imageMatches('proxy:1', 'docker.io/library/proxy:2')).toBe(false);
    expect(imageMatches('quay.io/proxy:1', 'docker.io/library/proxy:1')).toBe(false);
    expect(imageMatches('proxy@sha256:abc', 'docker.io/library/proxy:1', 'docker.io/library/proxy@sha256:abc')).toBe(true);
    expect(imageMatches('proxy@sha256:abc', 'docker.io/library/proxy:1', 'docker.io/library/proxy@sha256:def')).toBe(false);
    expect(imageMatches('proxy:1', undefined)).toBe(false);
  });

  it('scales int-or-percent like Kubernetes', () => {
    expect([scaled('25%', 10, 0, false), scaled('25%', 10, 0, true), scaled(3, 10, 0, true), scaled(undefined, 10, 1, true)]).toEqual([2, 3, 3, 1]);
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
