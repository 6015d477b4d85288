import { describe, expect, it } from '@jest/globals';
import type { V1Namespace, V1Pod } from '@kubernetes/client-node';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { Store } from '../../../../lib/runtime/informer/store.js';
import { Logger } from '../../../../lib/runtime/log.js';
import { sidecarSetReconciler, type SidecarSetControllerDeps } from '../../../../lib/runtime/sidecarset/controller.js';
import { upstreamSidecarSetHash } from '../../../../lib/runtime/sidecarset/gojson.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { fakeApps, NS } from './fake-api.js';
import { applyPatch, factoryPods } from './upstream-fixtures.js';

/** A SidecarSet at test-image:v2 over `count` injected, ready pods at v1 (upstream's fixture, in namespace apps). */
function cluster(count: number, strategy: SidecarSet['spec']['updateStrategy']) {
  const spec: SidecarSet['spec'] = {
    selector: { matchLabels: { app: 'sidecar' } },
    containers: [{ name: 'test-sidecar', image: 'test-image:v2' }],
    updateStrategy: strategy,
  };
  const v1Spec = { ...spec, containers: [{ name: 'test-sidecar', image: 'test-image:v1' }] };
  const s: SidecarSet = {
    metadata: {
      name: 'test-sidecarset',
      uid: 'u1',
      generation: 1,
      annotations: {
        'kruise.io/sidecarset-hash': upstreamSidecarSetHash(spec),
        'kruise.io/sidecarset-hash-without-image': upstreamSidecarSetHash(spec, true),
      },
    },
    spec,
  };
  const sidecarSets = new Store<SidecarSet>();
  sidecarSets.upsert(s);
  const pods = new Store<V1Pod>();
  for (const p of factoryPods(count, 0, 0)) {
    p.metadata!.namespace = 'apps';
    p.metadata!.resourceVersion = '1';
    p.metadata!.annotations = {
      'kruise.io/sidecarset-injected-list': 'test-sidecarset',
      'kruise.io/sidecarset-hash': JSON.stringify({ 'test-sidecarset': { hash: upstreamSidecarSetHash(v1Spec) } }),
      'kruise.io/sidecarset-hash-without-image': JSON.stringify({
        'test-sidecarset': { hash: upstreamSidecarSetHash(spec, true) },
      }),
    };
    pods.upsert(p);
  }
  const { store: revisions, deps: history } = fakeApps();
  const patched: string[] = [];
  const statuses: object[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let onPatch: (n: number) => void = () => undefined;
  const deps: SidecarSetControllerDeps = {
    sidecarSets: { store: sidecarSets } as never,
    pods: { store: pods } as never,
    namespaces: { store: new Store<V1Namespace>() } as never,
    core: {
      patchNamespacedPod: async ({ name, namespace, body }: { name: string; namespace: string; body: object[] }) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        patched.push(name);
        onPatch(patched.length);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
        const after = applyPatch(pods.getByName(name, namespace)!, body);
        return { ...after, metadata: { ...after.metadata, resourceVersion: '2' } };
      },
    } as never,
    apps: history.apps,
    custom: {
      patchClusterCustomObjectStatus: async ({ body }: { body: object }) => {
        statuses.push(body);
        return {};
      },
    } as never,
    checkStillLeader: () => undefined,
    revisionNamespace: NS,
    clock: new FakeClock(),
    logger: new Logger({}, 'error'),
    patchConcurrency: 4,
  };
  return {
    deps,
    s,
    pods,
    revisions,
    patched,
    statuses,
    maxInFlight: () => maxInFlight,
    /** Resolves once no patch is in flight and the microtasks that would start another have run. */
    settled: async () => {
      do await new Promise((r) => setTimeout(r, 1));
      while (inFlight > 0);
      await new Promise((r) => setImmediate(r));
    },
    onPatch: (f: (n: number) => void) => {
      onPatch = f;
    },
  };
}

const ctx = () => ({ signal: new AbortController().signal });

describe('sidecarSetReconciler', () => {
  it("patches one maxUnavailable batch concurrently (at most patchConcurrency at once), records the revision, and writes upstream's status counting the batch as updated, not yet running it", async () => {
    const c = cluster(30, { maxUnavailable: 10 });
    expect(await sidecarSetReconciler(c.deps)({ name: 'test-sidecarset' }, ctx())).toEqual({ requeueAfterMs: 5_000 });
    expect(c.patched).toHaveLength(10);
    expect(c.maxInFlight()).toBe(4);
    const [revision] = [...c.revisions.values()];
    expect(revision.metadata!.name).toMatch(/^test-sidecarset-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(c.statuses).toEqual([
      {
        status: {
          observedGeneration: 1,
          matchedPods: 30,
          updatedPods: 10,
          readyPods: 20,
          updatedReadyPods: 0,
          latestRevision: revision.metadata!.name,
          collisionCount: 0,
        },
      },
    ]);
  });

  it('plans nothing more while the cache does not yet show its own updates (upstream UpdateExpectations)', async () => {
    const c = cluster(30, { maxUnavailable: 10 });
    const reconcile = sidecarSetReconciler(c.deps);
    await reconcile({ name: 'test-sidecarset' }, ctx());
    expect(await reconcile({ name: 'test-sidecarset' }, ctx())).toEqual({ requeueAfterMs: 1_000 });
    expect(c.patched).toHaveLength(10);
  });

  it('starts no write once shutdown begins: the patches already sent finish, the reconcile ends between writes', async () => {
    const c = cluster(30, { maxUnavailable: 30 });
    const abort = new AbortController();
    c.onPatch((n) => {
      if (n === 6) abort.abort(new Error('shutting down'));
    });
    await expect(sidecarSetReconciler(c.deps)({ name: 'test-sidecarset' }, { signal: abort.signal })).rejects.toThrow(
      'shutting down',
    );
    // Every patch that was started has ended (a worker that went on would keep one in flight).
    await c.settled();
    // 6 sent when the signal fired, plus those other workers had already begun (at most patchConcurrency - 1).
    expect(c.patched.length).toBeGreaterThanOrEqual(6);
    expect(c.patched.length).toBeLessThanOrEqual(6 + 3);
  });

  it('writes nothing when it no longer leads', async () => {
    const c = cluster(5, { maxUnavailable: 5 });
    c.deps.checkStillLeader = () => {
      throw new Error('lost the Lease');
    };
    await expect(sidecarSetReconciler(c.deps)({ name: 'test-sidecarset' }, ctx())).rejects.toThrow('lost the Lease');
    expect([c.patched.length, c.revisions.size, c.statuses.length]).toEqual([0, 0, 0]);
  });
});
