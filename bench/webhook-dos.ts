/**
 * `npm run bench -- webhook-dos`: the attacks of #25 (test/integration/support/attacks.ts) against
 * the real upstream kruise-manager v1.8.3 webhook and against our runtime as its image runs it, one
 * after the other on ONE envtest API server, the same machine, the same attack code. Each replica
 * is the only endpoint of its webhook Service; pods are created through the API server with a
 * SidecarSet selecting them. Per attack: pod creates ok/failed and their p99 before vs during,
 * reviews on new connections ok/failed, the 1.1 MB pod, RSS at most, the load average. Upstream
 * runs as the synthesized Deployment runs it (test/integration/support/upstream-manager.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { Paths } from '../lib/contract.js';
import { quantityValue } from '../lib/runtime/sidecarset/core-container.js';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { STATE_ENV } from '../test/envtest/state.js';
import { kubectlApply } from '../test/integration/support/apply.js';
import {
  appPod,
  attackProcess,
  createWithSidecar,
  EVERY_ATTACK,
  idleTcp,
  idleTls,
  largePod,
  legitimateTraffic,
  loadAverage,
  manyAnnotationsPod,
  p99,
  podReviewBody,
  postOnNewConnection,
  rssWatcher,
  slowloris,
  together,
  type AttackSpec,
  type Target,
} from '../test/integration/support/attacks.js';
import { createSidecarSet, until, type SidecarSetParams } from '../test/integration/support/ha.js';
import { ManagerProcess } from '../test/integration/support/manager-process.js';
import {
  addEndpoint,
  installRuntime,
  synthRuntime,
  uninstallWebhooks,
} from '../test/integration/support/runtime-cluster.js';
import { renderedManager, synthesizeDefault, UpstreamManager } from '../test/integration/support/upstream-manager.js';
import type { BenchmarkResult } from './run.js';
import { IMAGE_ENV, IMAGE_NODE_FLAGS, writeRuntimeBundle } from './runtime-as-image.js';

const MiB = 1024 * 1024;
const WINDOW_MS = Number(process.env.BENCH_DOS_WINDOW_MS ?? 15_000);
const BASELINE_MS = 5_000;
const PODS = 'dos-bench-pods';
const OURS_NS = 'kruise-dos-ours';
const APP = 'dos-bench';
const SIDECAR: SidecarSetParams = {
  name: 'dos-bench',
  namespace: PODS,
  appLabel: APP,
  container: 'dos-sidecar',
  image: 'registry.invalid/sidecar:v1',
};

const log = (m: string) => process.stderr.write(`[webhook-dos] ${m}\n`);
const round = (n: number) => Math.round(n * 10) / 10;

interface Subject {
  name: 'ours' | 'upstream';
  pid: number;
  target: Target;
  /** SIGTERM; resolves with how long it took to exit. */
  terminate(): Promise<{ ms: number; code: number | null }>;
}

const ALL = EVERY_ATTACK;

/** Each attack runs in a process of its own (attackProcess), as another pod would run it. */
const ATTACKS: Array<{ name: string; specs: readonly AttackSpec[]; bigPods?: boolean }> = [
  { name: 'slow uploads: 1,000 clients, 1 MiB declared, 1 byte/s', specs: [ALL[0]] },
  { name: 'one slow large upload: 2 MiB declared + one chunked, 1 byte/s', specs: [ALL[1], ALL[2]] },
  { name: '1,000 idle TLS + 300 slowloris TLS + 300 idle TCP', specs: [ALL[3], ALL[4], ALL[5]] },
  { name: 'pods with 200,000 annotations, straight to the webhook in a loop', specs: [], bigPods: true },
  { name: 'all together', specs: ALL, bigPods: true },
];

async function measure(kc: KubeConfig, s: Subject): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const a of ATTACKS) {
    const before = legitimateTraffic({
      kc,
      namespace: PODS,
      appLabel: APP,
      sidecar: SIDECAR.container,
      target: s.target,
      newConnections: false,
    });
    await sleep(BASELINE_MS);
    await before.stop();
    const rss = rssWatcher(s.pid);
    const loadBefore = loadAverage();
    const traffic = legitimateTraffic({
      kc,
      namespace: PODS,
      appLabel: APP,
      sidecar: SIDECAR.container,
      target: s.target,
    });
    const attack = await attackProcess(s.target, a.specs);
    let big = a.bigPods;
    const bigBody = podReviewBody(PODS, manyAnnotationsPod('big', APP));
    const bigLoop = (async () => {
      let answered = 0;
      while (big)
        if ((await postOnNewConnection(s.target, bigBody, 30_000).catch(() => undefined))?.status === 200) answered++;
      return answered;
    })();
    await sleep(1_500);
    const large = await createWithSidecar(kc, PODS, largePod(`large-${s.name}-${Date.now()}`, APP), SIDECAR.container);
    await sleep(Math.max(0, WINDOW_MS - 1_500 - 1_000));
    big = false;
    const stats = await attack.stop();
    await traffic.stop();
    const bigAnswered = await bigLoop;
    rss.stop();
    const figures = {
      createsOk: traffic.creates.ok,
      createsFailed: traffic.creates.failed,
      createP99MsBefore: round(p99(before.creates.latenciesMs)),
      createP99MsDuring: round(p99(traffic.creates.latenciesMs)),
      newConnectionReviewsOk: traffic.newConnections.ok,
      newConnectionReviewsFailed: traffic.newConnections.failed,
      newConnectionReviewP99Ms: round(p99(traffic.newConnections.latenciesMs)),
      largePod: large ?? 'created with its sidecar',
      ...(a.bigPods ? { bigPodReviewsAnswered: bigAnswered } : {}),
      attackerConnections: stats,
      rssMaxMiB: round(rss.max() / MiB),
      loadAverage1m: { before: loadBefore, after: loadAverage() },
      firstErrors: [...traffic.creates.errors, ...traffic.newConnections.errors].slice(0, 3),
    };
    log(`${s.name} / ${a.name}: ${JSON.stringify(figures)}`);
    out[a.name] = figures;
    await sleep(3_000); // the attack's connections are gone before the next baseline
  }
  // A denial naming a 5 MiB key.
  const key = 'k'.repeat(5 * MiB);
  const pod = {
    ...appPod('huge-key', APP),
    metadata: { name: 'huge-key', labels: { app: APP }, annotations: { [key]: 'DEEP' } },
  };
  const denial = await postOnNewConnection(
    s.target,
    podReviewBody(PODS, pod).replace('"DEEP"', `${'{"a":'.repeat(120)}1${'}'.repeat(120)}`),
    30_000,
  ).catch((e: Error) => ({ status: 0, body: e.message }));
  out['review with a 5 MiB key nested 120 levels'] = { status: denial.status, answerBytes: denial.body.length };
  // Drain with an unused TLS connection, a TCP-only one and a slowloris one open.
  const held = together(idleTls(s.target, 1, 1), idleTcp(s.target, 1, 1), slowloris(s.target, 1, 1_000, 1));
  await sleep(1_500);
  const exit = await s.terminate();
  await held.stop();
  out['SIGTERM with unused, TCP-only and slowloris connections open'] = { exitMs: exit.ms, code: exit.code };
  return out;
}

/**
 * A memory cgroup limited to `bytes`, for ours to run in as its container does (node sizes its
 * heap from the limit it starts under): cgroup v2 where the root offers the memory controller,
 * else v1. Removed by `remove()` once the process in it has exited. A string says why there is none.
 */
function memoryCgroup(bytes: number): { dir: string; how: string; remove(): void } | string {
  const root = '/sys/fs/cgroup';
  const name = `kruise-ha-bench-dos-${process.pid}`;
  try {
    const v2 =
      existsSync(join(root, 'cgroup.subtree_control')) &&
      readFileSync(join(root, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory');
    const [dir, file, how] = v2
      ? [join(root, name), 'memory.max', 'cgroup v2 memory.max']
      : [join(root, 'memory', name), 'memory.limit_in_bytes', 'cgroup v1 memory.limit_in_bytes'];
    if (!v2 && !existsSync(join(root, 'memory'))) return 'no memory cgroup controller on this machine';
    mkdirSync(dir);
    try {
      writeFileSync(join(dir, file), String(bytes));
    } catch (e) {
      rmdirSync(dir);
      throw e;
    }
    return { dir, how, remove: () => rmdirSync(dir) };
  } catch (e) {
    return `cannot make a memory cgroup: ${(e as Error).message}`;
  }
}

async function waitInjecting(t: Target): Promise<void> {
  await until(
    'the webhook to inject the sidecar',
    async () => {
      const res = await postOnNewConnection(t, podReviewBody(PODS, appPod('warm', APP))).catch(() => undefined);
      const patch = res && /"patch":"([^"]+)"/.exec(res.body)?.[1];
      return (patch && Buffer.from(patch, 'base64').toString().includes(SIDECAR.container)) || undefined;
    },
    180_000,
    500,
  );
}

export async function run(): Promise<BenchmarkResult> {
  const cp = new ControlPlane({ log: () => undefined });
  const dir = mkdtempSync(join(tmpdir(), 'bench-dos-'));
  const kc = new KubeConfig();
  const figures: Record<string, unknown> = { date: new Date().toISOString(), windowMs: WINDOW_MS };
  const cleanups: Array<() => void> = [];
  try {
    const info = await cp.start();
    const statePath = join(dir, 'state.json');
    writeFileSync(statePath, JSON.stringify({ ...info, controlUrl: '' }));
    process.env[STATE_ENV] = statePath;
    kc.loadFromFile(info.kubeconfigPath);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: PODS } } });

    // ---- upstream
    const objects = synthesizeDefault();
    const rendered = renderedManager(objects);
    const applied = await kubectlApply(objects, join(dir, 'install.yaml'), {
      serverSide: true,
      fieldManager: 'kruise-ha',
    });
    if (!applied.ok) throw new Error(`installing the synthesized default output failed:\n${applied.output}`);
    const upstream = await UpstreamManager.start(rendered, `${rendered.deployment.metadata!.name}-dos`, dir);
    await addEndpoint(kc, rendered.namespace, upstream.name, upstream.webhookPort);
    await upstream.waitReady(300_000);
    await createSidecarSet(kc, SIDECAR, 120_000);
    const upTarget = { port: upstream.webhookPort, path: Paths.mutatePod };
    await waitInjecting(upTarget);
    log(`upstream ${info.kruiseVersion} ready`);
    figures.upstream = await measure(kc, {
      name: 'upstream',
      pid: upstream.child.pid!,
      target: upTarget,
      terminate: async () => {
        const t0 = performance.now();
        const exit = await upstream.stop('SIGTERM', 40_000);
        return { ms: Math.round(performance.now() - t0), code: exit.code };
      },
    });
    await uninstallWebhooks(kc);

    // ---- ours, as the image runs it, inside the memory limit its Deployment renders
    await installRuntime(kc, OURS_NS);
    const limit = (
      synthRuntime(OURS_NS).find((o) => o.kind === 'Deployment') as
        | { spec: { template: { spec: { containers: Array<{ resources?: { limits?: { memory?: string } } }> } } } }
        | undefined
    )?.spec.template.spec.containers[0]?.resources?.limits?.memory;
    const bytes = quantityValue(limit);
    const cgroup = bytes ? memoryCgroup(bytes) : `the rendered Deployment sets no usable memory limit (${limit})`;
    figures.oursMemoryLimit =
      typeof cgroup === 'string' ? `none: ${cgroup}` : `${limit} (${cgroup.how}, joined before node starts)`;
    log(`ours' memory limit: ${String(figures.oursMemoryLimit)}`);
    if (typeof cgroup !== 'string') cleanups.push(() => cgroup.remove());
    const ours = await ManagerProcess.start({
      ...(typeof cgroup === 'string' ? {} : { cgroup: cgroup.dir }),
      name: 'dos-ours',
      kubeconfigPath: info.kubeconfigPath,
      namespace: OURS_NS,
      bundle: writeRuntimeBundle(dir),
      nodeArgs: IMAGE_NODE_FLAGS,
      env: IMAGE_ENV,
      args: ['--role=webhook', '--drain-timeout=1s'],
    });
    await ours.waitReady(120_000);
    await addEndpoint(kc, OURS_NS, ours.name, ours.ports.webhook);
    // installRuntime replaces a SidecarSet CRD that stores a version the runtime does not serve (v1.9's
    // stores v1beta1), and the SidecarSet goes with it: create it again (a no-op when it survived).
    await createSidecarSet(kc, SIDECAR, 120_000);
    const ourTarget = { port: ours.ports.webhook, path: Paths.mutatePod };
    await waitInjecting(ourTarget);
    log('ours ready');
    figures.ours = await measure(kc, {
      name: 'ours',
      pid: ours.child.pid!,
      target: ourTarget,
      terminate: async () => {
        const t0 = performance.now();
        const exit = await ours.stop(40_000);
        return { ms: Math.round(performance.now() - t0), code: exit.code };
      },
    });
  } finally {
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
    for (const c of cleanups.splice(0))
      try {
        c();
      } catch (e) {
        log(`cleanup: ${(e as Error).message}`);
      }
  }
  return {
    figures,
    notes: [
      `each attack runs ${WINDOW_MS / 1000} s against one replica, the only endpoint of its webhook Service, after ${BASELINE_MS / 1000} s of the same pod creates without it; upstream first, then ours, on the same API server`,
      'attackers: a process of their own per attack, one TLS client context each (as a real client keeps one)',
      'pod creates: 2 loops through the API server, a create every 200 ms each, ok only with the sidecar; reviews on new connections: one every 200 ms, 10 s timeout (the API server default)',
      'upstream: the default release of kruise-manager built from its pinned Go module, run as the synthesized Deployment runs it (outside any cgroup); ours: the esbuild bundle with the image flags and environment, --role=webhook, in a memory cgroup with the rendered limit (oursMemoryLimit)',
      'drain: SIGTERM with an unused TLS connection, a TCP-only one and a slowloris one open; upstream with its rendered flags, ours with --drain-timeout=1s',
      'the machine is shared (2 cores): the load average is recorded with every figure',
    ],
  };
}
