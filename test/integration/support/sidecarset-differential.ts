/**
 * Sends the generated cases (support/sidecarset-differential-cases.ts) through the API server to
 * whichever manager currently serves the webhooks, and records what came back: per request the
 * decision and the object (normalised: server-filled fields removed). The same recording from
 * upstream and from this runtime is then compared entry by entry.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { SidecarSetAnnotations } from '../../../lib/contract.js';
import { envtest } from '../../envtest/state.js';
import { CASE_LABEL, NAMESPACES, RUN_LABEL, type DiffCase, type Json } from './sidecarset-differential-cases.js';

const SETS = '/apis/apps.kruise.io/v1alpha1/sidecarsets';
/** Requests in flight at once (cases are independent; their order inside a case is kept). */
const CONCURRENCY = 6;

export interface Outcome {
  allowed: boolean;
  status: number;
  message?: string;
  object?: Json;
}
/** `<case> <step> <name>` -> what the API server answered. */
export type Recording = Map<string, Outcome>;

export class ApiClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY + 2 });
  private readonly creds = envtest();
  private readonly tls = {
    ca: readFileSync(this.creds.caCertPath),
    cert: readFileSync(this.creds.adminCertPath),
    key: readFileSync(this.creds.adminKeyPath),
  };

  /**
   * One request; retried while the API server answers 429 (a CRD's storage "(re)initializing" after the CRD
   * changed, or priority-and-fairness throttling): that answer is the server's, not either webhook's.
   */
  async call(
    method: string,
    path: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<{ status: number; body: Json }> {
    for (let attempt = 0; ; attempt++) {
      const res = await this.once(method, path, body, contentType);
      if (res.status !== 429 || attempt >= 60) return res;
      await sleep(500);
    }
  }

  private once(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
  ): Promise<{ status: number; body: Json }> {
    return new Promise((resolve, reject) => {
      const req = request(
        new URL(path, this.creds.server),
        { method, agent: this.agent, ...this.tls, headers: body === undefined ? {} : { 'content-type': contentType } },
        (res) => {
          let text = '';
          res
            .setEncoding('utf8')
            .on('data', (d: string) => {
              text += d;
            })
            .on('end', () => {
              let parsed: Json = text;
              try {
                parsed = JSON.parse(text);
              } catch {
                /* not JSON */
              }
              resolve({ status: res.statusCode ?? 0, body: parsed });
            });
        },
      );
      req.setTimeout(30_000, () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', reject).end(body === undefined ? undefined : JSON.stringify(body));
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** How metav1.Time encodes: RFC 3339 in whole seconds. */
const RFC3339_SECONDS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;

/**
 * Server-filled metadata and status dropped; the timestamps inside pod hash annotations blanked if in metav1.Time's
 * format.
 */
export function normalize(o: Json): Json {
  if (!o || typeof o !== 'object') return o;
  const out = structuredClone(o);
  for (const k of ['uid', 'creationTimestamp', 'resourceVersion', 'managedFields', 'generation'])
    delete out.metadata?.[k];
  delete out.status;
  const ann = out.metadata?.annotations as Record<string, string> | undefined;
  for (const k of [SidecarSetAnnotations.hash, SidecarSetAnnotations.hashWithoutImage]) {
    if (!ann?.[k] || out.kind !== 'Pod') continue;
    const entries = JSON.parse(ann[k]) as Record<string, Json>;
    ann[k] = JSON.stringify(
      Object.fromEntries(
        Object.entries(entries).map(([n, e]) => [
          n,
          RFC3339_SECONDS.test(e?.updateTimestamp) ? { ...e, updateTimestamp: '<now>' } : e,
        ]),
      ),
    );
  }
  return out;
}

function outcome(res: { status: number; body: Json }): Outcome {
  const allowed = res.status < 300;
  return allowed
    ? { allowed, status: res.status, object: normalize(res.body) }
    : { allowed, status: res.status, message: String(res.body?.message ?? res.body).slice(0, 400) };
}

async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * Creates a marker SidecarSet and waits until a dry-run pod gets its sidecar: every SidecarSet
 * written before it is then in the serving manager's cache (an informer delivers in order), so
 * conflict checks and injection judge the same set on both sides. Retries while the webhooks are
 * not served yet (failurePolicy Fail), so it also waits for a manager to start serving.
 */
export async function syncMarker(api: ApiClient, run: string, n: number, timeoutMs: number): Promise<void> {
  const id = `sync-${n}`;
  const name = `${run}-${id}`;
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    const created = await api.call('POST', SETS, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name, labels: { [RUN_LABEL]: run } },
      spec: {
        selector: { matchLabels: { [CASE_LABEL]: id } },
        containers: [{ name: `marker-${n}`, image: 'marker:1' }],
      },
    });
    if (created.status < 300 || created.status === 409) {
      const probe = await api.call('POST', `/api/v1/namespaces/${Object.keys(NAMESPACES)[0]}/pods?dryRun=All`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'probe', labels: { [CASE_LABEL]: id } },
        spec: { containers: [{ name: 'main', image: 'main:1' }] },
      });
      if (probe.status < 300 && (probe.body.spec.containers as Json[]).some((c) => c.name === `marker-${n}`)) return;
      last = `probe pod: HTTP ${probe.status} ${JSON.stringify(probe.body?.spec?.containers?.map((c: Json) => c.name) ?? probe.body?.message)}`;
    } else {
      last = `marker SidecarSet: HTTP ${created.status} ${created.body?.message ?? ''}`;
    }
    if (Date.now() > deadline)
      throw new Error(`the webhooks did not serve marker ${name} within ${timeoutMs} ms (last: ${last})`);
    await sleep(250);
  }
}

/**
 * Runs every case against the manager now serving: creates of each case's first SidecarSets, then
 * of the second ones, then the updates, then the pods (server-side dry run), with a cache sync
 * between steps. `syncTimeoutMs` bounds the first sync, which also waits for the webhooks.
 */
export async function record(
  api: ApiClient,
  cases: DiffCase[],
  run: string,
  syncTimeoutMs: number,
): Promise<Recording> {
  const rec: Recording = new Map();
  let marker = 0;
  await syncMarker(api, run, marker++, syncTimeoutMs);
  for (const k of [0, 1]) {
    await pool(
      cases.filter((c) => c.sets[k]),
      async (c) => {
        rec.set(`${c.id} create ${c.sets[k].metadata.name}`, outcome(await api.call('POST', SETS, c.sets[k])));
      },
    );
    await syncMarker(api, run, marker++, 30_000);
  }
  await pool(
    cases.filter((c) => c.update),
    async (c) => {
      const res = await api.call(
        'PATCH',
        `${SETS}/${c.sets[0].metadata.name}`,
        [{ op: 'replace', path: '/spec', value: c.update }],
        'application/json-patch+json',
      );
      rec.set(`${c.id} update ${c.sets[0].metadata.name}`, outcome(res));
    },
  );
  // Pods record status.latestRevision: each side's controller must have written it for the
  // current spec first, else the recording captures how fast a controller is, not what it writes.
  const waited = await settleStatus(api, run, 60_000);
  process.stderr.write(`sidecarset-differential: every SidecarSet status current ${waited} ms after the last update\n`);
  await syncMarker(api, run, marker, 30_000);
  await pool(
    cases.flatMap((c) => c.pods.map((p) => ({ c, p }))),
    async ({ c, p }) => {
      rec.set(
        `${c.id} pod ${p.metadata!.name}`,
        outcome(await api.call('POST', `/api/v1/namespaces/${p.metadata!.namespace}/pods?dryRun=All`, p)),
      );
    },
  );
  return rec;
}

/**
 * Waits until the controller has written the status of every SidecarSet of `run` for its current
 * generation (observedGeneration, and latestRevision: the ControllerRevision injection records);
 * answers how long that took.
 */
export async function settleStatus(api: ApiClient, run: string, timeoutMs: number): Promise<number> {
  const start = Date.now();
  const deadline = start + timeoutMs;
  for (;;) {
    const list = await api.call('GET', `${SETS}?labelSelector=${RUN_LABEL}%3D${run}`);
    const behind = ((list.body.items ?? []) as Json[])
      .filter((s) => s.status?.observedGeneration !== s.metadata.generation || !s.status?.latestRevision)
      .map((s) => s.metadata.name as string);
    if (list.status < 300 && !behind.length) return Date.now() - start;
    if (Date.now() > deadline)
      throw new Error(
        `no status for the current spec of ${behind.length} SidecarSets after ${timeoutMs} ms: ${behind.slice(0, 10).join(', ')}`,
      );
    await sleep(250);
  }
}

/** Deletes every SidecarSet of `run` and waits until none is left. */
export async function deleteRun(api: ApiClient, run: string): Promise<void> {
  const res = await api.call('DELETE', `${SETS}?labelSelector=${RUN_LABEL}%3D${run}`);
  if (res.status >= 300 && res.status !== 404)
    throw new Error(`deleting the run's SidecarSets: HTTP ${res.status} ${res.body?.message}`);
  for (let i = 0; i < 200; i++) {
    const left = await api.call('GET', `${SETS}?labelSelector=${RUN_LABEL}%3D${run}`);
    if (left.status === 404 || !left.body.items?.length) return;
    await sleep(100);
  }
  throw new Error(`SidecarSets of run ${run} are still there after deletion`);
}

/** Paths where `a` and `b` differ (at most `max`). */
export function differences(a: unknown, b: unknown, path = '', max = 4): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && Array.isArray(a) === Array.isArray(b)) {
    const out: string[] = [];
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])]) {
      out.push(
        ...differences(
          (a as Record<string, unknown>)[k],
          (b as Record<string, unknown>)[k],
          `${path}/${k}`,
          max - out.length,
        ),
      );
      if (out.length >= max) break;
    }
    return out;
  }
  return [`${path || '/'}: upstream ${JSON.stringify(a)?.slice(0, 300)}, ours ${JSON.stringify(b)?.slice(0, 300)}`];
}

export interface Difference {
  key: string;
  kind: 'decision' | 'object';
  detail: string[];
  upstream?: Outcome;
  ours?: Outcome;
}

/** Every entry where the two recordings differ: the decision, or the object both accepted. */
export function compare(upstream: Recording, ours: Recording): Difference[] {
  const out: Difference[] = [];
  for (const key of [...new Set([...upstream.keys(), ...ours.keys()])]) {
    const u = upstream.get(key);
    const o = ours.get(key);
    if (!u || !o) {
      out.push({ key, kind: 'decision', detail: [`only ${u ? 'upstream' : 'ours'} answered`], upstream: u, ours: o });
    } else if (u.allowed !== o.allowed) {
      out.push({
        key,
        kind: 'decision',
        detail: [
          `upstream ${u.allowed ? 'allowed' : `denied (${u.status}: ${u.message})`}, ours ${o.allowed ? 'allowed' : `denied (${o.status}: ${o.message})`}`,
        ],
        upstream: u,
        ours: o,
      });
    } else if (u.allowed) {
      const d = differences(u.object, o.object);
      if (d.length) out.push({ key, kind: 'object', detail: d, upstream: u, ours: o });
    }
  }
  return out;
}
