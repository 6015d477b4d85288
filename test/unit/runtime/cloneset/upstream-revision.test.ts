/**
 * CloneSet revisions, ported from upstream's own tests (github.com/openkruise/kruise v1.9.1): each
 * block cites its file and test. The differential test against upstream's code, byte for byte, is
 * test/integration/cloneset-upstream-differential.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import {
  applyCloneSetRevision,
  newCloneSetRevision,
  podIsOfRevision,
  podRevisionLabels,
  shortHash,
  volumeClaimTemplatesHash,
  volumeClaimTemplatesHashValue,
} from '../../../../lib/runtime/cloneset/revision.js';
import type { CloneSet } from '../../../../lib/runtime/cloneset/types.js';
import { equalRevision } from '../../../../lib/runtime/sidecarset/revisions.js';

/** pkg/controller/cloneset/test/cloneset_test_utils.go NewCloneSet(1): a claim and a hostPath volume mounted. */
function newCloneSet(): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'foo', namespace: 'default', uid: 'test' },
    spec: {
      selector: { matchLabels: { foo: 'bar' } },
      replicas: 1,
      template: {
        metadata: { labels: { foo: 'bar' } },
        spec: {
          containers: [
            {
              name: 'nginx',
              image: 'nginx',
              volumeMounts: [
                { name: 'datadir', mountPath: '/tmp/data' },
                { name: 'home', mountPath: '/home' },
              ],
            },
          ],
          volumes: [{ name: 'home', hostPath: { path: '/tmp/home' } }],
        },
      },
      volumeClaimTemplates: [{ metadata: { name: 'datadir' }, spec: { resources: { requests: { storage: '10' } } } }],
      updateStrategy: { type: 'ReCreate' },
      revisionHistoryLimit: 2,
    },
  };
}

describe('pkg/controller/cloneset/revision/cloneset_revision_test.go', () => {
  it('TestCreateApplyRevision: a restored revision equals the one it came from, with the current annotations', () => {
    const set = newCloneSet();
    const revision = newCloneSetRevision(set, 1, 0);
    set.spec.template.spec!.containers[0].name = 'foo';
    set.metadata.annotations = { foo: 'bar' };
    const restored = applyCloneSetRevision(set, revision);
    const restoredRevision = newCloneSetRevision(restored, 2, 0);
    expect(equalRevision(revision, restoredRevision)).toBe(true);
    expect(restoredRevision.metadata?.annotations?.foo).toBe('bar');
    // ... and differs from a revision of the changed template.
    expect(equalRevision(revision, newCloneSetRevision(set, 3, 0))).toBe(false);
  });

  it('TestApplyRevision: each revision restores its own template', () => {
    const set = newCloneSet();
    const current = structuredClone(set);
    const currentRevision = newCloneSetRevision(set, 1, 0);
    set.spec.template.spec!.containers[0].env = [{ name: 'foo', value: 'bar' }];
    const update = structuredClone(set);
    const updateRevision = newCloneSetRevision(set, 2, 0);
    // Go restores the template through its types: compare as the revision encodes it.
    const template = (cs: CloneSet) => newCloneSetRevision(cs, 0).data;
    expect(template(applyCloneSetRevision(set, currentRevision))).toEqual(template(current));
    expect(template(applyCloneSetRevision(set, updateRevision))).toEqual(template(update));
    expect(currentRevision.metadata?.name).not.toBe(updateRevision.metadata?.name);
  });

  it('TestCreateApplyRevisionWithVCTemplates: the claims hash annotation is set, and survives a restore', () => {
    const set = newCloneSet();
    set.spec.volumeClaimTemplates = [
      {
        metadata: { name: 'www-data' },
        spec: { resources: { requests: { storage: '1Gi' } }, accessModes: ['ReadWriteOnce'] },
      },
    ];
    const revision = newCloneSetRevision(set, 1, 0);
    expect(revision.metadata?.annotations?.['kruise.io/cloneset-volumeclaimtemplate-hash']).toMatch(/^\d+$/);
    set.spec.template.spec!.containers[0].name = 'foo';
    set.metadata.annotations = { foo: 'bar' };
    const restoredRevision = newCloneSetRevision(applyCloneSetRevision(set, revision), 2, 0);
    expect(equalRevision(revision, restoredRevision)).toBe(true);
    expect(restoredRevision.metadata?.annotations?.foo).toBe('bar');
  });
});

const pvc = (name: string, request: string, limit: string) => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: request }, limits: { storage: limit } } },
});

describe('pkg/util/volumeclaimtemplate/volume_templates_hash_test.go', () => {
  it.each([
    ['zero-pvc', [], 86995377],
    ['nil-pvc', undefined, 86995377],
    ['single-pvc', [pvc('pvc-1', '1Gi', '2Gi')], 1129974074],
    ['multi-pvcs', [pvc('pvc-1', '1Gi', '2Gi'), pvc('pvc-2', '2Gi', '4Gi')], 510584408],
  ])('Test_vctHasher_GetExpectHash %s', (_name, templates, want) => {
    expect(volumeClaimTemplatesHashValue(templates)).toBe(want);
  });

  it.each([
    ['base-revision-none-pvc', [], ''],
    ['base-revision-nil-pvc', undefined, ''],
    ['base-revision-pvc', [pvc('pvc-1', '1Gi', '2Gi')], '1129974074'],
    ['base-revision-pvcs', [pvc('pvc-1', '1Gi', '2Gi'), pvc('pvc-2', '2Gi', '4Gi')], '510584408'],
  ])('TestPatchVCTemplateHash %s', (_name, templates, want) => {
    expect(volumeClaimTemplatesHash(templates)).toBe(want);
    const cs = newCloneSet();
    cs.spec.volumeClaimTemplates = templates;
    expect(newCloneSetRevision(cs, 1).metadata?.annotations?.['kruise.io/cloneset-volumeclaimtemplate-hash']).toBe(
      want,
    );
  });

  it('sorts claims by name first: their order in the CloneSet does not change the hash', () => {
    expect(volumeClaimTemplatesHashValue([pvc('pvc-2', '2Gi', '4Gi'), pvc('pvc-1', '1Gi', '2Gi')])).toBe(510584408);
  });
});

describe('pkg/controller/cloneset/utils/cloneset_utils.go WriteRevisionHash, EqualToRevisionHash, GetShortHash', () => {
  it('labels a pod with the revision name and its short hash (the short hash alone under CloneSetShortHash)', () => {
    expect(podRevisionLabels('web-6c9847c948')).toEqual({
      'controller-revision-hash': 'web-6c9847c948',
      'pod-template-hash': '6c9847c948',
    });
    expect(podRevisionLabels('web-6c9847c948', true)).toEqual({
      'controller-revision-hash': '6c9847c948',
      'pod-template-hash': '6c9847c948',
    });
    expect(shortHash('my-app-v2-5d8f7')).toBe('5d8f7');
    expect(shortHash('nodash')).toBe('nodash');
  });

  it('recognises a pod of a revision by full name or short hash, and no other', () => {
    expect(podIsOfRevision({ 'controller-revision-hash': 'web-abc' }, 'web-abc')).toBe(true);
    expect(podIsOfRevision({ 'controller-revision-hash': 'abc' }, 'web-abc')).toBe(true);
    expect(podIsOfRevision({ 'controller-revision-hash': 'web-abd' }, 'web-abc')).toBe(false);
    expect(podIsOfRevision(undefined, 'web-abc')).toBe(false);
  });

  it('names a revision <cloneset>-<hash>, the hash moving with the collision count and the template only', () => {
    const cs = newCloneSet();
    const r0 = newCloneSetRevision(cs, 1, 0);
    expect(r0.metadata?.name).toBe(`foo-${r0.metadata?.labels?.['controller.kubernetes.io/hash']}`);
    expect(newCloneSetRevision(cs, 1, 1).metadata?.name).not.toBe(r0.metadata?.name);
    const scaled = structuredClone(cs);
    scaled.spec.replicas = 9;
    expect(newCloneSetRevision(scaled, 1, 0).metadata?.name).toBe(r0.metadata?.name);
    expect(r0.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        name: 'foo',
        uid: 'test',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });
});
