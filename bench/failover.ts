/**
 * Failover: how long the control plane is without a leader when the leader goes.
 *
 * Its own envtest control plane (etcd + kube-apiserver on loopback), the runtime installed from
 * the constructs, and two real manager processes (the default replica count), as pods would run
 * them. Per timing set (upstream defaults 15s/10s/2s and the tests' 4s/3s/1s), repeated runs of:
 *
 * - graceful: SIGTERM the leader (it steps down, stops its controllers and releases the Lease at
 *   once, drains admission for --drain-timeout=1s meanwhile, exits 0); the standby, watching the
 *   Lease, takes it as soon as it sees the release;
 * - crash: SIGKILL the leader; the standby takes over once the lease expired on its own clock.
 *
 * After each handover the stopped replica is replaced by a fresh process (the new standby), as a
 * Deployment would. Times come from the Lease itself, recorded by a watch (every write, in
 * order): renewTime/acquireTime are written by processes on this host, whose clocks agree to a
 * few ms; the signal time is taken in this process just before sending it.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { availableParallelism } from 'node:os';
import { Names } from '../lib/contract.js';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { identityOf, LeaseHistory, until } from '../test/integration/support/ha.js';
import { ManagerProcess } from '../test/integration/support/manager-process.js';
import { installRuntime } from '../test/integration/support/runtime-cluster.js';
import { handovers, stats } from './handover.js';
import type { BenchmarkResult } from './run.js';

/** Runs per scenario; `BENCH_FAILOVER_RUNS=20` for the goal's 20 runs. */
const RUNS = Number(process.env.BENCH_FAILOVER_RUNS ?? 5);
/** `BENCH_FAILOVER_SETS=default` measures only the default timings. */
const SETS = (process.env.BENCH_FAILOVER_SETS ?? 'default,short').split(',');
/** `BENCH_FAILOVER_KINDS=graceful` skips the crash runs (each waits a whole lease). */
const KINDS = (process.env.BENCH_FAILOVER_KINDS ?? 'graceful,crash').split(',') as ('graceful' | 'crash')[];
/** Goal of issue #12: SIGTERM → new leader, median over 20 runs at default timings. */
const GRACEFUL_GOAL_S = 1;
const log = (msg: string) => process.stderr.write(`bench failover: ${msg}\n`);

export interface TimingSet {
  name: string;
  leaseS: number;
  renewS: number;
  retryS: number;
}
export const TIMING_SETS: TimingSet[] = [
  { name: 'default', leaseS: 15, renewS: 10, retryS: 2 },
  { name: 'short', leaseS: 4, renewS: 3, retryS: 1 },
];

/** Ours, two {@link ManagerProcess}es on `t`'s timings, in namespace `bench-failover-<t.name>`. */
export async function measure(kc: KubeConfig, kubeconfigPath: string, t: TimingSet, runs = RUNS) {
  const ns = `bench-failover-${t.name}`;
  await installRuntime(kc, ns);
  const history = new LeaseHistory(kc, ns, Names.leaderElectionId);
  await history.start();
  let seq = 0;
  const bound = (t.leaseS + 4 * t.retryS) * 1000 + 30_000;
  try {
    return await handovers<ManagerProcess>({
      label: `ours ${t.name}`,
      history,
      start: async () => {
        const m = await ManagerProcess.start({
          name: `fo-${t.name}-${seq++}`,
          kubeconfigPath,
          namespace: ns,
          args: [
            `--leader-election-lease-duration=${t.leaseS}s`,
            `--leader-election-renew-deadline=${t.renewS}s`,
            `--leader-election-retry-period=${t.retryS}s`,
          ],
        });
        await m.waitReady();
        return m;
      },
      leader: (live) =>
        until(
          'one leader, by gauge and Lease',
          async () => {
            for (const m of live) if (history.latest()?.holder === identityOf(m) && (await m.leading())) return m;
            return undefined;
          },
          bound,
          20,
        ),
      runs,
      kinds: KINDS,
      settleMs: 2 * t.retryS * 1000,
      boundMs: bound,
      requireRelease: true,
      log,
    });
  } finally {
    await history.stop();
  }
}

export async function run(): Promise<BenchmarkResult> {
  const controlPlane = new ControlPlane({ log });
  try {
    const info = await controlPlane.start();
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfigPath);
    const figures: Record<string, unknown> = {};
    for (const t of TIMING_SETS.filter((s) => SETS.includes(s.name))) {
      const { graceful, crash, loadAverage1m } = await measure(kc, info.kubeconfigPath, t);
      const key = `${t.name}_${t.leaseS}s_${t.renewS}s_${t.retryS}s`;
      const sigterm = stats(graceful.signalToLeader);
      const sigkill = stats(crash.signalToLeader);
      const crashBoundS = t.leaseS + t.retryS;
      figures[key] = {
        gracefulSigtermToNewLeaderSeconds: sigterm,
        gracefulReleaseToNewLeaderSeconds: stats(graceful.releaseToAcquire),
        crashSigkillToNewLeaderSeconds: sigkill,
        crashLastRenewToNewLeaderSeconds: stats(crash.lastRenewToAcquire),
        goals: {
          ...(sigterm && t.name === 'default'
            ? {
                [`graceful median <= ${GRACEFUL_GOAL_S}s over ${RUNS} runs`]:
                  sigterm.medianS <= GRACEFUL_GOAL_S ? 'met' : 'NOT met',
              }
            : {}),
          ...(sigkill
            ? {
                [`crash takeover median <= lease + retry (${crashBoundS}s)`]:
                  sigkill.medianS <= crashBoundS ? 'met' : 'NOT met',
              }
            : {}),
        },
        loadAverage1m,
      };
    }
    return {
      figures,
      notes: [
        `${RUNS} runs per scenario and timing set; two replicas; leader elected on a Lease in envtest kube-apiserver ${info.kubernetesVersion}`,
        'graceful: the leader steps down and releases the Lease at the start of shutdown (admission drains meanwhile, --drain-timeout=1s, which no longer delays the handover); standbys watch the Lease and attempt at once when it is released (still a read + optimistic write), by their next jittered retry at the latest',
        'crash: standbys see every renewal through their watch and try again the moment the lease would expire on their clock, so last renewal → new leader is LeaseDuration plus a request; without the watch (a lost event) LeaseDuration + up to two jittered retries',
        `runs: ${RUNS} per kind (${KINDS.join(', ')}); timing sets: ${SETS.join(', ')}`,
        `machine: ${availableParallelism()} cores; manager processes run through tsx`,
      ],
    };
  } finally {
    await controlPlane.stop();
  }
}
