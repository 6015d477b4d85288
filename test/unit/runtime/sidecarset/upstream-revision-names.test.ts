/**
 * ControllerRevision names computed by upstream itself: OpenKruise v1.9.1's SidecarSet controller
 * (pkg/controller/sidecarset Processor.UpdateSidecarSet, run by `tools/upstream/sidecarset-oracle
 * rollout` on each SidecarSet below with no pods) named its revision as in the table. Upstream
 * records (pkg/control/sidecarcontrol/history_control.go getPatch) the Go encoding of the typed
 * spec, so volumes, pull secrets and patchPodMetadata lose their empty omitempty fields and
 * quantities become canonical before the hash: the stored form would give other names.
 */
import { describe, expect, it } from '@jest/globals';
import { GoEncodingError } from '../../../../lib/runtime/sidecarset/gojson.js';
import { newRevision, revisionData } from '../../../../lib/runtime/sidecarset/revisions.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

const sidecarSet = (name: string, extra: Partial<SidecarSet['spec']> & { patchPodMetadata?: unknown[] }): SidecarSet =>
  ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, uid: `${name}-uid`, generation: 1 },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'proxy', image: 'proxy:1', volumeMounts: [{ name: 'cache', mountPath: '/cache' }] }],
      ...extra,
    },
  }) as SidecarSet;

const UPSTREAM: Array<[SidecarSet, string]> = [
  [
    sidecarSet('volumes', {
      volumes: [
        { name: 'cache', emptyDir: { sizeLimit: '1024Mi', medium: '' } },
        { name: 'host', hostPath: { path: '/var/log', type: '' } },
        {
          name: 'cm',
          configMap: { name: 'cm-a', items: [{ key: 'k', path: 'p', mode: 420 }], defaultMode: 420, optional: false },
        },
        { name: 'sec', secret: { secretName: 's-a', defaultMode: 256 } },
        {
          name: 'down',
          downwardAPI: {
            items: [
              { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } },
              { path: 'cpu', resourceFieldRef: { containerName: 'proxy', resource: 'limits.cpu', divisor: '1000m' } },
            ],
          },
        },
        {
          name: 'proj',
          projected: {
            sources: [
              { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
              { configMap: { name: 'cm-b' } },
            ],
          },
        },
        {
          name: 'eph',
          ephemeral: {
            volumeClaimTemplate: {
              metadata: { labels: { a: 'b' } },
              spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
            },
          },
        },
        { name: 'pvc', persistentVolumeClaim: { claimName: 'data', readOnly: false } },
        { name: 'csi', csi: { driver: 'x.csi', volumeAttributes: { z: '1', a: '<&>' } } },
      ] as never,
    }),
    'volumes-74d9cbdff',
  ],
  [
    sidecarSet('pull-secrets', {
      volumes: [{ name: 'cache', emptyDir: {} }],
      imagePullSecrets: [{ name: 'regcred' }, { name: '' }, {}] as never,
    }),
    'pull-secrets-79fc484448',
  ],
  [
    sidecarSet('patch-metadata', {
      volumes: [{ name: 'cache', emptyDir: {} }],
      patchPodMetadata: [{ annotations: { 'b/x': '{"k":1}', a: 'v' }, patchPolicy: 'Overwrite' }, { annotations: {} }],
    }),
    'patch-metadata-7fc5b7df76',
  ],
  [
    sidecarSet('unknown-fields', {
      // Upstream's CRD keeps unknown fields in volumes; its typed client drops them. The `image` source is known to
      // v1.9.1's types (k8s 1.32), not to v1.8.3's, whose revision was named unknown-fields-7fc885b7cb.
      volumes: [
        { name: 'cache', emptyDir: {}, bogus: 1 },
        { name: 'img', image: { reference: 'data:1', pullPolicy: 'IfNotPresent' } },
        { name: 'cm', configMap: { name: 'x', future: true } },
      ] as never,
    }),
    'unknown-fields-888df54df',
  ],
  [
    sidecarSet('everything', {
      volumes: [{ name: 'cache', nfs: { server: 'nfs.local', path: '/x', readOnly: true } }] as never,
      imagePullSecrets: [{ name: 'regcred' }],
      patchPodMetadata: [{ annotations: { a: '1' } }],
      initContainers: [{ name: 'init', image: 'init:1', restartPolicy: 'Always' }],
    }),
    'everything-6999497b68',
  ],
];

describe("SidecarSet ControllerRevision names = upstream's (sidecarset-oracle rollout)", () => {
  it.each(UPSTREAM.map(([s, name]) => [s.metadata.name, s, name] as const))('%s', (_, s, name) => {
    expect(newRevision(s, 'kruise-system', 1, 0).metadata!.name).toBe(name);
  });

  it('records the Go form: empty omitempty fields dropped, quantities canonical, keys sorted', () => {
    const data = JSON.parse(revisionData(UPSTREAM[1][0])) as { spec: { imagePullSecrets: unknown[] } };
    expect(data.spec.imagePullSecrets).toEqual([{ name: 'regcred' }, {}, {}]);
    expect(revisionData(UPSTREAM[0][0])).toContain('"emptyDir":{"sizeLimit":"1Gi"}');
  });

  it("names the field whose value upstream's types cannot hold", () => {
    const s = sidecarSet('bad', { volumes: [{ name: 'cache', emptyDir: { sizeLimit: 'lots' } }] as never });
    expect(() => revisionData(s)).toThrow(GoEncodingError);
    expect(() => revisionData(s)).toThrow('spec.volumes[0].emptyDir.sizeLimit');
  });
});
