// Differences from the real upstream kruise-manager v1.8.3 found by
// test/integration/sidecarset-differential.test.ts, each pinned here against upstream's source.
import { describe, expect, it } from '@jest/globals';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

const base = (spec: Partial<SidecarSet['spec']>): SidecarSet =>
  ({ metadata: { name: 's' }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }], ...spec } });

describe('the SidecarSet upstream stores (pkg/webhook/sidecarset/mutating: a patch to Go\'s encoding of the defaulted object)', () => {
  it('drops empty omitempty lists and encodes sidecars as Go does (apis/apps/v1alpha1/sidecarset_types.go)', () => {
    const s = defaultSidecarSet(base({
      containers: [{ name: 'proxy', image: 'proxy:1', env: [], volumeMounts: [], transferEnv: [] }],
      initContainers: [], imagePullSecrets: [],
    }));
    expect(s.spec.containers).toEqual([{
      name: 'proxy', image: 'proxy:1', resources: {}, terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File',
      imagePullPolicy: 'IfNotPresent', podInjectPolicy: 'BeforeAppContainer', upgradeStrategy: { upgradeType: 'ColdUpgrade' }, shareVolumePolicy: { type: 'disabled' },
    }]);
    expect(s.spec).not.toHaveProperty('initContainers');
    expect(s.spec).not.toHaveProperty('imagePullSecrets');
  });

  it('stores injectionStrategy as {} (a struct, which omitempty never omits)', () => {
    expect(defaultSidecarSet(base({})).spec.injectionStrategy).toEqual({});
    expect(defaultSidecarSet(base({ injectionStrategy: { paused: true } })).spec.injectionStrategy).toEqual({ paused: true });
  });

  it('defaults volumes as core/v1 does (apis/apps/defaults/pod.go SetDefaultPodVolumes)', () => {
    const s = defaultSidecarSet(base({
      volumes: [
        { name: 'bare' }, { name: 'cm', configMap: { name: 'a' } }, { name: 'sec', secret: { secretName: 'b', defaultMode: 256 } },
        { name: 'host', hostPath: { path: '/x' } },
        { name: 'down', downwardAPI: { items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name' } }] } },
        { name: 'proj', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
      ],
    }));
    expect(s.spec.volumes).toEqual([
      { name: 'bare', emptyDir: {} }, { name: 'cm', configMap: { name: 'a', defaultMode: 420 } }, { name: 'sec', secret: { secretName: 'b', defaultMode: 256 } },
      { name: 'host', hostPath: { path: '/x', type: '' } },
      { name: 'down', downwardAPI: { defaultMode: 420, items: [{ path: 'n', fieldRef: { fieldPath: 'metadata.name', apiVersion: 'v1' } }] } },
      { name: 'proj', projected: { defaultMode: 420, sources: [{ serviceAccountToken: { path: 't', expirationSeconds: 3600 } }] } },
    ]);
  });
});
