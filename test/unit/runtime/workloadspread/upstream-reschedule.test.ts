// Upstream OpenKruise v1.8.3's TestRescheduleSubset (pkg/controller/workloadspread/reschedule_test.go),
// its five cases by name, ported against lib/runtime/workloadspread/status.ts: subset-a (max 5) and
// subset-b (unlimited), Adaptive with rescheduleCriticalSeconds 5; the pods of a case belong to
// subset-a; "now" is the test's clock (upstream's currentTime, with m = -1 minute).
import { describe, expect, it } from '@jest/globals';
import { subsetStatuses } from '../../../../lib/runtime/workloadspread/status.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const NOW = Date.parse('2026-11-26T12:00:00Z');
const minutesAgo = (n: number) => new Date(NOW - n * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const NOW_TIME = minutesAgo(0);

const ws = (type: 'Adaptive' | 'Fixed' = 'Adaptive') => ({
  metadata: { name: 'test-workloadSpread', namespace: 'default' },
  spec: {
    scheduleStrategy: { type, adaptive: { rescheduleCriticalSeconds: 5 } },
    subsets: [{ name: 'subset-a', maxReplicas: 5 }, { name: 'subset-b' }],
  },
});
const schedulable = (status: string, time = NOW_TIME) => [{ type: 'Schedulable', status, lastTransitionTime: time }];
const old = (a?: Json[], b?: Json[]) => [
  {
    name: 'subset-a',
    replicas: 0,
    missingReplicas: 5,
    creatingPods: {},
    deletingPods: {},
    ...(a ? { conditions: a } : {}),
  },
  {
    name: 'subset-b',
    replicas: 0,
    missingReplicas: -1,
    creatingPods: {},
    deletingPods: {},
    ...(b ? { conditions: b } : {}),
  },
];
/** newScheduledFailedPod: created a minute ago, Pending, not on a node, PodScheduled False/Unschedulable. */
const failedPod = (name: string) => ({
  metadata: {
    name,
    creationTimestamp: minutesAgo(1),
    annotations: { 'apps.kruise.io/matched-workloadspread': '{"Name":"test-workloadSpread","Subset":"subset-a"}' },
  },
  spec: {},
  status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
});
const conditions = (r: ReturnType<typeof subsetStatuses>) => r.statuses!.map((s) => s.conditions);

describe('TestRescheduleSubset', () => {
  it('close reschedule strategy, condition is null', () => {
    const r = subsetStatuses(ws('Fixed'), old(), {}, 0, NOW);
    expect(conditions(r)).toEqual([undefined, undefined]);
    expect(r.reschedule).toEqual({});
  });

  it('create no Pods, subset-a is scheduable', () => {
    const r = subsetStatuses(ws(), old(), {}, 0, NOW);
    expect(conditions(r)).toEqual([schedulable('True'), schedulable('True')]);
    expect(r.reschedule).toEqual({ 'subset-a': [] });
  });

  it('create two Pods, two pending, subset-a is unscheduable', () => {
    const pods = [failedPod('test-pod-0'), failedPod('test-pod-1')];
    const r = subsetStatuses(ws(), old(schedulable('True'), schedulable('True')), { 'subset-a': pods }, 0, NOW);
    expect(conditions(r)).toEqual([schedulable('False'), schedulable('True')]);
    // Both are deleted (upstream's expectPods is empty).
    expect(r.reschedule['subset-a'].map((p: Json) => p.metadata.name)).toEqual(['test-pod-0', 'test-pod-1']);
  });

  it('subset-a was unscheduable and not reach up 5 minutes', () => {
    const r = subsetStatuses(ws(), old(schedulable('False', minutesAgo(4))), {}, 0, NOW);
    expect(conditions(r)[0]).toEqual(schedulable('False', minutesAgo(4)));
    expect(r.requeueAfterMs).toBe(60_000);
    expect(r.events).toEqual([]);
  });

  it('subset-a was recovered from unscheduable to scheduable', () => {
    const r = subsetStatuses(ws(), old(schedulable('False', minutesAgo(10))), {}, 0, NOW);
    expect(conditions(r)[0]).toEqual(schedulable('True'));
    // Upstream's rescheduleSubset records this event on the WorkloadSpread when it recovers.
    expect(r.events).toEqual([
      {
        type: 'Normal',
        reason: 'RecoverSchedulable',
        message:
          'Subset subset-a of WorkloadSpread default/test-workloadSpread is recovered from unschedulable to schedulable',
      },
    ]);
  });
});
