/**
 * WorkloadSpread subset statuses = upstream v1.9.1's own controller code, run in-process
 * (tools/upstream/sidecarset-oracle `wsstatus`: pkg/controller/workloadspread
 * calculateWorkloadSpreadSubsetStatuses). Generated subsets (limits as numbers, percentages,
 * unreadable, none), pods per subset (active or not, booked by a UID or a name, pending and
 * unschedulable since long or recently), old statuses with creatingPods/deletingPods booked long
 * ago or recently and Schedulable conditions old or recent, Fixed or Adaptive strategies.
 * Upstream reads the wall clock: every time here is far (>= 10 s) from a timeout's edge, and
 * transition times upstream sets "now" are compared as such. The events upstream records on the
 * way (CreatePodFailed, DeletePodFailed, RecoverSchedulable) are compared too, as multisets: upstream
 * walks its creatingPods map in Go's random order.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { subsetStatuses } from '../../lib/runtime/workloadspread/status.js';
import { upstreamWorkloadSpreadStatusOracle } from './support/sidecarset-oracle.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const NOW = Date.now();
const ago = (s: number) => new Date(Math.floor((NOW - s * 1000) / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** Seconds ago, each >= 10 s from the 15 s, 30 s, rescheduleCriticalSeconds (10/20 s, doubled) and 300 s edges. */
const agoArb = fc.constantFrom(1, 3, 50, 100, 400, 1000);

const podArb = fc.record({
  phase: fc.constantFrom('Running', 'Pending', 'Succeeded'),
  unschedulable: fc.boolean(),
  node: fc.boolean(),
  created: agoArb,
  uid: fc.boolean(),
  // Go reads the annotation's keys case-insensitively (upstream's own tests write {"Name":…,"Subset":…}).
  upperKeys: fc.boolean(),
});
const subsetArb = fc.record({
  limit: fc.constantFrom(undefined, 0, 1, 3, '50%', '34%', 'x%'),
  pods: fc.array(podArb, { maxLength: 4 }),
  old: fc.option(
    fc.record({
      creating: fc.array(fc.record({ which: fc.integer({ min: 0, max: 5 }), ago: agoArb }), { maxLength: 2 }),
      deleting: fc.array(fc.record({ which: fc.integer({ min: 0, max: 5 }), ago: agoArb }), { maxLength: 2 }),
      condition: fc.option(fc.record({ status: fc.constantFrom('True', 'False'), ago: agoArb }), { nil: undefined }),
    }),
    { nil: undefined },
  ),
});
const caseArb = fc.record({
  subsets: fc.array(subsetArb, { minLength: 1, maxLength: 3 }),
  replicas: fc.integer({ min: 0, max: 8 }),
  adaptive: fc.constantFrom(undefined, 10, 20),
});

function build(g: typeof caseArb extends fc.Arbitrary<infer T> ? T : never, i: number) {
  const podMap: Record<string, Json[]> = {};
  const oldStatuses: Json[] = [];
  const subsets = g.subsets.map((s, k) => {
    const name = `s${k}`;
    const pods = s.pods.map((p, j) => {
      const podName = `c${i}-${name}-p${j}`;
      return {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: podName,
          namespace: 'apps',
          creationTimestamp: ago(p.created),
          annotations: {
            'apps.kruise.io/matched-workloadspread': JSON.stringify(
              p.upperKeys
                ? { Name: 'ws', Subset: name, ...(p.uid ? { UID: `uid-${podName}` } : {}) }
                : { name: 'ws', subset: name, ...(p.uid ? { uid: `uid-${podName}` } : {}) },
            ),
          },
        },
        spec: { containers: [{ name: 'main', image: 'web:1' }], ...(p.node ? { nodeName: 'node-a' } : {}) },
        status: {
          phase: p.phase,
          ...(p.unschedulable
            ? { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] }
            : {}),
        },
      };
    });
    podMap[name] = pods;
    const id = (which: number) => {
      const p = pods[which];
      if (!p) return `gone-${which}`;
      const a = JSON.parse(p.metadata.annotations['apps.kruise.io/matched-workloadspread']);
      return a.uid ?? a.UID ?? p.metadata.name;
    };
    if (s.old)
      oldStatuses.push({
        name,
        replicas: 0,
        missingReplicas: 0,
        creatingPods: Object.fromEntries(s.old.creating.map((c) => [id(c.which), ago(c.ago)])),
        deletingPods: Object.fromEntries(
          s.old.deleting.map((c) => [pods[c.which]?.metadata.name ?? `gone-${c.which}`, ago(c.ago)]),
        ),
        ...(s.old.condition
          ? {
              conditions: [
                { type: 'Schedulable', status: s.old.condition.status, lastTransitionTime: ago(s.old.condition.ago) },
              ],
            }
          : {}),
      });
    return { name, ...(s.limit !== undefined ? { maxReplicas: s.limit } : {}) };
  });
  return {
    ws: {
      metadata: { name: 'ws', namespace: 'apps' },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        subsets,
        ...(g.adaptive
          ? { scheduleStrategy: { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: g.adaptive } } }
          : {}),
      },
    },
    oldStatuses,
    podMap,
    replicas: g.replicas,
  };
}

/** Statuses as JSON with empty maps dropped and times set within the last 60 s named `<now>`. */
function shape(statuses: Json[] | null | undefined): unknown {
  if (!statuses) return null;
  return statuses.map((s) => ({
    name: s.name,
    replicas: s.replicas ?? 0,
    missingReplicas: s.missingReplicas ?? 0,
    creatingPods: Object.keys(s.creatingPods ?? {}).sort(),
    deletingPods: Object.keys(s.deletingPods ?? {}).sort(),
    conditions: (s.conditions ?? []).map((c: Json) => ({
      type: c.type,
      status: c.status,
      time: Math.abs(Date.parse(c.lastTransitionTime) - Date.now()) < 60_000 ? '<now>' : c.lastTransitionTime,
    })),
  }));
}

describe('WorkloadSpread subset statuses = upstream v1.9.1, in-process', () => {
  const cases = fc.sample(caseArb, { numRuns: 400, seed: 2525 }).map(build);
  const upstream = upstreamWorkloadSpreadStatusOracle(cases);

  it('computes the statuses and the pods to reschedule as upstream does', () => {
    const differences: string[] = [];
    let rescheduled = 0;
    let kept = 0;
    let events = 0;
    const reasons: string[] = [];
    cases.forEach((c, i) => {
      const theirs = upstream[i] as Json;
      if (theirs.error) {
        differences.push(`case ${i}: upstream failed: ${theirs.error}`);
        return;
      }
      const ours = subsetStatuses(c.ws, c.oldStatuses, c.podMap, c.replicas, NOW);
      const mineFailed = Object.fromEntries(
        Object.entries(ours.reschedule).map(([k, pods]) => [k, pods.map((p) => p.metadata.name)]),
      );
      const theirFailed = theirs.nil ? {} : theirs.failed;
      rescheduled += Object.values(mineFailed).flat().length;
      kept += (ours.statuses ?? []).reduce(
        (n, s) => n + Object.keys(s.creatingPods ?? {}).length + Object.keys(s.deletingPods ?? {}).length,
        0,
      );
      const ourEvents = ours.events.map((e) => `${e.type} ${e.reason} ${e.message}`).sort();
      events += ourEvents.length;
      reasons.push(...ours.events.map((e) => e.reason));
      const a = JSON.stringify({
        statuses: shape(ours.statuses),
        failed: ours.statuses ? mineFailed : {},
        events: ourEvents,
      });
      const b = JSON.stringify({
        statuses: shape(theirs.nil ? null : theirs.statuses),
        failed: theirFailed,
        events: [...(theirs.events as string[])].sort(),
      });
      if (a !== b) differences.push(`case ${i}:\n  ours     ${a}\n  upstream ${b}`);
    });
    process.stderr.write(
      `workloadspread status: ${cases.length} generated cases, ${rescheduled} pods to reschedule, ${kept} bookings kept, ${events} events; ${differences.length} differ\n`,
    );
    expect(new Set(reasons)).toEqual(new Set(['CreatePodFailed', 'DeletePodFailed', 'RecoverSchedulable']));
    expect(rescheduled).toBeGreaterThan(0);
    expect(kept).toBeGreaterThan(0);
    expect(differences.slice(0, 5)).toEqual([]);
  });
});
