/**
 * The HA drills' harness, shared by every drill and both flavours: while a fault is made, it runs
 * the load (support/load.ts), watches what users and operators see (the Lease, each replica's
 * `leader_election_master_status`, the webhook Service's ready endpoints, the manager pods), scales
 * the workloads whose controllers must keep converging, and turns it all into figures
 * (support/drill-results.ts). Assertions belong to the drills; the harness only measures.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { startComponent, type ClusterState } from '../../cluster/state.js';
import { managerPods, MANAGER_SELECTOR, NS } from './install.js';
import { describePods, getJson, kubectl, until, type PodLike } from './kube.js';
import { phase } from './phase.js';
import { deleteLoadPods, PodCreateLoad, summarize, LOAD_LABEL, type CreateOutcome, type LoadSummary } from './load.js';
import { APP_NAMESPACE, SIDECARSET_NAME } from './workloads.js';

export type Flavour = 'upstream' | 'runtime';
export const LEASE = 'kruise-manager';
export const WEBHOOK_SERVICE = 'kruise-webhook-service';

/** GETs against the API server as admin over keep-alive connections (cheaper than a kubectl per poll). */
export class Api {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 8 });
  private readonly tls: { ca: Buffer; cert: Buffer; key: Buffer };
  constructor(private readonly state: ClusterState) {
    this.tls = {
      ca: readFileSync(state.caCertPath),
      cert: readFileSync(state.adminCertPath),
      key: readFileSync(state.adminKeyPath),
    };
  }
  get<T>(path: string, timeoutMs = 3_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const req = request(new URL(path, this.state.server), { agent: this.agent, ...this.tls }, (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (d: string) => (data += d));
        res.once('error', reject);
        res.once('end', () =>
          res.statusCode === 200 ? resolve(JSON.parse(data) as T) : reject(new Error(`GET ${path}: ${res.statusCode}`)),
        );
      });
      const deadline = setTimeout(() => req.destroy(new Error(`GET ${path} timed out`)), timeoutMs);
      req.once('close', () => clearTimeout(deadline));
      req.once('error', reject);
      req.end();
    });
  }
  close(): void {
    this.agent.destroy();
  }
}

interface LeaseObject {
  spec: { holderIdentity?: string; renewTime?: string; leaseTransitions?: number; leaseDurationSeconds?: number };
}

export interface ManagerPodView {
  name: string;
  uid: string;
  node?: string;
  hostIP?: string;
  ready: boolean;
  restarts: number;
  deleting: boolean;
  hash?: string;
}

/** One look at everything, every half second. */
export interface Sample {
  t: number;
  /** undefined when the API server did not answer. */
  holder?: string;
  renewTime?: string;
  transitions?: number;
  endpoints?: string[];
  pods?: ManagerPodView[];
  /** Pods whose metrics say they lead (only pods that answered). */
  leaders?: string[];
  /** Pods whose /readyz answered 200 (asked directly, so also seen while the API server is down). */
  readyz?: string[];
}

const viewOf = (p: PodLike & { metadata: { labels?: Record<string, string> } }): ManagerPodView => ({
  name: p.metadata.name,
  uid: p.metadata.uid,
  node: p.spec.nodeName,
  hostIP: p.status?.hostIP,
  ready: !!p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  restarts: (p.status?.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0),
  deleting: !!p.metadata.deletionTimestamp,
  hash: p.metadata.labels?.['pod-template-hash'],
});

/** GET http://<hostIP>:8000/readyz as the kubelet's readiness probe does: does it answer 200? */
function readyz(hostIP: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: hostIP, port: 8000, path: '/readyz', agent: false }, (res) => {
      res.resume().once('end', () => resolve(res.statusCode === 200));
      res.once('error', () => resolve(false));
    });
    // a hard deadline: setTimeout on the request only starts once connected, and a SYN to a cut-off
    // node retries for two minutes
    const deadline = setTimeout(() => {
      req.destroy();
      resolve(false);
    }, timeoutMs);
    req.once('close', () => clearTimeout(deadline));
    req.once('error', () => resolve(false));
    req.end();
  });
}

/** GET http://<hostIP>:8080/metrics: is this replica the leader? undefined if it does not answer. */
function leads(hostIP: string, timeoutMs: number): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: hostIP, port: 8080, path: '/metrics', agent: false }, (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d: string) => (data += d));
      res.once('end', () => {
        const m = /^leader_election_master_status\{[^}]*\}\s+(\d+)/m.exec(data);
        resolve(m ? m[1] === '1' : false);
      });
      res.once('error', () => resolve(undefined));
    });
    const deadline = setTimeout(() => {
      req.destroy();
      resolve(undefined);
    }, timeoutMs);
    req.once('close', () => clearTimeout(deadline));
    req.once('error', () => resolve(undefined));
    req.end();
  });
}

/** Samples the Lease, the webhook endpoints, the manager pods and each replica's leader metric. */
export class Watcher {
  readonly samples: Sample[] = [];
  private running = false;
  private known: ManagerPodView[] = [];
  private loop?: Promise<void>;
  constructor(private readonly api: Api) {}

  start(): this {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const next = sleep(500);
        this.samples.push(await this.sample());
        await next;
      }
    })();
    return this;
  }
  async stop(): Promise<Sample[]> {
    this.running = false;
    await this.loop;
    return this.samples;
  }

  private async sample(): Promise<Sample> {
    const t = Date.now();
    const [lease, slices, pods] = await Promise.all([
      this.api.get<LeaseObject>(`/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/${LEASE}`).catch(() => undefined),
      this.api
        .get<{
          items: Array<{ endpoints?: Array<{ conditions?: { ready?: boolean }; targetRef?: { name: string } }> }>;
        }>(
          `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${WEBHOOK_SERVICE}`)}`,
        )
        .catch(() => undefined),
      this.api
        .get<{ items: PodLike[] }>(
          `/api/v1/namespaces/${NS}/pods?labelSelector=${encodeURIComponent(MANAGER_SELECTOR)}`,
        )
        .catch(() => undefined),
    ]);
    const views = pods?.items.map(viewOf);
    // While the API server is down, keep asking the replicas it last listed.
    if (views) this.known = views;
    // Host network: a replica's metrics are on its node's address. Pods sharing a node (a restarted
    // container) answer once per address.
    const addrs = [...new Map(this.known.filter((v) => v.hostIP && !v.deleting).map((v) => [v.hostIP!, v])).values()];
    const answers = await Promise.all(
      addrs.map(async (v) => [v.name, await leads(v.hostIP!, 400), await readyz(v.hostIP!, 400)] as const),
    );
    return {
      t,
      holder: lease?.spec.holderIdentity ?? (lease ? '' : undefined),
      renewTime: lease?.spec.renewTime,
      transitions: lease?.spec.leaseTransitions,
      endpoints: slices?.items
        .flatMap((s) => s.endpoints ?? [])
        .filter((e) => e.conditions?.ready)
        .map((e) => e.targetRef?.name ?? '')
        .sort(),
      pods: views,
      leaders: answers.filter(([, l]) => l === true).map(([n]) => n),
      readyz: answers.filter(([, , r]) => r).map(([n]) => n),
    };
  }
}

/**
 * For each replica that answered /readyz at all between `from` and `to`: the longest time from a
 * failed answer to the next good one (or to `to`), sorted from the shortest. Replicas are named
 * by the samples; a replica never seen answering counts as failing throughout.
 */
export function longestReadyzFailures(
  samples: readonly Sample[],
  from: number,
  to: number,
  replicas: number,
): number[] {
  const window = samples.filter((x) => x.t >= from && x.t <= to);
  const names = [...new Set(window.flatMap((x) => x.readyz ?? []))];
  const spans = names.map((name) => {
    let longest = 0;
    let failingSince: number | undefined;
    for (const x of window) {
      if (x.readyz?.includes(name)) {
        if (failingSince !== undefined) longest = Math.max(longest, x.t - failingSince);
        failingSince = undefined;
      } else failingSince ??= x.t;
    }
    if (failingSince !== undefined) longest = Math.max(longest, to - failingSince);
    return longest;
  });
  while (spans.length < replicas) spans.push(to - from);
  return spans.sort((a, b) => a - b);
}

/** A workload whose controller must keep converging through the drill. */
export interface ConvergenceTarget {
  readonly name: string;
  /** Changes the desired state (e.g. scales), returning what convergence means now. */
  change(kc: string): Promise<void>;
  /** Whether the controller's status says it converged; a string says what it still lacks. */
  converged(kc: string): Promise<true | string>;
}

/** Scales a Deployment the SidecarSet selects: both flavours' SidecarSet controllers must count its pods. */
export function sidecarSetTarget(deployment: string, sidecarSet: string = SIDECARSET_NAME): ConvergenceTarget {
  let replicas = 2;
  return {
    name: `SidecarSet ${sidecarSet} status over Deployment ${deployment}`,
    async change(kc) {
      replicas = replicas === 2 ? 3 : 2;
      await kubectl(kc, ['scale', 'deployment', '-n', APP_NAMESPACE, deployment, `--replicas=${replicas}`]);
    },
    async converged(kc) {
      const d = await getJson<{ status: { readyReplicas?: number; replicas?: number } }>(kc, [
        'deployment',
        '-n',
        APP_NAMESPACE,
        deployment,
      ]);
      const ss = await getJson<{
        metadata: { generation: number };
        status: { matchedPods?: number; readyPods?: number; updatedPods?: number; observedGeneration?: number };
      }>(kc, ['sidecarset', sidecarSet]);
      const got = { ready: d.status.readyReplicas ?? 0, replicas: d.status.replicas ?? 0, ...ss.status };
      return got.ready === replicas &&
        got.replicas === replicas &&
        ss.status.matchedPods === replicas &&
        ss.status.readyPods === replicas &&
        ss.status.updatedPods === replicas &&
        ss.status.observedGeneration === ss.metadata.generation
        ? true
        : `want ${replicas}: ${JSON.stringify(got)}`;
    },
  };
}

/** Scales an upstream CloneSet: its controller must bring status to the new replicas. */
export function cloneSetTarget(name: string): ConvergenceTarget {
  let replicas = 2;
  return {
    name: `CloneSet ${name}`,
    async change(kc) {
      replicas = replicas === 2 ? 3 : 2;
      await kubectl(kc, ['scale', 'cloneset', '-n', APP_NAMESPACE, name, `--replicas=${replicas}`]);
    },
    async converged(kc) {
      const cs = await getJson<{
        metadata: { generation: number };
        status: { readyReplicas?: number; updatedReplicas?: number; replicas?: number; observedGeneration?: number };
      }>(kc, ['cloneset', '-n', APP_NAMESPACE, name]);
      const s = cs.status;
      return s.readyReplicas === replicas &&
        s.replicas === replicas &&
        s.updatedReplicas === replicas &&
        s.observedGeneration === cs.metadata.generation
        ? true
        : `want ${replicas}: ${JSON.stringify(s)}`;
    },
  };
}

/** What a fault tells the harness. */
export interface FaultOutcome {
  /** The replica the fault hit, if one: route-away is measured for it. */
  readonly victim?: string;
  /** Extra figures of this drill (seconds or counts). */
  readonly figures?: Record<string, number | string | boolean | null>;
}

export interface DrillContext {
  readonly kc: string;
  readonly state: ClusterState;
  readonly api: Api;
  readonly watcher: Watcher;
  /** When the fault started (ms since the epoch). */
  readonly faultAt: number;
  /** The replica leading when the fault started (by its metrics), and the Lease holder then. */
  readonly leader?: ManagerPodView;
  readonly holder?: string;
  readonly pods: ManagerPodView[];
  /** The latest sample (refreshed every half second). */
  latest(): Sample;
}

export interface DrillOptions {
  readonly drill: string;
  readonly flavour: Flavour;
  readonly kc: string;
  readonly state: ClusterState;
  readonly image: string;
  readonly targets: readonly ConvergenceTarget[];
  /** Makes the fault and waits for what the drill says ends it (e.g. the replica back Ready). */
  readonly fault: (ctx: DrillContext) => Promise<FaultOutcome | void>;
  /** Seconds of load before the fault and after it ends. @default 5 / 10 */
  readonly warmupS?: number;
  readonly settleS?: number;
  readonly ratePerSecond?: number;
  /** Whether to wait for the manager to be fully rolled out and Ready afterwards. @default true */
  readonly awaitManager?: boolean;
}

export interface DrillReport {
  readonly drill: string;
  readonly flavour: Flavour;
  readonly load: LoadSummary;
  readonly outcomes: CreateOutcome[];
  readonly samples: Sample[];
  readonly faultAt: number;
  readonly victim?: string;
  /** Seconds from the fault until the webhook endpoints stopped listing the victim as ready. */
  readonly routeAwayS: number | null;
  /** Webhook-failed creates sent after the victim was routed away. */
  readonly failuresAfterRouteAway: number;
  /** Seconds from the fault until the Lease named a holder other than the one at the fault. */
  readonly newLeaderS: number | null;
  /** Holder changes seen (to a non-empty holder other than the previous one). */
  readonly leaderChanges: number;
  /** The most replicas reporting themselves leader in one look. */
  readonly maxLeadersAtOnce: number;
  /** Longest gap between successive Lease renewals seen (by renewTime), in seconds. */
  readonly longestRenewalGapS: number | null;
  /** Seconds from the change until every target converged; null if one did not within the bound. */
  readonly convergeS: number | null;
  readonly notConverged: string[];
  /** Failed creates, seconds after the fault and why (first 120 characters). */
  readonly failures: Array<{ atS: number; failure: string; message: string }>;
  readonly figures: Record<string, number | string | boolean | null>;
  readonly uptime: string;
}

const s = (ms: number) => Math.round(ms / 100) / 10;
/** A long message's head and tail (the API server puts the cause last). */
export const clip = (m: string) => (m.length > 260 ? `${m.slice(0, 100)} … ${m.slice(-150)}` : m);

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Runs one drill under load and measures it. */
export async function runDrill(o: DrillOptions): Promise<DrillReport> {
  const api = new Api(o.state);
  const watcher = new Watcher(api).start();
  const runId = `${o.drill}-${Date.now().toString(36)}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const load = new PodCreateLoad({
    state: o.state,
    namespace: APP_NAMESPACE,
    image: o.image,
    runId,
    ratePerSecond: o.ratePerSecond ?? 4,
  });
  let outcomes: CreateOutcome[];
  let samples: Sample[];
  let faultAt: number;
  let fault: FaultOutcome | void;
  let changedAt: number;
  const uptimeBefore = loadAverage();
  try {
    const latest = () => watcher.samples.at(-1) ?? { t: Date.now() };
    // A fresh install or the last drill may leave the Lease to expire first: start from one leader.
    await phase(`drill ${o.drill}: leader wait`, () =>
      untilSeen('one replica to report itself leader', async () => latest().leaders?.length === 1, 120_000),
    );
    load.start();
    await phase(`drill ${o.drill}: warmup`, () => sleep((o.warmupS ?? 5) * 1000));
    const now = latest();
    const pods = now.pods ?? [];
    const leaderName = now.leaders?.[0];
    faultAt = Date.now();
    changedAt = faultAt;
    await Promise.all(o.targets.map((t) => t.change(o.kc)));
    fault = await phase(`drill ${o.drill}: fault`, () =>
      o.fault({
        kc: o.kc,
        state: o.state,
        api,
        watcher,
        faultAt,
        leader: pods.find((p) => p.name === leaderName),
        holder: now.holder,
        pods,
        latest,
      }),
    );
    await phase(`drill ${o.drill}: settle`, () => sleep((o.settleS ?? 10) * 1000));
  } finally {
    ({ outcomes, samples } = await phase(`drill ${o.drill}: stop load and watcher`, async () => {
      const stopped = { outcomes: await load.stop(), samples: await watcher.stop() };
      api.close();
      await superviseControlPlane(o.state);
      return stopped;
    }));
  }
  // Convergence: every target's controller brings its status to what was asked.
  const notConverged: string[] = [];
  let convergedAt: number | null = null;
  try {
    await phase(`drill ${o.drill}: convergence`, () =>
      until(
        'every workload to converge',
        async () => {
          const states = await Promise.all(o.targets.map(async (t) => [t.name, await t.converged(o.kc)] as const));
          notConverged.splice(
            0,
            notConverged.length,
            ...states.filter(([, v]) => v !== true).map(([n, v]) => `${n}: ${v}`),
          );
          return notConverged.length === 0;
        },
        { timeoutMs: 240_000, intervalMs: 1_000, describe: () => describePods(o.kc, APP_NAMESPACE) },
      ),
    );
    convergedAt = Date.now();
  } catch {
    /* reported as notConverged */
  }
  const notDeleted = await phase(`drill ${o.drill}: delete the load's pods`, () =>
    deleteLoadPods(o.state, APP_NAMESPACE, `${LOAD_LABEL}=${runId}`),
  );
  if (notDeleted) process.stderr.write(`drill ${o.drill}: the load's pods not deleted (${notDeleted})\n`);
  if (o.awaitManager ?? true) await phase(`drill ${o.drill}: managerPods`, () => managerPods(o.kc, 300_000));

  const victim = fault ? fault.victim : undefined;
  const routedAway = victim
    ? samples.find((x) => x.t >= faultAt && x.endpoints !== undefined && !x.endpoints.includes(victim))
    : undefined;
  const holderAtFault = [...samples].reverse().find((x) => x.t <= faultAt && x.holder !== undefined)?.holder;
  const newLeader = samples.find((x) => x.t >= faultAt && x.holder && x.holder !== holderAtFault);
  let leaderChanges = 0;
  let last: string | undefined;
  for (const x of samples) {
    if (!x.holder) continue;
    if (last !== undefined && x.holder !== last) leaderChanges++;
    last = x.holder;
  }
  const renewals = [...new Set(samples.map((x) => x.renewTime).filter((r): r is string => !!r))]
    .map((r) => Date.parse(r))
    .sort((a, b) => a - b);
  let gap: number | null = null;
  for (let i = 1; i < renewals.length; i++) gap = Math.max(gap ?? 0, renewals[i]! - renewals[i - 1]!);
  const failed = outcomes.filter((x) => !x.ok);
  return {
    drill: o.drill,
    flavour: o.flavour,
    load: summarize(outcomes),
    outcomes,
    samples,
    faultAt,
    victim,
    routeAwayS: routedAway ? s(routedAway.t - faultAt) : null,
    failuresAfterRouteAway: routedAway
      ? outcomes.filter((x) => x.failure === 'webhook' && x.at >= routedAway.t).length
      : 0,
    newLeaderS: newLeader ? s(newLeader.t - faultAt) : null,
    leaderChanges,
    maxLeadersAtOnce: Math.max(0, ...samples.map((x) => x.leaders?.length ?? 0)),
    longestRenewalGapS: gap === null ? null : s(gap),
    convergeS: convergedAt === null ? null : s(convergedAt - changedAt),
    notConverged,
    failures: failed.map((x) => ({
      atS: s(x.at - faultAt),
      failure: x.failure ?? '',
      message: clip(x.message ?? ''),
    })),
    figures: { ...(fault ? fault.figures : {}) },
    uptime: `${uptimeBefore} → ${loadAverage()}`,
  };
}

/**
 * Starts again any leader-elected scheduler or controller-manager that exited: they exit when they
 * lose their Lease (every API server down, or their own member lost), and on a real control plane
 * the kubelet restarts their static pods. No-op for the ones running.
 */
export async function superviseControlPlane(state: ClusterState): Promise<void> {
  for (const m of state.controlPlane) {
    for (const c of ['kube-scheduler', 'kube-controller-manager'] as const) await startComponent(m.name, c);
  }
}

// --- levers on a replica's process -----------------------------------------------------------

/** The host PID of a pod's container (nodes share the host's PID namespace), via its node's containerd. */
export function containerPid(state: ClusterState, pod: PodLike, container?: string): number {
  const node = state.nodes.find((n) => n.name === pod.spec.nodeName);
  if (!node) throw new Error(`drill: pod ${pod.metadata.name} is on no known node (${pod.spec.nodeName})`);
  const status = (pod.status?.containerStatuses ?? []).find((c) => !container || c.name === container);
  const id = status?.containerID?.replace(/^containerd:\/\//, '');
  if (!id) throw new Error(`drill: pod ${pod.metadata.name} has no running container ${container ?? ''}`);
  const tasks = execFileSync('ctr', ['--address', node.containerdSocket, '-n', 'k8s.io', 'tasks', 'ls'], {
    encoding: 'utf8',
  });
  const line = tasks.split('\n').find((l) => l.startsWith(id));
  const pid = Number(line?.trim().split(/\s+/)[1]);
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`drill: no task for container ${id} on ${node.name}`);
  return pid;
}

/**
 * Waits on what the watcher last saw (`ctx.latest()`, memory only): polled every 100 ms, where the e2e tier's
 * kubectl polls go once a second, so the harness notices a sample within 0.1 s of its arrival (the samples come
 * every half second). A figure timed by such a wait (e.g. 'standby took over after') is the same moment, read
 * with up to 0.1 s of polling lag instead of up to 1 s.
 */
export function untilSeen<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 180_000,
): Promise<T> {
  return until(what, probe, { timeoutMs, intervalMs: SEEN_POLL_MS });
}
const SEEN_POLL_MS = 100;

/** The manager pod object by name. */
export const managerPod = (kc: string, name: string) => getJson<PodLike>(kc, ['pod', '-n', NS, name]);

/** Waits until `name` has restarted (restart count above `restarts`) and is Ready again. */
export async function restartedAndReady(
  kc: string,
  name: string,
  restarts: number,
  timeoutMs = 300_000,
): Promise<PodLike> {
  return until(
    `${name} restarted by its kubelet and Ready again`,
    async () => {
      const p = await managerPod(kc, name);
      const v = viewOf(p);
      return v.restarts > restarts && v.ready && p;
    },
    { timeoutMs, describe: () => describePods(kc, NS) },
  );
}
