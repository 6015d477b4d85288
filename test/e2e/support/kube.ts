/**
 * The e2e tier's view of the local cluster: kubectl as an operator runs it (server-side apply,
 * get -o json, delete), and polling that reports what it last saw when it gives up.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until as pollUntil } from '../../integration/support/ha.js';

export interface KubectlOptions {
  /** Sent on stdin (for `-f -`). */
  readonly input?: string;
  /** Default 120 s. */
  readonly timeoutMs?: number;
  /** Resolve with the result instead of throwing on a non-zero exit. */
  readonly allowFailure?: boolean;
}

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * kubectl's discovery cache, this process's own and dropped after every write: the tier installs
 * CRDs whose served versions change between installs (upstream v1.9.1 serves SidecarSets as
 * v1beta1, the runtime as v1alpha1 only), and kubectl's shared cache (~/.kube/cache, kept for
 * hours) would go on asking for a version that is gone ("the server could not find the requested
 * resource").
 */
const DISCOVERY_CACHE = join(tmpdir(), `kruise-ha-e2e-kubectl-${process.pid}`);
const WRITES = new Set(['apply', 'create', 'delete', 'replace', 'patch']);
const forgetDiscovery = () => rmSync(DISCOVERY_CACHE, { recursive: true, force: true });
process.once('exit', forgetDiscovery);

/** Runs kubectl against `kubeconfig`; throws with its stderr on failure unless `allowFailure`. */
export function kubectl(
  kubeconfig: string,
  args: readonly string[],
  options: KubectlOptions = {},
): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const done = WRITES.has(args[0]) ? forgetDiscovery : () => undefined;
    const child = execFile(
      'kubectl',
      ['--kubeconfig', kubeconfig, `--cache-dir=${DISCOVERY_CACHE}`, ...args],
      { timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, KUBECONFIG: '' } },
      (err, stdout, stderr) => {
        done();
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        if (code !== 0 && !options.allowFailure) {
          reject(new Error(`kubectl ${args.join(' ')} exited ${code}: ${stderr.trim() || err?.message}`));
          return;
        }
        resolve({ code, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

/** `kubectl get ... -o json`, parsed. */
export async function getJson<T>(kubeconfig: string, args: readonly string[]): Promise<T> {
  const { stdout } = await kubectl(kubeconfig, ['get', ...args, '-o', 'json']);
  return JSON.parse(stdout) as T;
}

/** Like getJson, but undefined when the object does not exist. */
export async function getJsonIfExists<T>(kubeconfig: string, args: readonly string[]): Promise<T | undefined> {
  const r = await kubectl(kubeconfig, ['get', ...args, '-o', 'json', '--ignore-not-found'], { allowFailure: true });
  if (r.code !== 0) throw new Error(`kubectl get ${args.join(' ')}: ${r.stderr.trim()}`);
  return r.stdout.trim() ? (JSON.parse(r.stdout) as T) : undefined;
}

/** The integration tier's polling loop with the e2e tier's patience: minutes, once a second. */
export function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  {
    timeoutMs = 180_000,
    intervalMs = 1_000,
    describe,
  }: { timeoutMs?: number; intervalMs?: number; describe?: () => Promise<string> } = {},
): Promise<T> {
  return pollUntil(what, probe, timeoutMs, intervalMs, describe);
}

export interface PodLike {
  metadata: {
    name: string;
    namespace?: string;
    uid: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: {
    nodeName?: string;
    hostNetwork?: boolean;
    containers: Array<{ name: string; image: string }>;
    initContainers?: Array<{ name: string; image: string }>;
  };
  status?: {
    phase?: string;
    podIP?: string;
    hostIP?: string;
    conditions?: Array<{ type: string; status: string }>;
    containerStatuses?: Array<{
      name: string;
      ready: boolean;
      restartCount: number;
      image: string;
      imageID: string;
      containerID?: string;
    }>;
  };
}

export const isReady = (p: PodLike): boolean =>
  p.status?.phase === 'Running' && !!p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** Pods in `namespace` matching `selector` (a kubectl label selector). */
export async function pods(kubeconfig: string, namespace: string, selector: string): Promise<PodLike[]> {
  return (await getJson<{ items: PodLike[] }>(kubeconfig, ['pods', '-n', namespace, '-l', selector])).items;
}

/** A one-line-per-pod summary for failure messages. */
export async function describePods(kubeconfig: string, namespace: string, selector?: string): Promise<string> {
  const r = await kubectl(
    kubeconfig,
    ['get', 'pods', '-n', namespace, '-o', 'wide', ...(selector ? ['-l', selector] : [])],
    {
      allowFailure: true,
    },
  );
  const events = await kubectl(kubeconfig, ['get', 'events', '-n', namespace, '--sort-by=.lastTimestamp'], {
    allowFailure: true,
  });
  return `${r.stdout}${r.stderr}\n${events.stdout.split('\n').slice(-25).join('\n')}`;
}

/** One webhook path's latency histogram, as controller-runtime exports it. */
export interface WebhookLatency {
  readonly reviews: number;
  /** Reviews slower than each bound (s), from the histogram's cumulative buckets. */
  readonly slowerThan: Readonly<Record<string, number>>;
}

/**
 * Reads `path`'s latency histogram from a Prometheus text exposition: the total and how many reviews took longer
 * than each of `bounds` (which must be bucket bounds; controller-runtime's are Prometheus' defaults, up to 10 s).
 * Undefined if the exposition has no such histogram.
 */
export function webhookLatency(
  metrics: string,
  path: string,
  bounds = ['1', '2.5', '5', '10'],
): WebhookLatency | undefined {
  const buckets = new Map<string, number>();
  for (const m of metrics.matchAll(/^controller_runtime_webhook_latency_seconds_bucket\{([^}]*)\}\s+(\S+)/gm)) {
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (labels.webhook === path) buckets.set(labels.le, Number(m[2]));
  }
  const reviews = buckets.get('+Inf');
  if (reviews === undefined) return undefined;
  return {
    reviews,
    slowerThan: Object.fromEntries(bounds.map((b) => [b, reviews - (buckets.get(b) ?? NaN)])),
  };
}

/** A manager pod's own metrics (port `port`), through the API server's pod proxy; '' if it does not answer. */
export async function podMetrics(kc: string, namespace: string, pod: string, port = 8080): Promise<string> {
  const r = await kubectl(kc, ['get', '--raw', `/api/v1/namespaces/${namespace}/pods/${pod}:${port}/proxy/metrics`], {
    allowFailure: true,
  });
  return r.code === 0 ? r.stdout : '';
}

/**
 * When a container's informer first listed `kind` (client-go's reflector line `Caches populated for *<kind>`), read
 * from `kubectl logs --timestamps` output: the kubelet's timestamp of the first such line. Undefined if no line says
 * so (the cache never synced, or the log does not reach back that far).
 */
export function cacheSyncedAt(log: string, kind: string): Date | undefined {
  const needle = `Caches populated for *${kind} `;
  for (const line of log.split('\n')) {
    if (!line.includes(needle)) continue;
    const at = new Date(line.slice(0, line.indexOf(' ')));
    if (!Number.isNaN(at.getTime())) return at;
  }
  return undefined;
}

/**
 * The failures of a load (each `<ISO time> <name>: <message>`, the time being when the failure came back) that are
 * NOT explained by a review waiting for a cache that synced at `syncedAt`: a review that timed out after
 * `timeoutMs` started `timeoutMs` before its failure, and is explained if it started before the cache synced
 * (`slackMs` allows for the clocks of the test and of the kubelet's log timestamps).
 */
export function timeoutsAfter(
  failures: readonly string[],
  syncedAt: Date | undefined,
  timeoutMs: number,
  slackMs = 1_000,
): string[] {
  return failures.filter((f) => {
    const failedAt = new Date(f.slice(0, f.indexOf(' '))).getTime();
    if (syncedAt === undefined || Number.isNaN(failedAt)) return true;
    return failedAt - timeoutMs > syncedAt.getTime() + slackMs;
  });
}
