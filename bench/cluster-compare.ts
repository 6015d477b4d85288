/**
 * `npm run bench -- cluster-compare` (issue #29, item 5): pod-create latency and throughput through the API server of
 * the real local cluster (test/cluster: 3 API servers behind a load balancer, 3 etcd members, real kubelet nodes),
 * with the pod webhook served by real manager pods, for both flavours one after the other in the same run: upstream
 * (the default output, examples/default-ha.ts, as `npm run synth` writes it), then the runtime flavour (the
 * RuntimeImage-built image). Uses the cluster KRUISE_HA_CLUSTER_STATE names, or starts one (HA, 4 nodes, as the e2e
 * tier's global setup does) and stops it at the end.
 *
 * Per flavour, the drills' setup sequence (test/e2e/support/drills.ts): install the output, wait until every manager
 * replica is Ready and the webhook Service routes to each, apply the app namespace, then the load SidecarSet (it
 * selects the load pods of that namespace) and the pods' owner. Then creates until a round of them all carries the
 * sidecar (a pod created before the SidecarSet reached every replica's cache has none; such pods are deleted, as the
 * drills replace theirs), then the measured steps: open-loop creates at {@link RATES} per second for {@link SECONDS}
 * each, then a closed loop of {@link CONCURRENCY} creates in flight (saturation: answered creates per second). Between
 * steps the step's pods are deleted (one deletecollection) and gone before the next starts. Then the install is
 * removed (test/e2e/support/install.ts uninstallKruise) before the next flavour.
 *
 * Owners as in a real cluster (the issue's main point): every load pod is owned by the ReplicaSet of a real
 * Deployment (`cc-load`, created with 0 replicas; the Deployment controller made the ReplicaSet), with that
 * ReplicaSet's UID and template labels (`pod-template-hash`), and `generateName: <replicaset>-` as its controller
 * names pods. The chain is checked against the API server before any step (bench/inputs.ts missingOwners). Upstream's
 * pod webhook finds that owner chain in its informer caches and makes no API call per admission. Since the ReplicaSet
 * wants 0 replicas, the cluster's ReplicaSet controller deletes the load pods as they appear (at its client's rate
 * limit), for both flavours alike: those DELETEs go through both flavours' validating pod webhook (`vpod.kb.io`,
 * DELETE, at the defaults: upstream for PodUnavailableBudget, ours for WorkloadSpread). Each step reports how many of
 * its pods that controller deleted.
 *
 * Per step: latency p50/p99/max of the creates (from the request's send to the API server's answer), created and
 * failed creates by kind (support/load.ts: the webhook's or the API server's; grouped by status and cause), created
 * pods without the sidecar, the manager containers' CPU seconds (their cgroup's cpuacct, read from the host: both
 * replicas summed, leader and standby, both serve the webhook behind its Service) per 1,000 created pods and their
 * RSS after, the load average before and after, and the bench process's own event-loop delay and CPU share (it is the
 * load generator: its stalls are printed beside the latencies they would inflate).
 *
 * Env: BENCH_CLUSTER_COMPARE_RATES (default 10,25,50), BENCH_CLUSTER_COMPARE_SECONDS (20),
 * BENCH_CLUSTER_COMPARE_CONCURRENCY (16; 0 skips the saturation step), BENCH_CLUSTER_COMPARE_FLAVOURS
 * (upstream,runtime). Writes docs/bench/cluster-compare-<runId>.json with the run's conditions (and, through run.ts,
 * bench/results/cluster-compare.json), and prints the side-by-side table; BENCH_CLUSTER_COMPARE_FROM=<that file> prints
 * a saved run's table without measuring.
 */
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalCluster } from '../test/cluster/cluster.js';
import { serveClusterControl } from '../test/cluster/control.js';
import { CLUSTER_STATE_ENV, localCluster, type ClusterState } from '../test/cluster/state.js';
import { pushAppImages } from '../test/e2e/support/app-images.js';
import { containerPid } from '../test/e2e/support/drill.js';
import { clusterImages, e2eEnv } from '../test/e2e/support/e2e-env.js';
import {
  applyAdmitted,
  installKruise,
  MANAGER_SELECTOR,
  NS,
  uninstallKruise,
  webhookEndpointsReady,
} from '../test/e2e/support/install.js';
import { getJson, kubectl, pods, until } from '../test/e2e/support/kube.js';
import {
  LOAD_APP,
  LOAD_LABEL,
  loadPodSpec,
  loadSidecarSet,
  PodCreateLoad,
  summarize,
  type CreateOutcome,
  type LoadPodOwner,
} from '../test/e2e/support/load.js';
import { objectsIn, synthExample, synthRuntime, type Synthesized } from '../test/e2e/support/synth.js';
import { APP_NAMESPACE, SIDECAR_NS_LABEL, appNamespace } from '../test/e2e/support/workloads.js';
import {
  cgroupCpuSeconds,
  cpuAccountingFile,
  managerCpu,
  sideBySide,
  stepFigures,
  type Flavour,
  type ManagerSample,
  type StepFigures,
} from './cluster-compare-report.js';
import { machine, uptime } from './conditions.js';
import { proc } from './compare-proc.js';
import { missingOwners } from './inputs.js';
import type { BenchmarkResult } from './run.js';

const list = (v: string | undefined, d: string) =>
  (v ?? d)
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
export const RATES = list(process.env.BENCH_CLUSTER_COMPARE_RATES, '10,25,50').map(Number);
export const SECONDS = Number(process.env.BENCH_CLUSTER_COMPARE_SECONDS ?? 20);
export const CONCURRENCY = Number(process.env.BENCH_CLUSTER_COMPARE_CONCURRENCY ?? 16);
const FLAVOURS = list(process.env.BENCH_CLUSTER_COMPARE_FLAVOURS, 'upstream,runtime') as Flavour[];
/** The load pods' Deployment (0 replicas): its ReplicaSet owns every load pod. */
const OWNER = 'cc-load';
/** The warm-up round that must come back all injected before the measured steps. */
const WARMUP = { seconds: 3, rate: 10 };
/** Client-side timeout per create: past the webhook's 10 s and the API server's own request timeout. */
const CREATE_TIMEOUT_MS = 65_000;
/** Seconds the managers' idle CPU is read over, after the warm-up and before the steps. */
const IDLE_SECONDS = 10;

const log = (msg: string) => process.stderr.write(`bench cluster-compare: ${msg}\n`);

/** The cluster KRUISE_HA_CLUSTER_STATE names, or one started here (and stopped by `release`). */
async function acquireCluster(): Promise<{ state: ClusterState; started: boolean; release: () => Promise<void> }> {
  const existing = process.env[CLUSTER_STATE_ENV];
  if (existing && existsSync(existing)) {
    const state = JSON.parse(readFileSync(existing, 'utf8')) as ClusterState;
    // The control endpoint answers 404 to this: the cluster's owner is alive (as test/e2e/global-setup.ts checks).
    const res = await fetch(`${state.controlUrl}/`, { method: 'POST' }).catch(() => undefined);
    if (res?.status !== 404) throw new Error(`${CLUSTER_STATE_ENV}=${existing} names no running cluster`);
    log(`using the running local cluster of ${existing}`);
    return { state, started: false, release: async () => undefined };
  }
  const t0 = Date.now();
  const cluster = new LocalCluster({ ha: true, nodes: 4, log });
  process.once('exit', () => cluster.killNow());
  try {
    const info = await cluster.start();
    const { server, statePath } = await serveClusterControl(cluster, info);
    process.env[CLUSTER_STATE_ENV] = statePath;
    log(`started a local cluster (HA, 4 nodes) in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${info.dir}`);
    return {
      state: localCluster(),
      started: true,
      release: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await cluster.stop();
      },
    };
  } catch (e) {
    await cluster.stop().catch(() => undefined);
    throw e;
  }
}

/** The load pods' owner: a Deployment with 0 replicas, its pod template the load pods' own. */
function ownerDeployment(image: string): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: OWNER, namespace: APP_NAMESPACE },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app: LOAD_APP } },
      template: { metadata: { labels: { app: LOAD_APP } }, spec: loadPodSpec(image) },
    },
  };
}

/** The ReplicaSet the Deployment controller made for {@link OWNER}, as the load pods' owner. */
async function ownerReplicaSet(kc: string): Promise<LoadPodOwner> {
  const deployment = await getJson<{ metadata: { uid: string } }>(kc, ['deployment', '-n', APP_NAMESPACE, OWNER]);
  return until(`the ReplicaSet of Deployment ${OWNER}`, async () => {
    const sets = await getJson<{
      items: Array<{
        metadata: { name: string; uid: string; ownerReferences?: Array<{ uid: string; controller?: boolean }> };
        spec: { template: { metadata: { labels: Record<string, string> } } };
      }>;
    }>(kc, ['replicasets', '-n', APP_NAMESPACE]);
    const rs = sets.items.find((s) =>
      s.metadata.ownerReferences?.some((o) => o.controller && o.uid === deployment.metadata.uid),
    );
    return (
      rs && {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        name: rs.metadata.name,
        uid: rs.metadata.uid,
        labels: rs.spec.template.metadata.labels,
      }
    );
  });
}

/** A manager container's counters now: CPU from its cgroup (all its processes), else from /proc of its main one. */
function sampleContainer(pod: string, pid: number, restarts: number): ManagerSample {
  const p = proc(pid);
  let cgroup: number | undefined;
  try {
    const where = cpuAccountingFile(readFileSync(`/proc/${pid}/cgroup`, 'utf8'));
    if (where) cgroup = cgroupCpuSeconds(readFileSync(where.file, 'utf8'), where.v);
  } catch {
    cgroup = undefined;
  }
  const fromCgroup = cgroup !== undefined && Number.isFinite(cgroup);
  return {
    pod,
    pid,
    restarts,
    cpuSeconds: fromCgroup ? cgroup! : p.cpuSeconds,
    cpuSource: fromCgroup ? 'cgroup' : 'proc',
    rssBytes: p.rssBytes,
  };
}

/** Every manager container's counters (pods not being deleted, with a running container). */
async function sampleManagers(state: ClusterState, kc: string): Promise<ManagerSample[]> {
  const live = (await pods(kc, NS, MANAGER_SELECTOR)).filter((p) => !p.metadata.deletionTimestamp);
  const samples: ManagerSample[] = [];
  for (const p of live) {
    const restarts = (p.status?.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0);
    try {
      samples.push(sampleContainer(p.metadata.name, containerPid(state, p), restarts));
    } catch (e) {
      log(`no counters for ${p.metadata.name}: ${(e as Error).message}`);
    }
  }
  return samples;
}

interface Step {
  step: string;
  run: { mode: 'rate'; rate: number } | { mode: 'closed'; concurrency: number };
  seconds: number;
}

/** Runs one stream of creates; its outcomes and the generator's own stalls and CPU share. */
async function stream(
  state: ClusterState,
  agent: Agent,
  owner: LoadPodOwner,
  image: string,
  runId: string,
  s: Step,
): Promise<{ outcomes: CreateOutcome[]; wallSeconds: number; generator: StepFigures['generator'] }> {
  const load = new PodCreateLoad({
    state,
    namespace: APP_NAMESPACE,
    image,
    runId,
    owner,
    agent,
    timeoutMs: CREATE_TIMEOUT_MS,
    ...(s.run.mode === 'rate' ? { ratePerSecond: s.run.rate } : {}),
  });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (s.run.mode === 'rate') load.start();
  else load.startClosedLoop(s.run.concurrency);
  await sleep(s.seconds * 1000);
  const outcomes = await load.stop();
  const wallSeconds = (performance.now() - t0) / 1000;
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  // The histogram records the time between 1 ms ticks: the tick itself is not a stall (as bench/loadgen.ts).
  const stall = (ns: number) => Math.round(Math.max(0, ns / 1e6 - 1) * 10) / 10;
  return {
    outcomes,
    wallSeconds,
    generator: {
      loopDelayP99Ms: stall(loop.percentile(99)),
      loopDelayMaxMs: stall(loop.max),
      cpuShare: Math.round(((cpu.user + cpu.system) / 1e6 / wallSeconds) * 100) / 100,
    },
  };
}

/** Deletes a stream's pods (one deletecollection) and waits until none is left. */
async function deleteStreamPods(core: CoreV1Api, runId: string): Promise<void> {
  const labelSelector = `${LOAD_LABEL}=${runId}`;
  await core.deleteCollectionNamespacedPod({ namespace: APP_NAMESPACE, labelSelector, gracePeriodSeconds: 0 });
  await until(
    `the pods of ${runId} to be gone`,
    async () =>
      (await core.listNamespacedPod({ namespace: APP_NAMESPACE, labelSelector, limit: 1 })).items.length === 0,
    { timeoutMs: 300_000, intervalMs: 1_000 },
  );
}

async function podsOf(core: CoreV1Api, runId: string): Promise<number> {
  const r = await core.listNamespacedPod({ namespace: APP_NAMESPACE, labelSelector: `${LOAD_LABEL}=${runId}` });
  return r.items.length;
}

/** What the synthesized output runs as its manager: image, replicas and arguments (for the run's conditions). */
function managerOf(out: Synthesized) {
  const d = objectsIn(out.files).find((o) => o.kind === 'Deployment' && o.metadata.namespace === NS) as
    | {
        metadata: { name: string };
        spec: { replicas?: number; template: { spec: { containers: Array<{ image: string; args?: string[] }> } } };
      }
    | undefined;
  const c = d?.spec.template.spec.containers[0];
  return { deployment: d?.metadata.name, replicas: d?.spec.replicas, image: c?.image, args: c?.args };
}

interface FlavourResult {
  label: string;
  manager: ReturnType<typeof managerOf>;
  installToReadySeconds: number;
  owner: LoadPodOwner & { deployment: string };
  warmupRounds: number;
  /** The manager containers' CPU seconds per second with no creates, summed ({@link IDLE_SECONDS} before the steps). */
  idleManagerCpuShare: number | null;
  cpuSource: string;
  steps: StepFigures[];
  conditions: Record<string, string>;
}

async function measureFlavour(
  flavour: Flavour,
  state: ClusterState,
  core: CoreV1Api,
  kcApi: KubeConfig,
): Promise<FlavourResult> {
  const kc = state.kubeconfigPath;
  const env = e2eEnv();
  const images = await pushAppImages(env.registry);
  const built = await clusterImages();
  const out =
    flavour === 'upstream' ? await synthExample('default-ha.ts') : synthRuntime(env.registry, built.runtime.baseImage);
  const manager = managerOf(out);
  // Another install (another job's, or one a failed run left) would be taken over and then removed: refuse.
  const present = await kubectl(kc, ['get', 'namespace', NS, '--ignore-not-found', '-o', 'name']);
  if (present.stdout.trim())
    throw new Error(
      `${flavour}: namespace ${NS} exists already: this benchmark installs and removes Kruise itself. ` +
        'Fix: remove that install first (or run on a cluster without one).',
    );
  const conditions: Record<string, string> = { install: uptime() };
  const t0 = Date.now();
  log(`${flavour}: installing ${manager.image} (${manager.replicas} replicas)`);
  try {
    await installKruise(kc, out);
    const installToReadySeconds = Math.round((Date.now() - t0) / 100) / 10;
    await webhookEndpointsReady(kc);
    await applyAdmitted(kc, [appNamespace()]);
    await applyAdmitted(kc, [loadSidecarSet(images.v1, SIDECAR_NS_LABEL), ownerDeployment(images.v1)]);
    const owner = await ownerReplicaSet(kc);
    // The owners the load pods name exist, UIDs and all, up the chain (ReplicaSet, then its Deployment): checked
    // against the API server before any create, so a run never measures pods with a missing owner.
    const named: V1Pod = {
      metadata: {
        generateName: `${owner.name}-`,
        ownerReferences: [
          { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name, uid: owner.uid, controller: true },
        ],
      },
    };
    const problems = await missingOwners(kcApi, APP_NAMESPACE, named);
    if (problems.length) throw new Error(`the load pods would name owners that do not exist: ${problems.join('; ')}`);
    const agent = new Agent({ keepAlive: true, maxSockets: Math.max(16, CONCURRENCY) });
    try {
      // Until a whole round of creates comes back injected: the SidecarSet has reached every replica's cache.
      let warmupRounds = 0;
      const deadline = Date.now() + 180_000;
      for (;;) {
        const runId = `cc-${flavour}-warmup-${warmupRounds++}`;
        const w = await stream(state, agent, owner, images.v1, runId, {
          step: 'warm-up',
          run: { mode: 'rate', rate: WARMUP.rate },
          seconds: WARMUP.seconds,
        });
        const s = summarize(w.outcomes);
        await deleteStreamPods(core, runId);
        if (s.sent > 0 && s.created === s.sent && s.withoutSidecar === 0) break;
        log(
          `${flavour}: warm-up round ${warmupRounds}: ${s.created}/${s.sent} created, ${s.withoutSidecar} without the sidecar (deleted); again`,
        );
        if (Date.now() > deadline) throw new Error(`${flavour}: creates never all came back injected within 180 s`);
        await sleep(2_000);
      }
      // The managers' own CPU with no creates (controllers, leader election, informers, probes): a step's CPU
      // includes this share for its duration.
      const idleBefore = await sampleManagers(state, kc);
      await sleep(IDLE_SECONDS * 1000);
      const idle = managerCpu(idleBefore, await sampleManagers(state, kc));
      const idleCpuShare = idle.total === null ? null : Math.round((idle.total / IDLE_SECONDS) * 1000) / 1000;
      log(`${flavour}: managers' CPU at idle ${idleCpuShare} s/s (${uptime()})`);
      const steps: Step[] = [
        ...RATES.map((rate) => ({ step: `${rate}/s`, run: { mode: 'rate' as const, rate }, seconds: SECONDS })),
        ...(CONCURRENCY > 0
          ? [
              {
                step: `saturation (${CONCURRENCY} in flight)`,
                run: { mode: 'closed' as const, concurrency: CONCURRENCY },
                seconds: SECONDS,
              },
            ]
          : []),
      ];
      const figures: StepFigures[] = [];
      let cpuSource = '';
      for (const s of steps) {
        const runId = `cc-${flavour}-${s.step.split(' ')[0].replace(/[^a-z0-9]/gi, '')}-${Date.now().toString(36)}`;
        conditions[s.step] = uptime();
        const loadBefore = loadavg();
        const managersBefore = await sampleManagers(state, kc);
        const r = await stream(state, agent, owner, images.v1, runId, s);
        const managersAfter = await sampleManagers(state, kc);
        const loadAfter = loadavg();
        const podsLeft = await podsOf(core, runId);
        cpuSource = [...new Set(managersAfter.map((m) => m.cpuSource))].join('+');
        const f = stepFigures({
          step: s.step,
          mode: s.run.mode,
          ...(s.run.mode === 'rate' ? { offeredPerSecond: s.run.rate } : { concurrency: s.run.concurrency }),
          wallSeconds: r.wallSeconds,
          outcomes: r.outcomes,
          managersBefore,
          managersAfter,
          loadBefore,
          loadAfter,
          podsLeft,
          generator: r.generator,
        });
        figures.push(f);
        log(
          `${flavour} ${s.step}: p50/p99 ${f.p50Ms}/${f.p99Ms} ms, ${f.created}/${f.sent} created (${f.answeredPerSecond}/s), ` +
            `failed ${f.webhookFailures} webhook + ${f.apiFailures} API, ${f.withoutSidecar} without sidecar, ` +
            `CPU ${f.managerCpuSecondsPer1000Creates} s/1k, load ${f.loadAverageBefore[0]}→${f.loadAverageAfter[0]}`,
        );
        await deleteStreamPods(core, runId);
      }
      return {
        label:
          flavour === 'upstream'
            ? `upstream: the default output (examples/default-ha.ts) as npm run synth writes it: ${manager.image}, ${manager.replicas} replicas, args ${(manager.args ?? []).join(' ')}`
            : `runtime: the RuntimeImage-built image as test/cluster/images/runtime-app.ts synthesizes it: ${manager.image}, ${manager.replicas} replicas, args ${(manager.args ?? []).join(' ')}`,
        manager,
        installToReadySeconds,
        owner: { ...owner, deployment: OWNER },
        warmupRounds,
        idleManagerCpuShare: idleCpuShare,
        cpuSource,
        steps: figures,
        conditions,
      };
    } finally {
      agent.destroy();
    }
  } finally {
    log(`${flavour}: uninstalling`);
    await uninstallKruise(kc, out);
  }
}

export async function run(): Promise<BenchmarkResult> {
  // BENCH_CLUSTER_COMPARE_FROM=<docs/bench/cluster-compare-….json>: the table of a saved run, without measuring.
  if (process.env.BENCH_CLUSTER_COMPARE_FROM) {
    const saved = JSON.parse(readFileSync(process.env.BENCH_CLUSTER_COMPARE_FROM, 'utf8')) as BenchmarkResult & {
      figures: { steps: Partial<Record<Flavour, StepFigures[]>> };
    };
    process.stdout.write(`${sideBySide(saved.figures.steps).join('\n')}\n`);
    return saved;
  }
  const runId = `${new Date().toISOString().replace(/[:.]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  const uptimeAtStart = uptime();
  log(`run ${runId}; ${uptimeAtStart}`);
  const cluster = await acquireCluster();
  const results: Partial<Record<Flavour, FlavourResult>> = {};
  try {
    const state = cluster.state;
    process.env.KUBECONFIG = state.kubeconfigPath;
    const kcApi = new KubeConfig();
    kcApi.loadFromFile(state.kubeconfigPath);
    const core = kcApi.makeApiClient(CoreV1Api);
    for (const flavour of FLAVOURS) results[flavour] = await measureFlavour(flavour, state, core, kcApi);

    const table = sideBySide(Object.fromEntries(Object.entries(results).map(([f, r]) => [f, r.steps])));
    process.stdout.write(
      `\npod creates through the API server, webhook served by the manager pods (p50/p99/max ms of each create; failed: w webhook, a API server; CPU s/1k: manager containers' CPU seconds per 1,000 created pods)\n${table.join('\n')}\n`,
    );
    const conditions = {
      runId,
      machine: machine(),
      uptimeAtStart,
      uptimeAtEnd: uptime(),
      cluster: {
        startedByThisRun: cluster.started,
        kubernetesVersion: state.kubernetesVersion,
        ha: state.ha,
        apiServers: state.apiServers.length,
        nodes: state.nodes.map((n) => `${n.name} (${n.zone})`),
        server: state.server,
      },
      rates: RATES,
      secondsPerStep: SECONDS,
      saturationConcurrency: CONCURRENCY,
      flavours: FLAVOURS,
      sharedMachine:
        'every process of the cluster (3 API servers, 3 etcd members, schedulers, controller-managers, 4 kubelets and containerds, the manager pods) and this load generator share the machine: each step carries the load average before and after it, each flavour the `uptime` before each step',
    };
    const record = {
      figures: {
        conditions,
        table,
        flavours: Object.fromEntries(
          Object.entries(results).map(([f, r]) => [f, { ...r, steps: r.steps.map((s) => s.step) }]),
        ),
        steps: Object.fromEntries(Object.entries(results).map(([f, r]) => [f, r.steps])),
      },
      notes: [
        `one real local cluster (Kubernetes ${state.kubernetesVersion}, ${state.apiServers.length} API servers behind a load balancer, ${state.nodes.length} nodes); flavours one after the other, each installed, measured and uninstalled before the next: ${FLAVOURS.join(', ')}`,
        `load: pod creates (POST /api/v1/namespaces/${APP_NAMESPACE}/pods, stored, not dry-run) by this process as admin over keep-alive connections; open loop at ${RATES.join('/')} per second for ${SECONDS} s each (latency from each create's send to its answer), then ${CONCURRENCY > 0 ? `${CONCURRENCY} creates in flight, closed loop, for ${SECONDS} s (saturation)` : 'no saturation step'}; the step's pods deleted (deletecollection) and gone before the next step`,
        `owners: every load pod is owned by ReplicaSet <${OWNER}-hash> (controller reference with its real UID, template labels incl. pod-template-hash, generateName) of Deployment ${OWNER} (0 replicas), checked against the API server before any step; upstream resolves that chain from its informer caches. The ReplicaSet controller deletes the pods as they appear (deletedByReplicaSetController per step): DELETEs both flavours' validating pod webhook reviews`,
        `the pods name a scheduler that does not exist (they stay Pending) and select the load SidecarSet (test/e2e/support/load.ts loadSidecarSet): every create is mutated by the pod webhook, which injects container "sidecar"; withoutSidecar counts created pods without it`,
        'warm-up: rounds of creates at 10/s for 3 s until one comes back all injected (the SidecarSet is in every replica cache); its pods deleted, and the connections it opened kept for the steps',
        `idleManagerCpuShare: the manager containers' CPU seconds per second over ${IDLE_SECONDS} s with no creates, after the warm-up; a step's CPU includes that share for its duration`,
        "CPU: each manager container's cgroup cpuacct.usage (all its processes) read from the host through its containerd task PID (test/e2e/support/drill.ts containerPid), /proc of the main process where no cgroup is readable (cpuSource); summed over the manager replicas, per 1,000 created pods; a container that restarted during a step is left out and named (managersRestarted)",
        'generator: this process; loopDelay*: its event-loop delay beyond the 1 ms sampling interval; cpuShare: its CPU seconds per second of the step',
        ...Object.entries(results).map(([f, r]) => `${f}: ${r.label}`),
      ],
    };
    const dir = new URL('../docs/bench/', import.meta.url);
    mkdirSync(dir, { recursive: true });
    const file = new URL(`./cluster-compare-${runId}.json`, dir);
    writeFileSync(file, `${JSON.stringify(record, null, 2)}\n`);
    log(`wrote ${file.pathname}`);
    return record;
  } finally {
    if (cluster.started) {
      log('stopping the cluster this run started');
      await cluster.release();
    }
  }
}
