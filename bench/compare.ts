/**
 * Compare: this project's runtime against the real upstream kruise-manager v1.8.3, on ONE envtest
 * control plane, the same machine and the same load, in one run (issue #12).
 *
 * - upstream: the binary built from the pinned Go module (test/envtest/binaries/build.sh), one
 *   replica run from the container of the Deployment we synthesize for the default app (see
 *   test/integration/support/upstream-manager.ts for every adaptation), installed with one
 *   `kubectl apply --server-side` of that output;
 * - ours: the runtime as the image runs it (the esbuild bundle on plain node, all roles: webhook,
 *   leader election, SidecarSet controller), installed from the runtime flavour of the constructs.
 *
 * Both serve the same SidecarSet (created once, read by each from its own cache) and get the same
 * AdmissionReviews, directly over loopback TLS (open loop at fixed rates, then closed loop at
 * saturation), one after the other: the two use the same webhook configuration names, so they
 * cannot be installed at once without fighting over them. Per subject: latency p50/p90/p99/max,
 * CPU seconds per 1,000 admissions and RSS (both read from /proc, the same way for both), idle,
 * peak under load and 15 s after; for ours also its event-loop stalls and the share of the time its
 * main thread waited for a CPU. Then the same creates through the API server (dry run,
 * compare-apiserver.ts), and both restarted over 10,000 pods and 100 SidecarSets
 * (compare-scale.ts). Then failover, two replicas of each: SIGTERM and SIGKILL to the leader
 * (compare-failover.ts). The 1-minute load average is recorded with every figure.
 *
 * Writes bench/results/compare.json and bench/results/compare.svg (latency against load);
 * `BENCH_COMPARE_CHART=<path>` also writes the chart there (the README's copy is docs/bench/).
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { KRUISE_APPS_GROUP, Names, SecretKeys } from '../lib/contract.js';
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
import { renderedManager, synthesizeDefault, UpstreamManager } from '../test/integration/support/upstream-manager.js';
import type { BenchmarkResult } from './run.js';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, writeRuntimeBundle } from './runtime-as-image.js';
import { API_RATES, throughApiServer } from './compare-apiserver.js';
import { chart } from './compare-chart.js';
import { FAILOVER_RUNS, failoverTable, oursFailover, summarizeFailover, upstreamFailover } from './compare-failover.js';
import { MANAGER_CPU, PIN, pin, proc, rssSplit, runQueueWaitSeconds } from './compare-proc.js';
import { populate, SCALE } from './compare-scale.js';
import {
  benchSidecarSet,
  fixedRate,
  maxThroughput,
  PODS_NS,
  post,
  realisticPod,
  review,
  withMesh,
  type LoadFigures,
  type Target,
} from './webhook.js';

const RATES = [100, 500, 1000];
const RATE_SECONDS = Number(process.env.BENCH_COMPARE_SECONDS ?? 10);
const SATURATION_CONNECTIONS = 16;
const WARMUP_SECONDS = 3;
/**
 * Idle is read this long after the first answer: start-up's work (caches, certificates, the first reconciles) has
 * ended and our memory reducer (a 5 s cadence, first quiet interval) has run; the same wait for upstream.
 */
const SETTLE_MS = 15_000;
/** Long enough for two of our memory reducer's 5 s samples, the first of which may still see the load's end. */
const AFTER_MS = 15_000;
const OURS_NS = 'kruise-bench-compare';
const FAILOVER_NOTES = [
  `failover: two replicas of each on the same API server (upstream first, then ours), lease 15s / renew 10s / retry 2s (the synthesized Deployment's flags); ${FAILOVER_RUNS} runs each of SIGTERM (graceful) and SIGKILL (crash) to the leader, a fresh replacement after each; times from a watch of the Lease; ours runs as bench failover runs it (tsx), upstream as the synthesized Deployment runs it`,
];
/** Goals of issue #12 that this benchmark can judge. */
const GOALS = { oursP99At1000Ms: 5, oursIdleRssBytes: 80e6 };

const log = (msg: string) => process.stderr.write(`bench compare: ${msg}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const load1m = () => round(loadavg()[0]);
/** A manager under test; `metricsPort`: ours, whose prom-client event-loop gauges reset at every scrape. */
interface Subject {
  name: 'ours' | 'upstream';
  pid: number;
  target: Target;
  metricsPort?: number;
}

const metricsOf = async (s: Subject) =>
  s.metricsPort ? (await fetch(`http://127.0.0.1:${s.metricsPort}/metrics`)).text() : '';

interface RunFigures extends LoadFigures {
  cpuSecondsPer1000: number;
  peakRssBytes: number;
  loadAverage1m: number;
  /**
   * Longest and p99 event-loop stall in our manager (prom-client's monitorEventLoopDelay, reset per scrape) and the
   * longest in the load generator.
   */
  managerLoopDelayMaxMs?: number;
  managerLoopDelayP99Ms?: number;
  clientLoopDelayMaxMs?: number;
  /**
   * The manager exited during the run (upstream does, "leader election lost", when its own throttled requests starve
   * its lease renewal).
   */
  exited?: boolean;
  /** Share of the run's wall time the manager's main thread was runnable but not running (waiting for a CPU). */
  managerRunQueueWaitShare?: number;
  /**
   * From the first send to the last answer; with a fixed rate, longer than the schedule when the server falls behind.
   */
  wallSeconds: number;
  answeredPerSecond: number;
}

/** Runs `load` while sampling the subject's RSS every 250 ms and its CPU time before and after. */
async function measured(s: Subject, load: () => Promise<LoadFigures>): Promise<RunFigures> {
  await metricsOf(s); // resets our manager's event-loop histogram
  const client = monitorEventLoopDelay({ resolution: 10 });
  client.enable();
  const before = proc(s.pid);
  const waitBefore = runQueueWaitSeconds(s.pid);
  const startedAt = performance.now();
  let peak = before.rssBytes;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, proc(s.pid).rssBytes || 0);
      await sleep(250);
    }
  })();
  const figures = await load();
  const wallSeconds = (performance.now() - startedAt) / 1000;
  sampling = false;
  await sampler;
  const after = proc(s.pid);
  client.disable();
  const text = await metricsOf(s);
  const lag = (name: string) => (s.metricsPort ? round((metricValue(text, name) ?? NaN) * 1000, 1) : undefined);
  const answered = figures.requests - figures.errors;
  return {
    managerLoopDelayMaxMs: lag('nodejs_eventloop_lag_max_seconds'),
    managerLoopDelayP99Ms: lag('nodejs_eventloop_lag_p99_seconds'),
    clientLoopDelayMaxMs: round(client.max / 1e6, 1),
    managerRunQueueWaitShare: s.metricsPort
      ? round((runQueueWaitSeconds(s.pid) - waitBefore) / wallSeconds, 3)
      : undefined, // Go: the main thread is not where its work runs
    ...figures,
    cpuSecondsPer1000: round(((after.cpuSeconds - before.cpuSeconds) / Math.max(1, answered)) * 1000, 3),
    peakRssBytes: Math.max(peak, after.rssBytes || 0),
    loadAverage1m: load1m(),
    wallSeconds: round(wallSeconds, 1),
    answeredPerSecond: round(answered / wallSeconds, 1),
    ...(after.exited ? { exited: true } : {}),
  };
}

/** Waits until `s` injects, lets start-up settle, and reads its idle memory. */
async function idleOf(s: Subject, inject: string[]) {
  await until(`${s.name} to inject`, () => post(s.target, new Agent(), inject[0], { inject: true }), 60_000, 200);
  await sleep(SETTLE_MS);
  const heapUsedBytes = s.metricsPort ? metricValue(await metricsOf(s), 'nodejs_heap_size_used_bytes') : undefined;
  return { rssBytes: proc(s.pid).rssBytes, ...rssSplit(s.pid), heapUsedBytes, loadAverage1m: load1m() };
}

async function measureSubject(s: Subject, inject: string[], kc: KubeConfig) {
  const check = { inject: true };
  const idle = await idleOf(s, inject);
  log(`${s.name}: idle RSS ${(idle.rssBytes / 1e6).toFixed(1)} MB (load ${idle.loadAverage1m})`);
  await maxThroughput(s.target, inject, check, 8, WARMUP_SECONDS); // JIT, TLS sessions, caches: not measured
  const runs: Record<string, RunFigures> = {};
  for (const rate of RATES) {
    runs[`${rate}PerSecond`] = await measured(s, () => fixedRate(s.target, inject, check, rate, RATE_SECONDS));
    log(`${s.name} ${rate}/s: ${JSON.stringify(runs[`${rate}PerSecond`])}`);
  }
  runs.saturation = await measured(s, () =>
    maxThroughput(s.target, inject, check, SATURATION_CONNECTIONS, RATE_SECONDS),
  );
  log(`${s.name} saturation: ${JSON.stringify(runs.saturation)}`);
  const gone = Object.values(runs).some((r) => r.exited) || proc(s.pid).exited;
  const apiServer = gone ? {} : await throughApiServer(kc, RATE_SECONDS, (load) => measured(s, load));
  if (gone || Object.values(apiServer).some((r) => r.exited)) log(`${s.name} exited during the load`);
  log(`${s.name} through the API server (dryRun creates): ${JSON.stringify(apiServer)}`);
  await sleep(AFTER_MS);
  const after = { rssBytes: proc(s.pid).rssBytes, ...rssSplit(s.pid), loadAverage1m: load1m() };
  const underLoad = Math.max(...[...Object.values(runs), ...Object.values(apiServer)].map((r) => r.peakRssBytes || 0));
  return {
    idle,
    underLoadPeakRssBytes: underLoad,
    after,
    runs,
    apiServer,
    exitedUnderLoad: gone || Object.values(apiServer).some((r) => r.exited),
  };
}

/** Admission rates of the scale run: upstream answers ~30/s, so 25/s compares both and 100/s shows ours. */
const SCALE_RATES = [25, 100];

/** A manager started with {@link SCALE} objects in the cluster: idle memory and direct admission latency. */
async function measureScale(s: Subject, inject: string[], readySeconds: number) {
  const idle = await idleOf(s, inject);
  log(`${s.name} at scale: ready after ${readySeconds}s, idle RSS ${(idle.rssBytes / 1e6).toFixed(1)} MB`);
  const runs: Record<string, RunFigures> = {};
  for (const rate of SCALE_RATES)
    runs[`${rate}PerSecond`] = await measured(s, () =>
      fixedRate(s.target, inject, { inject: true }, rate, RATE_SECONDS),
    );
  return { readySeconds, idle, runs };
}

/** Our runtime as the image runs it: the esbuild bundle on plain node. */
async function startOurs(
  kubeconfigPath: string,
  dir: string,
): Promise<{
  child: ChildProcess;
  webhookPort: number;
  metricsPort: number;
  exited: Promise<unknown>;
  readySeconds: number;
}> {
  const bundle = writeRuntimeBundle(dir);
  const ports = { webhook: await freePort(), health: await freePort(), metrics: await freePort() };
  // BENCH_COMPARE_NODE_ARGS: profiling flags for our process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof
  // --heapsnapshot-signal=SIGUSR2`.
  const nodeArgs = (process.env.BENCH_COMPARE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const started = performance.now();
  // The flags and environment the runtime image's entrypoint has (lib/constructs/runtime-dockerfile.ts).
  const child = spawn(
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

type SubjectResults = Awaited<ReturnType<typeof measureSubject>>;
type ScaleRun = Awaited<ReturnType<typeof measureScale>>;
interface ScaleResults {
  populated: { seconds: number; podsPerSecond: number };
  pods: number;
  sidecarSets: number;
  ours: ScaleRun;
  upstream: ScaleRun;
}

/** Start-up, memory and admission at scale, and memory per cached pod against the small run's idle figures. */
function summarizeScale(scale: ScaleResults, small: Record<'ours' | 'upstream', SubjectResults>) {
  const per = (name: 'ours' | 'upstream') => {
    const r = scale[name];
    const base = small[name].idle;
    return {
      readySeconds: r.readySeconds,
      idleRssMB: round(r.idle.rssBytes / 1e6, 1),
      rssPerCachedPodKB: round((r.idle.rssBytes - base.rssBytes) / scale.pods / 1e3, 2),
      ...(r.idle.heapUsedBytes !== undefined && base.heapUsedBytes !== undefined
        ? { heapPerCachedPodKB: round((r.idle.heapUsedBytes - base.heapUsedBytes) / scale.pods / 1e3, 2) }
        : {}),
      admission: Object.fromEntries(Object.entries(r.runs).map(([k, v]) => [k, pick(v)])),
    };
  };
  return {
    pods: scale.pods,
    sidecarSets: scale.sidecarSets,
    populated: scale.populated,
    ours: per('ours'),
    upstream: per('upstream'),
  };
}

/** Ratios, goals, table and chart from the measured figures (also re-rendered from a saved compare.json). */
function summarize(
  results: Record<'ours' | 'upstream', SubjectResults>,
  upstreamVersion: string,
  scale?: ScaleResults,
) {
  const keys = [...RATES.map((r) => `${r}PerSecond`), 'saturation'];
  const ratio = (a: number, b: number) => (b > 0 ? Number((a / b).toPrecision(2)) : NaN);
  const latency: Record<string, unknown> = {};
  for (const k of keys) {
    const o = pick(results.ours.runs[k]);
    const u = pick(results.upstream.runs[k]);
    latency[k] = {
      ours: o,
      upstream: u,
      ratio: {
        p50: ratio(o.p50Ms, u.p50Ms),
        p99: ratio(o.p99Ms, u.p99Ms),
        max: ratio(o.maxMs, u.maxMs),
        cpuSecondsPer1000: ratio(o.cpuSecondsPer1000, u.cpuSecondsPer1000),
        answeredPerSecond: ratio(o.answeredPerSecond, u.answeredPerSecond),
      },
    };
  }
  const apiServer: Record<string, unknown> = {};
  for (const k of Object.keys(results.ours.apiServer ?? {})) {
    const o = pick(results.ours.apiServer[k]);
    const u = results.upstream.apiServer?.[k] ? pick(results.upstream.apiServer[k]) : undefined;
    apiServer[k] = {
      ours: o,
      upstream: u,
      ratio: u ? { p50: ratio(o.p50Ms, u.p50Ms), p99: ratio(o.p99Ms, u.p99Ms) } : undefined,
    };
  }
  const scaleSummary = scale ? summarizeScale(scale, results) : undefined;
  const rss = (r: SubjectResults) => ({
    idleMB: round(r.idle.rssBytes / 1e6, 1),
    underLoadPeakMB: round(r.underLoadPeakRssBytes / 1e6, 1),
    afterMB: round(r.after.rssBytes / 1e6, 1),
    // What stays after load is mostly file-backed (binary pages touched): shown apart from the process's own memory.
    idleAnonMB: round(r.idle.anonBytes / 1e6, 1),
    idleFileMB: round(r.idle.fileBytes / 1e6, 1),
    afterAnonMB: round(r.after.anonBytes / 1e6, 1),
    afterFileMB: round(r.after.fileBytes / 1e6, 1),
  });
  const memory = {
    ours: rss(results.ours),
    upstream: rss(results.upstream),
    ratioIdle: ratio(results.ours.idle.rssBytes, results.upstream.idle.rssBytes),
  };
  const oursAt1000 = results.ours.runs['1000PerSecond'];
  const worseAt = RATES.filter(
    (r) => results.ours.runs[`${r}PerSecond`].p99Ms > results.upstream.runs[`${r}PerSecond`].p99Ms,
  );
  const goals: Record<string, string> = {
    [`webhook p99 <= ${GOALS.oursP99At1000Ms} ms at 1,000 req/s (ours: ${oursAt1000.p99Ms} ms)`]:
      oursAt1000.p99Ms <= GOALS.oursP99At1000Ms && oursAt1000.errors === 0 ? 'met' : 'NOT met',
    [`webhook p99 no worse than upstream's at every fixed rate${worseAt.length ? ` (worse at ${worseAt.join(', ')}/s)` : ''}`]:
      worseAt.length ? 'NOT met' : 'met',
    [`idle RSS <= ${GOALS.oursIdleRssBytes / 1e6} MB, bundled runtime (ours: ${memory.ours.idleMB} MB)`]:
      results.ours.idle.rssBytes <= GOALS.oursIdleRssBytes ? 'met' : 'NOT met',
    [`RSS comes back after load (ours: idle ${memory.ours.idleMB}, peak ${memory.ours.underLoadPeakMB}, ${AFTER_MS / 1000} s after ${memory.ours.afterMB} MB; anonymous ${memory.ours.idleAnonMB} -> ${memory.ours.afterAnonMB} MB)`]:
      results.ours.after.rssBytes <= results.ours.idle.rssBytes * 1.1 ? 'met' : 'NOT met',
    'graceful handover <= 1 s median over 20 runs':
      'judged by `npm run bench -- failover` (BENCH_FAILOVER_RUNS=20 BENCH_FAILOVER_SETS=default)',
    '1,000-pod rollout': 'not measured by this command (`bench sidecarset`)',
  };
  for (const name of ['ours', 'upstream'] as const) {
    if (results[name].exitedUnderLoad) goals[`${name} exited under load (its later runs are missing)`] = 'observed';
  }
  if (scaleSummary) {
    const o = scaleSummary.ours;
    goals[
      `scale: ${scaleSummary.pods} pods + ${scaleSummary.sidecarSets} SidecarSets: ready ${o.readySeconds} s (upstream ${scaleSummary.upstream.readySeconds} s), idle RSS ${o.idleRssMB} MB (upstream ${scaleSummary.upstream.idleRssMB} MB), ${o.rssPerCachedPodKB} KB RSS per cached pod, admission p99 at 100/s ${o.admission['100PerSecond']?.p99Ms} ms`
    ] = 'measured';
  }
  const labelOf = (k: string) => (k === 'saturation' ? 'saturation' : `${k.replace('PerSecond', '')}/s`);
  const svg = chart(
    (['upstream', 'ours'] as const).map((name) => ({
      name,
      points: keys.map((k) => ({
        label: labelOf(k),
        p50: results[name].runs[k].p50Ms,
        p99: results[name].runs[k].p99Ms,
        answeredPerSecond: pick(results[name].runs[k]).answeredPerSecond,
      })),
    })),
    `SidecarSet injection, direct over loopback TLS: ours vs upstream kruise-manager ${upstreamVersion}`,
  );
  return { latency, apiServer, memory, goals, svg, scaleSummary };
}

function writeChart(svg: string): void {
  const resultsDir = new URL('./results/', import.meta.url);
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(new URL('./compare.svg', resultsDir), svg);
  if (process.env.BENCH_COMPARE_CHART) writeFileSync(process.env.BENCH_COMPARE_CHART, svg);
}

export async function run(): Promise<BenchmarkResult> {
  // Re-renders the table, goals and chart of a saved run without measuring again.
  if (process.env.BENCH_COMPARE_FROM) {
    const saved = JSON.parse(readFileSync(process.env.BENCH_COMPARE_FROM, 'utf8')) as BenchmarkResult & {
      figures: { raw: Record<'ours' | 'upstream', SubjectResults>; upstreamVersion?: string; rawScale?: ScaleResults };
    };
    const { svg, ...sum } = summarize(
      saved.figures.raw,
      saved.figures.upstreamVersion ?? 'v1.8.3',
      saved.figures.rawScale,
    );
    writeChart(svg);
    printTable(sum);
    return { ...saved, figures: { ...saved.figures, ...sum, scale: sum.scaleSummary } };
  }
  const controlPlane = new ControlPlane({ log });
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
  let upstream: UpstreamManager | undefined;
  let ours: Awaited<ReturnType<typeof startOurs>> | undefined;
  const stopOurs = async () => {
    if (!ours) return;
    ours.child.kill('SIGTERM');
    await ours.exited;
    await removeEndpoint(kc, OURS_NS, 'compare-ours-0');
    ours = undefined;
  };
  const kc = new KubeConfig();
  try {
    const info = await controlPlane.start();
    // The harness helpers (upstream replica, kubectl) find the control plane through the state file the test setup
    // writes.
    const statePath = join(dir, 'state.json');
    writeFileSync(statePath, JSON.stringify({ ...info, controlUrl: '' }));
    process.env[STATE_ENV] = statePath;
    // After the control plane started (its processes keep floating over every core); children inherit CPU 0 until
    // pinned.
    pin(process.pid, 0);
    kc.loadFromFile(info.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: PODS_NS } } });
    const inject = Array.from({ length: 64 }, (_, i) => review(withMesh(realisticPod('shop', i))));
    const results: Partial<Record<'ours' | 'upstream', SubjectResults>> = {};
    const createSidecarSet = (via: string) =>
      until(
        `the SidecarSet to be created through ${via} webhooks`,
        async () => {
          await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({
            group: KRUISE_APPS_GROUP,
            version: 'v1alpha1',
            plural: 'sidecarsets',
            body: benchSidecarSet(),
          });
          return true;
        },
        60_000,
        500,
      );
    const startOursSubject = async (): Promise<Subject> => {
      await installRuntime(kc, OURS_NS);
      ours = await startOurs(info.kubeconfigPath, dir);
      await addEndpoint(kc, OURS_NS, 'compare-ours-0', ours.webhookPort);
      const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: OURS_NS });
      return {
        name: 'ours',
        pid: ours.child.pid!,
        metricsPort: ours.metricsPort,
        target: { port: ours.webhookPort, ca: Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8') },
      };
    };

    // BENCH_COMPARE_ONLY=ours: measure our runtime alone (profiling runs); no ratios, goals or chart.
    if (process.env.BENCH_COMPARE_ONLY === 'ours') {
      const subject = await startOursSubject();
      await createSidecarSet('our');
      const alone = await measureSubject(subject, inject, kc);
      return {
        figures: {
          ours: { ...alone, runs: Object.fromEntries(Object.entries(alone.runs).map(([k, r]) => [k, pick(r)])) },
        },
        notes: ['BENCH_COMPARE_ONLY=ours: our runtime alone'],
      };
    }

    // ---- upstream
    const objects = synthesizeDefault();
    const rendered = renderedManager(objects);
    let upstreamRun = 0;
    let upstreamInstalled = false;
    const installUpstream = async () => {
      if (!upstreamInstalled) {
        const applied = await kubectlApply(objects, join(dir, 'install.yaml'), {
          serverSide: true,
          fieldManager: 'kruise-ha',
        });
        if (!applied.ok) throw new Error(`installing the synthesized default output failed:\n${applied.output}`);
      } else {
        // Again after ours, whose install forced its own versions of the shared names (RBAC, CRDs,
        // webhook configurations): each object forced back, but the Secret, which holds upstream's certificates.
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
      upstreamInstalled = true;
    };
    const startUpstream = async (): Promise<{ subject: Subject; readySeconds: number }> => {
      await installUpstream();
      const started = performance.now();
      upstream = await UpstreamManager.start(
        rendered,
        `${rendered.deployment.metadata!.name}-compare-${upstreamRun++}`,
        dir,
      );
      pin(upstream.child.pid!, MANAGER_CPU);
      await addEndpoint(kc, rendered.namespace, upstream.name, upstream.webhookPort);
      await upstream.waitReady(300_000);
      const readySeconds = round((performance.now() - started) / 1000);
      log(`upstream ${info.kruiseVersion} ready after ${readySeconds}s`);
      return {
        readySeconds,
        subject: {
          name: 'upstream',
          pid: upstream.child.pid!,
          target: {
            port: upstream.webhookPort,
            ca: upstream.caPem(),
            servername: `${Names.webhookService}.${rendered.namespace}.svc`,
          },
        },
      };
    };
    const stopUpstream = async () => {
      await upstream!.stop();
      await removeEndpoint(kc, rendered.namespace, upstream!.name);
      await uninstallWebhooks(kc);
      upstream = undefined;
    };
    // ---- failover (BENCH_COMPARE_FAILOVER=0 skips it): two replicas of each, upstream first, as the rest
    const measureFailover = async () => {
      if (process.env.BENCH_COMPARE_FAILOVER === '0') return undefined;
      await installUpstream();
      const upstreamHandovers = await upstreamFailover(kc, rendered, dir, log);
      await uninstallWebhooks(kc);
      const oursHandovers = await oursFailover(kc, info.kubeconfigPath);
      return summarizeFailover(oursHandovers, upstreamHandovers);
    };
    // BENCH_COMPARE_ONLY=failover: only the failover side by side.
    if (process.env.BENCH_COMPARE_ONLY === 'failover') {
      const failover = (await measureFailover())!;
      process.stdout.write(`${failoverTable(failover).join('\n')}\n`);
      return { figures: { failover, upstreamVersion: info.kruiseVersion }, notes: FAILOVER_NOTES };
    }

    const up = await startUpstream();
    await createSidecarSet("upstream's");
    results.upstream = await measureSubject(up.subject, inject, kc);
    await stopUpstream();

    // ---- ours
    const oursSubject = await startOursSubject();
    const oursReadyS = ours!.readySeconds;
    results.ours = await measureSubject(oursSubject, inject, kc);

    // ---- scale (BENCH_COMPARE_SCALE=0 skips it): the same managers restarted over 10,000 pods and 100 more
    // SidecarSets
    let scale: Record<string, unknown> | undefined;
    if (process.env.BENCH_COMPARE_SCALE !== '0') {
      await stopOurs();
      await uninstallWebhooks(kc);
      log(`scale: creating ${SCALE.pods} pods and ${SCALE.sidecarSets} SidecarSets (no webhook configured)`);
      const populated = await populate(kc);
      log(`scale: populated in ${populated.seconds}s (${populated.podsPerSecond} pods/s)`);
      const oursScale = await measureScale(await startOursSubject(), inject, ours!.readySeconds);
      await stopOurs();
      await uninstallWebhooks(kc);
      const upScale = await startUpstream();
      const upstreamScale = await measureScale(upScale.subject, inject, upScale.readySeconds);
      await stopUpstream();
      scale = {
        populated,
        pods: SCALE.pods,
        sidecarSets: SCALE.sidecarSets + 1,
        ours: oursScale,
        upstream: upstreamScale,
      };
    }

    await stopOurs(); // still running when the scale run was skipped
    const failover = await measureFailover();

    // ---- side by side
    const { svg, ...sum } = summarize(
      results as Record<'ours' | 'upstream', SubjectResults>,
      info.kruiseVersion,
      scale as ScaleResults | undefined,
    );
    const { latency, apiServer, memory, goals, scaleSummary } = sum;
    writeChart(svg);
    if (failover)
      goals[
        `failover side by side: SIGTERM → new leader ${failover.gracefulSigtermToNewLeaderSeconds.ours?.medianS} s (upstream ${failover.gracefulSigtermToNewLeaderSeconds.upstream?.medianS} s), SIGKILL ${failover.crashSigkillToNewLeaderSeconds.ours?.medianS} s (upstream ${failover.crashSigkillToNewLeaderSeconds.upstream?.medianS} s)`
      ] = 'measured';
    printTable(sum);
    if (failover) process.stdout.write(`${failoverTable(failover).join('\n')}\n`);
    return {
      figures: {
        goals,
        failover,
        latency,
        apiServer,
        memory,
        scale: scaleSummary,
        readySeconds: { ours: oursReadyS, upstream: up.readySeconds },
        upstreamVersion: info.kruiseVersion,
        loadAverage1mAtEnd: load1m(),
        pinned: PIN,
        raw: results,
        rawScale: scale,
      },
      notes: [
        `one control plane (envtest kube-apiserver ${info.kubernetesVersion}, etcd, loopback); upstream kruise-manager ${info.kruiseVersion} measured first, then ours, each alone (they share webhook configuration names)`,
        `direct AdmissionReviews (${Buffer.byteLength(inject[0])} bytes, a pod the SidecarSet selects: the answer injects a sidecar) over keep-alive TLS; open loop at ${RATES.join('/')} per second for ${RATE_SECONDS}s each, latency from the scheduled send time; saturation: ${SATURATION_CONNECTIONS} connections closed loop`,
        `through the API server: pod creates with dryRun=All (admission runs, nothing is stored) at ${API_RATES.join('/')} per second for ${RATE_SECONDS}s each, open loop, one keep-alive client`,
        `scale: ${SCALE.pods} pods and ${SCALE.sidecarSets} SidecarSets (selecting no pod) created with no webhook configured, then each manager started fresh: ready time, idle RSS, direct admission at ${SCALE_RATES.join('/')} per second; memory per cached pod = (RSS at scale - RSS idle in the small run) / pods`,
        'CPU seconds (utime + stime) and RSS from /proc of each manager process; RSS idle after the first answer + 15 s, peak sampled every 250 ms under load, and 15 s after the last run (anonymous and file-backed apart, from smaps_rollup)',
        "ours runs as the image runs it (esbuild bundle, plain node with the image's flags and environment, every role); upstream as the synthesized Deployment runs it (support/upstream-manager.ts adapts only ports, dirs and credentials)",
        PIN
          ? `pinned: the load generator on CPU 0, the manager under test on CPU ${MANAGER_CPU} (taskset); kube-apiserver, etcd and other work float`
          : 'not pinned (BENCH_COMPARE_PIN=0)',
        `loadAverage1m is recorded with every figure: the load generator, both managers, kube-apiserver and etcd share ${availableParallelism()} cores with whatever else runs on the machine`,
        'chart: bench/results/compare.svg',
        ...FAILOVER_NOTES,
      ],
    };
  } finally {
    upstream?.signal('SIGKILL');
    if (ours) {
      ours.child.kill('SIGTERM');
      await ours.exited;
    }
    await controlPlane.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const pick = (r: RunFigures) => ({
  // Runs recorded before wallSeconds existed only know the offered rate.
  answeredPerSecond: r.answeredPerSecond ?? NaN,
  p50Ms: r.p50Ms,
  p90Ms: r.p90Ms,
  p99Ms: r.p99Ms,
  maxMs: r.maxMs,
  errors: r.errors,
  cpuSecondsPer1000: r.cpuSecondsPer1000,
  peakRssMB: round(r.peakRssBytes / 1e6, 1),
  loadAverage1m: r.loadAverage1m,
  managerLoopDelayMaxMs: r.managerLoopDelayMaxMs,
  managerLoopDelayP99Ms: r.managerLoopDelayP99Ms,
  clientLoopDelayMaxMs: r.clientLoopDelayMaxMs,
  managerRunQueueWaitShare: r.managerRunQueueWaitShare,
});

type Picked = ReturnType<typeof pick>;
type Row = { ours: Picked; upstream?: Picked; ratio?: { p99: number } };

function printTable(sum: Omit<ReturnType<typeof summarize>, 'svg'>): void {
  const f = (r?: Picked) =>
    (r ? `${r.p50Ms}/${r.p90Ms}/${r.p99Ms}/${r.maxMs} (${r.answeredPerSecond})` : '-').padEnd(38);
  const stall = (r: Picked) =>
    `${r.managerLoopDelayP99Ms ?? '-'}/${r.managerLoopDelayMaxMs ?? '-'} | ${r.clientLoopDelayMaxMs ?? '-'} | ${r.managerRunQueueWaitShare ?? '-'}`;
  const rows = (title: string, table: Record<string, unknown>) => [
    '',
    title,
    'load            | ours p50/p90/p99/max ms (req/s)        | upstream p50/p90/p99/max ms (req/s)    | p99 ours/upstream | CPU s/1000 ours / upstream | ours loop stall p99/max ms | generator max | ours run-queue wait share | load1m',
    ...(Object.entries(table) as Array<[string, Row]>).map(
      ([k, v]) =>
        `${k.padEnd(15)} | ${f(v.ours)} | ${f(v.upstream)} | ${String(v.ratio?.p99 ?? '-').padEnd(17)} | ${v.ours.cpuSecondsPer1000} / ${v.upstream?.cpuSecondsPer1000 ?? '-'} | ${stall(v.ours)} | ${v.ours.loadAverage1m} / ${v.upstream?.loadAverage1m ?? '-'}`,
    ),
  ];
  const lines = [
    ...rows('direct AdmissionReviews over loopback TLS', sum.latency),
    ...(Object.keys(sum.apiServer).length
      ? rows('through the API server (pod creates, dryRun=All)', sum.apiServer)
      : []),
    `RSS MB: ${JSON.stringify(sum.memory)}`,
    ...(sum.scaleSummary ? [`scale: ${JSON.stringify(sum.scaleSummary)}`] : []),
    'goals:',
    ...Object.entries(sum.goals).map(([g, st]) => `  [${st}] ${g}`),
    '',
  ];
  process.stdout.write(lines.join('\n'));
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
