/**
 * Upstream OpenKruise's pod webhook tests, ported as facts (inputs and expected outputs):
 * pkg/webhook/pod/mutating/sidecarset_test.go, v1.8.3's and the one v1.9.1 adds for sidecar volumes
 * (TestBuildSidecarVolumes_WithDifferentVolumeScenarios). Each `describe` names the upstream test function.
 * Of v1.9.1's TestPodVolumeDevicesAppend only the case without shareVolumeDevicePolicy (refused by this runtime).
 * Out of this runtime's subset, with the reason:
 * - TestInjectInitContainer: its second SidecarSet is a HotUpgrade native sidecar (HotUpgrade is refused).
 * - sidecarset_hotupgrade_test.go (TestInjectHotUpgradeSidecar): HotUpgrade is refused.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import {
  injectSidecars,
  mergeSidecarContainers,
  sidecarSetMatchesPod,
} from '../../../../lib/runtime/sidecarset/inject.js';
import { podSidecarSetHash, readHashAnnotation } from '../../../../lib/runtime/sidecarset/hash.js';
import type { SidecarContainer, SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import {
  pod1,
  podWithStaragent,
  sidecarSet1,
  sidecarSet3,
  sidecarsetWithTransferEnv,
  sidecarSetWithStaragent,
} from './upstream-pod-mutating.fixtures.js';

const now = new Date('2026-11-23T00:00:00Z');

/** Upstream's sidecarsetMutatingPod at CREATE: unpaused, matching SidecarSets injected into the pod. */
function mutate(pod: V1Pod, sets: SidecarSet[]): V1Pod {
  const matching = sets.filter((s) => !s.spec.injectionStrategy?.paused && sidecarSetMatchesPod(s, pod, {}));
  return injectSidecars(pod, matching, now).pod;
}
const names = (list: Array<{ name: string }> | undefined) => (list ?? []).map((c) => c.name);
const env = (c: V1Container | undefined, name: string) => c?.env?.find((e) => e.name === name);
const mountPaths = (c: V1Container | undefined) => (c?.volumeMounts ?? []).map((m) => m.mountPath);

describe('TestPodHasNoMatchedSidecarSet', () => {
  it('leaves a pod the SidecarSet does not select alone', () => {
    const pod = pod1();
    pod.metadata!.labels!.app = 'doesnt-match';
    expect(mutate(pod, [sidecarSet1()]).spec!.containers).toHaveLength(1);
  });
});

describe('TestMergeSidecarSecrets', () => {
  const s0to2 = [{ name: 's0' }, { name: 's1' }, { name: 's2' }];
  it.each([
    ['3 + 3 - 2 = 4', s0to2, [{ name: 's2' }, { name: 's3' }, { name: 's3' }], 4],
    ['3 + 3 - 0 = 6', s0to2, [{ name: 's3' }, { name: 's4' }, { name: 's5' }], 6],
    ['3 + 0 - 0 = 3', s0to2, undefined, 3],
    ['0 + 3 - 0 = 3', undefined, [{ name: 's3' }, { name: 's4' }, { name: 's5' }], 3],
  ])('%s', (_name, fromSidecarSet, fromPod, expected) => {
    const s = sidecarSet1();
    s.spec.imagePullSecrets = fromSidecarSet;
    const pod = pod1();
    pod.spec!.imagePullSecrets = fromPod;
    expect(mutate(pod, [s]).spec!.imagePullSecrets).toHaveLength(expected);
  });
});

describe('TestInjectionStrategyPaused', () => {
  it('injects nothing from a paused SidecarSet', () => {
    const s = sidecarSet1();
    s.spec.injectionStrategy = { paused: true };
    expect(mutate(pod1(), [s]).spec!.containers).toHaveLength(1);
  });
});

describe('TestSidecarSetPodInjectPolicy', () => {
  it("puts BeforeAppContainer first, AfterAppContainer last, init containers after the pod's sorted by name with IS_INJECTED", () => {
    const out = mutate(pod1(), [sidecarSet1()]);
    expect(names(out.spec!.containers)).toEqual(['dns-f', 'nginx', 'log-agent']);
    expect(names(out.spec!.initContainers)).toEqual(['init-0', 'init-1', 'init-2']);
    for (const c of out.spec!.initContainers!.slice(1)) expect(env(c, 'IS_INJECTED')).toBeDefined();
  });
});

describe('TestSidecarVolumesAppend', () => {
  it("adds only the SidecarSet volume the sidecars mount, after the pod's", () => {
    expect(names(mutate(pod1(), [sidecarsetWithTransferEnv()]).spec!.volumes)).toEqual([
      'volume-a',
      'volume-b',
      'volume-1',
    ]);
  });
});

describe('TestBuildSidecarVolumes_WithDifferentVolumeScenarios (v1.9.1)', () => {
  it('missing volume in sidecarSet: nothing added (v1.8.3 dereferenced the missing volume)', () => {
    const s = sidecarSetWithStaragent();
    s.spec.volumes = [{ name: 'volume-a1' }, { name: 'volume-b2' }, { name: 'volume-c3' }];
    s.spec.initContainers![0].volumeDevices = [{ name: 'disk0', devicePath: '/dev/nvme0' }];
    s.spec.containers![0].volumeDevices = [{ name: 'disk0', devicePath: '/dev/nvme1' }];
    expect(names(mutate(pod1(), [s]).spec!.volumes)).toEqual(['volume-a', 'volume-b']);
  });
  it("existing volumes in sidecarSet: each sidecar's mounts' volumes, then its devices', init containers first", () => {
    const s = sidecarSetWithStaragent();
    s.spec.initContainers![0].volumeMounts = [
      { name: 'volume-1', mountPath: '/a/b' },
      { name: 'volume-2', mountPath: '/c/d' },
    ];
    s.spec.containers![0].volumeMounts = [
      { name: 'volume-3', mountPath: '/a/b' },
      { name: 'volume-4', mountPath: '/c/d' },
    ];
    s.spec.initContainers![0].volumeDevices = [{ name: 'disk0', devicePath: '/dev/nvme0' }];
    s.spec.containers![0].volumeDevices = [{ name: 'disk1', devicePath: '/dev/nvme1' }];
    s.spec.volumes!.push({ name: 'disk0' }, { name: 'disk1' });
    // Upstream's volumesInSidecars, merged after the pod's own.
    const sidecarVolumes = ['volume-1', 'volume-2', 'disk0', 'volume-3', 'volume-4', 'disk1'];
    expect(names(mutate(pod1(), [s]).spec!.volumes)).toEqual(['volume-a', 'volume-b', ...sidecarVolumes]);
  });
});

describe('TestPodVolumeDevicesAppend (v1.9.1), ShareVolumeDevicePolicy=disable', () => {
  it("keeps each sidecar's own devices, shares none of the pod's, adds the devices' volume once", () => {
    const pod = podWithStaragent();
    pod.spec!.containers[0].volumeDevices = [
      { name: 'origin-pvc-1', devicePath: '/origin-1' },
      { name: 'origin-pvc-share', devicePath: '/share' },
    ];
    pod.spec!.volumes!.push({ name: 'origin-pvc-1' }, { name: 'origin-pvc-share' });
    const s = sidecarSetWithStaragent();
    s.spec.containers = s.spec.containers!.slice(0, 1);
    for (const [c, path] of [
      [s.spec.initContainers![0], '/dev/nvme0'],
      [s.spec.containers[0], '/dev/nvme1'],
    ] as const) {
      c.volumeDevices = [{ name: 'disk0', devicePath: path }];
      delete c.volumeMounts;
      c.shareVolumePolicy = {} as SidecarContainer['shareVolumePolicy'];
    }
    s.spec.volumes = [{ name: 'disk0' }];
    const out = mutate(pod, [s]).spec!;
    expect(out.initContainers![0].volumeDevices).toEqual([{ name: 'disk0', devicePath: '/dev/nvme0' }]);
    expect(out.containers[1].volumeDevices).toEqual([{ name: 'disk0', devicePath: '/dev/nvme1' }]);
    const podVolumes = ['volume-a', 'volume-b', 'volume-staragent', 'origin-pvc-1', 'origin-pvc-share'];
    expect(names(out.volumes)).toEqual([...podVolumes, 'disk0']);
  });
});

describe('TestPodSidecarSetHashCompatibility', () => {
  it('reads the old map-format hash annotations', () => {
    const annotations = {
      'kruise.io/sidecarset-hash':
        '{"sidecarset-test":"bv6d2fbw97wz8xx5x4v4wddwbd5z744wcf7c786dd4dvxvd5w6w424df7vx47989"}',
      'kruise.io/sidecarset-hash-without-image':
        '{"sidecarset-test":"54x5977vf9zz4248w7v44456zf655b8bcffv7x74w88f6dwb994fw48b8f9b8959"}',
    };
    expect(podSidecarSetHash(annotations, 'sidecarset-test')).toBe(
      'bv6d2fbw97wz8xx5x4v4wddwbd5z744wcf7c786dd4dvxvd5w6w424df7vx47989',
    );
    expect(readHashAnnotation(annotations, 'kruise.io/sidecarset-hash-without-image')['sidecarset-test'].hash).toBe(
      '54x5977vf9zz4248w7v44456zf655b8bcffv7x74w88f6dwb994fw48b8f9b8959',
    );
  });
});

describe('TestPodVolumeMountsAppend', () => {
  const sidecarSet = () => {
    const s = sidecarSetWithStaragent();
    s.spec.containers = s.spec.containers!.slice(0, 1);
    return s;
  };
  const withMount = (subPathExpr: string, extraEnv: V1Container['env'] = []) => {
    const pod = podWithStaragent();
    pod.spec!.containers[0].volumeMounts!.push({ name: 'volume-expansion', mountPath: '/e/expansion', subPathExpr });
    pod.spec!.containers[0].env!.push(...(extraEnv ?? []));
    return pod;
  };
  it.each([
    ['append normal volumeMounts', podWithStaragent(), [], []],
    [
      'append volumeMounts SubPathExpr, volumes with expanded subpath',
      withMount('foo/$(POD_NAME)/$(OD_NAME)/conf', [
        { name: 'POD_NAME', value: 'bar' },
        { name: 'OD_NAME', value: 'od_name' },
      ]),
      ['/e/expansion'],
      ['POD_NAME', 'OD_NAME'],
    ],
    ['append volumeMounts SubPathExpr, subpath with no expansion', withMount('foo'), ['/e/expansion'], []],
    ['append volumeMounts SubPathExpr, volumes expanded with empty subpath', withMount(''), ['/e/expansion'], []],
  ])('%s', (_name, pod, extraMounts, envs) => {
    const out = mutate(pod, [sidecarSet()]);
    const init = out.spec!.initContainers![0];
    const sidecar = out.spec!.containers[1];
    expect(mountPaths(init)).toEqual(
      expect.arrayContaining(['/a/b', '/e/f', '/g/h/i', '/j/k/l', '/staragent', ...extraMounts]),
    );
    expect(mountPaths(sidecar)).toEqual(
      expect.arrayContaining(['/a/b', '/e/f', '/a/b/c', '/d/e/f', '/staragent', ...extraMounts]),
    );
    for (const name of envs) {
      expect(env(init, name)).toBeDefined();
      expect(env(sidecar, name)).toBeDefined();
    }
  });
});

describe('TestSidecarSetTransferEnv', () => {
  it('gives init containers and containers IS_INJECTED then the transferred env', () => {
    const s = sidecarsetWithTransferEnv();
    delete s.spec.initContainers![0].podInjectPolicy;
    const out = mutate(pod1(), [s]);
    expect(out.spec!.initContainers![1].env).toHaveLength(2);
    expect(out.spec!.initContainers![1].env![1].value).toBe('world2');
    expect(out.spec!.containers[0].env).toHaveLength(2);
    expect(out.spec!.containers[0].env![1].value).toBe('world2');
  });
});

describe('TestSidecarSetHashInject', () => {
  it("records each injected SidecarSet's own hash annotation", () => {
    const s1 = sidecarSet1();
    (s1.spec.selector!.matchLabels as Record<string, string>).app = 'doesnt-match';
    const out = mutate(pod1(), [s1, sidecarsetWithTransferEnv(), sidecarSet3()]);
    expect(podSidecarSetHash(out.metadata!.annotations, 'sidecarset2')).toBe('c4k2dbb95d');
    expect(podSidecarSetHash(out.metadata!.annotations, 'sidecarset3')).toBe('gm967682cm');
  });
});

describe('TestSidecarSetNameInject', () => {
  it('lists the injected SidecarSets, sorted', () => {
    const out = mutate(pod1(), [sidecarSet1(), sidecarSet3()]);
    expect(out.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe('sidecarset1,sidecarset3');
  });
});

const sidecar = (name: string, podInjectPolicy?: SidecarContainer['podInjectPolicy']): SidecarContainer => ({
  name,
  ...(podInjectPolicy ? { podInjectPolicy } : {}),
});

describe('TestMergeSidecarContainers', () => {
  const podContainers = () => [{ name: 'sidecar-1' }, { name: 'app-container' }, { name: 'sidecar-2' }];
  const injected = () => [
    sidecar('sidecar-1', 'AfterAppContainer'),
    sidecar('sidecar-2', 'AfterAppContainer'),
    sidecar('new-sidecar-1', 'BeforeAppContainer'),
  ];
  it.each([
    [
      'origins not sidecar, and inject new sidecar',
      podContainers().slice(1, 2),
      injected(),
      ['new-sidecar-1', 'app-container', 'sidecar-1', 'sidecar-2'],
    ],
    [
      'origins not sidecar, and inject new sidecar, only before app container',
      podContainers().slice(1, 2),
      injected().slice(2),
      ['new-sidecar-1', 'app-container'],
    ],
    [
      'origins not sidecar, and inject new sidecar, only after app container',
      podContainers().slice(1, 2),
      injected().slice(0, 2),
      ['app-container', 'sidecar-1', 'sidecar-2'],
    ],
    [
      'origin have sidecars, sidecar no new containers',
      podContainers(),
      injected().slice(0, 2),
      ['sidecar-1', 'app-container', 'sidecar-2'],
    ],
    [
      'origin have sidecars, sidecar have new containers',
      podContainers(),
      injected(),
      ['new-sidecar-1', 'sidecar-1', 'app-container', 'sidecar-2'],
    ],
    ['origin no sidecar, sidecar have new containers', [], injected(), ['new-sidecar-1', 'sidecar-1', 'sidecar-2']],
  ])('%s', (_name, origins, sidecars, expected) => {
    expect(names(mergeSidecarContainers(origins, sidecars))).toEqual(expected);
  });
});

describe('TestInjectInitContainerSort', () => {
  const byName = (list: SidecarContainer[]) =>
    [...list].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const abc = (
    a?: SidecarContainer['podInjectPolicy'],
    c?: SidecarContainer['podInjectPolicy'],
    b?: SidecarContainer['podInjectPolicy'],
  ) => [sidecar('a-init', a), sidecar('c-init', c), sidecar('b-init', b)];
  const appInits = () => [{ name: 'app1-init' }, { name: 'app2-init' }];
  it.each([
    ['origins nil, inject containers(a, b, c)', [], abc(), ['a-init', 'b-init', 'c-init']],
    [
      'origin init, inject containers(a, b, c)',
      appInits(),
      abc(),
      ['app1-init', 'app2-init', 'a-init', 'b-init', 'c-init'],
    ],
    [
      'origins nil, inject containers(a, b, c)-2',
      appInits(),
      abc('AfterAppContainer', 'BeforeAppContainer', 'BeforeAppContainer'),
      ['b-init', 'c-init', 'app1-init', 'app2-init', 'a-init'],
    ],
  ])('%s', (_name, origins, injected, expected) => {
    expect(names(mergeSidecarContainers(origins, byName(injected)))).toEqual(expected);
  });
});
