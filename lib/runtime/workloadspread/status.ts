/**
 * The subset statuses upstream OpenKruise v1.9.1's WorkloadSpread controller computes from the
 * pods of each subset (pkg/controller/workloadspread calculateWorkloadSpreadSubsetStatuses,
 * calculateWorkloadSpreadSubsetStatus, rescheduleSubset): replicas, missing replicas,
 * creatingPods kept for 30 s and deletingPods for 15 s after the webhook booked them, and under
 * the Adaptive strategy the Schedulable condition and the pods to delete because they stayed
 * unschedulable longer than rescheduleCriticalSeconds (the last subset is always schedulable).
 * Pure, with an explicit clock; answers when to look again (controller.ts requeues then) and the
 * events upstream records on the way (controller.ts records them on the WorkloadSpread).
 */
import { isPodActive } from './deletion-cost.js';
import { readInjected, type SubsetStatus } from './subset.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Upstream CreatPodTimeout and DeletePodTimeout. */
export const CREATE_POD_TIMEOUT_MS = 30_000;
export const DELETE_POD_TIMEOUT_MS = 15_000;
/** Upstream wsutil.MaxScheduledFailedDuration: how long a subset stays unschedulable. */
export const MAX_SCHEDULE_FAILED_MS = 300_000;

const metaTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const at = (t: unknown) => (typeof t === 'string' && t ? Date.parse(t) : 0);

/** intstr.GetScaledValueFromIntOrPercent(v, total, true), or undefined when it does not parse. */
function scaled(v: unknown, total: number): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || !v.endsWith('%') || !/^[-+]?\d+$/.test(v.slice(0, -1))) return undefined;
  return Math.ceil((Number(v.slice(0, -1)) * total) / 100);
}

/** An event upstream's controller records on the WorkloadSpread (its recorder.Eventf calls). */
export interface SpreadEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

export interface StatusResult {
  /** undefined when a subset's maxReplicas cannot be read (upstream then writes nothing). */
  statuses?: SubsetStatus[];
  /** Per subset, the pods to delete (unschedulable for too long under Adaptive). */
  reschedule: Record<string, Json[]>;
  /** When a booking, a deletion or an unschedulable pod times out next. */
  requeueAfterMs?: number;
  /**
   * Upstream's events, in its order: per subset, DeletePodFailed for each deletion booked longer
   * than 15 s ago of a pod still active, CreatePodFailed for each creation booked longer than 30 s
   * ago of a pod never seen, RecoverSchedulable when a subset unschedulable for 5 minutes
   * becomes schedulable again (Adaptive).
   */
  events: SpreadEvent[];
}

type Condition = NonNullable<SubsetStatus['conditions']>[number];

/** setWorkloadSpreadSubsetCondition: keeps the transition time when the status does not change. */
function setCondition(status: SubsetStatus, c: Condition): void {
  const current = status.conditions?.find((x) => x.type === c.type);
  if (current && current.status === c.status && (current.reason ?? '') === (c.reason ?? '')) return;
  const next = current && current.status === c.status ? { ...c, lastTransitionTime: current.lastTransitionTime } : c;
  status.conditions = [...(status.conditions ?? []).filter((x) => x.type !== c.type), next];
}

/** calculateWorkloadSpreadSubsetStatuses for `podMap` (subset name to its pods). */
export function subsetStatuses(
  ws: Json,
  oldStatuses: SubsetStatus[] | undefined,
  podMap: Record<string, Json[]>,
  workloadReplicas: number,
  nowMs: number,
): StatusResult {
  const subsets: Json[] = ws?.spec?.subsets ?? [];
  const old = new Map((oldStatuses ?? []).map((s) => [s.name, s]));
  const strategy = ws?.spec?.scheduleStrategy ?? {};
  const critical =
    strategy.type === 'Adaptive' && typeof strategy.adaptive?.rescheduleCriticalSeconds === 'number'
      ? strategy.adaptive.rescheduleCriticalSeconds
      : 0;
  const waits: number[] = [];
  const reschedule: Record<string, Json[]> = {};
  const statuses: SubsetStatus[] = [];
  const events: SpreadEvent[] = [];
  const wsNamespace = String(ws?.metadata?.namespace ?? '');
  const schedulable = (status: 'True' | 'False'): Condition => ({
    type: 'Schedulable',
    status,
    lastTransitionTime: metaTime(nowMs),
  });
  for (let i = 0; i < subsets.length; i++) {
    const subset = subsets[i];
    const pods = podMap[subset.name] ?? [];
    const before = old.get(subset.name);
    const unlimited = subset.maxReplicas === undefined || subset.maxReplicas === null;
    const max = unlimited ? -1 : scaled(subset.maxReplicas, workloadReplicas);
    if (max === undefined || (!unlimited && max < 0)) return { reschedule: {}, events };
    const status: SubsetStatus = {
      name: subset.name,
      replicas: 0,
      missingReplicas: max,
      creatingPods: {},
      deletingPods: {},
    };
    const creating = { ...(before?.creatingPods ?? {}) };
    const deleting = before?.deletingPods ?? {};
    let active = 0;
    for (const pod of pods) {
      const uid = readInjected(pod)?.uid;
      delete creating[uid ? uid : pod?.metadata?.name];
      if (!isPodActive(pod)) continue;
      active++;
      if (status.missingReplicas > 0) status.missingReplicas--;
      const name = pod.metadata.name;
      if (name in deleting) {
        const expected = at(deleting[name]) + DELETE_POD_TIMEOUT_MS;
        if (expected < nowMs) {
          events.push({
            type: 'Warning',
            reason: 'DeletePodFailed',
            message: `Pod ${wsNamespace}/${name} was expected to be deleted but it wasn't`,
          });
        } else {
          status.deletingPods![name] = deleting[name];
          if (status.missingReplicas < max) status.missingReplicas++;
          waits.push(expected - nowMs);
        }
      }
    }
    status.replicas = active;
    for (const [id, time] of Object.entries(creating)) {
      const expected = at(time) + CREATE_POD_TIMEOUT_MS;
      if (expected < nowMs) {
        events.push({
          type: 'Warning',
          reason: 'CreatePodFailed',
          message: `Pod ${wsNamespace}/${id} was expected to be created but it wasn't`,
        });
        continue;
      }
      status.creatingPods![id] = time;
      if (status.missingReplicas > 0) status.missingReplicas--;
      waits.push(expected - nowMs);
    }
    const oldCondition = before?.conditions?.find((c) => c.type === 'Schedulable');
    if (critical > 0) {
      if (i !== subsets.length - 1) {
        const failed = pods.filter((pod) => {
          const [timedOut, wait] = pendingTimeout(pod, critical * 1000, nowMs);
          if (wait > 0) waits.push(wait);
          return timedOut;
        });
        reschedule[subset.name] = failed;
        if (!oldCondition) setCondition(status, schedulable(failed.length ? 'False' : 'True'));
        else {
          setCondition(status, { ...oldCondition });
          if (failed.length) setCondition(status, schedulable('False'));
          else if (oldCondition.status === 'False') {
            const expected = at(oldCondition.lastTransitionTime) + MAX_SCHEDULE_FAILED_MS;
            if (expected < nowMs) {
              events.push({
                type: 'Normal',
                reason: 'RecoverSchedulable',
                message: `Subset ${subset.name} of WorkloadSpread ${wsNamespace}/${ws?.metadata?.name ?? ''} is recovered from unschedulable to schedulable`,
              });
              setCondition(status, schedulable('True'));
            } else waits.push(expected - nowMs);
          }
        }
      } else {
        if (oldCondition) setCondition(status, { ...oldCondition });
        setCondition(status, schedulable('True'));
      }
    }
    statuses.push(status);
  }
  const positive = waits.filter((w) => w > 0);
  return { statuses, reschedule, events, ...(positive.length ? { requeueAfterMs: Math.min(...positive) } : {}) };
}

/** util.GetTimeBeforePendingTimeout: [timed out, ms until it would]. */
function pendingTimeout(pod: Json, timeoutMs: number, nowMs: number): [boolean, number] {
  if (pod?.metadata?.deletionTimestamp || pod?.status?.phase !== 'Pending' || pod?.spec?.nodeName) return [false, -1];
  const unschedulable = (pod?.status?.conditions ?? []).some(
    (c: Json) => c?.type === 'PodScheduled' && c?.status === 'False' && c?.reason === 'Unschedulable',
  );
  if (!unschedulable) return [false, -1];
  const expected = at(pod?.metadata?.creationTimestamp) + timeoutMs;
  return expected < nowMs ? [true, -1] : [false, expected - nowMs];
}
