/**
 * The 1,000-pod in-place SidecarSet rollout, for any manager (ours or upstream's): the fleet, the
 * benchmark's kubelet, and the timing of one image change. Shared by bench/sidecarset.ts.
 */
import { CoreV1Api, Watch, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createWorkload, smallTemplate, type Workload } from './inputs.js';
import {
  kubeletStatus,
  patchPodStatus,
  reportedImage,
  sidecarSetClient,
  waitFor,
} from '../test/integration/support/sidecarset.js';

export const ROLLOUT_NS = 'bench-rollout';
export const ROLLOUT_PODS = 1_000;
const CONCURRENCY = 32;

export const log = (msg: string) => process.stderr.write(`bench sidecarset: ${msg}\n`);

export function pod(name: string, labels: Record<string, string>): V1Pod {
  return { metadata: { name, labels }, spec: { containers: [{ name: 'app', image: 'shop:1' }] } };
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function pool<T>(items: T[], limit: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++]);
    }),
  );
}

/**
 * The rollout SidecarSet (created through the manager's webhooks), then 1,000 injected, Ready pods it counts: pods of
 * Deployment `fleet`, created through its ReplicaSet (both exist, real UIDs in the owner references), as the
 * ReplicaSet controller creates them.
 */
export async function createFleet(kc: KubeConfig, who: string): Promise<Workload> {
  const core = kc.makeApiClient(CoreV1Api);
  const sidecarSets = sidecarSetClient(kc);
  const fleet = await fleetWorkload(kc);
  await sidecarSets.create({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'bench-rollout' },
    spec: {
      selector: { matchLabels: { app: 'fleet' } },
      namespace: ROLLOUT_NS,
      containers: [{ name: 'fleet-proxy', image: 'proxy:1' }],
      updateStrategy: { maxUnavailable: '10%' },
    },
  });
  await waitFor(
    'the rollout SidecarSet to reach the webhook',
    async () => {
      const probe = await core.createNamespacedPod({ namespace: ROLLOUT_NS, body: fleet.pod(0), dryRun: 'All' });
      return probe.spec!.containers.some((c) => c.name === 'fleet-proxy') ? true : undefined;
    },
    60_000,
  );
  const started = performance.now();
  await pool(
    Array.from({ length: ROLLOUT_PODS }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const created = await core.createNamespacedPod({ namespace: ROLLOUT_NS, body: fleet.pod(i) });
      await patchPodStatus(core, created, kubeletStatus(created, true));
    },
  );
  await waitFor(
    `status to count ${ROLLOUT_PODS} ready pods`,
    async () => {
      const { status } = await sidecarSets.get('bench-rollout');
      return status?.matchedPods === ROLLOUT_PODS && status.updatedReadyPods === ROLLOUT_PODS ? true : undefined;
    },
    180_000,
    100,
  );
  log(`${who}: ${ROLLOUT_PODS} pods created, injected and ready in ${Math.round(performance.now() - started)}ms`);
  return fleet;
}

/** Deployment `fleet` and its ReplicaSet in {@link ROLLOUT_NS} (which must exist): the rollout pods' owners. */
export function fleetWorkload(kc: KubeConfig, namespace = ROLLOUT_NS): Promise<Workload> {
  return createWorkload(kc, namespace, 'fleet', { replicas: ROLLOUT_PODS, template: smallTemplate('fleet', {}) });
}

/** How long the benchmark's kubelet takes from killing a container to running its new image (both subjects alike). */
export const RESTART_MS = Number(process.env.BENCH_ROLLOUT_RESTART_MS ?? 200);

/**
 * Pod status as a kubelet writes it while restarting `container` for a new image: `phase` `stopped` (the old
 * container killed: not ready, waiting, the pod not Ready) or `running` (the new image running with its new imageID,
 * ready, one more restart, the pod Ready again).
 */
export function restartStatus(p: V1Pod, container: string, phase: 'stopped' | 'running'): object {
  const now = new Date().toISOString();
  const ready = phase === 'running';
  const fresh = kubeletStatus(p, true) as { status: { containerStatuses: Array<Record<string, unknown>> } };
  const previous = new Map((p.status?.containerStatuses ?? []).map((c) => [c.name, c]));
  const statuses = fresh.status.containerStatuses.map((c) => {
    const before = previous.get(c.name as string);
    if (c.name !== container) return before ? JSON.parse(JSON.stringify(before)) : c;
    const restartCount = (before?.restartCount ?? 0) + 1;
    const lastState = { terminated: { exitCode: 137, reason: 'Error', startedAt: now, finishedAt: now } };
    return ready
      ? { ...c, restartCount, lastState }
      : {
          ...c,
          // Still the old image until the new one runs.
          image: before?.image ?? c.image,
          imageID: before?.imageID ?? c.imageID,
          ready: false,
          started: false,
          restartCount,
          lastState,
          state: { waiting: { reason: 'ContainerCreating' } },
        };
  });
  const condition = (type: string) => ({ type, status: ready ? 'True' : 'False', lastTransitionTime: now });
  return {
    status: {
      phase: 'Running',
      conditions: [
        { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        condition('Ready'),
        condition('ContainersReady'),
      ],
      containerStatuses: statuses,
    },
  };
}

/**
 * The kubelet for the rollout pods, as a real one restarts a container whose image changed in place: it watches the
 * pods and, whenever a pod's `container` spec image is not what it runs, reports the container stopped (not ready,
 * the pod not Ready), then after {@link RESTART_MS} running the new image (a new imageID, as a registry gives; ready,
 * restartCount + 1, the pod Ready). Both subjects see the same two transitions.
 */
export function startKubelet(kc: KubeConfig, container: string): { stop(): void; patches(): number } {
  const core = kc.makeApiClient(CoreV1Api);
  const inFlight = new Set<string>();
  /** Per pod, the spec image this kubelet last brought up (events from before that may still arrive). */
  const running = new Map<string, string>();
  let patches = 0;
  let stopped = false;
  let abort: AbortController | undefined;
  const handle = (p: V1Pod) => {
    const name = p.metadata!.name!;
    const spec = p.spec?.containers.find((c) => c.name === container)?.image;
    const reported = p.status?.containerStatuses?.find((c) => c.name === container)?.image;
    if (!spec || reported === undefined || reported === reportedImage(spec)) return;
    if (running.get(name) === spec || inFlight.has(name)) return;
    inFlight.add(name);
    (async () => {
      const stoppedPod = await patchPodStatus(core, p, restartStatus(p, container, 'stopped'));
      patches++;
      await sleep(RESTART_MS);
      await patchPodStatus(core, stoppedPod, restartStatus(stoppedPod, container, 'running'));
      patches++;
      running.set(name, spec);
    })()
      .catch((err: Error) => log(`kubelet: restarting ${container} of ${name} failed: ${err.message}`))
      .finally(() => inFlight.delete(name));
  };
  const watch = async (resourceVersion?: string): Promise<void> => {
    if (stopped) return;
    abort = await new Watch(kc).watch(
      `/api/v1/namespaces/${ROLLOUT_NS}/pods`,
      { resourceVersion, allowWatchBookmarks: true },
      (type, obj: V1Pod) => {
        resourceVersion = obj.metadata?.resourceVersion ?? resourceVersion;
        if (type === 'ADDED' || type === 'MODIFIED') handle(obj);
      },
      () => {
        if (!stopped) void watch(resourceVersion).catch((err: Error) => log(`kubelet: rewatch failed: ${err.message}`));
      },
    );
  };
  void watch();
  return {
    stop: () => {
      stopped = true;
      abort?.abort();
    },
    patches: () => patches,
  };
}

export interface RolloutFigures {
  /** Until every pod was updated and ready, or the time limit when it did not finish. */
  seconds: number;
  finished: boolean;
  /** Pods updated and ready when it finished or was given up. */
  updatedReady: number;
  peakInFlight: number;
  reconciles: number;
  reconcileSeconds: number;
  reconcileErrors: number;
}

/** Sum of every series of `name` (any labels) in a Prometheus text page. */
export function metricSum(page: string, name: string): number {
  return page
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** The SidecarSet controller's reconcile counters on a manager's /metrics (controller-runtime names, both managers). */
function reconcileMetrics(page: string) {
  const only = (name: string) =>
    page
      .split('\n')
      .filter((l) => !l.startsWith(name) || /controller="sidecarset(-controller)?"/.test(l))
      .join('\n');
  return {
    total: metricSum(only('controller_runtime_reconcile_total'), 'controller_runtime_reconcile_total'),
    seconds: metricSum(
      only('controller_runtime_reconcile_time_seconds_sum'),
      'controller_runtime_reconcile_time_seconds_sum',
    ),
    errors: metricSum(only('controller_runtime_reconcile_errors_total'), 'controller_runtime_reconcile_errors_total'),
  };
}

/** Changes the sidecar image (with maxUnavailable) and times until the status reports every pod updated and ready. */
export async function rollout(
  kc: KubeConfig,
  metrics: () => Promise<string>,
  who: string,
  image: string,
  maxUnavailable: number | string,
  limitMs = 600_000,
): Promise<RolloutFigures> {
  const sidecarSets = sidecarSetClient(kc);
  const before = reconcileMetrics(await metrics());
  await sidecarSets.jsonPatch('bench-rollout', [
    { op: 'replace', path: '/spec/updateStrategy/maxUnavailable', value: maxUnavailable },
    { op: 'replace', path: '/spec/containers/0/image', value: image },
  ]);
  const started = performance.now();
  let peakInFlight = 0;
  let updatedReady = 0;
  const finished = await waitFor(
    `${who}: bench-rollout to roll ${image} through ${ROLLOUT_PODS} pods`,
    async () => {
      const { metadata, status } = await sidecarSets.get('bench-rollout');
      if (status?.observedGeneration !== metadata.generation) return undefined;
      // Patched but not yet reported running the new image: what maxUnavailable bounds here.
      peakInFlight = Math.max(peakInFlight, (status.updatedPods ?? 0) - (status.updatedReadyPods ?? 0));
      updatedReady = status.updatedReadyPods ?? 0;
      return status.updatedPods === ROLLOUT_PODS && updatedReady === ROLLOUT_PODS ? true : undefined;
    },
    limitMs,
    50,
  ).catch(() => false);
  const seconds = Math.round((performance.now() - started) / 10) / 100;
  const after = reconcileMetrics(await metrics());
  const figures = {
    seconds,
    finished,
    updatedReady,
    peakInFlight,
    reconciles: after.total - before.total,
    reconcileSeconds: Math.round((after.seconds - before.seconds) * 100) / 100,
    reconcileErrors: after.errors - before.errors,
  };
  log(`${who}: rollout of ${image} (maxUnavailable ${maxUnavailable}): ${JSON.stringify(figures)}`);
  return figures;
}
