/**
 * Compare (issue #29, the fair benchmark): this project's runtime against the real upstream kruise-manager v1.8.3 on
 * ONE envtest control plane, the same machine and the same inputs, in one run, each subject alone in turn.
 *
 * Inputs as a real cluster has them (bench/inputs.ts): every pod reviewed or created is made from a Deployment and
 * its ReplicaSet that exist before any subject starts (real UIDs in the owner references), so upstream's pod webhook
 * finds the owner chain in its informer caches, as in a cluster.
 *
 * Subjects, each labelled:
 * - `upstream-default`: the Deployment we synthesize for the default app, at the official chart's defaults (what
 *   users run): `--rest-config-qps=30 --rest-config-burst=50` (binary defaults), `--v=4`;
 * - `upstream-tuned`: the same with `--rest-config-qps=1000 --rest-config-burst=2000` and `--v=2` (its info level: no
 *   per-admission debug lines, as ours logs none at info);
 * - `upstream-equal-scope`: tuned, and its PodUnavailableBudget and WorkloadSpread pod webhooks off by feature gates
 *   (`PodUnavailableBudgetDeleteGate=false,PodUnavailableBudgetUpdateGate=false,WorkloadSpread=false`): the pod
 *   admission work that ours does (SidecarSet only);
 * - `ours`: the runtime as the image runs it (the esbuild bundle on plain node, the image's flags and environment,
 *   every role).
 *
 * Per subject: direct AdmissionReviews over loopback TLS (open loop at 100/500/1,000 per second, latency from each
 * request's scheduled time; then closed loop over 16 connections: saturation), and the same pods created through the
 * API server (`dryRun=All`: admission runs, nothing is stored) at {@link API_RATES} and saturation. CPU per 1,000
 * admissions and RSS from /proc; event-loop stalls of ours (prom-client's 10 ms-resolution histogram, the 10 ms
 * interval subtracted) and Go GC pauses of upstream (`go_gc_duration_seconds`).
 *
 * WorkloadSpread (issue #24): the pod webhook's added latency with a WorkloadSpread on the pods' Deployment, for the
 * subjects that serve it (upstream with its WorkloadSpread gate on, and ours): direct reviews of pods of Deployment
 * `spread` (selected by the SidecarSet too, and by a WorkloadSpread of three zone subsets whose limits are never
 * reached, so every admission books its subset in the WorkloadSpread's status, as a scale-out does) at
 * {@link WS_RATES} per second and saturation, the WorkloadSpread created afresh before each (no bookings carried
 * over); added latency = these minus the SidecarSet-only direct figures at the same rate.
 *
 * "Upstream's real limit", measured apart and labelled so: pods owned by a Job, a DaemonSet or a custom workload (a
 * CRD without a scale subresource), for which upstream's controller finder has no cached lookup and asks the API
 * server under its client-side rate limiter; closed loop over 16 connections, answers per second.
 *
 * The load generator is its own Node process (bench/loadgen.ts): connections opened before the clock, its own
 * event-loop delay (1 ms resolution, interval subtracted), GC pauses and CPU share recorded beside every figure.
 *
 * Writes bench/results/compare.json (via run.ts), bench/results/compare-<runId>.json and bench/results/compare.svg;
 * `BENCH_COMPARE_CHART=<path>` also writes the chart there. Every figure carries its load average; the run records
 * `uptime`, the machine and the run id.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, type RequestOptions } from 'node:https';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { KRUISE_APPS_GROUP, Names, Paths, SecretKeys } from '../lib/contract.js';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { STATE_ENV } from '../test/envtest/state.js';
import { metricValue, until } from '../test/integration/support/ha.js';
import { freePort } from '../test/integration/support/manager-process.js';
import { kubectlApply } from '../test/integration/support/apply.js';
import {
  addEndpoint,
  installRuntime,
  removeEndpoint,
  serverSideApply,
  uninstallWebhooks,
} from '../test/integration/support/runtime-cluster.js';
import {
  flagValue,
  renderedManager,
  synthesizeDefault,
  UpstreamManager,
  withContainerFlags,
  type RenderedManager,
} from '../test/integration/support/upstream-manager.js';
import type { BenchmarkResult } from './run.js';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, writeRuntimeBundle } from './runtime-as-image.js';
import { chart } from './compare-chart.js';
import { machine, uptime } from './conditions.js';
import { failoverTable, oursFailover, summarizeFailover, upstreamFailover } from './compare-failover.js';
import {
  MANAGER_CPU,
  PIN,
  pin,
  proc,
  rssSplit,
  runQueueWaitAllThreadsSeconds,
  runQueueWaitSeconds,
} from './compare-proc.js';
import { createWorkload, ensureCustomWorkloadCrd, podCreateReview, type OwnerKind, type Workload } from './inputs.js';
import { LoadGenerator, type LoadFigures, type LoadRun, type LoadTarget } from './loadgen-client.js';
import { benchSidecarSet, PODS_NS, post, type Target } from './webhook.js';

const RATES = (process.env.BENCH_COMPARE_RATES ?? '100,500,1000').split(',').filter(Boolean).map(Number);
/**
 * Dry-run pod creates per second through the API server. The envtest kube-apiserver shares the 2 cores with everything
 * else: on this machine under the other sessions' load it completed 40-50 dry-run creates per second with either
 * webhook, so higher open-loop rates only queue in it; its capacity is the saturation run.
 */
export const API_RATES = (process.env.BENCH_COMPARE_API_RATES ?? '25,50,100').split(',').filter(Boolean).map(Number);
const RATE_SECONDS = Number(process.env.BENCH_COMPARE_SECONDS ?? 10);
const SATURATION_CONNECTIONS = 16;
const POOL = 64;
const WARMUP_SECONDS = 3;
/** After the first answer: start-up work has ended and our memory reducer (5 s cadence) has run; same for upstream. */
const SETTLE_MS = 15_000;
const AFTER_MS = 15_000;
const OURS_NS = 'kruise-bench-compare';
/** prom-client's default `eventLoopMonitoringPrecision`: its histogram records the 10 ms interval plus any stall. */
const PROM_CLIENT_RESOLUTION_MS = 10;

export type SubjectName = 'upstream-default' | 'upstream-tuned' | 'upstream-equal-scope' | 'ours';
type UpstreamVariant = Exclude<SubjectName, 'ours'>;
const SUBJECTS: SubjectName[] = (
  process.env.BENCH_COMPARE_SUBJECTS ?? 'upstream-default,upstream-tuned,upstream-equal-scope,ours'
)
  .split(',')
  .map((s) => s.trim() as SubjectName);
/** Subjects measured on "upstream's real limit" (pods owned by a Job, a DaemonSet, a custom workload). */
const REAL_LIMIT_SUBJECTS = new Set<SubjectName>(['upstream-default', 'upstream-tuned', 'ours']);
const REAL_LIMIT_KINDS: OwnerKind[] = ['Job', 'DaemonSet', 'Custom'];

/** Direct reviews per second of the WorkloadSpread phase (each admission writes the WorkloadSpread's status). */
export const WS_RATES = (process.env.BENCH_COMPARE_WS_RATES ?? '10,20').split(',').filter(Boolean).map(Number);
/** Subjects whose pod webhook serves WorkloadSpread (upstream-equal-scope turns its gate off). */
const WORKLOADSPREAD_SUBJECTS = new Set<SubjectName>(['upstream-default', 'upstream-tuned', 'ours']);
const SPREAD_APP = 'spread';
const SPREAD_NAME = 'spread-bench';

/** The benchmark WorkloadSpread: three zone subsets with limits never reached (every admission books a subset). */
export function benchWorkloadSpread(namespace: string) {
  const zone = (z: string) => ({
    matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: [z] }],
  });
  return {
    apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
    kind: 'WorkloadSpread',
    metadata: { name: SPREAD_NAME, namespace },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: SPREAD_APP },
      subsets: [
        { name: 'zone-a', requiredNodeSelectorTerm: zone('zone-a'), maxReplicas: 1_000_000 },
        { name: 'zone-b', requiredNodeSelectorTerm: zone('zone-b'), maxReplicas: 1_000_000 },
        { name: 'zone-c', requiredNodeSelectorTerm: zone('zone-c') },
      ],
    },
  };
}

const TUNED = { 'rest-config-qps': '1000', 'rest-config-burst': '2000', v: '2' };
const OFF_GATES = 'PodUnavailableBudgetDeleteGate=false,PodUnavailableBudgetUpdateGate=false,WorkloadSpread=false';

const LABELS: Record<SubjectName, string> = {
  'upstream-default':
    'upstream v1.8.3 at the chart defaults (the synthesized default Deployment: --rest-config-qps 30 / burst 50 as the binary defaults, --v=4, PUB and WorkloadSpread pod webhooks on)',
  'upstream-tuned': `upstream v1.8.3 tuned: --rest-config-qps=${TUNED['rest-config-qps']} --rest-config-burst=${TUNED['rest-config-burst']} --v=${TUNED.v} (its info level: no per-admission debug lines; it still logs one V(0) line per injected sidecar)`,
  'upstream-equal-scope': `upstream v1.8.3 tuned and equal scope: as tuned, plus --feature-gates ${OFF_GATES} (its PodUnavailableBudget and WorkloadSpread pod webhooks off: SidecarSet injection is the pod admission work left, as ours)`,
  ours: 'ours: the runtime as the image runs it (esbuild bundle on plain node, the entrypoint flags and environment, every role), default flags, log level info',
};

const log = (msg: string) => process.stderr.write(`bench compare: ${msg}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const load1m = () => round(loadavg()[0]);
interface Subject {
  name: SubjectName;
  pid: number;
  target: Target;
  metricsPort: number;
  runtime: 'node' | 'go';
}

const metricsOf = async (s: Subject) =>
  (await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`).catch(() => undefined))?.text() ?? '';

export interface RunFigures extends LoadFigures {
  cpuSecondsPer1000: number;
  peakRssBytes: number;
  loadAverage1m: number;
  /** Ours: longest / p99 event-loop stall in the run (prom-client histogram, reset per scrape, minus 10 ms). */
  managerStallMaxMs?: number;
  managerStallP99Ms?: number;
  /** Upstream: the longest Go GC stop-the-world pause in its recent window (`go_gc_duration_seconds{quantile="1"}`). */
  managerGcPauseMaxMs?: number;
  /** CPU seconds of the load generator process per second of the run (1.0 = one core busy: it would be the limit). */
  generatorCpuShare: number;
  /**
   * Seconds per second of the run the subject's threads were runnable but waiting for a CPU (/proc schedstat), all
   * threads summed, and for ours its main thread alone (where its event loop runs): the machine's share of its tail.
   */
  managerRunQueueWaitShare: number;
  managerMainThreadRunQueueWaitShare?: number;
  exited?: boolean;
}

/** Runs `load` in the generator while sampling the subject's RSS every 250 ms and both processes' CPU time. */
async function measured(s: Subject, gen: LoadGenerator, run: LoadRun): Promise<RunFigures> {
  if (s.runtime === 'node') await metricsOf(s); // resets our manager's event-loop histogram
  const before = proc(s.pid);
  const genBefore = proc(gen.pid);
  const waitBefore = runQueueWaitAllThreadsSeconds(s.pid);
  const mainWaitBefore = runQueueWaitSeconds(s.pid);
  let peak = before.rssBytes;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, proc(s.pid).rssBytes || 0);
      await sleep(250);
    }
  })();
  const startedAt = performance.now();
  const figures = await gen.run(run);
  const wall = (performance.now() - startedAt) / 1000;
  sampling = false;
  await sampler;
  const after = proc(s.pid);
  const genAfter = proc(gen.pid);
  const waitAfter = runQueueWaitAllThreadsSeconds(s.pid);
  const mainWaitAfter = runQueueWaitSeconds(s.pid);
  const text = await metricsOf(s);
  const stall = (name: string) =>
    s.runtime === 'node'
      ? round(Math.max(0, (metricValue(text, name) ?? NaN) * 1000 - PROM_CLIENT_RESOLUTION_MS), 1)
      : undefined;
  const answered = figures.requests - figures.errors;
  const gcMax = s.runtime === 'go' ? metricValue(text, 'go_gc_duration_seconds', { quantile: '1' }) : undefined;
  return {
    ...figures,
    cpuSecondsPer1000: round(((after.cpuSeconds - before.cpuSeconds) / Math.max(1, answered)) * 1000, 3),
    peakRssBytes: Math.max(peak, after.rssBytes || 0),
    loadAverage1m: load1m(),
    managerStallMaxMs: stall('nodejs_eventloop_lag_max_seconds'),
    managerStallP99Ms: stall('nodejs_eventloop_lag_p99_seconds'),
    managerGcPauseMaxMs: gcMax === undefined ? undefined : round(gcMax * 1000, 2),
    generatorCpuShare: round((genAfter.cpuSeconds - genBefore.cpuSeconds) / wall, 2),
    managerRunQueueWaitShare: round((waitAfter - waitBefore) / wall, 3),
    managerMainThreadRunQueueWaitShare:
      s.runtime === 'node' ? round((mainWaitAfter - mainWaitBefore) / wall, 3) : undefined,
    ...(after.exited ? { exited: true } : {}),
  };
}

/** The generator's target for direct AdmissionReviews to `s`. */
function directTarget(s: Subject, bodies: string[]): LoadTarget {
  return {
    request: {
      host: '127.0.0.1',
      port: s.target.port,
      servername: s.target.servername ?? 'localhost',
      ca: s.target.ca,
      path: Paths.mutatePod,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
    },
    bodies,
    status: 200,
    mustContain: ['"allowed":true', '"patch":'],
    mustNotContain: [],
    pool: POOL,
    timeoutMs: 60_000,
  };
}

/** The generator's target for dry-run pod creates through the API server, with the kubeconfig's credentials. */
async function apiServerTarget(kc: KubeConfig, workload: Workload): Promise<LoadTarget> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(`/api/v1/namespaces/${workload.namespace}/pods?dryRun=All`, cluster.server);
  const options: RequestOptions = {
    method: 'POST',
    host: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    headers: {},
  };
  await kc.applyToHTTPSOptions(options);
  const text = (x: unknown) => (x === undefined ? undefined : Buffer.isBuffer(x) ? x.toString('utf8') : String(x));
  return {
    request: {
      method: 'POST',
      host: url.hostname,
      port: Number(url.port),
      path: options.path,
      ca: text(options.ca),
      cert: text(options.cert),
      key: text(options.key),
      headers: { ...(options.headers as Record<string, string>), 'Content-Type': 'application/json' },
    },
    bodies: Array.from({ length: 64 }, (_, i) => JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...workload.pod(i) })),
    status: 201,
    mustContain: ['"name":"mesh-proxy"'],
    mustNotContain: [],
    pool: POOL,
    // Past the API server's webhook timeout and request timeout: an answer that never comes is an error.
    timeoutMs: 65_000,
  };
}

export interface Inputs {
  /** Direct reviews: pods of Deployment `shop` (through its ReplicaSet), selected by the SidecarSet. */
  direct: string[];
  /** Dry-run creates: pods of Deployment `api`. */
  api: Workload;
  /** Upstream's real limit: reviews of pods owned by a Job, a DaemonSet, a custom workload. */
  realLimit: Record<string, string[]>;
  /** WorkloadSpread: pods of Deployment `spread` (selected by the SidecarSet and by the benchmark WorkloadSpread). */
  spread: string[];
  workloads: Workload[];
}

/** Creates every workload the compare benchmark's pods belong to, in `namespace` (which must exist). */
export async function createInputs(kc: KubeConfig, namespace = PODS_NS): Promise<Inputs> {
  await ensureCustomWorkloadCrd(kc);
  const shop = await createWorkload(kc, namespace, 'shop', { mesh: true });
  const api = await createWorkload(kc, namespace, 'api', { mesh: true });
  const reviews = (w: Workload) =>
    Array.from({ length: 64 }, (_, i) => podCreateReview(w.pod(i), namespace, w.creator));
  const spread = await createWorkload(kc, namespace, SPREAD_APP, { mesh: true });
  const realLimit: Record<string, string[]> = {};
  const workloads = [shop, api, spread];
  for (const kind of REAL_LIMIT_KINDS) {
    const w = await createWorkload(kc, namespace, `${kind.toLowerCase()}-owned`, { kind, mesh: true });
    workloads.push(w);
    realLimit[kind] = reviews(w);
  }
  return { direct: reviews(shop), api, realLimit, spread: reviews(spread), workloads };
}

/** Waits until `s` injects, lets start-up settle, and reads its idle memory. */
async function idleOf(s: Subject, inject: string) {
  await until(`${s.name} to inject`, () => post(s.target, new Agent(), inject, { inject: true }), 60_000, 200);
  await sleep(SETTLE_MS);
  return { rssBytes: proc(s.pid).rssBytes, ...rssSplit(s.pid), loadAverage1m: load1m(), uptime: uptime() };
}

async function measureSubject(s: Subject, inputs: Inputs, kc: KubeConfig, gen: LoadGenerator) {
  const idle = await idleOf(s, inputs.direct[0]);
  log(`${s.name}: idle RSS ${(idle.rssBytes / 1e6).toFixed(1)} MB (${idle.uptime})`);
  const runs: Record<string, RunFigures> = {};
  const exited = () => Object.values(runs).some((r) => r.exited) || Boolean(proc(s.pid).exited);
  const conditions: Record<string, string> = {};

  await gen.open(directTarget(s, inputs.direct));
  await gen.run({ mode: 'closed', connections: 8, seconds: WARMUP_SECONDS }); // JIT, TLS sessions: not measured
  for (const rate of RATES) {
    if (exited()) break;
    conditions[`direct ${rate}/s`] = uptime();
    runs[`${rate}PerSecond`] = await measured(s, gen, { mode: 'rate', rate, seconds: RATE_SECONDS });
    log(`${s.name} direct ${rate}/s: ${JSON.stringify(pick(runs[`${rate}PerSecond`]))}`);
  }
  if (!exited()) {
    conditions['direct saturation'] = uptime();
    runs.saturation = await measured(s, gen, {
      mode: 'closed',
      connections: SATURATION_CONNECTIONS,
      seconds: RATE_SECONDS,
    });
    log(`${s.name} direct saturation: ${JSON.stringify(pick(runs.saturation))}`);
  }

  const workloadSpread: Record<string, RunFigures> = {};
  if (WORKLOADSPREAD_SUBJECTS.has(s.name) && process.env.BENCH_COMPARE_WORKLOADSPREAD !== '0') {
    const fresh = () => freshWorkloadSpread(s, kc, inputs.spread[0]);
    await fresh();
    await gen.open(directTarget(s, inputs.spread));
    await gen.run({ mode: 'closed', connections: 2, seconds: 2 }); // its paths warmed: not measured
    for (const rate of WS_RATES) {
      if (exited()) break;
      await fresh();
      conditions[`WorkloadSpread ${rate}/s`] = uptime();
      workloadSpread[`${rate}PerSecond`] = await measured(s, gen, { mode: 'rate', rate, seconds: RATE_SECONDS });
      log(`${s.name} WorkloadSpread ${rate}/s: ${JSON.stringify(pick(workloadSpread[`${rate}PerSecond`]))}`);
    }
    if (!exited()) {
      await fresh();
      conditions['WorkloadSpread saturation'] = uptime();
      workloadSpread.saturation = await measured(s, gen, {
        mode: 'closed',
        connections: SATURATION_CONNECTIONS,
        seconds: RATE_SECONDS,
      });
      log(`${s.name} WorkloadSpread saturation: ${JSON.stringify(pick(workloadSpread.saturation))}`);
    }
    await deleteWorkloadSpread(kc);
  }

  const apiServer: Record<string, RunFigures> = {};
  // BENCH_COMPARE_API=0: direct reviews only (A/B runs of one subject).
  if (!exited() && process.env.BENCH_COMPARE_API !== '0') {
    await gen.open(await apiServerTarget(kc, inputs.api));
    // The API server opens its connections to the webhook on first use: not measured.
    await gen.run({ mode: 'rate', rate: 20, seconds: 2 });
    for (const rate of API_RATES) {
      if (exited()) break;
      conditions[`API server ${rate}/s`] = uptime();
      apiServer[`${rate}PerSecond`] = await measured(s, gen, { mode: 'rate', rate, seconds: RATE_SECONDS });
      log(`${s.name} through the API server ${rate}/s: ${JSON.stringify(pick(apiServer[`${rate}PerSecond`]))}`);
    }
    if (!exited()) {
      conditions['API server saturation'] = uptime();
      apiServer.saturation = await measured(s, gen, {
        mode: 'closed',
        connections: SATURATION_CONNECTIONS,
        seconds: RATE_SECONDS,
      });
      log(`${s.name} through the API server, saturation: ${JSON.stringify(pick(apiServer.saturation))}`);
    }
  }

  const realLimit: Record<string, RunFigures> = {};
  if (REAL_LIMIT_SUBJECTS.has(s.name) && process.env.BENCH_COMPARE_REAL_LIMIT !== '0') {
    for (const kind of REAL_LIMIT_KINDS) {
      if (exited()) break;
      await gen.open({ ...directTarget(s, inputs.realLimit[kind]), pool: SATURATION_CONNECTIONS });
      conditions[`real limit ${kind}`] = uptime();
      realLimit[kind] = await measured(s, gen, {
        mode: 'closed',
        connections: SATURATION_CONNECTIONS,
        seconds: RATE_SECONDS,
      });
      log(`${s.name} pods owned by a ${kind}, saturation: ${JSON.stringify(pick(realLimit[kind]))}`);
    }
  }

  // After the load: CPU share over the wait (ours gives memory back only after an idle interval: under 2 % of a
  // core) and, for ours, how many memory-reducing collections ran by then.
  const cpuBeforeAfter = proc(s.pid).cpuSeconds;
  await sleep(AFTER_MS);
  const reductions =
    s.runtime === 'node' ? metricValue(await metricsOf(s), 'kruise_ha_memory_reductions_total') : undefined;
  const after = {
    rssBytes: proc(s.pid).rssBytes,
    ...rssSplit(s.pid),
    cpuShare: round((proc(s.pid).cpuSeconds - cpuBeforeAfter) / (AFTER_MS / 1000), 3),
    ...(reductions === undefined ? {} : { memoryReductions: reductions }),
    loadAverage1m: load1m(),
    uptime: uptime(),
  };
  const all = [
    ...Object.values(runs),
    ...Object.values(apiServer),
    ...Object.values(realLimit),
    ...Object.values(workloadSpread),
  ];
  return {
    label: LABELS[s.name],
    idle,
    underLoadPeakRssBytes: Math.max(...all.map((r) => r.peakRssBytes || 0)),
    after,
    runs,
    apiServer,
    realLimit,
    workloadSpread,
    conditions,
    exitedUnderLoad: exited(),
  };
}

const WS_PATH = `/apis/${KRUISE_APPS_GROUP}/v1alpha1/namespaces/${PODS_NS}/workloadspreads`;

/** Deletes the benchmark WorkloadSpread (if any) and waits until it is gone. */
async function deleteWorkloadSpread(kc: KubeConfig): Promise<void> {
  const objects = kc.makeApiClient(CustomObjectsApi);
  const args = { group: KRUISE_APPS_GROUP, version: 'v1alpha1', namespace: PODS_NS, plural: 'workloadspreads' };
  await objects.deleteNamespacedCustomObject({ ...args, name: SPREAD_NAME }).catch(() => undefined);
  await until(
    `${WS_PATH}/${SPREAD_NAME} to be gone`,
    async () =>
      (await objects.getNamespacedCustomObject({ ...args, name: SPREAD_NAME }).catch(() => undefined))
        ? undefined
        : true,
    60_000,
    200,
  );
}

/**
 * The benchmark WorkloadSpread created afresh through `s`'s validating webhook (no bookings of a previous run), once
 * `s` spreads the pods of `review` by it (its cache has it).
 */
async function freshWorkloadSpread(s: Subject, kc: KubeConfig, review: string): Promise<void> {
  await deleteWorkloadSpread(kc);
  await until(
    `the WorkloadSpread to be created through ${s.name}'s webhook`,
    async () => {
      await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
        group: KRUISE_APPS_GROUP,
        version: 'v1alpha1',
        namespace: PODS_NS,
        plural: 'workloadspreads',
        body: benchWorkloadSpread(PODS_NS),
      });
      return true;
    },
    60_000,
    500,
  );
  await until(
    `${s.name} to spread the pods`,
    () => post(s.target, new Agent(), review, { inject: true, patchContains: 'matched-workloadspread' }),
    60_000,
    200,
  );
}

/**
 * WorkloadSpread's added latency per subject and rate: its direct figures beside the SidecarSet-only direct figures
 * at the same rate (or saturation), and the differences.
 */
export function workloadSpreadSummary(results: Partial<Record<SubjectName, SubjectResults>>) {
  const out: Record<string, Record<string, Record<string, number | undefined>>> = {};
  for (const [name, r] of Object.entries(results)) {
    if (!r?.workloadSpread || !Object.keys(r.workloadSpread).length) continue;
    out[name] = {};
    for (const [key, w] of Object.entries(r.workloadSpread)) {
      const base = r.runs[key];
      out[name][key] = {
        answeredPerSecond: w.answeredPerSecond,
        errors: w.errors,
        p50Ms: w.p50Ms,
        p99Ms: w.p99Ms,
        sidecarSetOnlyP50Ms: base?.p50Ms,
        sidecarSetOnlyP99Ms: base?.p99Ms,
        addedP50Ms: base ? round(w.p50Ms - base.p50Ms) : undefined,
        addedP99Ms: base ? round(w.p99Ms - base.p99Ms) : undefined,
        cpuSecondsPer1000: w.cpuSecondsPer1000,
        loadAverage1m: w.loadAverage1m,
      };
    }
  }
  return out;
}

type SubjectResults = Awaited<ReturnType<typeof measureSubject>>;

/** Our runtime as the image runs it: the esbuild bundle on plain node. */
async function startOurs(kubeconfigPath: string, dir: string) {
  const bundle = writeRuntimeBundle(dir);
  const ports = { webhook: await freePort(), health: await freePort(), metrics: await freePort() };
  // BENCH_COMPARE_NODE_ARGS: profiling flags for our process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`.
  const nodeArgs = (process.env.BENCH_COMPARE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const started = performance.now();
  // The flags and environment the runtime image's entrypoint has (lib/constructs/runtime-image/runtime-dockerfile.ts).
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...IMAGE_NODE_FLAGS,
      ...nodeArgs,
      bundle,
      `--kubeconfig=${kubeconfigPath}`,
      `--metrics-addr=127.0.0.1:${ports.metrics}`,
      `--health-probe-addr=127.0.0.1:${ports.health}`,
    ],
    {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        ...IMAGE_ENV,
        POD_NAMESPACE: OURS_NS,
        POD_NAME: 'compare-ours-0',
        WEBHOOK_PORT: String(ports.webhook),
        WEBHOOK_HOST: '127.0.0.1',
        WEBHOOK_CERT_DIR: join(dir, 'certs'),
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  pin(child.pid!, MANAGER_CPU);
  await until(
    'our bundled manager to be ready',
    async () => {
      if (child.exitCode !== null) throw new Error(`our manager exited (${child.exitCode})`);
      return (await fetch(`http://127.0.0.1:${ports.health}/readyz`).catch(() => undefined))?.status === 200;
    },
    180_000,
    100,
  );
  return {
    child,
    webhookPort: ports.webhook,
    metricsPort: ports.metrics,
    exited,
    readySeconds: round((performance.now() - started) / 1000),
  };
}

const pick = (r: RunFigures) => ({
  answeredPerSecond: r.answeredPerSecond,
  p50Ms: r.p50Ms,
  p90Ms: r.p90Ms,
  p99Ms: r.p99Ms,
  maxMs: r.maxMs,
  errors: r.errors,
  cpuSecondsPer1000: r.cpuSecondsPer1000,
  peakRssMB: round(r.peakRssBytes / 1e6, 1),
  loadAverage1m: r.loadAverage1m,
  managerStallP99Ms: r.managerStallP99Ms,
  managerStallMaxMs: r.managerStallMaxMs,
  managerGcPauseMaxMs: r.managerGcPauseMaxMs,
  generatorStallP99Ms: r.generator?.loopDelayP99Ms,
  generatorStallMaxMs: r.generator?.loopDelayMaxMs,
  generatorGcPauseMaxMs: r.generator?.gcPauseMaxMs,
  generatorCpuShare: r.generatorCpuShare,
  managerRunQueueWaitShare: r.managerRunQueueWaitShare,
  managerMainThreadRunQueueWaitShare: r.managerMainThreadRunQueueWaitShare,
});
type Picked = ReturnType<typeof pick>;

const ratio = (a: number, b: number) => (b > 0 && Number.isFinite(a) ? Number((a / b).toPrecision(2)) : NaN);

/** Side-by-side tables, ratios of ours against each upstream variant, the goals of #29 this run judges, the chart. */
export function summarize(results: Partial<Record<SubjectName, SubjectResults>>, upstreamVersion: string) {
  const names = SUBJECTS.filter((n) => results[n]);
  const table = (of: (r: SubjectResults) => Record<string, RunFigures>) => {
    const keys = [...new Set(names.flatMap((n) => Object.keys(of(results[n]!))))];
    return Object.fromEntries(
      keys.map((k) => [
        k,
        Object.fromEntries(names.filter((n) => of(results[n]!)[k]).map((n) => [n, pick(of(results[n]!)[k])])),
      ]),
    ) as Record<string, Partial<Record<SubjectName, Picked>>>;
  };
  const direct = table((r) => r.runs);
  const apiServer = table((r) => r.apiServer);
  const realLimit = table((r) => r.realLimit);
  const memory = Object.fromEntries(
    names.map((n) => {
      const r = results[n]!;
      return [
        n,
        {
          idleMB: round(r.idle.rssBytes / 1e6, 1),
          idleAnonMB: round(r.idle.anonBytes / 1e6, 1),
          idleFileMB: round(r.idle.fileBytes / 1e6, 1),
          underLoadPeakMB: round(r.underLoadPeakRssBytes / 1e6, 1),
          afterMB: round(r.after.rssBytes / 1e6, 1),
          afterAnonMB: round(r.after.anonBytes / 1e6, 1),
          afterFileMB: round(r.after.fileBytes / 1e6, 1),
          afterCpuShare: r.after.cpuShare,
          ...(r.after.memoryReductions === undefined ? {} : { afterMemoryReductions: r.after.memoryReductions }),
        },
      ];
    }),
  ) as Partial<Record<SubjectName, Record<string, number>>>;

  // Goals of #29 against each upstream variant measured: p99 <= upstream's at every rate, CPU per 1,000 <= upstream's,
  // RSS idle and after load <= upstream's.
  const goals: Record<string, Record<string, string>> = {};
  const ours = results.ours;
  for (const u of names.filter((n): n is UpstreamVariant => n !== 'ours')) {
    if (!ours) break;
    const up = results[u]!;
    const g: Record<string, string> = {};
    for (const [title, tbl] of [
      ['direct', direct],
      ['API server', apiServer],
    ] as const) {
      for (const [k, row] of Object.entries(tbl)) {
        const o = row.ours;
        const x = row[u];
        if (!o || !x) continue;
        const rate = k === 'saturation' ? 'saturation' : `${k.replace('PerSecond', '')}/s`;
        if (k === 'saturation') {
          g[
            `${title} saturation: answers/s ours ${o.answeredPerSecond} vs ${x.answeredPerSecond} (x${ratio(o.answeredPerSecond, x.answeredPerSecond)})`
          ] = o.answeredPerSecond >= x.answeredPerSecond ? 'met' : 'NOT met';
        } else {
          g[`${title} ${rate} p99: ours ${o.p99Ms} ms vs ${x.p99Ms} ms (x${ratio(o.p99Ms, x.p99Ms)})`] =
            o.p99Ms <= x.p99Ms && o.errors <= x.errors ? 'met' : 'NOT met';
        }
        g[
          `${title} ${rate} CPU s per 1,000: ours ${o.cpuSecondsPer1000} vs ${x.cpuSecondsPer1000} (x${ratio(o.cpuSecondsPer1000, x.cpuSecondsPer1000)})`
        ] = o.cpuSecondsPer1000 <= x.cpuSecondsPer1000 ? 'met' : 'NOT met';
      }
    }
    const mo = memory.ours!;
    const mu = memory[u]!;
    g[`RSS idle: ours ${mo.idleMB} MB vs ${mu.idleMB} MB (x${ratio(mo.idleMB, mu.idleMB)})`] =
      ours.idle.rssBytes <= up.idle.rssBytes ? 'met' : 'NOT met';
    g[
      `RSS ${AFTER_MS / 1000} s after load: ours ${mo.afterMB} MB vs ${mu.afterMB} MB (x${ratio(mo.afterMB, mu.afterMB)})`
    ] = ours.after.rssBytes <= up.after.rssBytes ? 'met' : 'NOT met';
    goals[`ours vs ${u}`] = g;
  }
  const labelOf = (k: string) => (k === 'saturation' ? 'saturation' : `${k.replace('PerSecond', '')}/s`);
  const keys = [...RATES.map((r) => `${r}PerSecond`), 'saturation'];
  const svg = chart(
    names.map((name) => ({
      name,
      points: keys
        .filter((k) => results[name]!.runs[k])
        .map((k) => ({
          label: labelOf(k),
          p50: results[name]!.runs[k].p50Ms,
          p99: results[name]!.runs[k].p99Ms,
          answeredPerSecond: results[name]!.runs[k].answeredPerSecond,
        })),
    })),
    `SidecarSet injection, direct over loopback TLS: ours vs upstream kruise-manager ${upstreamVersion}`,
  );
  return { direct, apiServer, realLimit, memory, goals, svg };
}

function printTable(sum: Omit<ReturnType<typeof summarize>, 'svg'>): void {
  const cell = (r?: Picked) =>
    r
      ? `${r.p50Ms}/${r.p99Ms}/${r.maxMs} ms ${r.answeredPerSecond}/s e${r.errors} cpu${r.cpuSecondsPer1000} ld${r.loadAverage1m} gen${r.generatorStallMaxMs}ms/${r.generatorCpuShare}`
      : '-';
  const lines: string[] = [];
  for (const [title, tbl] of [
    [
      'direct AdmissionReviews (p50/p99/max, answered/s, errors, CPU s per 1,000, load1m, generator stall max/CPU share)',
      sum.direct,
    ],
    ['through the API server (dryRun creates)', sum.apiServer],
    [
      "upstream's real limit: pods owned by a Job / DaemonSet / custom workload, 16 connections closed loop",
      sum.realLimit,
    ],
  ] as const) {
    lines.push('', title);
    for (const [k, row] of Object.entries(tbl)) {
      lines.push(`  ${k}`);
      for (const [n, r] of Object.entries(row)) lines.push(`    ${n.padEnd(22)} ${cell(r)}`);
    }
  }
  lines.push('', `RSS MB: ${JSON.stringify(sum.memory)}`, 'goals of #29:');
  for (const [against, g] of Object.entries(sum.goals)) {
    lines.push(`  ${against}`);
    for (const [goal, status] of Object.entries(g)) lines.push(`    [${status}] ${goal}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

function writeChart(svg: string): void {
  const resultsDir = new URL('./results/', import.meta.url);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(new URL('./compare.svg', resultsDir), svg);
  if (process.env.BENCH_COMPARE_CHART) writeFileSync(process.env.BENCH_COMPARE_CHART, svg);
}

export async function run(): Promise<BenchmarkResult> {
  // Re-renders the tables, goals and chart of a saved run without measuring again.
  if (process.env.BENCH_COMPARE_FROM) {
    const saved = JSON.parse(readFileSync(process.env.BENCH_COMPARE_FROM, 'utf8')) as BenchmarkResult & {
      figures: { raw: Partial<Record<SubjectName, SubjectResults>>; upstreamVersion?: string };
    };
    const { svg, ...sum } = summarize(saved.figures.raw, saved.figures.upstreamVersion ?? 'v1.8.3');
    writeChart(svg);
    printTable(sum);
    return { ...saved, figures: { ...saved.figures, ...sum } };
  }
  const runId = `${new Date().toISOString().replace(/[:.]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  const startedUptime = uptime();
  log(`run ${runId}; ${startedUptime}`);
  const controlPlane = new ControlPlane({ log });
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
  let upstream: UpstreamManager | undefined;
  let ours: Awaited<ReturnType<typeof startOurs>> | undefined;
  const gen = LoadGenerator.start();
  const kc = new KubeConfig();
  const stopOurs = async () => {
    if (!ours) return;
    ours.child.kill('SIGTERM');
    await ours.exited;
    await removeEndpoint(kc, OURS_NS, 'compare-ours-0');
    await uninstallWebhooks(kc);
    ours = undefined;
  };
  try {
    const info = await controlPlane.start();
    const statePath = join(dir, 'state.json');
    writeFileSync(statePath, JSON.stringify({ ...info, controlUrl: '' }));
    process.env[STATE_ENV] = statePath;
    pin(process.pid, 0);
    pin(gen.pid, 0);
    kc.loadFromFile(info.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: PODS_NS } } });
    // Every pod's owners exist before any subject starts (so they are in every cache it builds).
    const inputs = await createInputs(kc);
    log(`inputs: ${inputs.workloads.map((w) => w.objects.map((o) => `${o.kind}/${o.name}`).join(' <- ')).join('; ')}`);
    const results: Partial<Record<SubjectName, SubjectResults>> = {};
    const readySeconds: Partial<Record<SubjectName, number>> = {};
    // Created when absent: installing ours after an upstream release storing SidecarSets as v1beta1 (v1.9) replaces
    // the CRD (asFreshInstall), and the SidecarSet with it; it is created again then, through ours.
    const createSidecarSet = async (via: string) => {
      const objects = kc.makeApiClient(CustomObjectsApi);
      const args = { group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets' };
      const exists = await objects.getClusterCustomObject({ ...args, name: benchSidecarSet().metadata.name }).then(
        () => true,
        () => false,
      );
      if (exists) return;
      await until(
        `the SidecarSet to be created through ${via} webhooks`,
        async () => {
          await objects.createClusterCustomObject({ ...args, body: benchSidecarSet() });
          return true;
        },
        60_000,
        500,
      );
    };

    // ---- upstream, installed from the synthesized default output
    const objects = synthesizeDefault();
    const rendered = renderedManager(objects);
    const defaultGates = flagValue(rendered.container.args ?? [], 'feature-gates');
    const variants: Record<UpstreamVariant, RenderedManager> = {
      'upstream-default': rendered,
      'upstream-tuned': withContainerFlags(rendered, TUNED),
      'upstream-equal-scope': withContainerFlags(rendered, {
        ...TUNED,
        'feature-gates': defaultGates ? `${defaultGates},${OFF_GATES}` : OFF_GATES,
      }),
    };
    let upstreamInstalled = false;
    let upstreamRun = 0;
    const installUpstream = async () => {
      if (!upstreamInstalled) {
        const applied = await kubectlApply(objects, join(dir, 'install.yaml'), {
          serverSide: true,
          fieldManager: 'kruise-ha',
        });
        if (!applied.ok) throw new Error(`installing the synthesized default output failed:\n${applied.output}`);
        upstreamInstalled = true;
      } else {
        // Again after ours (or after the last upstream's webhook configurations were removed): each object forced back
        // but the Secret, which holds upstream's certificates.
        for (const o of objects.filter((x) => x.kind !== 'Secret')) await serverSideApply(kc, o);
      }
      await until(
        'the SidecarSet CRD to be established',
        async () => {
          const crd = await fetchCrd(kc, 'sidecarsets.apps.kruise.io');
          return crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
        },
        60_000,
        200,
      );
    };
    const startUpstream = async (variant: UpstreamVariant): Promise<Subject> => {
      await installUpstream();
      const r = variants[variant];
      const started = performance.now();
      upstream = await UpstreamManager.start(r, `${r.deployment.metadata!.name}-compare-${upstreamRun++}`, dir);
      pin(upstream.child.pid!, MANAGER_CPU);
      await addEndpoint(kc, r.namespace, upstream.name, upstream.webhookPort);
      await upstream.waitReady(300_000);
      readySeconds[variant] = round((performance.now() - started) / 1000);
      log(`${variant} ready after ${readySeconds[variant]}s: ${r.container.args?.join(' ')}`);
      return {
        name: variant,
        runtime: 'go',
        pid: upstream.child.pid!,
        metricsPort: upstream.metricsPort,
        target: {
          port: upstream.webhookPort,
          ca: upstream.caPem(),
          servername: `${Names.webhookService}.${r.namespace}.svc`,
        },
      };
    };
    const stopUpstream = async () => {
      await upstream!.stop();
      await removeEndpoint(kc, rendered.namespace, upstream!.name);
      await uninstallWebhooks(kc);
      upstream = undefined;
    };
    const startOursSubject = async (): Promise<Subject> => {
      await installRuntime(kc, OURS_NS);
      ours = await startOurs(info.kubeconfigPath, dir);
      readySeconds.ours = ours.readySeconds;
      await addEndpoint(kc, OURS_NS, 'compare-ours-0', ours.webhookPort);
      const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: OURS_NS });
      return {
        name: 'ours',
        runtime: 'node',
        pid: ours.child.pid!,
        metricsPort: ours.metricsPort,
        target: { port: ours.webhookPort, ca: Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8') },
      };
    };

    if (process.env.BENCH_COMPARE_ONLY === 'failover') {
      await installUpstream();
      const upstreamHandovers = await upstreamFailover(kc, rendered, dir, log);
      await uninstallWebhooks(kc);
      const failover = summarizeFailover(await oursFailover(kc, info.kubeconfigPath), upstreamHandovers);
      process.stdout.write(`${failoverTable(failover).join('\n')}\n`);
      return { figures: { failover, upstreamVersion: info.kruiseVersion, runId, uptime: startedUptime } };
    }

    for (const name of SUBJECTS) {
      const subject = name === 'ours' ? await startOursSubject() : await startUpstream(name);
      await createSidecarSet(name);
      results[name] = await measureSubject(subject, inputs, kc, gen);
      if (name === 'ours') await stopOurs();
      else await stopUpstream();
    }

    // Failover side by side (BENCH_COMPARE_FAILOVER=1): not part of the fair latency run.
    let failover: ReturnType<typeof summarizeFailover> | undefined;
    if (process.env.BENCH_COMPARE_FAILOVER === '1') {
      await installUpstream();
      const upstreamHandovers = await upstreamFailover(kc, rendered, dir, log);
      await uninstallWebhooks(kc);
      failover = summarizeFailover(await oursFailover(kc, info.kubeconfigPath), upstreamHandovers);
    }

    const { svg, ...sum } = summarize(results, info.kruiseVersion);
    writeChart(svg);
    printTable(sum);
    const workloadSpread = workloadSpreadSummary(results);
    for (const [name, rows] of Object.entries(workloadSpread))
      for (const [key, row] of Object.entries(rows))
        process.stdout.write(
          `WorkloadSpread ${name} ${key}: p50 ${row.p50Ms} ms (+${row.addedP50Ms}), p99 ${row.p99Ms} ms (+${row.addedP99Ms}), ${row.answeredPerSecond}/s, ${row.errors} errors, load ${row.loadAverage1m}\n`,
        );
    if (failover) process.stdout.write(`${failoverTable(failover).join('\n')}\n`);
    const conditions = {
      runId,
      machine: machine(),
      uptimeAtStart: startedUptime,
      uptimeAtEnd: uptime(),
      rates: {
        direct: RATES,
        apiServer: API_RATES,
        secondsPerRate: RATE_SECONDS,
        saturationConnections: SATURATION_CONNECTIONS,
      },
      sharedMachine:
        'figures taken on a 2-core machine shared with other sessions running their own builds and tests: every figure carries the 1-minute load average at its end and every run the `uptime` at its start (conditions)',
      pinned: PIN,
    };
    const record = {
      figures: {
        conditions,
        subjects: Object.fromEntries(SUBJECTS.map((n) => [n, LABELS[n]])),
        goals: sum.goals,
        direct: sum.direct,
        apiServer: sum.apiServer,
        realLimit: sum.realLimit,
        workloadSpread,
        memory: sum.memory,
        readySeconds,
        failover,
        upstreamVersion: info.kruiseVersion,
        raw: results,
      },
      notes: [
        `one control plane (envtest kube-apiserver ${info.kubernetesVersion}, etcd, loopback); subjects one after the other, each alone (they share webhook configuration names): ${SUBJECTS.join(', ')}`,
        `inputs: pods of Deployments whose ReplicaSets exist (real UIDs in ownerReferences), created before any subject started: ${inputs.workloads.map((w) => w.objects.map((o) => `${o.kind}/${o.name}`).join(' <- ')).join('; ')}`,
        `direct: AdmissionReviews (${Buffer.byteLength(inputs.direct[0])} bytes, a pod the SidecarSet selects: the answer injects a sidecar) over ${POOL} keep-alive TLS connections opened before the clock; open loop at ${RATES.join('/')} per second for ${RATE_SECONDS}s each, latency from the scheduled send time; saturation: ${SATURATION_CONNECTIONS} connections closed loop`,
        `through the API server: pod creates with dryRun=All (admission runs, nothing is stored) at ${API_RATES.join('/')} per second for ${RATE_SECONDS}s each, open loop, then ${SATURATION_CONNECTIONS} connections closed loop`,
        `WorkloadSpread: direct reviews of pods of Deployment ${SPREAD_APP} (selected by the SidecarSet and by WorkloadSpread ${SPREAD_NAME}: three zone subsets, limits never reached, so every admission writes a booking to its status) at ${WS_RATES.join('/')} per second and saturation, the WorkloadSpread created afresh before each; added = minus the SidecarSet-only direct figure at the same rate; subjects with WorkloadSpread served: ${[...WORKLOADSPREAD_SUBJECTS].join(', ')}`,
        "upstream's real limit: pods owned by a Job, a DaemonSet and a custom workload (CRD workers.bench.kruise-ha.dev, no scale subresource); upstream's controller finder has no cached lookup for these and GETs the owner (scale subresource, then unstructured) through its rate-limited client",
        'load generator: its own Node process (bench/loadgen.ts); generatorStall*: its event-loop delay beyond the 1 ms sampling interval; generatorCpuShare: its CPU seconds per second of the run',
        `managerStall* (ours): prom-client's event-loop histogram (10 ms resolution) minus the 10 ms interval; managerGcPauseMaxMs (upstream): go_gc_duration_seconds{quantile="1"}`,
        'CPU seconds (utime + stime) and RSS from /proc of each manager process; RSS idle after the first answer + 15 s, peak sampled every 250 ms under load, and 15 s after the last run',
        ...Object.entries(LABELS).map(([n, l]) => `${n}: ${l}`),
      ],
    };
    mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
    writeFileSync(new URL(`./results/compare-${runId}.json`, import.meta.url), `${JSON.stringify(record, null, 2)}\n`);
    return record;
  } finally {
    upstream?.signal('SIGKILL');
    if (ours) {
      ours.child.kill('SIGTERM');
      await ours.exited;
    }
    await gen.close();
    await controlPlane.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function fetchCrd(
  kc: KubeConfig,
  name: string,
): Promise<{ status?: { conditions?: Array<{ type: string; status: string }> } } | undefined> {
  const { ApiextensionsV1Api } = await import('@kubernetes/client-node');
  return kc
    .makeApiClient(ApiextensionsV1Api)
    .readCustomResourceDefinition({ name })
    .catch(() => undefined) as Promise<
    { status?: { conditions?: Array<{ type: string; status: string }> } } | undefined
  >;
}
