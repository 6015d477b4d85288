/**
 * SidecarSet: what the pod webhook costs on pod creation, and how fast a sidecar image rolls
 * through 1,000 pods.
 *
 * Its own envtest control plane (etcd + kube-apiserver on loopback) and one real manager
 * process, installed from the constructs (runtime flavor), its webhook Service routed to the
 * manager on 127.0.0.1. No kubelet: the benchmark is the kubelet, at scale (it watches the pods
 * and reports a pod Ready on the new image as soon as the manager has patched it).
 *
 * - Pod create latency through the API server, sequential requests, in three phases of the
 *   same run: no webhook configuration installed; webhook installed but no SidecarSet matches
 *   (the API server still calls the manager); webhook injecting a SidecarSet.
 * - Rollout: 1,000 injected, Ready pods; the SidecarSet's image changes; the time until its
 *   status reports all 1,000 updated and ready, once with maxUnavailable 10% and once with 1.
 *   The same rollout then runs under upstream's kruise-manager (v1.8.3, as the synthesized
 *   Deployment runs it) on a fresh control plane, for the ratio ours / upstream.
 *
 * BENCH_SIDECARSET_ROLLOUT_ONLY=1 skips the pod-create latency phases; BENCH_SIDECARSET_UPSTREAM=0
 * skips upstream's rollout.
 */
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { mkdtempSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { ManagerProcess } from '../test/integration/support/manager-process.js';
import { addEndpoint, installRuntime } from '../test/integration/support/runtime-cluster.js';
import { sidecarSetClient, waitFor } from '../test/integration/support/sidecarset.js';
import type { BenchmarkResult } from './run.js';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, writeRuntimeBundle } from './runtime-as-image.js';
import {
  createFleet,
  log,
  metricSum,
  pod,
  ROLLOUT_NS,
  ROLLOUT_PODS,
  rollout,
  startKubelet,
  type RolloutFigures,
} from './sidecarset-rollout.js';

const INSTALL_NS = 'kruise-bench';
const LATENCY_NS = 'bench-latency';
const LATENCY_SAMPLES = 400;
const WARMUP = 50;
/** Quiet time after the rollouts before RSS is read again. */
const AFTER_MS = 15_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (ms: number) => Math.round(ms * 100) / 100;

interface Series {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  check: (p: V1Pod) => void;
}
interface Latency {
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
}

/**
 * Sequential pod creations, the series taking turns (so drift in the API server's state hits
 * them alike); the latency of each create in ms, after a warm-up round.
 */
async function createLatency(core: CoreV1Api, series: Series[]): Promise<Record<string, Latency>> {
  const samples = new Map(series.map((x) => [x.name, [] as number[]]));
  for (let i = 0; i < WARMUP + LATENCY_SAMPLES; i++) {
    for (const x of series) {
      const started = performance.now();
      const created = await core.createNamespacedPod({ namespace: x.namespace, body: pod(`${x.name}-${i}`, x.labels) });
      const ms = performance.now() - started;
      x.check(created);
      if (i >= WARMUP) samples.get(x.name)!.push(ms);
    }
  }
  const result: Record<string, Latency> = {};
  for (const [name, list] of samples) {
    list.sort((a, b) => a - b);
    result[name] = {
      p50Ms: round(percentile(list, 50)),
      p99Ms: round(percentile(list, 99)),
      meanMs: round(list.reduce((a, b) => a + b, 0) / list.length),
    };
    log(`pod create, ${name}: ${JSON.stringify(result[name])}`);
  }
  return result;
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

type Latencies = Record<'noWebhook' | 'notCalled' | 'noMatch' | 'inject', Latency>;

/** Pod-create latency: no webhook configuration, then with the runtime installed (not called, no match, injecting). */
async function latencyPhases(kc: KubeConfig, manager: () => Promise<ManagerProcess>): Promise<Latencies> {
  const core = kc.makeApiClient(CoreV1Api);
  const unchanged = (p: V1Pod) => {
    if (p.spec!.containers.length !== 1) throw new Error(`pod ${p.metadata!.name} was injected`);
  };
  // 1. No webhook configuration at all: the API server and etcd alone.
  const { 'no-webhook-configuration': noWebhook } = await createLatency(core, [
    { name: 'no-webhook-configuration', namespace: LATENCY_NS, labels: { app: 'plain' }, check: unchanged },
  ]);
  // 2. The runtime installed and serving: every pod create now calls the manager.
  await manager();
  await sidecarSetClient(kc).create({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'bench-latency' },
    spec: {
      selector: { matchLabels: { app: 'meshed' } },
      namespace: LATENCY_NS,
      containers: [
        {
          name: 'proxy',
          image: 'proxy:1',
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }],
        },
      ],
      volumes: [{ name: 'proxy-certs', emptyDir: {} }],
    },
  });
  await waitFor(
    'the webhook to inject',
    async () => {
      const probe = await core.createNamespacedPod({
        namespace: LATENCY_NS,
        body: pod('probe', { app: 'meshed' }),
        dryRun: 'All',
      });
      return probe.spec!.containers.length === 2 ? true : undefined;
    },
    60_000,
  );
  // With the runtime installed: pods in its own namespace (excluded by the configuration's
  // namespaceSelector, so the webhook is not called), pods the webhook sees but no SidecarSet
  // selects, and pods it injects; taking turns.
  const latency = await createLatency(core, [
    { name: 'webhook-not-called', namespace: INSTALL_NS, labels: { app: 'meshed' }, check: unchanged },
    { name: 'webhook-no-match', namespace: LATENCY_NS, labels: { app: 'plain' }, check: unchanged },
    {
      name: 'webhook-inject',
      namespace: LATENCY_NS,
      labels: { app: 'meshed' },
      check: (p) => {
        if (p.spec!.containers[0].name !== 'proxy') throw new Error(`pod ${p.metadata!.name} was not injected`);
      },
    },
  ]);
  return {
    noWebhook,
    notCalled: latency['webhook-not-called'],
    noMatch: latency['webhook-no-match'],
    inject: latency['webhook-inject'],
  };
}

const ratio = (ours: number, upstream: number | undefined) =>
  upstream ? Math.round((ours / upstream) * 100) / 100 : undefined;

export async function run(): Promise<BenchmarkResult> {
  const rolloutOnly = process.env.BENCH_SIDECARSET_ROLLOUT_ONLY === '1';
  const controlPlane = new ControlPlane({ log });
  let manager: ManagerProcess | undefined;
  let kubelet: { stop(): void; patches(): number } | undefined;
  let ours: {
    latency?: Latencies;
    tenPercent: RolloutFigures;
    one: RolloutFigures;
    kubeletPatches: number;
    rss: number[];
    heap: number;
    load: number[];
    kubernetesVersion: string;
  };
  try {
    const info = await controlPlane.start();
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    for (const name of [LATENCY_NS, ROLLOUT_NS]) await core.createNamespace({ body: { metadata: { name } } });
    const start = async () => {
      await installRuntime(kc, INSTALL_NS);
      manager = await ManagerProcess.start({
        name: 'bench-m0',
        kubeconfigPath: info.kubeconfigPath,
        namespace: INSTALL_NS,
        // As the image runs it: memory figures of the sources through tsx say little about a replica.
        bundle: writeRuntimeBundle(mkdtempSync(join(tmpdir(), 'bench-sidecarset-'))),
        nodeArgs: IMAGE_NODE_FLAGS,
        env: { ...IMAGE_ENV },
      });
      await manager.waitReady();
      await addEndpoint(kc, INSTALL_NS, manager.name, manager.ports.webhook);
      return manager;
    };
    const latency = rolloutOnly ? undefined : await latencyPhases(kc, start);
    if (!manager) await start();

    // 3. Rollout through 1,000 pods.
    await createFleet(kc, 'ours');
    kubelet = startKubelet(kc, 'fleet-proxy');
    await sleep(500); // the watch is established
    const metrics = async () => (await manager!.get('/metrics', manager!.ports.metrics)).body;
    const rssBefore = metricSum(await metrics(), 'process_resident_memory_bytes');
    const load = [loadavg()[0]];
    const tenPercent = await rollout(kc, metrics, 'ours', 'proxy:2', '10%');
    load.push(loadavg()[0]);
    const one = await rollout(kc, metrics, 'ours', 'proxy:3', 1);
    load.push(loadavg()[0]);
    // What failed, if anything did (reconcile errors are retried with backoff and cost time).
    for (const line of manager!
      .logs()
      .split('\n')
      .filter((l) => /"level":"error"|reconcile failed/i.test(l))
      .slice(0, 5))
      log(`ours: manager: ${line.slice(0, 400)}`);
    const page = await metrics();
    // Whether what the rollouts took comes back once the manager is quiet (its memory reducer samples every 5 s).
    await sleep(AFTER_MS);
    const settled = metricSum(await metrics(), 'process_resident_memory_bytes');
    ours = {
      latency,
      tenPercent,
      one,
      kubeletPatches: kubelet.patches(),
      rss: [rssBefore, metricSum(page, 'process_resident_memory_bytes'), settled],
      heap: metricSum(page, 'nodejs_heap_size_used_bytes'),
      load,
      kubernetesVersion: info.kubernetesVersion,
    };
    log(
      `ours: manager memory: rss ${mib(ours.rss[0])} MiB before the rollouts, ${mib(ours.rss[1])} MiB after, ${mib(ours.rss[2])} MiB ${AFTER_MS / 1000} s later (heap used ${mib(ours.heap)} MiB)`,
    );
  } finally {
    kubelet?.stop();
    await manager?.stop().catch(() => undefined);
    await controlPlane.stop();
  }
  // 4. The same rollout under upstream's kruise-manager, on its own control plane.
  // Loaded only when run: the upstream harness needs the built package (dist/) to synthesize the install.
  const upstream =
    process.env.BENCH_SIDECARSET_UPSTREAM === '0'
      ? undefined
      : await (await import('./sidecarset-upstream.js')).upstreamRollouts();
  const l = ours.latency;
  return {
    figures: {
      ...(l
        ? {
            podCreateNoWebhookConfigurationP50Ms: l.noWebhook.p50Ms,
            podCreateNoWebhookConfigurationP99Ms: l.noWebhook.p99Ms,
            podCreateWebhookNotCalledP50Ms: l.notCalled.p50Ms,
            podCreateWebhookNotCalledP99Ms: l.notCalled.p99Ms,
            podCreateWebhookNoMatchP50Ms: l.noMatch.p50Ms,
            podCreateWebhookNoMatchP99Ms: l.noMatch.p99Ms,
            podCreateWebhookInjectP50Ms: l.inject.p50Ms,
            podCreateWebhookInjectP99Ms: l.inject.p99Ms,
          }
        : {}),
      rollout1000PodsMaxUnavailable10PercentSeconds: ours.tenPercent.seconds,
      rollout1000PodsMaxUnavailable1Seconds: ours.one.seconds,
      upstreamRollout1000PodsMaxUnavailable10PercentSeconds: upstream?.tenPercent.seconds,
      upstreamRollout1000PodsMaxUnavailable1Seconds: upstream?.one.seconds,
      rolloutRatioOursToUpstream10Percent: ratio(ours.tenPercent.seconds, upstream?.tenPercent.seconds),
      rolloutRatioOursToUpstream1: upstream?.one.finished ? ratio(ours.one.seconds, upstream.one.seconds) : undefined,
      upstreamRollout1PodsUpdatedWithinLimit: upstream?.one.updatedReady,
      // Pods per second, so that an upstream run cut at its time limit still compares.
      rolloutGoalAtLeastAsFastAsUpstream: upstream
        ? [
            [ours.tenPercent, upstream.tenPercent],
            [ours.one, upstream.one],
          ].every(([o, u]) => o.finished && o.updatedReady / o.seconds >= u.updatedReady / u.seconds)
        : undefined,
      rolloutPeakInFlightPods10Percent: ours.tenPercent.peakInFlight,
      rolloutPeakInFlightPods1: ours.one.peakInFlight,
      rolloutReconciles10Percent: ours.tenPercent.reconciles,
      rolloutReconcileSeconds10Percent: ours.tenPercent.reconcileSeconds,
      rolloutReconciles1: ours.one.reconciles,
      rolloutReconcileSeconds1: ours.one.reconcileSeconds,
      rolloutReconcileErrors: ours.tenPercent.reconcileErrors + ours.one.reconcileErrors,
      upstreamRollouts: upstream,
      kubeletStatusPatches: ours.kubeletPatches,
      managerRssBytesBeforeRollouts: ours.rss[0],
      managerRssBytesAfter: ours.rss[1],
      managerRssBytesSettled: ours.rss[2],
      managerHeapUsedBytesAfter: ours.heap,
      loadAverage1mBeforeBetweenAfterRollouts: ours.load,
    },
    notes: [
      `latency: ${LATENCY_SAMPLES} sequential creates per series after ${WARMUP} warm-up rounds, measured at the client (client-node over loopback TLS); ` +
        'no-webhook-configuration runs first, alone; the three others take turns once the runtime is installed',
      "webhook-not-called: pods in the manager's namespace, which the pod webhook's namespaceSelector excludes",
      'webhook phases: the API server calls the manager over TLS on 127.0.0.1 (EndpointSlice routing, --enable-aggregator-routing)',
      `rollout: ${ROLLOUT_PODS} pods; the benchmark kubelet reports a patched pod Ready on the new image at once (no container restart time), with a new imageID`,
      'upstream: kruise-manager v1.8.3 as the synthesized Deployment runs it, the same fleet and kubelet on a fresh control plane, after ours',
      'peak in flight (patched, not yet running the new image): sampled from the SidecarSet status every 50ms, so a lower bound; both managers write the status before patching a batch',
      `machine: ${availableParallelism()} cores shared with whatever else runs (load average recorded); envtest kube-apiserver ${ours.kubernetesVersion}, etcd with --unsafe-no-fsync`,
    ],
  };
}
