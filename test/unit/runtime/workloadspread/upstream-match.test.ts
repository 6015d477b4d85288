// Upstream OpenKruise v1.8.3's TestMatchSubset (pkg/controller/workloadspread/
// workloadspread_controller_utils_test.go), its five cases by name, ported against
// lib/runtime/workloadspread/match.ts (matchesSubset with missing replicas 0).
import { describe, expect, it } from '@jest/globals';
import { matchSubset } from '../../../../lib/runtime/workloadspread/match.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const REQUIRED = 'apps.kruise.io/schedule-required';
const PREFERRED = 'apps.kruise.io/schedule-preferred';
const TEST = 'apps.kruise.io/is-test';
const UNIT = 'apps.kruise.io/is-unit-test';
const TOLERATION = 'apps.kruise.io/toleration';
const PATCH_LABEL = 'apps.kruise.io/patch-label';
const PATCH_ANNO = 'apps.kruise.io/patch-annotation';
const isTrue = (key: string) => ({ key, operator: 'In', values: ['true'] });

const matchSubsetDemo = (): Json => ({
  name: 'subset-a',
  maxReplicas: 5,
  tolerations: [{ key: TOLERATION, operator: 'Equal', value: 'true' }],
  requiredNodeSelectorTerm: { matchExpressions: [isTrue(REQUIRED)] },
  preferredNodeSelectorTerms: [{ weight: 100, preference: { matchExpressions: [isTrue(PREFERRED)] } }],
  patch: { metadata: { labels: { [PATCH_LABEL]: 'true' }, annotations: { [PATCH_ANNO]: 'true' } } },
});
const subsetDemo = (): Json => ({ name: 'subset-a', maxReplicas: 5 });
const matchPodDemo = (): Json => ({
  metadata: { annotations: { [PATCH_ANNO]: 'true' }, labels: { [PATCH_LABEL]: 'true' } },
  spec: {
    affinity: {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [isTrue(TEST), isTrue(UNIT)] }],
        },
      },
    },
  },
});
const matchNodeDemo = (): Json => ({
  metadata: { labels: { [TEST]: 'true', [UNIT]: 'true', [REQUIRED]: 'true', [PREFERRED]: 'true' } },
  spec: { taints: [{ key: TOLERATION, value: 'true', effect: 'NoSchedule' }] },
});

describe('TestMatchSubset', () => {
  it('match=true, Score=10010', () => {
    expect(matchSubset(matchPodDemo(), matchNodeDemo(), matchSubsetDemo(), 0)).toEqual([true, 10010]);
  });
  it('match=true, Score=10000', () => {
    const pod = matchPodDemo();
    pod.metadata.labels[PATCH_LABEL] = 'false';
    pod.metadata.annotations[PATCH_ANNO] = 'false';
    expect(matchSubset(pod, matchNodeDemo(), matchSubsetDemo(), 0)).toEqual([true, 10000]);
  });
  it('match=true, Score=10, preferred key not match', () => {
    const node = matchNodeDemo();
    node.metadata.labels[PREFERRED] = 'false';
    expect(matchSubset(matchPodDemo(), node, matchSubsetDemo(), 0)).toEqual([true, 10]);
  });
  it('match=false, Score=-1, required key not match', () => {
    const node = matchNodeDemo();
    node.metadata.labels[REQUIRED] = 'false';
    expect(matchSubset(matchPodDemo(), node, matchSubsetDemo(), 0)).toEqual([false, -1]);
  });
  it('match=false, Score=-1, toleration key not match (upstream returns subsetDemo, without tolerations)', () => {
    expect(matchSubset(matchPodDemo(), matchNodeDemo(), subsetDemo(), 0)).toEqual([false, -1]);
  });
});
