/**
 * Upstream's SidecarSet controller test fixtures (pkg/controller/sidecarset/sidecarset_strategy_test.go
 * factoryPods/factorySidecarSet, sidecarset_processor_test.go image IDs), as data.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { inPlaceUpdatePatch } from '../../../../lib/runtime/sidecarset/podupdate.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

export const testImageV1ImageID =
  'docker-pullable://test-image@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d';
export const testImageV2ImageID =
  'docker-pullable://test-image@sha256:f7988fb6c02e0ce69257d9bd9cf37ae20a60f1df7563c3a2a6abe24160306b8d';
const NOW = new Date('2026-11-21T00:00:00Z');

/** createFactorySidecarSet: revision `hash`, `withoutImage`; one sidecar test-sidecar at test-image:v2. */
export function factorySidecarSet(hash = 'bbb', withoutImage = 'without-aaa'): SidecarSet {
  return {
    metadata: {
      name: 'test-sidecarset',
      labels: {},
      annotations: { 'kruise.io/sidecarset-hash': hash, 'kruise.io/sidecarset-hash-without-image': withoutImage },
    },
    spec: {
      containers: [{ name: 'test-sidecar', image: 'test-image:v2' }],
      selector: { matchLabels: { app: 'sidecar' } },
      updateStrategy: {},
      revisionHistoryLimit: 10,
    },
  };
}

/** Applies the add/replace ops of a JSON Patch (the `test` ops are the API server's business). */
export function applyPatch<T extends object>(obj: T, ops: object[]): T {
  const out = structuredClone(obj) as Record<string, unknown>;
  for (const { op, path, value } of ops as Array<{ op: string; path: string; value: unknown }>) {
    if (op === 'test') continue;
    if (op !== 'add' && op !== 'replace') throw new Error(`op ${op} not expected`);
    const parts = path
      .slice(1)
      .split('/')
      .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
    let at = out as Record<string, unknown>;
    for (const p of parts.slice(0, -1)) at = at[p] as Record<string, unknown>;
    at[parts.at(-1)!] = structuredClone(value);
  }
  return out as T;
}

/**
 * factoryPodsCommon/factoryPods: `count` Running, Ready pods on revision aaa (created a second
 * apart, later index = newer); the first `upgraded` updated in place to the SidecarSet's revision
 * (by this runtime's own patch, as upstream's fixture uses its own update functions); the first
 * `upgradedAndReady` of those reported running test-image:v2.
 */
export function factoryPods(
  count: number,
  upgraded: number,
  upgradedAndReady: number,
  sidecarSet = factorySidecarSet(),
): V1Pod[] {
  const pods: V1Pod[] = Array.from(
    { length: count },
    (_, i) =>
      ({
        metadata: {
          name: `pod-${i}`,
          labels: { app: 'sidecar' },
          creationTimestamp: new Date(NOW.getTime() + i * 1000),
          annotations: {
            'kruise.io/sidecarset-hash': '{"test-sidecarset":{"hash":"aaa","sidecarList":["test-sidecar"]}}',
            'kruise.io/sidecarset-hash-without-image':
              '{"test-sidecarset":{"hash":"without-aaa","sidecarList":["test-sidecar"]}}',
          },
        },
        spec: {
          containers: [
            { name: 'nginx', image: 'nginx:1.15.1' },
            { name: 'test-sidecar', image: 'test-image:v1' },
          ],
        },
        status: {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [
            {
              name: 'nginx',
              image: 'nginx:1.15.1',
              imageID:
                'docker-pullable://nginx@sha256:a9286defaba7b3a519d585ba0e37d0b2cbee74ebfe590960b0b1d6a5e97d1e1d',
              ready: true,
              restartCount: 0,
            },
            { name: 'test-sidecar', image: 'test-image:v1', imageID: testImageV1ImageID, ready: true, restartCount: 0 },
          ],
        },
      }) as unknown as V1Pod,
  );
  for (let i = 0; i < upgraded; i++) pods[i] = applyPatch(pods[i], inPlaceUpdatePatch(sidecarSet, pods[i], NOW));
  for (let i = 0; i < upgradedAndReady; i++) {
    const cs = pods[i].status!.containerStatuses![1];
    cs.image = 'test-image:v2';
    cs.imageID = testImageV2ImageID;
  }
  return pods;
}

/** Upstream's Random, with a fixed seed: the order pods come in must not matter. */
export function shuffled<T>(items: T[], seed = 7): T[] {
  const out = [...items];
  let x = seed;
  for (let i = out.length - 1; i > 0; i--) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
