import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { injectionIgnored, injectSidecars, sidecarSetMatchesPod } from '../../../../lib/runtime/sidecarset/inject.js';
import { readHashAnnotation, sidecarSetHash } from '../../../../lib/runtime/sidecarset/hash.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

const now = new Date('2026-11-21T00:00:00Z');
const pod = (): V1Pod => ({
  metadata: { name: 'p', namespace: 'apps', labels: { app: 'web' } },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'web:1',
        env: [{ name: 'TZ', value: 'UTC' }],
        volumeMounts: [{ name: 'data', mountPath: '/data' }],
      },
    ],
    volumes: [{ name: 'data', emptyDir: {} }],
  },
});
const sidecarSet = (name: string, spec: Partial<SidecarSet['spec']> = {}): SidecarSet => ({
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [{ name: `${name}-proxy`, image: 'proxy:1' }],
    ...spec,
  },
});

describe("a sidecar's own volumeDevices (upstream v1.9.1 buildSidecars, MergeVolumeMounts)", () => {
  it("adds the devices' volumes and shares no mount at a device path (as upstream v1.9.1's own code, oracle inject)", () => {
    const p: V1Pod = {
      metadata: { name: 'p', namespace: 'apps', labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'web:1',
            volumeMounts: [
              { name: 'data', mountPath: '/data' },
              { name: 'logs', mountPath: '/logs' },
            ],
          },
        ],
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'logs', emptyDir: {} },
        ],
      },
    };
    const s = sidecarSet('s', {
      containers: [
        {
          name: 'proxy',
          image: 'proxy:1',
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          volumeDevices: [{ name: 'disk', devicePath: '/data' }],
        },
      ],
      volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: 'c' } }],
    });
    const out = injectSidecars(p, [s], now).pod.spec!;
    expect(out.volumes!.map((v) => v.name)).toEqual(['data', 'logs', 'disk']);
    expect(out.containers[0].volumeMounts).toEqual([{ name: 'logs', mountPath: '/logs' }]);
    expect(out.containers[0].volumeDevices).toEqual([{ name: 'disk', devicePath: '/data' }]);
  });
});

describe('EnableSortSidecarContainerByName (upstream v1.9.1 gate)', () => {
  const sets = [
    sidecarSet('b', {
      containers: [
        { name: 'zeta', image: 'z:1', podInjectPolicy: 'BeforeAppContainer' },
        { name: 'alpha', image: 'a:1', podInjectPolicy: 'AfterAppContainer' },
        { name: 'mid', image: 'm:1', podInjectPolicy: 'BeforeAppContainer' },
      ],
    }),
  ];
  const names = (p: V1Pod) => p.spec!.containers.map((c) => c.name);

  it("off, upstream's default: the SidecarSet's order", () => {
    expect(names(injectSidecars(pod(), sets, now).pod)).toEqual(['zeta', 'mid', 'app', 'alpha']);
  });

  it('on: sorted by name before placing, each still before or after the app by its podInjectPolicy', () => {
    expect(names(injectSidecars(pod(), sets, now, { sortContainersByName: true }).pod)).toEqual([
      'mid',
      'zeta',
      'app',
      'alpha',
    ]);
  });

  it('on: a sidecar the pod already has keeps its place', () => {
    const p = pod();
    p.spec!.containers.push({ name: 'mid', image: 'old:1' });
    const out = injectSidecars(p, sets, now, { sortContainersByName: true }).pod;
    expect(names(out)).toEqual(['zeta', 'app', 'mid', 'alpha']);
    expect(out.spec!.containers[2].image).toBe('m:1');
  });
});

describe('sidecarSetMatchesPod', () => {
  it('checks selector, namespace and namespaceSelector', () => {
    expect(sidecarSetMatchesPod(sidecarSet('a'), pod(), {})).toBe(true);
    expect(sidecarSetMatchesPod(sidecarSet('a', { namespace: 'other' }), pod(), {})).toBe(false);
    expect(
      sidecarSetMatchesPod(sidecarSet('a', { namespaceSelector: { matchLabels: { mesh: 'on' } } }), pod(), {
        mesh: 'on',
      }),
    ).toBe(true);
    expect(
      sidecarSetMatchesPod(sidecarSet('a', { namespaceSelector: { matchLabels: { mesh: 'on' } } }), pod(), {}),
    ).toBe(false);
    expect(sidecarSetMatchesPod(sidecarSet('a', { selector: { matchLabels: { app: 'db' } } }), pod(), {})).toBe(false);
  });
});

/** Freezes `o` and everything in it: a write anywhere inside throws in strict mode. */
function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

describe('injectSidecars', () => {
  it('never writes to the pod or the SidecarSets it is given (the result shares what it leaves unchanged)', () => {
    const original = deepFreeze({
      ...pod(),
      metadata: { ...pod().metadata, annotations: { keep: 'me' } },
      spec: {
        ...pod().spec!,
        initContainers: [{ name: 'own-init', image: 'i:1' }],
        imagePullSecrets: [{ name: 'mine' }],
      },
    });
    const sets = deepFreeze([
      sidecarSet('a', {
        containers: [
          {
            name: 'app',
            image: 'replaced:1',
            shareVolumePolicy: { type: 'enabled' },
            transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }],
          },
        ],
        initContainers: [{ name: 'setup', image: 'setup:1' }],
        volumes: [{ name: 'cache', emptyDir: {} }],
        imagePullSecrets: [{ name: 'theirs' }],
        patchPodMetadata: [{ annotations: { added: 'yes' }, patchPolicy: 'Retain' }],
      }),
    ]);
    const snapshot = JSON.stringify(original);
    const { pod: injected, injected: names } = injectSidecars(original, sets, now);
    expect(names).toEqual(['a']);
    expect(JSON.stringify(original)).toBe(snapshot);
    expect(injected.spec!.containers.map((c) => c.image)).toEqual(['replaced:1']);
    expect(injected.spec!.initContainers!.map((c) => c.name)).toEqual(['own-init', 'setup']);
    expect(injected.metadata!.annotations).toMatchObject({ keep: 'me', added: 'yes' });
    expect(injectSidecars(original, [], now).pod).toEqual(original);
  });

  it('injects containers in position, with init containers, volumes, pull secrets and annotations', () => {
    const before = sidecarSet('a', {
      containers: [
        {
          name: 'init-proxy',
          image: 'proxy:1',
          podInjectPolicy: 'BeforeAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }],
        },
      ],
      initContainers: [{ name: 'setup', image: 'setup:1' }],
      volumes: [
        { name: 'data', configMap: { name: 'ignored' } },
        { name: 'certs', emptyDir: {} },
      ],
      imagePullSecrets: [{ name: 'regcred' }],
    });
    const { pod: out, injected } = injectSidecars(pod(), [sidecarSet('b'), before], now);
    expect(injected).toEqual(['a', 'b']);
    expect(out.spec!.containers.map((c) => c.name)).toEqual(['init-proxy', 'app', 'b-proxy']);
    const proxy = out.spec!.containers[0] as unknown as Record<string, unknown>;
    expect(proxy.podInjectPolicy).toBeUndefined();
    expect(proxy.volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }]);
    // upstream pkg/webhook/pod/mutating/sidecarset.go: IS_INJECTED=true, then the transferred env.
    expect(proxy.env).toEqual([
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'TZ', value: 'UTC' },
    ]);
    expect(out.spec!.initContainers!.map((c) => c.name)).toEqual(['setup']);
    // Only the SidecarSet volumes a sidecar mounts are added (upstream: volumesMap[mount.Name]); none here.
    expect(out.spec!.volumes).toEqual([{ name: 'data', emptyDir: {} }]);
    expect(out.spec!.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    const hashes = readHashAnnotation(out.metadata!.annotations, 'kruise.io/sidecarset-hash');
    expect(hashes.a).toEqual({
      updateTimestamp: now.toISOString().replace('.000Z', 'Z'),
      hash: sidecarSetHash(before),
      sidecarSetName: 'a',
      sidecarList: ['init-proxy'],
    });
    expect(out.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe('a,b');
  });

  it('is idempotent: a reinvoked pod is not injected twice (upstream re-injects in place: same pod)', () => {
    const once = injectSidecars(pod(), [sidecarSet('a')], now).pod;
    const twice = injectSidecars(once, [sidecarSet('a')], now);
    expect(twice.pod).toEqual(once);
    expect(twice.pod.spec!.containers.map((c) => c.name)).toEqual(['app', 'a-proxy']);
  });

  it("replaces a pod container of the sidecar's name where it stands (upstream mergeSidecarContainers) and leaves the input untouched", () => {
    const input = pod();
    const { pod: out } = injectSidecars(input, [sidecarSet('a', { containers: [{ name: 'app', image: 'x' }] })], now);
    expect(out.spec!.containers).toEqual([{ name: 'app', image: 'x', env: [{ name: 'IS_INJECTED', value: 'true' }] }]);
    expect(input.metadata!.annotations).toBeUndefined();
  });

  it('honours the opt-out annotation helper', () => {
    const p = pod();
    p.metadata!.annotations = { 'kruise.io/sidecarset-inject-ignore': 'true' };
    expect(injectionIgnored(p)).toBe(true);
  });
});
