/**
 * Helpers for the process-level HA tests (manager-*.test.ts): bounded waits, a Lease history
 * recorded from a watch (every write, in order), metric scraping, the certificate a replica
 * presents, SidecarSets and pods through the API server, direct AdmissionReviews.
 */
import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Lease,
  type V1Pod,
} from '@kubernetes/client-node';
import { X509Certificate, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:https';
import { connect } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { KRUISE_APPS_GROUP } from '../../../lib/contract.js';
import { Informer, resourcePath } from '../../../lib/runtime/informer/index.js';
import { Logger } from '../../../lib/runtime/log.js';
import type { Exit, ManagerProcess } from './manager-process.js';

/**
 * Polls `cond` every `everyMs` until it holds; throws naming `what` after `timeoutMs`, with what
 * `describe` makes of the state then (so a failure says what was seen).
 */
export async function until<T>(
  what: string,
  cond: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs: number,
  everyMs = 50,
  describe?: () => Promise<string>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await cond();
      if (value) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const seen = describe ? await describe().catch((e: Error) => `(describe failed: ${e.message})`) : '';
      throw new Error(
        `timed out after ${timeoutMs}ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}` +
          (seen ? `\n--- state ---\n${seen}` : ''),
      );
    }
    await sleep(everyMs);
  }
}

/** How `m` exited; fails (with its logs) if it has not within `timeoutMs`. */
export async function exitOf(m: ManagerProcess, timeoutMs = 30_000): Promise<Exit> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      m.exited,
      sleep(timeoutMs, undefined, { signal: timer.signal }).then(() => {
        throw new Error(`${m.name} did not exit within ${timeoutMs}ms:\n${m.logs()}`);
      }),
    ]);
  } finally {
    timer.abort();
  }
}

// ---------------------------------------------------------------------------------------------
// Lease

export interface LeaseRecord {
  holder: string;
  leaseDurationSeconds: number;
  leaseTransitions: number;
  /** Epoch ms, as written by the writer (all processes here share one host clock). */
  acquireTime: number;
  renewTime: number;
  resourceVersion: string;
  /** When this test process saw the event. */
  seenAt: number;
}

const ms = (t: unknown): number => (t instanceof Date ? t.getTime() : typeof t === 'string' ? Date.parse(t) : NaN);

function toRecord(lease: V1Lease): LeaseRecord {
  return {
    holder: lease.spec?.holderIdentity ?? '',
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
    leaseTransitions: lease.spec?.leaseTransitions ?? 0,
    acquireTime: ms(lease.spec?.acquireTime),
    renewTime: ms(lease.spec?.renewTime),
    resourceVersion: lease.metadata?.resourceVersion ?? '',
    seenAt: Date.now(),
  };
}

/**
 * Every version of one Lease, from a watch: polling could miss the short-lived "released"
 * record between a graceful leader's release and the next holder's acquisition.
 */
export class LeaseHistory {
  readonly records: LeaseRecord[] = [];
  private readonly informer: Informer<V1Lease & KubernetesObject>;

  constructor(
    kc: KubeConfig,
    readonly namespace: string,
    readonly name: string,
  ) {
    this.informer = new Informer<V1Lease & KubernetesObject>({
      path: resourcePath({ group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespace }),
      fieldSelector: `metadata.name=${name}`,
      kubeConfig: kc,
      logger: new Logger({ test: 'lease-history' }, 'error'),
    });
    const record = (lease: V1Lease) => {
      const r = toRecord(lease);
      if (!this.records.some((x) => x.resourceVersion === r.resourceVersion)) this.records.push(r);
    };
    this.informer.addEventHandler({ onAdd: record, onUpdate: (_o, n) => record(n) });
  }

  async start(): Promise<void> {
    await this.informer.start();
    await this.informer.waitForSync(AbortSignal.timeout(30_000));
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  latest(): LeaseRecord | undefined {
    return this.records.at(-1);
  }

  /** Records from index `from` on. */
  since(from: number): LeaseRecord[] {
    return this.records.slice(from);
  }
}

/** The manager's Lease identity (`<POD_NAME>_<random>`), from its "manager started" log line. */
export function identityOf(m: ManagerProcess): string | undefined {
  for (const line of m.logs().split('\n')) {
    if (!line.includes('"msg":"manager started"')) continue;
    try {
      return (JSON.parse(line) as { identity?: string }).identity;
    } catch {
      /* partial line */
    }
  }
  return undefined;
}

/** Parsed JSON log lines of a manager. */
export function logLines(m: ManagerProcess): Array<Record<string, unknown>> {
  return m
    .logs()
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

// ---------------------------------------------------------------------------------------------
// Metrics

/** Value of the first series of `name` whose labels include `labels`; undefined if absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[3]);
  }
  return undefined;
}

export async function scrape(m: ManagerProcess): Promise<string> {
  return (await m.get('/metrics', m.ports.metrics)).body;
}

/** Admission requests a replica answered on `path` with HTTP 200. */
export async function webhookCalls(m: ManagerProcess, path: string): Promise<number> {
  return metricValue(await scrape(m), 'controller_runtime_webhook_requests_total', { webhook: path, code: '200' }) ?? 0;
}

// ---------------------------------------------------------------------------------------------
// TLS

/** The leaf certificate (PEM) a TLS server on 127.0.0.1:`port` presents to a new connection. */
export function presentedCertificate(port: number): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, servername: 'localhost', rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert) resolve(cert);
      else reject(new Error('no peer certificate'));
    });
    socket.setTimeout(5_000, () => socket.destroy(new Error('TLS handshake timed out')));
    socket.on('error', reject);
  });
}

/**
 * POSTs an AdmissionReview to a replica's webhook over TLS (trusting `caPem`). Without an agent the
 * request itself says `Connection: close`; pass a keep-alive agent to see what the server decides.
 */
export function postReview(
  port: number,
  path: string,
  caPem: string,
  review: unknown,
  agent: Agent | false = false,
): Promise<{ status: number; body: string; connection?: string }> {
  const body = JSON.stringify(review);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path,
        method: 'POST',
        ca: caPem,
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
        signal: AbortSignal.timeout(10_000),
      },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => {
            text += d;
          })
          .on('end', () => resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** An AdmissionReview for creating `pod` in `namespace`, as the API server sends it. */
export function podReview(pod: V1Pod, namespace: string): unknown {
  return createReview('Pod', 'pods', pod, namespace);
}

/** An AdmissionReview for creating a core/v1 `kind` object (`resource`) in `namespace`, as the API server sends it. */
export function createReview(kind: string, resource: string, object: object, namespace: string): unknown {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: { group: '', version: 'v1', kind },
      resource: { group: '', version: 'v1', resource },
      requestKind: { group: '', version: 'v1', kind },
      requestResource: { group: '', version: 'v1', resource },
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'system:admin', groups: ['system:masters', 'system:authenticated'] },
      object: { apiVersion: 'v1', kind, ...object },
      oldObject: null,
      dryRun: false,
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    },
  };
}

/** Decoded JSONPatch of a review response (empty when the replica allowed without a patch). */
export function reviewPatch(body: string): Array<{ op: string; path: string; value?: unknown }> {
  const response = (JSON.parse(body) as { response?: { allowed?: boolean; patch?: string } }).response;
  if (!response?.allowed) throw new Error(`review was not allowed: ${body.slice(0, 300)}`);
  return response.patch
    ? (JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) as Array<{
        op: string;
        path: string;
        value?: unknown;
      }>)
    : [];
}

// ---------------------------------------------------------------------------------------------
// SidecarSets and pods

export interface SidecarSetParams {
  name: string;
  namespace: string;
  appLabel: string;
  container: string;
  image: string;
}

export function sidecarSetBody(p: SidecarSetParams): KubernetesObject & { spec: unknown } {
  return {
    apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
    kind: 'SidecarSet',
    metadata: { name: p.name },
    spec: {
      namespace: p.namespace,
      selector: { matchLabels: { app: p.appLabel } },
      containers: [{ name: p.container, image: p.image, command: ['sleep', 'infinity'] }],
    },
  };
}

const sidecarSetsApi = { group: KRUISE_APPS_GROUP, version: 'v1alpha1', plural: 'sidecarsets' };

/**
 * Creates the SidecarSet through the API server (so through our SidecarSet webhooks); retries until the webhooks
 * answer.
 */
export async function createSidecarSet(kc: KubeConfig, p: SidecarSetParams, timeoutMs = 60_000): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  await until(
    `SidecarSet ${p.name} to be created through the webhooks`,
    async () => {
      try {
        await api.createClusterCustomObject({ ...sidecarSetsApi, body: sidecarSetBody(p) });
        return true;
      } catch (e) {
        if (e instanceof ApiException && e.code === 409) return true;
        throw e;
      }
    },
    timeoutMs,
    200,
  );
}

/**
 * Sets the sidecar image of an existing SidecarSet: read, then replace at that resourceVersion, again on a conflict
 * (client-go's RetryOnConflict): the manager writes the SidecarSet's status between the two.
 */
export async function setSidecarImage(kc: KubeConfig, p: SidecarSetParams, image: string): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  for (let attempt = 1; ; attempt++) {
    const current = (await api.getClusterCustomObject({ ...sidecarSetsApi, name: p.name })) as {
      metadata: { resourceVersion: string };
    };
    const body = {
      ...sidecarSetBody({ ...p, image }),
      metadata: { name: p.name, resourceVersion: current.metadata.resourceVersion },
    };
    try {
      await api.replaceClusterCustomObject({ ...sidecarSetsApi, name: p.name, body });
      return;
    } catch (e) {
      if (!(e instanceof ApiException && e.code === 409) || attempt >= 5) throw e;
    }
  }
}

export async function deleteSidecarSet(kc: KubeConfig, name: string): Promise<void> {
  await kc
    .makeApiClient(CustomObjectsApi)
    .deleteClusterCustomObject({ ...sidecarSetsApi, name })
    .catch(() => undefined);
}

export function podBody(name: string, appLabel: string): V1Pod {
  return {
    metadata: { name, labels: { app: appLabel } },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] },
  };
}

/** Image of container `container` in `pod`, or undefined if the pod has no such container. */
export function containerImage(pod: V1Pod, container: string): string | undefined {
  return pod.spec?.containers?.find((c) => c.name === container)?.image;
}

/** Deletes every pod in `namespace` (unscheduled pods go at once: no kubelet to wait for). */
export async function deletePods(kc: KubeConfig, namespace: string): Promise<void> {
  await kc
    .makeApiClient(CoreV1Api)
    .deleteCollectionNamespacedPod({ namespace, gracePeriodSeconds: 0 })
    .catch(() => undefined);
}

export function describeError(e: unknown): string {
  if (e instanceof ApiException) {
    const body = typeof e.body === 'string' ? e.body : JSON.stringify(e.body);
    try {
      return `HTTP ${e.code}: ${(JSON.parse(body) as { message?: string }).message ?? body}`;
    } catch {
      return `HTTP ${e.code}: ${body}`;
    }
  }
  return e instanceof Error ? e.message : String(e);
}
