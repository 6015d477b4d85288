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
 * peak under load and 10 s after. The 1-minute load average is recorded with every figure.
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
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { KRUISE_APPS_GROUP, Names, SecretKeys } from '../lib/contract.js';
import { bundleRuntime } from '../lib/constructs/runtime-bundle.js';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { STATE_ENV } from '../test/envtest/state.js';
import { until } from '../test/integration/support/ha.js';
import { freePort } from '../test/integration/support/manager-process.js';
import { kubectlApply } from '../test/integration/support/apply.js';
import { addEndpoint, installRuntime, removeEndpoint, uninstallWebhooks } from '../test/integration/support/runtime-cluster.js';
import { renderedManager, synthesizeDefault, UpstreamManager } from '../test/integration/support/upstream-manager.js';
import type { BenchmarkResult } from './run.js';
import { benchSidecarSet, fixedRate, maxThroughput, PODS_NS, post, realisticPod, review, withMesh, type LoadFigures, type Target } from './webhook.js';

const RATES = [100, 500, 1000];
const RATE_SECONDS = Number(process.env.BENCH_COMPARE_SECONDS ?? 10);
const SATURATION_CONNECTIONS = 16;
const WARMUP_SECONDS = 3;
const SETTLE_MS = 5_000;
const AFTER_MS = 10_000;
const OURS_NS = 'kruise-bench-compare';
/** Goals of issue #12 that this benchmark can judge. */
const GOALS = { oursP99At1000Ms: 5, oursIdleRssBytes: 80e6 };

const log = (msg: string) => process.stderr.write(`bench compare: ${msg}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const load1m = () => round(loadavg()[0]);
const CLK_TCK = 100;

/** utime + stime of `pid` in seconds, and its resident set, from /proc (the same for a Go and a Node process). */
function proc(pid: number): { cpuSeconds: number; rssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return { cpuSeconds, rssBytes: rssKb * 1024 };
}

interface Subject { name: 'ours' | 'upstream'; pid: number; target: Target }

interface RunFigures extends LoadFigures {
  cpuSecondsPer1000: number; peakRssBytes: number; loadAverage1m: number;
  /** From the first send to the last answer; with a fixed rate, longer than the schedule when the server falls behind. */
  wallSeconds: number; answeredPerSecond: number;
}

/** Runs `load` while sampling the subject's RSS every 250 ms and its CPU time before and after. */
async function measured(s: Subject, load: () => Promise<LoadFigures>): Promise<RunFigures> {
  const before = proc(s.pid);
  const startedAt = performance.now();
  let peak = before.rssBytes;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, proc(s.pid).rssBytes);
      await sleep(250);
    }
  })();
  const figures = await load();
  const wallSeconds = (performance.now() - startedAt) / 1000;
  sampling = false;
  await sampler;
  const after = proc(s.pid);
  const answered = figures.requests - figures.errors;
  return {
    ...figures, cpuSecondsPer1000: round(((after.cpuSeconds - before.cpuSeconds) / Math.max(1, answered)) * 1000, 3),
    peakRssBytes: Math.max(peak, after.rssBytes), loadAverage1m: load1m(),
    wallSeconds: round(wallSeconds, 1), answeredPerSecond: round(answered / wallSeconds, 1),
  };
}

async function measureSubject(s: Subject, inject: string[]) {
  const check = { inject: true };
  await until(`${s.name} to inject`, () => post(s.target, new Agent(), inject[0], check), 60_000, 200);
  await sleep(SETTLE_MS);
  const idle = { rssBytes: proc(s.pid).rssBytes, loadAverage1m: load1m() };
  log(`${s.name}: idle RSS ${(idle.rssBytes / 1e6).toFixed(1)} MB (load ${idle.loadAverage1m})`);
  await maxThroughput(s.target, inject, check, 8, WARMUP_SECONDS); // JIT, TLS sessions, caches: not measured
  const runs: Record<string, RunFigures> = {};
  for (const rate of RATES) {
    runs[`${rate}PerSecond`] = await measured(s, () => fixedRate(s.target, inject, check, rate, RATE_SECONDS));
    log(`${s.name} ${rate}/s: ${JSON.stringify(runs[`${rate}PerSecond`])}`);
  }
  runs.saturation = await measured(s, () => maxThroughput(s.target, inject, check, SATURATION_CONNECTIONS, RATE_SECONDS));
  log(`${s.name} saturation: ${JSON.stringify(runs.saturation)}`);
  await sleep(AFTER_MS);
  const after = { rssBytes: proc(s.pid).rssBytes, loadAverage1m: load1m() };
  const underLoad = Math.max(...Object.values(runs).map((r) => r.peakRssBytes));
  return { idle, underLoadPeakRssBytes: underLoad, after, runs };
}

/** Our runtime as the image runs it: the esbuild bundle on plain node. */
async function startOurs(kubeconfigPath: string, dir: string): Promise<{ child: ChildProcess; webhookPort: number; exited: Promise<unknown> }> {
  const bundle = bundleRuntime(fileURLToPath(new URL('../lib/runtime/main.ts', import.meta.url)), 'main.mjs');
  writeFileSync(join(dir, 'main.mjs'), bundle.code);
  const ports = { webhook: await freePort(), health: await freePort(), metrics: await freePort() };
  // BENCH_COMPARE_NODE_ARGS: profiling flags for our process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof --heapsnapshot-signal=SIGUSR2`.
  const nodeArgs = (process.env.BENCH_COMPARE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, join(dir, 'main.mjs'), `--kubeconfig=${kubeconfigPath}`,
    `--metrics-addr=127.0.0.1:${ports.metrics}`, `--health-probe-addr=127.0.0.1:${ports.health}`], {
    env: { ...process.env, NODE_OPTIONS: '', POD_NAMESPACE: OURS_NS, POD_NAME: 'compare-ours-0', WEBHOOK_PORT: String(ports.webhook), WEBHOOK_HOST: '127.0.0.1', WEBHOOK_CERT_DIR: join(dir, 'certs') },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await until('our bundled manager to be ready', async () => {
    if (child.exitCode !== null) throw new Error(`our manager exited (${child.exitCode})`);
    return (await fetch(`http://127.0.0.1:${ports.health}/readyz`).catch(() => undefined))?.status === 200;
  }, 90_000, 200);
  return { child, webhookPort: ports.webhook, exited };
}

type Series = { name: string; points: Array<{ label: string; p50: number; p99: number; answeredPerSecond: number }> };

/** Latency (log scale) at each offered load, p50 dashed and p99 solid, one colour per subject; answered req/s printed at each point. */
export function chart(series: Series[], title: string): string {
  const W = 760, H = 440, L = 70, R = 170, T = 40, B = 60;
  const labels = series[0].points.map((p) => p.label);
  const all = series.flatMap((s) => s.points);
  const yMin = Math.max(0.1, Math.min(...all.map((p) => p.p50)) / 1.5);
  const yMax = Math.max(...all.map((p) => p.p99)) * 1.5;
  const x = (i: number) => L + ((i + 0.5) / labels.length) * (W - L - R);
  const y = (v: number) => T + (1 - (Math.log10(v) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin))) * (H - T - B);
  const colors: Record<string, string> = { ours: '#1f77b4', upstream: '#d62728' };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="14">${title}</text>`,
    `<line x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="black"/><line x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="black"/>`,
    `<text x="${(L + W - R) / 2}" y="${H - 12}" text-anchor="middle">offered load (open loop; saturation: 16 connections, closed loop); small print: answered req/s</text>`,
    `<text x="18" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 18 ${(T + H - B) / 2})">latency, ms (log scale)</text>`,
  ];
  for (let e = Math.floor(Math.log10(yMin)); e <= Math.ceil(Math.log10(yMax)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v < yMin || v > yMax) continue;
      out.push(`<line x1="${L}" y1="${y(v).toFixed(1)}" x2="${W - R}" y2="${y(v).toFixed(1)}" stroke="#ddd"/><text x="${L - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`);
    }
  }
  labels.forEach((l, i) => out.push(`<text x="${x(i).toFixed(1)}" y="${H - B + 16}" text-anchor="middle">${l}</text>`));
  series.forEach((s, si) => {
    const c = colors[s.name] ?? '#555';
    for (const [key, dash] of [['p99', ''], ['p50', ' stroke-dasharray="5,4"']] as const) {
      out.push(`<polyline fill="none" stroke="${c}" stroke-width="2"${dash} points="${s.points.map((p, i) => `${x(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(' ')}"/>`);
      for (const [i, p] of s.points.entries()) out.push(`<circle cx="${x(i).toFixed(1)}" cy="${y(p[key]).toFixed(1)}" r="3" fill="${c}"/>`);
    }
    for (const [i, p] of s.points.entries()) {
      out.push(`<text x="${(x(i) + 6).toFixed(1)}" y="${(y(p.p99) - 6).toFixed(1)}" font-size="10" fill="${c}">${p.p99} ms${Number.isFinite(p.answeredPerSecond) ? ` (${Math.round(p.answeredPerSecond)}/s)` : ''}</text>`);
    }
    const ly = T + 10 + si * 40;
    out.push(`<line x1="${W - R + 15}" y1="${ly}" x2="${W - R + 40}" y2="${ly}" stroke="${c}" stroke-width="2"/><text x="${W - R + 45}" y="${ly + 4}">${s.name} p99</text>`);
    out.push(`<line x1="${W - R + 15}" y1="${ly + 16}" x2="${W - R + 40}" y2="${ly + 16}" stroke="${c}" stroke-width="2" stroke-dasharray="5,4"/><text x="${W - R + 45}" y="${ly + 20}">${s.name} p50</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

type SubjectResults = Awaited<ReturnType<typeof measureSubject>>;

/** Ratios, goals, table and chart from the measured figures (also re-rendered from a saved compare.json). */
function summarize(results: Record<'ours' | 'upstream', SubjectResults>, upstreamVersion: string) {
  const keys = [...RATES.map((r) => `${r}PerSecond`), 'saturation'];
  const ratio = (a: number, b: number) => (b > 0 ? Number((a / b).toPrecision(2)) : NaN);
  const latency: Record<string, unknown> = {};
  for (const k of keys) {
    const o = pick(results.ours.runs[k]);
    const u = pick(results.upstream.runs[k]);
    latency[k] = {
      ours: o, upstream: u,
      ratio: { p50: ratio(o.p50Ms, u.p50Ms), p99: ratio(o.p99Ms, u.p99Ms), max: ratio(o.maxMs, u.maxMs), cpuSecondsPer1000: ratio(o.cpuSecondsPer1000, u.cpuSecondsPer1000), answeredPerSecond: ratio(o.answeredPerSecond, u.answeredPerSecond) },
    };
  }
  const rss = (r: SubjectResults) => ({ idleMB: round(r.idle.rssBytes / 1e6, 1), underLoadPeakMB: round(r.underLoadPeakRssBytes / 1e6, 1), afterMB: round(r.after.rssBytes / 1e6, 1) });
  const memory = { ours: rss(results.ours), upstream: rss(results.upstream), ratioIdle: ratio(results.ours.idle.rssBytes, results.upstream.idle.rssBytes) };
  const oursAt1000 = results.ours.runs['1000PerSecond'];
  const worseAt = RATES.filter((r) => results.ours.runs[`${r}PerSecond`].p99Ms > results.upstream.runs[`${r}PerSecond`].p99Ms);
  const goals: Record<string, string> = {
    [`webhook p99 <= ${GOALS.oursP99At1000Ms} ms at 1,000 req/s (ours: ${oursAt1000.p99Ms} ms)`]: oursAt1000.p99Ms <= GOALS.oursP99At1000Ms && oursAt1000.errors === 0 ? 'met' : 'NOT met',
    [`webhook p99 no worse than upstream's at every fixed rate${worseAt.length ? ` (worse at ${worseAt.join(', ')}/s)` : ''}`]: worseAt.length ? 'NOT met' : 'met',
    [`idle RSS <= ${GOALS.oursIdleRssBytes / 1e6} MB, bundled runtime (ours: ${memory.ours.idleMB} MB)`]: results.ours.idle.rssBytes <= GOALS.oursIdleRssBytes ? 'met' : 'NOT met',
    'graceful handover <= 1 s median over 20 runs': 'judged by `npm run bench -- failover` (BENCH_FAILOVER_RUNS=20 BENCH_FAILOVER_SETS=default)',
    'through the API server, failover side by side, 1,000-pod rollout, 10,000-pod scale': 'not measured by this command yet',
  };
  const labelOf = (k: string) => (k === 'saturation' ? 'saturation' : `${k.replace('PerSecond', '')}/s`);
  const svg = chart((['upstream', 'ours'] as const).map((name) => ({
    name, points: keys.map((k) => ({ label: labelOf(k), p50: results[name].runs[k].p50Ms, p99: results[name].runs[k].p99Ms, answeredPerSecond: pick(results[name].runs[k]).answeredPerSecond })),
  })), `SidecarSet injection, direct over loopback TLS: ours vs upstream kruise-manager ${upstreamVersion}`);
  return { latency, memory, goals, svg };
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
    const saved = JSON.parse(readFileSync(process.env.BENCH_COMPARE_FROM, 'utf8')) as BenchmarkResult & { figures: { raw: Record<'ours' | 'upstream', SubjectResults>; upstreamVersion?: string } };
    const { latency, memory, goals, svg } = summarize(saved.figures.raw, saved.figures.upstreamVersion ?? 'v1.8.3');
    writeChart(svg);
    printTable(latency, memory, goals);
    return { ...saved, figures: { ...saved.figures, goals, latency, memory } };
  }
  const controlPlane = new ControlPlane({ log });
  const dir = mkdtempSync(join(tmpdir(), 'bench-compare-'));
  let upstream: UpstreamManager | undefined;
  let ours: Awaited<ReturnType<typeof startOurs>> | undefined;
  try {
    const info = await controlPlane.start();
    // The harness helpers (upstream replica, kubectl) find the control plane through the state file the test setup writes.
    const statePath = join(dir, 'state.json');
    writeFileSync(statePath, JSON.stringify({ ...info, controlUrl: '' }));
    process.env[STATE_ENV] = statePath;
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: PODS_NS } } });
    const inject = Array.from({ length: 64 }, (_, i) => review(withMesh(realisticPod('shop', i))));
    const results: Partial<Record<'ours' | 'upstream', SubjectResults>> = {};

    // BENCH_COMPARE_ONLY=ours: measure our runtime alone (profiling runs); no ratios, goals or chart.
    const only = process.env.BENCH_COMPARE_ONLY;
    if (only === 'ours') {
      await installRuntime(kc, OURS_NS);
      ours = await startOurs(info.kubeconfigPath, dir);
      await addEndpoint(kc, OURS_NS, 'compare-ours-0', ours.webhookPort);
      await until('the SidecarSet to be created through our webhooks', async () => {
        await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({ group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets', body: benchSidecarSet() });
        return true;
      }, 60_000, 500);
      const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: OURS_NS });
      const alone = await measureSubject({
        name: 'ours', pid: ours.child.pid!,
        target: { port: ours.webhookPort, ca: Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8') },
      }, inject);
      return { figures: { ours: { ...alone, runs: Object.fromEntries(Object.entries(alone.runs).map(([k, r]) => [k, pick(r)])) } }, notes: ['BENCH_COMPARE_ONLY=ours: our runtime alone'] };
    }

    // ---- upstream
    const objects = synthesizeDefault();
    const rendered = renderedManager(objects);
    const applied = await kubectlApply(objects, join(dir, 'install.yaml'), { serverSide: true, fieldManager: 'kruise-ha' });
    if (!applied.ok) throw new Error(`installing the synthesized default output failed:\n${applied.output}`);
    await until('the SidecarSet CRD to be established', async () => {
      const crd = await fetchCrd(kc, 'sidecarsets.apps.kruise.io');
      return crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    }, 60_000, 200);
    const upstreamStarted = Date.now();
    upstream = await UpstreamManager.start(rendered, `${rendered.deployment.metadata!.name}-compare-0`, dir);
    await addEndpoint(kc, rendered.namespace, upstream.name, upstream.webhookPort);
    await upstream.waitReady(120_000);
    const upstreamReadyS = round((Date.now() - upstreamStarted) / 1000);
    log(`upstream ${info.kruiseVersion} ready after ${upstreamReadyS}s`);
    await until('the SidecarSet to be created through upstream\'s webhooks', async () => {
      await kc.makeApiClient(CustomObjectsApi).createClusterCustomObject({ group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets', body: benchSidecarSet() });
      return true;
    }, 60_000, 500);
    results.upstream = await measureSubject({
      name: 'upstream', pid: upstream.child.pid!,
      target: { port: upstream.webhookPort, ca: upstream.caPem(), servername: `${Names.webhookService}.${rendered.namespace}.svc` },
    }, inject);
    await upstream.stop();
    await removeEndpoint(kc, rendered.namespace, upstream.name);
    await uninstallWebhooks(kc);

    // ---- ours
    await installRuntime(kc, OURS_NS);
    const oursStarted = Date.now();
    ours = await startOurs(info.kubeconfigPath, dir);
    const oursReadyS = round((Date.now() - oursStarted) / 1000);
    await addEndpoint(kc, OURS_NS, 'compare-ours-0', ours.webhookPort);
    const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: OURS_NS });
    results.ours = await measureSubject({
      name: 'ours', pid: ours.child.pid!,
      target: { port: ours.webhookPort, ca: Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8') },
    }, inject);

    // ---- side by side
    const { latency, memory, goals, svg } = summarize(results as Record<'ours' | 'upstream', SubjectResults>, info.kruiseVersion);
    writeChart(svg);
    printTable(latency, memory, goals);
    return {
      figures: { goals, latency, memory, readySeconds: { ours: oursReadyS, upstream: upstreamReadyS }, upstreamVersion: info.kruiseVersion, loadAverage1mAtEnd: load1m(), raw: results },
      notes: [
        `one control plane (envtest kube-apiserver ${info.kubernetesVersion}, etcd, loopback); upstream kruise-manager ${info.kruiseVersion} measured first, then ours, each alone (they share webhook configuration names)`,
        `direct AdmissionReviews (${Buffer.byteLength(inject[0])} bytes, a pod the SidecarSet selects: the answer injects a sidecar) over keep-alive TLS; open loop at ${RATES.join('/')} per second for ${RATE_SECONDS}s each, latency from the scheduled send time; saturation: ${SATURATION_CONNECTIONS} connections closed loop`,
        'CPU seconds (utime + stime) and RSS from /proc of each manager process; RSS idle after start + 5 s, peak sampled every 250 ms under load, and 10 s after the last run',
        'ours runs as the image runs it (esbuild bundle, plain node, every role); upstream as the synthesized Deployment runs it (support/upstream-manager.ts adapts only ports, dirs and credentials)',
        `loadAverage1m is recorded with every figure: the load generator, both managers, kube-apiserver and etcd share ${availableParallelism()} cores with whatever else runs on the machine`,
        'chart: bench/results/compare.svg',
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
  answeredPerSecond: r.answeredPerSecond ?? NaN, p50Ms: r.p50Ms, p90Ms: r.p90Ms, p99Ms: r.p99Ms, maxMs: r.maxMs, errors: r.errors,
  cpuSecondsPer1000: r.cpuSecondsPer1000, peakRssMB: round(r.peakRssBytes / 1e6, 1), loadAverage1m: r.loadAverage1m,
});

function printTable(latency: Record<string, unknown>, memory: Record<string, unknown>, goals: Record<string, string>): void {
  const lines = ['', 'load            | ours p50/p90/p99/max ms (req/s)        | upstream p50/p90/p99/max ms (req/s)    | p99 ours/upstream | CPU s/1000 ours / upstream | load1m'];
  for (const [k, v] of Object.entries(latency) as Array<[string, { ours: ReturnType<typeof pick>; upstream: ReturnType<typeof pick>; ratio: { p99: number } }]>) {
    const f = (r: ReturnType<typeof pick>) => `${r.p50Ms}/${r.p90Ms}/${r.p99Ms}/${r.maxMs} (${r.answeredPerSecond})`.padEnd(38);
    lines.push(`${k.padEnd(15)} | ${f(v.ours)} | ${f(v.upstream)} | ${String(v.ratio.p99).padEnd(17)} | ${v.ours.cpuSecondsPer1000} / ${v.upstream.cpuSecondsPer1000} | ${v.ours.loadAverage1m} / ${v.upstream.loadAverage1m}`);
  }
  lines.push(`RSS MB: ${JSON.stringify(memory)}`, 'goals:', ...Object.entries(goals).map(([g, s]) => `  [${s}] ${g}`), '');
  process.stdout.write(lines.join('\n'));
}


async function fetchCrd(kc: KubeConfig, name: string): Promise<{ status?: { conditions?: Array<{ type: string; status: string }> } } | undefined> {
  const { ApiextensionsV1Api } = await import('@kubernetes/client-node');
  return kc.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name }).catch(() => undefined) as Promise<{ status?: { conditions?: Array<{ type: string; status: string }> } } | undefined>;
}
