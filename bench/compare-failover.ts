/**
 * Failover side by side (issue #12): the same handover loop (handover.ts) on the same API server,
 * first with two REAL upstream kruise-manager replicas run from the synthesized Deployment
 * (support/upstream-manager.ts; its flags: lease 15 s, renew 10 s, retry 2 s), then with two of
 * ours on the same timings (failover.ts). Each gets SIGTERM (graceful) and SIGKILL (crash) to its
 * leader, `BENCH_COMPARE_FAILOVER_RUNS` times each (default 3: upstream needs a whole lease per
 * handover, so 3 + 3 runs of each side take about four minutes).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { LeaseHistory } from '../test/integration/support/ha.js';
import { UpstreamManager, waitLeader, type RenderedManager } from '../test/integration/support/upstream-manager.js';
import { measure, TIMING_SETS } from './failover.js';
import { handovers, stats, type Handovers } from './handover.js';

export const FAILOVER_RUNS = Number(process.env.BENCH_COMPARE_FAILOVER_RUNS ?? 3);

/** Two upstream replicas on the (installed) synthesized output; `rendered` says where the Lease is. */
export async function upstreamFailover(
  kc: KubeConfig,
  rendered: RenderedManager,
  dir: string,
  log: (msg: string) => void,
): Promise<Handovers> {
  const history = new LeaseHistory(kc, rendered.lease.namespace, rendered.lease.name);
  await history.start();
  let seq = 0;
  try {
    return await handovers<UpstreamManager>({
      label: 'upstream',
      history,
      start: async () => {
        const m = await UpstreamManager.start(rendered, `${rendered.deployment.metadata!.name}-failover-${seq++}`, dir);
        await m.waitReady(300_000);
        return m;
      },
      leader: (live) => waitLeader(kc, live, 120_000),
      runs: FAILOVER_RUNS,
      kinds: ['graceful', 'crash'],
      settleMs: 4_000, // two retry periods, as for ours
      boundMs: 120_000,
      requireRelease: false,
      log,
    });
  } finally {
    await history.stop();
  }
}

/** Ours on upstream's default timings, in its own namespace of the same API server. */
export function oursFailover(kc: KubeConfig, kubeconfigPath: string): Promise<Handovers> {
  const defaults = TIMING_SETS.find((t) => t.name === 'default')!;
  return measure(kc, kubeconfigPath, defaults, FAILOVER_RUNS);
}

/** Median/min/max per measure, each side, and ours/upstream ratios of the medians. */
export function summarizeFailover(ours: Handovers, upstream: Handovers) {
  const ratio = (a?: number, b?: number) =>
    a !== undefined && b !== undefined && b > 0 ? Number((a / b).toPrecision(2)) : undefined;
  const row = (of: (h: Handovers) => number[]) => {
    const o = stats(of(ours));
    const u = stats(of(upstream));
    return { ours: o, upstream: u, ratioOfMedians: ratio(o?.medianS, u?.medianS) };
  };
  return {
    runsPerKind: FAILOVER_RUNS,
    timings: 'lease 15s / renew 10s / retry 2s (the synthesized Deployment, upstream defaults)',
    gracefulSigtermToNewLeaderSeconds: row((h) => h.graceful.signalToLeader),
    gracefulLastRenewToNewLeaderSeconds: row((h) => h.graceful.lastRenewToAcquire),
    gracefulReleasedLease: { ours: ours.graceful.released, upstream: upstream.graceful.released },
    crashSigkillToNewLeaderSeconds: row((h) => h.crash.signalToLeader),
    crashLastRenewToNewLeaderSeconds: row((h) => h.crash.lastRenewToAcquire),
    loadAverage1m: { ours: ours.loadAverage1m, upstream: upstream.loadAverage1m },
  };
}

export type FailoverSummary = ReturnType<typeof summarizeFailover>;

/** The table `bench compare` prints. */
export function failoverTable(f: FailoverSummary): string[] {
  const s = (x?: { medianS: number; minS: number; maxS: number }) =>
    (x ? `${x.medianS} (${x.minS}–${x.maxS})` : '-').padEnd(22);
  const line = (name: string, r: FailoverSummary['crashSigkillToNewLeaderSeconds']) =>
    `${name.padEnd(30)} | ${s(r.ours)} | ${s(r.upstream)} | ${r.ratioOfMedians ?? '-'}`;
  return [
    '',
    `failover, seconds median (min–max), ${f.runsPerKind} runs per kind, ${f.timings}`,
    `${'measure'.padEnd(30)} | ${'ours'.padEnd(22)} | ${'upstream'.padEnd(22)} | ours/upstream`,
    line('SIGTERM → new leader', f.gracefulSigtermToNewLeaderSeconds),
    line('  last renew → new leader', f.gracefulLastRenewToNewLeaderSeconds),
    line('SIGKILL → new leader', f.crashSigkillToNewLeaderSeconds),
    line('  last renew → new leader', f.crashLastRenewToNewLeaderSeconds),
    `Lease released on SIGTERM: ours ${f.gracefulReleasedLease.ours}/${f.runsPerKind}, upstream ${f.gracefulReleasedLease.upstream}/${f.runsPerKind}`,
    `load 1m before → after: ours ${f.loadAverage1m.ours.before} → ${f.loadAverage1m.ours.after}, upstream ${f.loadAverage1m.upstream.before} → ${f.loadAverage1m.upstream.after}`,
  ];
}
