/**
 * Webhook: what one manager replica's admission server sustains, and what it costs a pod create.
 *
 * Its own envtest control plane (etcd + kube-apiserver on loopback), the runtime installed from
 * the constructs, one real manager process (as a pod runs it) and a SidecarSet.
 *
 * 1. Directly against the manager's webhook over loopback TLS (keep-alive connections, as the
 *    API server uses): POST /mutate-pod with a realistic pod AdmissionReview (~4 KiB: labels,
 *    annotations, owner reference, two containers with env, probes, resources, volumes) that the
 *    SidecarSet selects (answer: a JSONPatch injecting the sidecar) and one it does not (answer:
 *    allowed, no patch).
 *    - Fixed request rates (open loop: requests are sent on schedule whether or not earlier ones
 *      finished, and latency counts from the scheduled time, so a stalled server cannot hide
 *      behind a slowed-down client).
 *    - Maximum throughput: N connections, each sending its next request when the last answered.
 * 2. Through the API server: pod creates per second with C concurrent clients, before the
 *    webhook configuration exists and with the manager injecting.
 *
 * The manager's RSS (its own `process_resident_memory_bytes`) is read before and after. The load
 * generator runs in this process on the same machine, so on a small machine it competes with
 * the manager, kube-apiserver and etcd for the same cores: the figures are a floor.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { createWorkload, podCreateReview, type Workload } from './inputs.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { KRUISE_APPS_GROUP, Names, Paths, SecretKeys } from '../lib/contract.js';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { metricValue, scrape, until } from '../test/integration/support/ha.js';
import { ManagerProcess } from '../test/integration/support/manager-process.js';
import { addEndpoint, installRuntime } from '../test/integration/support/runtime-cluster.js';
import type { BenchmarkResult } from './run.js';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, writeRuntimeBundle } from './runtime-as-image.js';

const INSTALL_NS = 'kruise-bench-webhook';
export const PODS_NS = 'bench-webhook';

/** The SidecarSet every webhook benchmark injects (ours and, in compare, upstream's). */
export function benchSidecarSet() {
  return {
    apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
    kind: 'SidecarSet',
    metadata: { name: 'bench-mesh' },
    spec: {
      namespace: PODS_NS,
      selector: { matchLabels: { tier: 'backend', mesh: 'on' } },
      containers: [
        {
          name: 'mesh-proxy',
          image: 'registry.example.com/proxy:1.30',
          podInjectPolicy: 'BeforeAppContainer',
          args: ['proxy', '--config=/etc/proxy'],
          resources: { requests: { cpu: '100m', memory: '64Mi' } },
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'app', envName: 'TZ' }],
          volumeMounts: [{ name: 'proxy-config', mountPath: '/etc/proxy' }],
        },
      ],
      volumes: [{ name: 'proxy-config', emptyDir: {} }],
    },
  };
}
const RATES = [50, 200, 500];
const RATE_SECONDS = 15;
const MAX_CONNECTIONS = 16;
const MAX_SECONDS = 10;
const API_CLIENTS = 16;
const API_SECONDS = 10;
const WARMUP_SECONDS = 3;

const log = (msg: string) => process.stderr.write(`bench webhook: ${msg}\n`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export interface Check {
  inject: boolean;
  /** Also require the (base64 JSONPatch) answer to contain this text, e.g. WorkloadSpread's annotation. */
  patchContains?: string;
}

/** A webhook server to load: its port on 127.0.0.1, the CA its certificate chains to, and the name it is valid for. */
export interface Target {
  port: number;
  ca: string;
  servername?: string;
}

/** One POST on `agent`; resolves with whether the answer was the expected one. */
export function post(target: Target, agent: Agent, body: string, check: Check): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: target.servername ?? 'localhost',
        port: target.port,
        path: Paths.mutatePod,
        method: 'POST',
        ca: target.ca,
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const answer = (
              JSON.parse(Buffer.concat(chunks).toString('utf8')) as { response?: { allowed?: boolean; patch?: string } }
            ).response;
            const patch = answer?.patch ? Buffer.from(answer.patch, 'base64').toString('utf8') : '';
            resolve(
              res.statusCode === 200 &&
                answer?.allowed === true &&
                Boolean(answer.patch) === check.inject &&
                (check.patchContains === undefined || patch.includes(check.patchContains)),
            );
          } catch {
            resolve(false);
          }
        });
        res.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
    req.end(body);
  });
}

export interface LoadFigures {
  requests: number;
  errors: number;
  achievedPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Longest event-loop stall of the manager and of this load generator during the run: a latency outlier is theirs. */
  managerLoopDelayMaxMs?: number;
  clientLoopDelayMaxMs?: number;
}

function figuresOf(latencies: number[], errors: number, seconds: number): LoadFigures {
  const sorted = [...latencies].sort((a, b) => a - b);
  return {
    requests: latencies.length + errors,
    errors,
    achievedPerSecond: round(latencies.length / seconds, 1),
    p50Ms: round(percentile(sorted, 50)),
    p90Ms: round(percentile(sorted, 90)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? NaN),
  };
}

/** Connections the fixed-rate client keeps to the server under test. */
const POOL = 64;

/** Open loop: `rate` requests per second for `seconds`, each timed from its scheduled send time. */
export async function fixedRate(
  target: Target,
  bodies: string[],
  check: Check,
  rate: number,
  seconds: number,
): Promise<LoadFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: POOL });
  try {
    // The pool open before the clock starts, as the API server's kept-alive connections to a webhook are: with a cold
    // pool every burst opened new TLS connections, and their handshakes, not admission, made the tail (at 1,000/s,
    // same machine, 2 runs each: p99 10.2 and 12.5 ms cold, 3.4 and 8.6 ms with the pool open).
    await Promise.all(Array.from({ length: POOL }, (_, i) => post(target, agent, bodies[i % bodies.length], check)));
    return await openLoop((i) => post(target, agent, bodies[i % bodies.length], check), rate, seconds);
  } finally {
    agent.destroy();
  }
}

/**
 * Open loop over any request: `send(i)` is started on schedule whether or not earlier ones
 * finished (a stalled server cannot slow the client down and hide), and each latency counts from
 * its scheduled time. `send` resolves with whether the answer was the expected one.
 */
export async function openLoop(
  send: (i: number) => Promise<boolean>,
  rate: number,
  seconds: number,
): Promise<LoadFigures> {
  const latencies: number[] = [];
  let errors = 0;
  // A count, not an array of the requests' promises: 10,000 of those kept alive made every scavenge of this
  // process copy them, and its own GC pauses (up to 25 ms seen) counted as the server's latency.
  let inFlight = 0;
  let drained: () => void = () => undefined;
  const done = () => {
    if (--inFlight === 0) drained();
  };
  const total = rate * seconds;
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const now = performance.now();
    const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      const scheduled = start + (sent / rate) * 1000;
      inFlight++;
      send(sent).then(
        (ok) => {
          if (ok) latencies.push(performance.now() - scheduled);
          else errors++;
          done();
        },
        () => {
          errors++;
          done();
        },
      );
    }
    await sleep(1);
  }
  if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
  return figuresOf(latencies, errors, seconds);
}

/** Closed loop: `connections` clients, each sending its next request as soon as the last answered. */
export async function maxThroughput(
  target: Target,
  bodies: string[],
  check: Check,
  connections: number,
  seconds: number,
): Promise<LoadFigures> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  let i = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        if (await post(target, agent, bodies[i++ % bodies.length], check)) latencies.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  agent.destroy();
  return figuresOf(latencies, errors, (performance.now() - start) / 1000);
}

// A full collection of the load generator's heap before each run, so its own major GC does not
// land inside a measurement (tsx gives no way to pass --expose-gc; this is the documented route).
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * Runs `load` while recording both sides' longest event-loop stall (the manager's from its prom-client gauge, reset per
 * scrape).
 */
async function observed(manager: ManagerProcess, load: () => Promise<LoadFigures>): Promise<LoadFigures> {
  collectGarbage();
  await scrape(manager); // resets the manager's lag histogram
  const client = monitorEventLoopDelay({ resolution: 10 });
  client.enable();
  const figures = await load();
  client.disable();
  const lagMax = metricValue(await scrape(manager), 'nodejs_eventloop_lag_max_seconds');
  return {
    ...figures,
    managerLoopDelayMaxMs: round((lagMax ?? NaN) * 1000, 1),
    clientLoopDelayMaxMs: round(client.max / 1e6, 1),
  };
}

/** C concurrent clients creating pods through the API server for `seconds`. */
async function apiCreates(
  core: CoreV1Api,
  makePod: (i: number) => V1Pod,
  expectSidecar: boolean,
  clients: number,
  seconds: number,
) {
  const latencies: number[] = [];
  let errors = 0;
  let wrong = 0;
  let i = 0;
  const start = performance.now();
  const end = start + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          const pod = await core.createNamespacedPod({ namespace: PODS_NS, body: makePod(i++) });
          latencies.push(performance.now() - t0);
          if (pod.spec!.containers.some((c) => c.name === 'mesh-proxy') !== expectSidecar) wrong++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const f = figuresOf(latencies, errors, (performance.now() - start) / 1000);
  return {
    podsPerSecond: f.achievedPerSecond,
    created: latencies.length,
    errors,
    wrongInjection: wrong,
    p50Ms: f.p50Ms,
    p99Ms: f.p99Ms,
  };
}

async function memory(m: ManagerProcess): Promise<{ rssBytes: number; heapUsedBytes: number }> {
  const text = await scrape(m);
  return {
    rssBytes: metricValue(text, 'process_resident_memory_bytes') ?? NaN,
    heapUsedBytes: metricValue(text, 'nodejs_heap_size_used_bytes') ?? NaN,
  };
}

/**
 * Idle RSS of a webhook-only replica, run as the image runs it (the esbuild bundle, plain node)
 * and as the benchmarks run it (node --import tsx, which transpiles in-process): the difference
 * is the loader's cost, not the runtime's.
 */
async function idleRss(kubeconfigPath: string): Promise<{ tsxBytes: number; bundledBytes: number }> {
  const settle = () => sleep(5_000); // let start-up garbage be collected
  const viaTsx = await ManagerProcess.start({
    name: 'rss-tsx',
    kubeconfigPath,
    namespace: INSTALL_NS,
    args: ['--role=webhook'],
  });
  let tsxBytes: number;
  try {
    await viaTsx.waitReady();
    await settle();
    tsxBytes = (await memory(viaTsx)).rssBytes;
  } finally {
    await viaTsx.stop();
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-bundle-'));
  const bundled = await ManagerProcess.start({
    name: 'rss-bundled',
    kubeconfigPath,
    namespace: INSTALL_NS,
    args: ['--role=webhook'],
    bundle: writeRuntimeBundle(dir),
    nodeArgs: IMAGE_NODE_FLAGS,
    env: { ...IMAGE_ENV },
  });
  try {
    await bundled.waitReady();
    await settle();
    return { tsxBytes, bundledBytes: (await memory(bundled)).rssBytes };
  } finally {
    await bundled.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchmarkResult> {
  const controlPlane = new ControlPlane({ log });
  let manager: ManagerProcess | undefined;
  try {
    const info = await controlPlane.start();
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfigPath);
    const core = kc.makeApiClient(CoreV1Api);
    await core.createNamespace({ body: { metadata: { name: PODS_NS } } });
    const figures: Record<string, unknown> = {};
    // Every pod's owners exist (Deployment -> ReplicaSet), created before anything is timed.
    const plain = await createWorkload(kc, PODS_NS, 'plain');
    const shop = await createWorkload(kc, PODS_NS, 'shop', { mesh: true });
    const shopPlain = await createWorkload(kc, PODS_NS, 'shop-plain');
    const mesh = await createWorkload(kc, PODS_NS, 'mesh', { mesh: true });
    const reviews = (w: Workload) =>
      Array.from({ length: 64 }, (_, i) => podCreateReview(w.pod(i), PODS_NS, w.creator));

    // Through the API server, before any webhook configuration exists.
    log(`API server alone: ${API_CLIENTS} clients creating pods for ${API_SECONDS}s`);
    figures.apiServerPodCreatesNoWebhook = await apiCreates(core, (i) => plain.pod(i), false, API_CLIENTS, API_SECONDS);

    await installRuntime(kc, INSTALL_NS);
    manager = await ManagerProcess.start({
      name: 'bench-webhook-0',
      kubeconfigPath: info.kubeconfigPath,
      namespace: INSTALL_NS,
    });
    await manager.waitReady();
    await addEndpoint(kc, INSTALL_NS, manager.name, manager.ports.webhook);
    const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: INSTALL_NS });
    const ca = Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8');
    const target: Target = { port: manager.ports.webhook, ca };
    await until(
      'the SidecarSet to be created through the webhooks',
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
      200,
    );

    const injectBodies = reviews(shop);
    const plainBodies = reviews(shopPlain);
    figures.reviewBytes = Buffer.byteLength(injectBodies[0]);
    await until(
      'the manager to inject',
      async () => post(target, new Agent(), injectBodies[0], { inject: true }),
      60_000,
      200,
    );

    // Warm-up (JIT, TLS session state, caches), both kinds of review, not measured.
    await maxThroughput(target, injectBodies, { inject: true }, 8, WARMUP_SECONDS);
    await maxThroughput(target, plainBodies, { inject: false }, 8, WARMUP_SECONDS);
    figures.managerMemoryBefore = await memory(manager);

    const direct: Record<string, unknown> = {};
    for (const [name, bodies, check] of [
      ['inject', injectBodies, { inject: true }],
      ['noMatch', plainBodies, { inject: false }],
    ] as const) {
      for (const rate of RATES) {
        log(`direct ${name}: ${rate}/s for ${RATE_SECONDS}s`);
        direct[`${name}At${rate}PerSecond`] = await observed(manager, () =>
          fixedRate(target, [...bodies], check, rate, RATE_SECONDS),
        );
      }
      log(`direct ${name}: max throughput, ${MAX_CONNECTIONS} connections for ${MAX_SECONDS}s`);
      direct[`${name}Max${MAX_CONNECTIONS}Connections`] = await observed(manager, () =>
        maxThroughput(target, [...bodies], check, MAX_CONNECTIONS, MAX_SECONDS),
      );
    }
    figures.directWebhook = direct;

    // Through the API server with the webhook: every create calls the manager (and injects).
    await until(
      'the API server to call the manager',
      async () => {
        const probe = await core.createNamespacedPod({
          namespace: PODS_NS,
          body: mesh.pod(0),
          dryRun: 'All',
        });
        return probe.spec!.containers.some((c) => c.name === 'mesh-proxy');
      },
      60_000,
      200,
    );
    log(`API server + webhook (injecting): ${API_CLIENTS} clients creating pods for ${API_SECONDS}s`);
    const injecting = await apiCreates(core, (i) => mesh.pod(i), true, API_CLIENTS, API_SECONDS);
    figures.apiServerPodCreatesWebhookInjecting = injecting;
    figures.managerMemoryAfter = await memory(manager);
    log('idle RSS of a webhook-only replica: via tsx and as bundled for the image');
    figures.webhookOnlyReplicaIdleRss = await idleRss(info.kubeconfigPath);
    figures.webhookLatencyHistogramOnManager = {
      count: metricValue(await scrape(manager), 'controller_runtime_webhook_latency_seconds_count', {
        webhook: Paths.mutatePod,
      }),
      sumSeconds: metricValue(await scrape(manager), 'controller_runtime_webhook_latency_seconds_sum', {
        webhook: Paths.mutatePod,
      }),
    };
    return {
      figures,
      notes: [
        `one manager replica (node --import tsx lib/runtime/main.ts), envtest kube-apiserver ${info.kubernetesVersion} with etcd --unsafe-no-fsync, all on loopback`,
        'managerLoopDelayMaxMs / clientLoopDelayMaxMs: the longest event-loop stall in the manager and in the load generator during that run; a p99/max far above the p90 with a similar stall on either side is that stall, not the webhook',
        `direct: open-loop fixed rates ${RATES.join('/')} per second for ${RATE_SECONDS}s each (latency from the scheduled send time), then ${MAX_CONNECTIONS} keep-alive connections closed-loop for ${MAX_SECONDS}s`,
        `"inject" reviews match a SidecarSet (answer carries a JSONPatch); "noMatch" reviews are allowed without a patch; review body ${figures.reviewBytes} bytes`,
        `API server: ${API_CLIENTS} concurrent clients creating realistic pods for ${API_SECONDS}s, before installing the webhook configuration and then with the manager injecting; the manager also runs the SidecarSet controller (leader) over those pods`,
        'the measured manager runs through tsx (in-process TypeScript transpilation); webhookOnlyReplicaIdleRss compares an idle webhook-only replica run that way with the esbuild bundle the image runs',
        `machine: ${availableParallelism()} cores shared by the load generator, the manager, kube-apiserver and etcd`,
      ],
    };
  } finally {
    await manager?.stop().catch(() => undefined);
    await controlPlane.stop();
  }
}
