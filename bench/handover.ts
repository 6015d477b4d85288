/**
 * The handover loop shared by `bench failover` (ours) and `bench compare` (ours and upstream side by
 * side): two replicas; per run, settle, signal the Lease holder (SIGTERM: graceful, SIGKILL: crash),
 * read from the Lease watch when another replica holds it, then start a replacement (the next
 * standby), as a Deployment would. Times come from the Lease records (renewTime/acquireTime written
 * by processes on this host, one clock); the signal time is taken here just before sending it.
 */
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { until, type LeaseHistory } from '../test/integration/support/ha.js';

export type Kind = 'graceful' | 'crash';

/** What the loop needs of a replica (ManagerProcess and UpstreamManager both fit). */
export interface Replica {
  signal(signal: NodeJS.Signals): void;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stop(): Promise<unknown>;
}

export interface HandoverOptions<R extends Replica> {
  label: string;
  history: LeaseHistory;
  /** Starts one replica and waits until it is ready. */
  start: () => Promise<R>;
  /** The one live replica that leads (and holds the Lease's latest record). */
  leader: (live: R[]) => Promise<R>;
  runs: number;
  kinds: readonly Kind[];
  /** Wait after a leader is found, so the standby has seen a few renewals. */
  settleMs: number;
  /** Longest wait for a new holder. */
  boundMs: number;
  /** Graceful runs fail unless the leader exits 0 and releases the Lease (ours); else it is only counted. */
  requireRelease: boolean;
  log: (msg: string) => void;
}

export interface Handovers {
  graceful: {
    signalToLeader: number[];
    /** Only for runs where the old leader released the Lease. */
    releaseToAcquire: number[];
    lastRenewToAcquire: number[];
    released: number;
  };
  crash: { signalToLeader: number[]; lastRenewToAcquire: number[] };
  loadAverage1m: { before: number; after: number };
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export async function handovers<R extends Replica>(o: HandoverOptions<R>): Promise<Handovers> {
  const live = new Set<R>();
  const start = async () => live.add(await o.start());
  const out: Handovers = {
    graceful: { signalToLeader: [], releaseToAcquire: [], lastRenewToAcquire: [], released: 0 },
    crash: { signalToLeader: [], lastRenewToAcquire: [] },
    loadAverage1m: { before: round2(loadavg()[0]), after: NaN },
  };
  try {
    await Promise.all([start(), start()]);
    const plan = Array.from({ length: o.runs }, () => o.kinds).flat();
    for (let run = 0; run < plan.length; run++) {
      const kind = plan[run];
      const leader = await o.leader([...live]);
      await sleep(o.settleMs);
      const oldId = o.history.latest()?.holder;
      if (!oldId) throw new Error(`${o.label}: the Lease has no holder after its leader was found`);
      const from = o.history.records.length;
      const signalledAt = Date.now();
      leader.signal(kind === 'graceful' ? 'SIGTERM' : 'SIGKILL');
      const next = await until(
        `${o.label}: the standby to take the Lease from ${oldId}`,
        () => {
          const r = o.history.latest();
          return r && r.holder !== '' && r.holder !== oldId ? r : undefined;
        },
        o.boundMs,
        10,
      );
      const exit = await leader.exited;
      live.delete(leader);
      await leader.stop(); // removes its scratch dirs where the replica type does
      const records = o.history.records;
      const lastByOld = records[records.findLastIndex((r) => r.holder === oldId)];
      const release = records.slice(from).findLast((r) => r.holder === '');
      if (kind === 'graceful') {
        if (o.requireRelease && (exit.code !== 0 || !release))
          throw new Error(`${o.label}: graceful stop did not release: ${JSON.stringify(exit)}`);
        out.graceful.signalToLeader.push(next.acquireTime - signalledAt);
        out.graceful.lastRenewToAcquire.push(next.acquireTime - lastByOld.renewTime);
        if (release) {
          out.graceful.released++;
          out.graceful.releaseToAcquire.push(next.acquireTime - release.renewTime);
        }
      } else {
        out.crash.signalToLeader.push(next.acquireTime - signalledAt);
        out.crash.lastRenewToAcquire.push(next.acquireTime - lastByOld.renewTime);
      }
      o.log(
        `${o.label} #${run} ${kind} (load ${loadavg()[0].toFixed(2)}): new leader ${((next.acquireTime - signalledAt) / 1000).toFixed(2)}s after ${kind === 'graceful' ? 'SIGTERM' : 'SIGKILL'}${kind === 'graceful' ? (release ? ', Lease released' : ', Lease NOT released') : ''} (exit ${JSON.stringify(exit)})`,
      );
      await start(); // the replacement pod: the next standby
    }
  } finally {
    await Promise.all([...live].map((m) => m.stop().catch(() => undefined)));
  }
  out.loadAverage1m.after = round2(loadavg()[0]);
  return out;
}

export interface Stats {
  medianS: number;
  minS: number;
  maxS: number;
  runs: number[];
}

/** Median, min and max in seconds of durations in ms; undefined when there are none. */
export function stats(values: number[]): Stats | undefined {
  if (!values.length) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  const s = (ms: number) => Math.round(ms) / 1000;
  return { medianS: s(median), minS: s(sorted[0]), maxS: s(sorted.at(-1)!), runs: values.map(s) };
}
