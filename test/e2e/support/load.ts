/**
 * The drills' load (and bench/cluster-compare.ts's): a stream of pod creates through the API
 * server into a namespace that a SidecarSet selects, so every create goes through the pod webhook
 * (failurePolicy Fail), at a steady rate or closed loop at a fixed concurrency. Each
 * create's outcome and time is recorded: whether the API server accepted it, why not (the webhook
 * call failed, or the API itself was unreachable), and whether the stored pod carries the sidecar.
 *
 * The pods name a scheduler that does not exist, so they stay Pending and cost the nodes nothing;
 * `deleteLoadPods` removes them (many DELETEs in flight instead of kubectl's one after another).
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import type { ClusterState } from '../../cluster/state.js';

export const LOAD_LABEL = 'e2e.kruise-ha.io/load';
/** The app label the drills' load SidecarSet selects. */
export const LOAD_APP = 'drill-load';
const UNSCHEDULED = 'e2e-kruise-ha-unscheduled';

/**
 * The controller owner the pods name, as a ReplicaSet makes its pods: its template's labels, `generateName`
 * `<owner>-` and a controller reference with the owner's real UID (issue #29: an owner that does not exist sends
 * upstream's pod webhook to the API server at every admission, which no real cluster does).
 */
export interface LoadPodOwner {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  /** The owner's pod template labels (for a ReplicaSet, with its `pod-template-hash`); must include app: LOAD_APP. */
  readonly labels: Record<string, string>;
}

/** The load pods' spec: a scheduler that does not exist (they stay Pending and cost the nodes nothing). */
export function loadPodSpec(image: string): object {
  return {
    schedulerName: UNSCHEDULED,
    automountServiceAccountToken: false,
    terminationGracePeriodSeconds: 0,
    containers: [{ name: 'main', image }],
  };
}

/** Why a create failed: the pod webhook (what the drills count), or the API server itself. */
export type FailureKind = 'webhook' | 'api';

export interface CreateOutcome {
  /** Sequence number in this stream. */
  readonly seq: number;
  /** When the request was sent (ms since the epoch). */
  readonly at: number;
  /** How long the API server took to answer (or the request to fail), in ms. */
  readonly ms: number;
  readonly ok: boolean;
  readonly status?: number;
  readonly failure?: FailureKind;
  /** The API server's message, or the client error, for failures. */
  readonly message?: string;
  /** For a created pod: whether it carries the container named `sidecar` (the webhook injected it). */
  readonly injected?: boolean;
}

export interface LoadOptions {
  readonly state: ClusterState;
  readonly namespace: string;
  /** Image of the pods' main container (never pulled: the pods are never scheduled). */
  readonly image: string;
  /** Creates started per second, whatever the answers' latency. @default 4 */
  readonly ratePerSecond?: number;
  /** Container name the SidecarSet injects. @default 'sidecar' */
  readonly sidecar?: string;
  /**
   * Whether a created pod shows the webhook's work (its `injected` outcome); another program's webhook sets a label,
   * say. @default - it carries the container named `sidecar`
   */
  readonly mutated?: (pod: {
    metadata?: { labels?: Record<string, string> };
    spec: { containers: Array<{ name: string }> };
  }) => boolean;
  /** Client-side timeout per create; beyond the webhook's own 10 s. @default 30000 */
  readonly timeoutMs?: number;
  /** Distinguishes this stream's pods (a label value, part of every pod name). */
  readonly runId: string;
  /** The pods' controller owner; without one the pods are bare (named `load-<runId>-<seq>`). */
  readonly owner?: LoadPodOwner;
  /** Keep-alive connections to the API server at most. @default 16 */
  readonly connections?: number;
  /** A caller's keep-alive agent, shared by its streams so a stream finds connections open; `stop()` leaves it. */
  readonly agent?: Agent;
}

/** What a stream of creates came to. */
export interface LoadSummary {
  readonly sent: number;
  readonly created: number;
  /** Creates refused because the pod webhook could not be called or failed. */
  readonly webhookFailures: number;
  /** Creates that did not reach a working API server (connection refused, 5xx without a webhook). */
  readonly apiFailures: number;
  /** Created pods without the sidecar: the webhook was skipped. */
  readonly withoutSidecar: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/** A running stream of pod creates; `stop()` waits for every create in flight. */
export class PodCreateLoad {
  readonly outcomes: CreateOutcome[] = [];
  private readonly agent: Agent;
  private readonly inflight = new Set<Promise<void>>();
  private timer?: NodeJS.Timeout;
  private closed?: { running: boolean; workers: Promise<void>[] };
  private seq = 0;
  private readonly tls: { ca: Buffer; cert: Buffer; key: Buffer };

  constructor(private readonly opts: LoadOptions) {
    // Keep-alive like any API client; sockets the API server closes are replaced on the next create.
    this.agent = opts.agent ?? new Agent({ keepAlive: true, maxSockets: opts.connections ?? 16 });
    this.tls = {
      ca: readFileSync(opts.state.caCertPath),
      cert: readFileSync(opts.state.adminCertPath),
      key: readFileSync(opts.state.adminKeyPath),
    };
  }

  start(): this {
    const every = 1000 / (this.opts.ratePerSecond ?? 4);
    this.timer = setInterval(() => {
      const p = this.createOne().finally(() => this.inflight.delete(p));
      this.inflight.add(p);
    }, every);
    return this;
  }

  /** Closed loop instead: `concurrency` creates in flight at all times, each sent when the last answered. */
  startClosedLoop(concurrency: number): this {
    const closed = { running: true, workers: [] as Promise<void>[] };
    closed.workers = Array.from({ length: concurrency }, async () => {
      while (closed.running) await this.createOne();
    });
    this.closed = closed;
    return this;
  }

  async stop(): Promise<CreateOutcome[]> {
    clearInterval(this.timer);
    if (this.closed) this.closed.running = false;
    await Promise.all([...this.inflight, ...(this.closed?.workers ?? [])]);
    if (!this.opts.agent) this.agent.destroy();
    return this.outcomes.sort((a, b) => a.seq - b.seq);
  }

  private pod(seq: number): object {
    const owner = this.opts.owner;
    const run = { [LOAD_LABEL]: this.opts.runId };
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: owner
        ? {
            generateName: `${owner.name}-`,
            labels: { ...owner.labels, ...run },
            ownerReferences: [
              {
                apiVersion: owner.apiVersion,
                kind: owner.kind,
                name: owner.name,
                uid: owner.uid,
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          }
        : { name: `load-${this.opts.runId}-${seq}`, labels: { app: LOAD_APP, ...run } },
      spec: loadPodSpec(this.opts.image),
    };
  }

  private createOne(): Promise<void> {
    const seq = this.seq++;
    const at = Date.now();
    const body = JSON.stringify(this.pod(seq));
    const record = (o: Omit<CreateOutcome, 'seq' | 'at' | 'ms'>) =>
      void this.outcomes.push({ seq, at, ms: Date.now() - at, ...o });
    return new Promise<void>((resolve) => {
      const req = request(
        new URL(`/api/v1/namespaces/${this.opts.namespace}/pods`, this.opts.state.server),
        {
          method: 'POST',
          agent: this.agent,
          ...this.tls,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let data = '';
          res.setEncoding('utf8').on('data', (d: string) => (data += d));
          res.once('error', (e) => {
            record({ ok: false, failure: 'api', message: e.message });
            resolve();
          });
          res.once('end', () => {
            const status = res.statusCode ?? 0;
            if (status === 201) {
              const pod = JSON.parse(data) as {
                metadata?: { labels?: Record<string, string> };
                spec: { containers: Array<{ name: string }> };
              };
              const injected = this.opts.mutated
                ? this.opts.mutated(pod)
                : pod.spec.containers.some((c) => c.name === (this.opts.sidecar ?? 'sidecar'));
              record({ ok: true, status, injected });
            } else {
              let message = data;
              try {
                message = (JSON.parse(data) as { message?: string }).message ?? data;
              } catch {
                /* not a Status */
              }
              record({ ok: false, status, failure: classify(status, message), message });
            }
            resolve();
          });
        },
      );
      req.setTimeout(this.opts.timeoutMs ?? 30_000, () => req.destroy(new Error('client timeout')));
      req.once('error', (e) => {
        record({ ok: false, failure: 'api', message: e.message });
        resolve();
      });
      req.end(body);
    });
  }
}

/** Pod DELETEs in flight at once in {@link deleteLoadPods}. */
const DELETE_CONCURRENCY = 16;

/**
 * Deletes the pods of `namespace` matching `labelSelector` (as admin, like the load), DELETE_CONCURRENCY at a time,
 * and resolves with an error message instead of throwing: it is cleanup, not what a drill measures. Each DELETE
 * passes the pod webhooks, so the time is their latency times the pods over the requests in flight: `kubectl delete
 * pods -l` sends them one after another (6-10 s per drill for the 120-250 pods a drill's load leaves), and so does a
 * deletecollection (kube-apiserver's `--delete-collection-workers` is 1): 3-28 s per drill, 5 min per run (issue #35).
 */
export async function deleteLoadPods(
  state: ClusterState,
  namespace: string,
  labelSelector: string,
  timeoutMs = 120_000,
): Promise<string | undefined> {
  const agent = new Agent({ keepAlive: true, maxSockets: DELETE_CONCURRENCY });
  const tls = {
    ca: readFileSync(state.caCertPath),
    cert: readFileSync(state.adminCertPath),
    key: readFileSync(state.adminKeyPath),
  };
  const deadline = Date.now() + timeoutMs;
  const call = (method: string, path: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(new URL(path, state.server), { method, agent, ...tls }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.once('error', reject);
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.setTimeout(Math.max(1_000, deadline - Date.now()), () =>
        req.destroy(new Error(`${method} ${path} timed out`)),
      );
      req.once('error', reject);
      req.end();
    });
  const pods = `/api/v1/namespaces/${namespace}/pods`;
  try {
    const list = await call('GET', `${pods}?labelSelector=${encodeURIComponent(labelSelector)}`);
    if (list.status !== 200) return `GET ${pods}: ${list.status} ${list.body.slice(0, 300)}`;
    const names = (JSON.parse(list.body) as { items: Array<{ metadata: { name: string } }> }).items.map(
      (p) => p.metadata.name,
    );
    const problems: string[] = [];
    let next = 0;
    const worker = async () => {
      while (next < names.length) {
        const path = `${pods}/${names[next++]}`;
        const res = await call('DELETE', path).catch((e: Error) => ({ status: 0, body: e.message }));
        // 404: gone already (its ReplicaSet-like owner is fake, nothing else deletes them, but a retry may have).
        if (res.status !== 200 && res.status !== 202 && res.status !== 404) {
          problems.push(`DELETE ${path}: ${res.status} ${res.body.slice(0, 200)}`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, names.length) }, worker));
    return problems.length > 0 ? `${problems.length} of ${names.length} not deleted; first: ${problems[0]}` : undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    agent.destroy();
  }
}

/** A refusal that names a webhook is the webhook's; anything else is the API server's. */
export function classify(status: number, message: string): FailureKind {
  return /webhook/i.test(message) || (status === 400 && /admission/i.test(message)) ? 'webhook' : 'api';
}

const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export function summarize(outcomes: readonly CreateOutcome[]): LoadSummary {
  const ms = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  return {
    sent: outcomes.length,
    created: outcomes.filter((o) => o.ok).length,
    webhookFailures: outcomes.filter((o) => o.failure === 'webhook').length,
    apiFailures: outcomes.filter((o) => o.failure === 'api').length,
    withoutSidecar: outcomes.filter((o) => o.ok && !o.injected).length,
    p50Ms: quantile(ms, 0.5),
    p99Ms: quantile(ms, 0.99),
    maxMs: ms.at(-1) ?? 0,
  };
}

/** The load SidecarSet: injects `sidecar` into the load pods of `namespaceLabels`-labelled namespaces. */
export function loadSidecarSet(image: string, namespaceLabels: Record<string, string>): object {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'drill-load' },
    spec: {
      selector: { matchLabels: { app: LOAD_APP } },
      namespaceSelector: { matchLabels: namespaceLabels },
      containers: [{ name: 'sidecar', image, podInjectPolicy: 'BeforeAppContainer' }],
    },
  };
}
