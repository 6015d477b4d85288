/**
 * CloneSet validation, ported from upstream's own table (github.com/openkruise/kruise v1.9.1
 * pkg/webhook/cloneset/validating/validation_test.go TestValidate): every success case is accepted
 * and every error case refused, naming the field upstream's test expects where it names one. The
 * differential test against upstream's code is test/integration/cloneset-upstream-differential.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import { defaultPodSpec } from '../../../../lib/runtime/cloneset/defaults.js';
import { validateCloneSet, validateCloneSetUpdate } from '../../../../lib/runtime/cloneset/validate.js';

const UID = 'b6c3a6e2-0000-4000-8000-000000000001';
const validLabels = { a: 'b' };
const podTemplate = (image: string, imagePullPolicy: string) => ({
  metadata: { labels: validLabels },
  spec: {
    restartPolicy: 'Always',
    dnsPolicy: 'ClusterFirst',
    containers: [{ name: 'abc', image, imagePullPolicy, terminationMessagePolicy: 'File' }],
  },
});
const validPodTemplate = podTemplate('image', 'IfNotPresent');
const validPodTemplate1 = podTemplate('image1', 'IfNotPresent');
const validPodTemplate2 = podTemplate('image2', 'Always');
const invalidPodTemplate = {
  metadata: { labels: { 'NoUppercaseOrSpecialCharsLike=Equals': 'b' } },
  spec: { restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' },
};
const validVolumeClaimTemplate = (size: string) => ({
  metadata: { name: 'foo' },
  spec: { storageClassName: 'foo/bar', accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } } },
});
const MAX_INT32 = 2147483647;

/** The pods upstream's test puts in its fake client: p0, controlled by the CloneSet. */
const p0 = { metadata: { name: 'p0', namespace: 'default', ownerReferences: [{ uid: UID, controller: true }] } };
const pod = (name: string) => (name === 'p0' ? p0 : undefined);

/** A CloneSet spec as upstream's test writes it (not always valid, so not typed as one). */
type Spec = Record<string, unknown>;
interface Case {
  spec: Spec;
  oldSpec?: Spec;
  expectField?: string;
}
const strategy = (
  type: string,
  partition: number | string,
  maxUnavailable?: number | string,
  maxSurge?: number | string,
) => ({
  type,
  partition,
  ...(maxUnavailable === undefined ? {} : { maxUnavailable }),
  ...(maxSurge === undefined ? {} : { maxSurge }),
});
const base = (template: object = validPodTemplate) => ({
  replicas: 1,
  selector: { matchLabels: validLabels },
  template,
});

const updatedSpec: Spec = {
  ...base(),
  revisionHistoryLimit: 1,
  scaleStrategy: { podsToDelete: ['p0'] },
  volumeClaimTemplates: [validVolumeClaimTemplate('30Gi')],
  updateStrategy: strategy('InPlaceOnly', 2, 1),
};
const oldSpec: Spec = {
  ...base(validPodTemplate1),
  replicas: 2,
  revisionHistoryLimit: 2,
  updateStrategy: strategy('ReCreate', 2, 1),
};

const successCases: Case[] = [
  { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, 1), scaleStrategy: { podsToDelete: ['p0'] } } },
  { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, 1, 1) } },
  { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, 0, 1) } },
  { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, '120%') } },
  {
    spec: {
      ...base(),
      updateStrategy: {
        ...strategy('InPlaceIfPossible', 2, '120%'),
        priorityStrategy: { weightPriority: [{ weight: 20, matchSelector: { matchLabels: { key: 'foo' } } }] },
      },
    },
  },
  // Cases 5 and 6: every mutable field changed at once (the old claims differ, or there were none).
  {
    spec: updatedSpec,
    oldSpec: {
      ...oldSpec,
      scaleStrategy: { podsToDelete: ['p1'] },
      volumeClaimTemplates: [validVolumeClaimTemplate('60Gi')],
    },
  },
  { spec: updatedSpec, oldSpec: { ...oldSpec, scaleStrategy: { podsToDelete: [] } } },
  {
    spec: {
      ...base(),
      updateStrategy: strategy('InPlaceOnly', 2, 1),
      progressDeadlineSeconds: MAX_INT32,
      minReadySeconds: MAX_INT32,
    },
    oldSpec: { ...base(), updateStrategy: strategy('ReCreate', 2, 1), progressDeadlineSeconds: 10, minReadySeconds: 5 },
  },
];

const errorCases: Record<string, Case> = {
  'invalid-replicas': { spec: { ...base(), replicas: -1, updateStrategy: strategy('InPlaceIfPossible', 2, 1) } },
  'invalid-template': {
    spec: {
      ...base(invalidPodTemplate),
      updateStrategy: strategy('InPlaceIfPossible', 2, 1),
    },
  },
  'invalid-selector': {
    spec: {
      ...base(),
      selector: { matchLabels: { a: 'b', c: 'd' } },
      updateStrategy: strategy('InPlaceIfPossible', 2, 1),
    },
  },
  'invalid-update-type': { spec: { ...base(), updateStrategy: strategy('', 2, 1) } },
  'invalid-partition': { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', -1, 1) } },
  'invalid-maxUnavailable': { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, 0) } },
  'invalid-maxSurge': { spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, 0, 0) } },
  'invalid-podsToDelete-1': {
    spec: {
      ...base(),
      updateStrategy: strategy('InPlaceIfPossible', 2, 1),
      scaleStrategy: { podsToDelete: ['p0', 'p0'] },
    },
  },
  'invalid-podsToDelete-2': {
    spec: {
      ...base(),
      updateStrategy: strategy('InPlaceIfPossible', 2, 1),
      scaleStrategy: { podsToDelete: ['p0', 'p1'] },
    },
  },
  'invalid-podsToDelete-3': {
    spec: { ...base(), updateStrategy: strategy('InPlaceIfPossible', 2, 1), scaleStrategy: { podsToDelete: ['p1'] } },
  },
  'invalid-cloneset-update-1': {
    spec: { ...base(), updateStrategy: strategy('InPlaceOnly', 2, 1) },
    oldSpec: { ...base(validPodTemplate2), updateStrategy: strategy('InPlaceOnly', 2, 1) },
  },
  'invalid-cloneset-maxSurge-create': {
    spec: { ...base(), updateStrategy: strategy('ReCreate', 2, 2, '5') },
    expectField: 'spec.updateStrategy.maxSurge',
  },
  'invalid-cloneset-maxSurge-update': {
    spec: { ...base(), updateStrategy: strategy('ReCreate', 2, 2, '5') },
    oldSpec: { ...base(), updateStrategy: strategy('ReCreate', 2, 2, 5) },
    expectField: 'spec.updateStrategy.maxSurge',
  },
  'invalid-cloneset-maxUnavailable-create': {
    spec: { ...base(), updateStrategy: strategy('ReCreate', 2, '5', 2) },
    expectField: 'spec.updateStrategy.maxUnavailable',
  },
  'invalid-cloneset-maxUnavailable-update': {
    spec: { ...base(), updateStrategy: strategy('ReCreate', 2, '5', 2) },
    oldSpec: { ...base(), updateStrategy: strategy('ReCreate', 2, undefined, 5) },
    expectField: 'spec.updateStrategy.maxUnavailable',
  },
  'invalid-negative-progressDeadlineSeconds': {
    spec: { ...base(), updateStrategy: strategy('InPlaceOnly', 2, 1), progressDeadlineSeconds: -1 },
    expectField: 'spec.progressDeadlineSeconds',
  },
  'invalid-progressDeadlineSeconds-equals-to-minReadySeconds': {
    spec: {
      ...base(),
      updateStrategy: strategy('InPlaceOnly', 2, 1),
      progressDeadlineSeconds: 10,
      minReadySeconds: 10,
    },
    oldSpec: { ...base(), updateStrategy: strategy('ReCreate', 2, 1), progressDeadlineSeconds: 10, minReadySeconds: 5 },
    expectField: 'spec.progressDeadlineSeconds',
  },
  'invalid-progressDeadlineSeconds-less-than-minReadySeconds': {
    spec: {
      ...base(),
      updateStrategy: strategy('InPlaceOnly', 2, 1),
      progressDeadlineSeconds: 10,
      minReadySeconds: 15,
    },
    oldSpec: { ...base(), updateStrategy: strategy('ReCreate', 2, 1), progressDeadlineSeconds: 10, minReadySeconds: 5 },
    expectField: 'spec.progressDeadlineSeconds',
  },
  'disallowed-field-modification': {
    spec: {
      ...base(),
      revisionHistoryLimit: 1,
      scaleStrategy: { podsToDelete: ['p0'] },
      updateStrategy: strategy('InPlaceOnly', 2, 1),
    },
    oldSpec: {
      ...base(validPodTemplate1),
      replicas: 2,
      selector: { matchLabels: { app: 'webserver' } },
      revisionHistoryLimit: 2,
      scaleStrategy: { podsToDelete: [] },
      updateStrategy: strategy('ReCreate', 2, 1),
    },
    expectField: 'spec',
  },
};

const object = (name: string, spec: Spec, resourceVersion: string) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name, namespace: 'default', uid: UID, resourceVersion },
  spec: structuredClone(spec),
});

/** As upstream's test: CREATE when there is no old spec; UPDATE with both templates defaulted in success cases. */
function validate(name: string, c: Case, defaultTemplates: boolean): string[] {
  const obj = object(name, c.spec, '2');
  if (!c.oldSpec) return validateCloneSet(obj, { pod });
  const old = object(name, c.oldSpec, '1');
  if (defaultTemplates)
    for (const o of [old, obj]) defaultPodSpec((o.spec.template as { spec: Record<string, unknown> }).spec);
  return validateCloneSetUpdate(obj, old, { pod });
}

describe('pkg/webhook/cloneset/validating/validation_test.go TestValidate', () => {
  it.each(successCases.map((c, i) => [i, c] as const))('success case %i', (i, c) => {
    expect(validate(`cs-${i}`, c, true)).toEqual([]);
  });

  it.each(Object.entries(errorCases))('%s', (name, c) => {
    const errors = validate(`cs-${name.toLowerCase()}`, c, false);
    expect(errors.length).toBeGreaterThan(0);
    if (c.expectField) expect(errors.map((e) => e.slice(0, e.indexOf(': ')))).toContain(c.expectField);
  });

  it('names the bad value and the fix in each error', () => {
    const [error] = validate('cs-x', errorCases['invalid-cloneset-maxSurge-create'], false);
    expect(error).toBe(
      'spec.updateStrategy.maxSurge: a string must be a percentage like "20%" (got "5"). Fix: use a whole number or a percentage like "20%"',
    );
  });
});
