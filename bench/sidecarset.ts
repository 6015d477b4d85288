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
 */
import { CoreV1Api, KubeConfig, Watch, type V1Pod } from '@kubernetes/client-node';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { ManagerProcess } from '../test/integration/support/manager-process.js';
import { addEndpoint, installRuntime } from '../test/integration/support/runtime-cluster.js';
import { kubeletStatus, patchPodStatus, reportedImage, sidecarSetClient, waitFor } from '../test/integration/support/sidecarset.js';
import type { BenchmarkResult } from './run.js';

const INSTALL_NS = 'kruise-bench';
const LATENCY_NS = 'bench-latency';
const ROLLOUT_NS = 'bench-rollout';
const LATENCY_SAMPLES = 400;
const WARMUP = 50;
const ROLLOUT_PODS = 1_000;
const CONCURRENCY = 32;

const log = (msg: string) => process.stderr.write(`bench sidecarset: ${msg}\n`);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const round = (ms: number) => Math.round(ms * 100) / 100;

function pod(name: string, labels: Record<string, string>): V1Pod {
  return { metadata: { name, labels }, spec: { containers: [{ name: 'app', image: 'shop:1' }] } };
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await task(items[next++]);
  }));
}

interface Series { name: string; namespace: string; labels: Record<string, string>; check: (p: V1Pod) => void }
interface Latency { p50Ms: number; p99Ms: number; meanMs: number }

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
    result[name] = { p50Ms: round(percentile(list, 50)), p99Ms: round(percentile(list, 99)), meanMs: round(list.reduce((a, b) => a + b, 0) / list.length) };
    log(`pod create, ${name}: ${JSON.stringify(result[name])}`);
  }
  return result;
}

/**
 * The kubelet for the rollout pods: watches them and, whenever a pod's sidecar spec image is
 * not what it reports running, reports it Ready on that image.
 */
function startKubelet(kc: KubeConfig, core: CoreV1Api, container: string): { stop(): void; patches(): number } {
  const inFlight = new Set<string>();
  let patches = 0;
  let stopped = false;
  let abort: AbortController | undefined;
  const handle = (p: V1Pod) => {
    const name = p.metadata!.name!;
    const spec = p.spec?.containers.find((c) => c.name === container)?.image;
    const reported = p.status?.containerStatuses?.find((c) => c.name === container)?.image;
    if (!spec || reported === reportedImage(spec) || inFlight.has(name)) return;
    inFlight.add(name);
    patchPodStatus(core, p, kubeletStatus(p, true))
      .then(() => { patches++; }, (err: Error) => log(`kubelet: patching ${name} failed: ${err.message}`))
      .finally(() => inFlight.delete(name));
  };
  const watch = async (resourceVersion?: string): Promise<void> => {
    if (stopped) return;
    abort = await new Watch(kc).watch(`/api/v1/namespaces/${ROLLOUT_NS}/pods`, { resourceVersion, allowWatchBookmarks: true },
      (type, obj: V1Pod) => {
        resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED') handle(obj);
      },
      () => { if (!stopped) void watch(resourceVersion).catch((err: Error) => log(`kubelet: rewatch failed: ${err.message}`)); });
  };
  void watch();
  return { stop: () => { stopped = true; abort?.abort(); }, patches: () => patches };
}

interface RolloutFigures { seconds: number; peakInFlight: number; reconciles: number; reconcileSeconds: number; reconcileErrors: number }

async function rollout(sidecarSets: ReturnType<typeof sidecarSetClient>, manager: ManagerProcess, name: string, image: string, maxUnavailable: number | string): Promise<RolloutFigures> {
  const before = await reconcileMetrics(manager);
  await sidecarSets.jsonPatch(name, [
    { op: 'replace', path: '/spec/updateStrategy/maxUnavailable', value: maxUnavailable },
    { op: 'replace', path: '/spec/containers/0/image', value: image },
  ]);
  const started = performance.now();
  let peakInFlight = 0;
  await waitFor(`${name} to roll ${image} through ${ROLLOUT_PODS} pods`, async () => {
    const { metadata, status } = await sidecarSets.get(name);
    // Patched but not yet reported running the new image: what maxUnavailable bounds here.
    if (status?.observedGeneration === metadata.generation) peakInFlight = Math.max(peakInFlight, status.updatedPods - status.updatedReadyPods);
    return status?.observedGeneration === metadata.generation && status.updatedPods === ROLLOUT_PODS && status.updatedReadyPods === ROLLOUT_PODS ? true : undefined;
  }, 240_000, 50);
  const seconds = Math.round((performance.now() - started) / 10) / 100;
  const after = await reconcileMetrics(manager);
  const figures = {
    seconds, peakInFlight, reconciles: after.total - before.total, reconcileSeconds: Math.round((after.seconds - before.seconds) * 100) / 100, reconcileErrors: after.errors - before.errors,
  };
  log(`rollout of ${image} (maxUnavailable ${maxUnavailable}): ${JSON.stringify(figures)}`);
  return figures;
}

/** Sum of every series of `name` (any labels) on the manager's /metrics. */
async function metric(manager: ManagerProcess, name: string): Promise<number> {
  const { body } = await manager.get('/metrics', manager.ports.metrics);
  return body.split('\n').filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

async function reconcileMetrics(manager: ManagerProcess): Promise<{ total: number; seconds: number; errors: number }> {
  return {
    total: await metric(manager, 'controller_runtime_reconcile_total'),
    seconds: await metric(manager, 'controller_runtime_reconcile_time_seconds_sum'),
    errors: await metric(manager, 'controller_runtime_reconcile_errors_total'),
  };
}

const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);

export async function run(): Promise<BenchmarkResult> {
  const controlPlane = new ControlPlane({ log });
  let manager: ManagerProcess | undefined;
  let kubelet: { stop(): void; patches(): number } | undefined;
  try {
    const info = await controlPlane.start();
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    const sidecarSets = sidecarSetClient(kc);
    for (const name of [LATENCY_NS, ROLLOUT_NS]) await core.createNamespace({ body: { metadata: { name } } });

    const unchanged = (p: V1Pod) => {
      if (p.spec!.containers.length !== 1) throw new Error(`pod ${p.metadata!.name} was injected`);
    };
    // 1. No webhook configuration at all: the API server and etcd alone.
    const { 'no-webhook-configuration': noWebhook } = await createLatency(core, [{ name: 'no-webhook-configuration', namespace: LATENCY_NS, labels: { app: 'plain' }, check: unchanged }]);

    // 2. The runtime installed and serving: every pod create now calls the manager.
    await installRuntime(kc, INSTALL_NS);
    manager = await ManagerProcess.start({ name: 'bench-m0', kubeconfigPath: info.kubeconfigPath, namespace: INSTALL_NS });
    await manager.waitReady();
    await addEndpoint(kc, INSTALL_NS, manager.name, manager.ports.webhook);
    await sidecarSets.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'bench-latency' },
      spec: {
        selector: { matchLabels: { app: 'meshed' } }, namespace: LATENCY_NS,
        containers: [{ name: 'proxy', image: 'proxy:1', shareVolumePolicy: { type: 'enabled' }, transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }] }],
        volumes: [{ name: 'proxy-certs', emptyDir: {} }],
      },
    });
    await waitFor('the webhook to inject', async () => {
      const probe = await core.createNamespacedPod({ namespace: LATENCY_NS, body: pod('probe', { app: 'meshed' }), dryRun: 'All' });
      return probe.spec!.containers.length === 2 ? true : undefined;
    }, 60_000);
    // With the runtime installed: pods in its own namespace (excluded by the configuration's
    // namespaceSelector, so the webhook is not called), pods the webhook sees but no SidecarSet
    // selects, and pods it injects; taking turns.
    const latency = await createLatency(core, [
      { name: 'webhook-not-called', namespace: INSTALL_NS, labels: { app: 'meshed' }, check: unchanged },
      { name: 'webhook-no-match', namespace: LATENCY_NS, labels: { app: 'plain' }, check: unchanged },
      {
        name: 'webhook-inject', namespace: LATENCY_NS, labels: { app: 'meshed' }, check: (p) => {
          if (p.spec!.containers[0].name !== 'proxy') throw new Error(`pod ${p.metadata!.name} was not injected`);
        },
      },
    ]);
    const [notCalled, webhookNoMatch, webhookInject] = [latency['webhook-not-called'], latency['webhook-no-match'], latency['webhook-inject']];

    // 3. Rollout through 1,000 pods.
    await sidecarSets.create({
      apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: { name: 'bench-rollout' },
      spec: { selector: { matchLabels: { app: 'fleet' } }, namespace: ROLLOUT_NS, containers: [{ name: 'fleet-proxy', image: 'proxy:1' }], updateStrategy: { maxUnavailable: '10%' } },
    });
    await waitFor('the rollout SidecarSet to reach the webhook', async () => {
      const probe = await core.createNamespacedPod({ namespace: ROLLOUT_NS, body: pod('probe', { app: 'fleet' }), dryRun: 'All' });
      return probe.spec!.containers.length === 2 ? true : undefined;
    }, 60_000);
    const setupStarted = performance.now();
    const indexes = Array.from({ length: ROLLOUT_PODS }, (_, i) => i);
    await pool(indexes, CONCURRENCY, async (i) => {
      const created = await core.createNamespacedPod({ namespace: ROLLOUT_NS, body: pod(`fleet-${i}`, { app: 'fleet' }) });
      await patchPodStatus(core, created, kubeletStatus(created, true));
    });
    await waitFor(`status to count ${ROLLOUT_PODS} ready pods`, async () => {
      const { status } = await sidecarSets.get('bench-rollout');
      return status?.matchedPods === ROLLOUT_PODS && status.updatedReadyPods === ROLLOUT_PODS ? true : undefined;
    }, 120_000, 100);
    log(`${ROLLOUT_PODS} pods created, injected and ready in ${Math.round(performance.now() - setupStarted)}ms`);
    kubelet = startKubelet(kc, core, 'fleet-proxy');
    await sleep(500); // the watch is established
    const rssBeforeRollouts = await metric(manager, 'process_resident_memory_bytes');
    const tenPercent = await rollout(sidecarSets, manager, 'bench-rollout', 'proxy:2', '10%');
    const one = await rollout(sidecarSets, manager, 'bench-rollout', 'proxy:3', 1);

    const rssBytes = await metric(manager, 'process_resident_memory_bytes');
    const heapBytes = await metric(manager, 'nodejs_heap_size_used_bytes');
    log(`manager memory: rss ${mib(rssBeforeRollouts)} MiB before the rollouts, ${mib(rssBytes)} MiB after (heap used ${mib(heapBytes)} MiB)`);
    return {
      figures: {
        podCreateNoWebhookConfigurationP50Ms: noWebhook.p50Ms,
        podCreateNoWebhookConfigurationP99Ms: noWebhook.p99Ms,
        podCreateWebhookNotCalledP50Ms: notCalled.p50Ms,
        podCreateWebhookNotCalledP99Ms: notCalled.p99Ms,
        podCreateWebhookNoMatchP50Ms: webhookNoMatch.p50Ms,
        podCreateWebhookNoMatchP99Ms: webhookNoMatch.p99Ms,
        podCreateWebhookInjectP50Ms: webhookInject.p50Ms,
        podCreateWebhookInjectP99Ms: webhookInject.p99Ms,
        rollout1000PodsMaxUnavailable10PercentSeconds: tenPercent.seconds,
        rollout1000PodsMaxUnavailable1Seconds: one.seconds,
        rolloutPeakInFlightPods10Percent: tenPercent.peakInFlight,
        rolloutPeakInFlightPods1: one.peakInFlight,
        rolloutReconciles10Percent: tenPercent.reconciles,
        rolloutReconcileSeconds10Percent: tenPercent.reconcileSeconds,
        rolloutReconciles1: one.reconciles,
        rolloutReconcileSeconds1: one.reconcileSeconds,
        rolloutReconcileErrors: tenPercent.reconcileErrors + one.reconcileErrors,
        kubeletStatusPatches: kubelet.patches(),
        managerRssBytesBeforeRollouts: rssBeforeRollouts,
        managerRssBytesAfter: rssBytes,
        managerHeapUsedBytesAfter: heapBytes,
      },
      notes: [
        `latency: ${LATENCY_SAMPLES} sequential creates per series after ${WARMUP} warm-up rounds, measured at the client (client-node over loopback TLS); `
          + 'no-webhook-configuration runs first, alone; the three others take turns once the runtime is installed',
        'webhook-not-called: pods in the manager\'s namespace, which the pod webhook\'s namespaceSelector excludes',
        'webhook phases: the API server calls the manager over TLS on 127.0.0.1 (EndpointSlice routing, --enable-aggregator-routing)',
        `rollout: ${ROLLOUT_PODS} pods; the benchmark kubelet reports a patched pod Ready on the new image at once (no container restart time)`,
        'peak in flight (patched, not yet running the new image): sampled from the SidecarSet status every 50ms, so a lower bound',
        `machine: ${availableParallelism()} cores; envtest kube-apiserver ${info.kubernetesVersion}, etcd with --unsafe-no-fsync`,
      ],
    };
  } finally {
    kubelet?.stop();
    await manager?.stop().catch(() => undefined);
    await controlPlane.stop();
  }
}
