/**
 * Hostile clients of an admission webhook (#25), as any pod in the cluster could run them against
 * the webhook port: slow bodies, idle and slowloris connections, big pods, huge keys. Loopback
 * only; every loop is bounded in count (`maxConnections` per attack) and runs only until stopped.
 * Shared by the fault test (webhook-dos.test.ts) and `npm run bench -- webhook-dos`, which runs the
 * same attacks against upstream's kruise-manager.
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { request, type Agent } from 'node:https';
import { connect as netConnect, type Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { connect as tlsConnect, createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, type KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { podReview } from './ha.js';

export interface Target {
  port: number;
  /** Path of the pod mutating webhook (ours `/mutate-pod`, upstream's the same). */
  path: string;
}

export interface AttackStats {
  /** Connections opened over the attack. */
  opened: number;
  /** Of those, closed by the server (the rest were still open when the attack stopped). */
  closedByServer: number;
}

export interface Attack {
  readonly name: string;
  stop(): Promise<AttackStats>;
}

interface Runner {
  running: boolean;
  sockets: Set<Socket>;
  stats: AttackStats;
}

/**
 * `clients` loops, each opening a connection, running `use` on it until the server closes it,
 * then opening another (after `pauseMs`, default 1 s), until stopped or `maxConnections` were opened in all.
 * Loops start in batches (50 every 100 ms), as a client process would ramp up.
 */
function swarm(
  name: string,
  clients: number,
  open: () => Socket,
  use: (socket: Socket) => void,
  o: { pauseMs?: number; maxConnections?: number } = {},
): Attack {
  const r: Runner = { running: true, sockets: new Set(), stats: { opened: 0, closedByServer: 0 } };
  const max = o.maxConnections ?? clients * 50;
  const loop = async (i: number) => {
    await sleep(Math.floor(i / 50) * 100);
    while (r.running && r.stats.opened < max) {
      const socket = open();
      r.stats.opened++;
      r.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('data', () => undefined); // read whatever the server answers (a 408, a 429)
      use(socket);
      await new Promise<void>((resolve) =>
        socket.once('close', () => {
          r.sockets.delete(socket);
          if (r.running) r.stats.closedByServer++;
          resolve();
        }),
      );
      if (r.running) await sleep(o.pauseMs ?? 1_000);
    }
  };
  const loops = Array.from({ length: clients }, (_, i) => loop(i));
  return {
    name,
    async stop() {
      r.running = false;
      for (const s of r.sockets) s.destroy();
      await Promise.all(loops);
      return r.stats;
    },
  };
}

/**
 * One TLS client context for every connection of a process, as a real client keeps one (Go's
 * http.Transport does): Node builds a new one per connection otherwise, ~3 ms each here (the CA
 * bundle of NODE_EXTRA_CA_CERTS is parsed every time), which throttled the attackers and stalled
 * the legitimate clients sharing their event loop.
 */
let context: SecureContext | undefined;
const clientContext = () => (context ??= createSecureContext());

const tls = (t: Target) => () =>
  tlsConnect({
    host: '127.0.0.1',
    port: t.port,
    servername: 'localhost',
    rejectUnauthorized: false,
    secureContext: clientContext(),
  });

/** Writes `bytes()` every `everyMs` until the socket closes. */
function drip(socket: Socket, everyMs: number, bytes: () => string): void {
  const timer = setInterval(() => {
    if (!socket.destroyed) socket.write(bytes());
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

/**
 * Slow uploads: POST with `Content-Length: length` (or chunked), the first byte of the body, then
 * one byte every `everyMs`.
 */
export function slowBodies(
  t: Target,
  clients: number,
  length: number | 'chunked',
  everyMs = 1_000,
  maxConnections?: number,
): Attack {
  const framing = length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`;
  const byte = () => (length === 'chunked' ? '1\r\n{\r\n' : '{');
  return swarm(
    `${clients} slow ${length === 'chunked' ? 'chunked' : `${length}-byte`} uploads`,
    clients,
    tls(t),
    (socket) => {
      (socket as TLSSocket).once('secureConnect', () => {
        socket.write(
          `POST ${t.path} HTTP/1.1\r\nHost: webhook\r\nContent-Type: application/json\r\n${framing}\r\n\r\n${byte()}`,
        );
        drip(socket, everyMs, byte);
      });
    },
    { maxConnections },
  );
}

/** TLS connections that complete the handshake and send nothing. */
export function idleTls(t: Target, clients: number, maxConnections?: number): Attack {
  return swarm(`${clients} idle TLS connections`, clients, tls(t), () => undefined, { maxConnections });
}

/** Slowloris: a request line, then one header line every `everyMs`, never ending the headers. */
export function slowloris(t: Target, clients: number, everyMs = 1_000, maxConnections?: number): Attack {
  return swarm(
    `${clients} slowloris TLS connections`,
    clients,
    tls(t),
    (socket) => {
      (socket as TLSSocket).once('secureConnect', () => {
        socket.write(`POST ${t.path} HTTP/1.1\r\nHost: webhook\r\n`);
        drip(socket, everyMs, () => `X-${randomUUID().slice(0, 8)}: a\r\n`);
      });
    },
    { maxConnections },
  );
}

/** TCP connections that never start TLS. */
export function idleTcp(t: Target, clients: number, maxConnections?: number): Attack {
  return swarm(
    `${clients} idle TCP connections`,
    clients,
    () => netConnect(t.port, '127.0.0.1'),
    () => undefined,
    { maxConnections },
  );
}

/** Runs `attacks` together as one. */
export function together(...attacks: Attack[]): Attack {
  return {
    name: attacks.map((a) => a.name).join(' + '),
    async stop() {
      const all = await Promise.all(attacks.map((a) => a.stop()));
      return all.reduce(
        (a, b) => ({ opened: a.opened + b.opened, closedByServer: a.closedByServer + b.closedByServer }),
        { opened: 0, closedByServer: 0 },
      );
    },
  };
}

/** One attack, as data: what {@link attackProcess} runs in a process of its own. */
export type AttackSpec =
  | { kind: 'slowBodies'; clients: number; length: number | 'chunked'; everyMs?: number; maxConnections?: number }
  | { kind: 'idleTls'; clients: number; maxConnections?: number }
  | { kind: 'slowloris'; clients: number; everyMs?: number; maxConnections?: number }
  | { kind: 'idleTcp'; clients: number; maxConnections?: number };

const MiB = 1024 * 1024;

/**
 * Every attack of #25 at once: 1,000 slow uploads, one slow 2 MiB and one chunked, 1,000 idle TLS,
 * 300 slowloris, 300 idle TCP.
 */
export const EVERY_ATTACK: readonly AttackSpec[] = [
  { kind: 'slowBodies', clients: 1_000, length: MiB },
  { kind: 'slowBodies', clients: 1, length: 2 * MiB },
  { kind: 'slowBodies', clients: 1, length: 'chunked' },
  { kind: 'idleTls', clients: 1_000 },
  { kind: 'slowloris', clients: 300 },
  { kind: 'idleTcp', clients: 300 },
];

/** Starts the attacks `specs` describe, in this process. */
export function startAttack(t: Target, specs: readonly AttackSpec[]): Attack {
  return together(
    ...specs.map((s) => {
      switch (s.kind) {
        case 'slowBodies':
          return slowBodies(t, s.clients, s.length, s.everyMs, s.maxConnections);
        case 'idleTls':
          return idleTls(t, s.clients, s.maxConnections);
        case 'slowloris':
          return slowloris(t, s.clients, s.everyMs, s.maxConnections);
        case 'idleTcp':
          return idleTcp(t, s.clients, s.maxConnections);
      }
    }),
  );
}

const ATTACKER = fileURLToPath(new URL('./attacker-process.ts', import.meta.url));

/**
 * The attacks `specs` describe, run by a process of their own (as another pod would run them), so
 * the attackers' thousands of TLS clients do not stall the legitimate clients' event loop: what is
 * measured is the server, not the test process. Resolves once the attack has started.
 */
export async function attackProcess(t: Target, specs: readonly AttackSpec[]): Promise<Attack> {
  const child = fork(ATTACKER, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const message = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      child.once('message', (m) => resolve(m as T));
      void exited.then((code) => reject(new Error(`the attacker process exited with ${code}`)));
    });
  const started = message<{ name: string }>();
  child.send({ target: t, specs });
  const { name } = await started;
  return {
    name,
    async stop() {
      const stats = message<AttackStats>();
      child.send('stop');
      const result = await stats;
      await exited;
      return result;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// What a legitimate caller sees

export interface Outcome {
  ok: number;
  failed: number;
  /** The first few failures, for the assertion message. */
  errors: string[];
  latenciesMs: number[];
}

const newOutcome = (): Outcome => ({ ok: 0, failed: 0, errors: [], latenciesMs: [] });

function record(o: Outcome, startedAt: number, error?: string): void {
  if (error === undefined) {
    o.ok++;
    o.latenciesMs.push(performance.now() - startedAt);
  } else {
    o.failed++;
    if (o.errors.length < 5) o.errors.push(error);
  }
}

export function p99(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

/**
 * POSTs `body` to the webhook over a new TLS connection (or `o.agent`'s), as the API server does when it
 * needs another connection, with its default webhook timeout (10 s).
 */
export function postOnNewConnection(
  t: Target,
  body: string | Buffer,
  timeoutMs = 10_000,
  o: { agent?: Agent; chunked?: boolean } = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: t.port,
        path: t.path,
        method: 'POST',
        rejectUnauthorized: false,
        ...(o.agent ? { agent: o.agent } : { agent: false, secureContext: clientContext() }),
        headers: {
          'Content-Type': 'application/json',
          ...(o.chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': Buffer.byteLength(body) }),
        },
        signal: AbortSignal.timeout(timeoutMs),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A small pod-create AdmissionReview, as the API server sends it (ha.ts's podReview, as a body). */
export const podReviewBody = (namespace: string, pod: V1Pod): string => JSON.stringify(podReview(pod, namespace));

export interface Traffic {
  /** Pod creates through the API server: ok only when created with the sidecar. */
  creates: Outcome;
  /** Small reviews straight to the webhook, each on a new connection. */
  newConnections: Outcome;
  stop(): Promise<void>;
}

export interface TrafficOptions {
  kc: KubeConfig;
  namespace: string;
  appLabel: string;
  sidecar: string;
  target: Target;
  /** Concurrent pod-create loops (each opens its own API-server request at once). */
  createLoops?: number;
  /** Pause between one loop's creates. */
  everyMs?: number;
  /** Also send small reviews on new connections (default true). */
  newConnections?: boolean;
}

/** A pod with the app label and one container: the sidecar set selects it. */
export function appPod(name: string, appLabel: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, labels: { app: appLabel } },
    spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }], ...extra },
  };
}

/** Creates `pod` through the API server; undefined when it was created with `sidecar`, else why not. */
export async function createWithSidecar(
  kc: KubeConfig,
  namespace: string,
  pod: V1Pod,
  sidecar: string,
): Promise<string | undefined> {
  try {
    const created = await kc.makeApiClient(CoreV1Api).createNamespacedPod({ namespace, body: pod });
    return created.spec?.containers?.some((c) => c.name === sidecar)
      ? undefined
      : `pod ${pod.metadata?.name} was created without its sidecar`;
  } catch (e) {
    const err = e as { code?: number; body?: unknown; message?: string };
    const body = typeof err.body === 'string' ? err.body : JSON.stringify(err.body ?? '');
    return `pod ${pod.metadata?.name}: ${err.code ?? ''} ${(body || err.message || String(e)).slice(0, 300)}`;
  }
}

/** Legitimate traffic until stopped: pod creates through the API server, and small reviews on new connections. */
export function legitimateTraffic(o: TrafficOptions): Traffic {
  const creates = newOutcome();
  const fresh = newOutcome();
  let running = true;
  let n = 0;
  const loops = Array.from({ length: o.createLoops ?? 2 }, async () => {
    while (running) {
      const t0 = performance.now();
      const name = `legit-${randomUUID().slice(0, 8)}-${n++}`;
      record(creates, t0, await createWithSidecar(o.kc, o.namespace, appPod(name, o.appLabel), o.sidecar));
      await sleep(o.everyMs ?? 200);
    }
  });
  if (o.newConnections ?? true)
    loops.push(
      (async () => {
        while (running) {
          const t0 = performance.now();
          const body = podReviewBody(o.namespace, appPod(`probe-${n++}`, o.appLabel));
          const res = await postOnNewConnection(o.target, body).catch((e: Error) => ({ status: 0, body: e.message }));
          record(
            fresh,
            t0,
            res.status === 200 && res.body.includes('"allowed":true')
              ? undefined
              : `${res.status} ${res.body.slice(0, 200)}`,
          );
          await sleep(o.everyMs ?? 200);
        }
      })(),
    );
  return {
    creates,
    newConnections: fresh,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** A pod create of about `bytes` (env values in one container): over the large-body threshold at 1.1 MB. */
export function largePod(name: string, appLabel: string, bytes = 1_100_000): V1Pod {
  const value = 'v'.repeat(1_000);
  return appPod(name, appLabel, {
    containers: [
      {
        name: 'app',
        image: 'registry.invalid/app:1',
        env: Array.from({ length: Math.ceil(bytes / 1_020) }, (_, i) => ({ name: `E${i}`, value })),
      },
    ],
  });
}

/** A pod with `count` annotations (about 2.8 MB at 200,000: under the API server's 3 MiB request limit). */
export function manyAnnotationsPod(name: string, appLabel: string, count = 200_000): V1Pod {
  const annotations: Record<string, string> = {};
  for (let i = 0; i < count; i++) annotations[`a${i}`] = '';
  return { ...appPod(name, appLabel), metadata: { name, labels: { app: appLabel }, annotations } };
}

/** Highest RSS of process `pid` seen until stopped, sampled every 250 ms. */
export function rssWatcher(pid: number): { max: () => number; stop: () => void } {
  let max = 0;
  const sample = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      max = Math.max(max, kb * 1024);
    } catch {
      /* exited */
    }
  };
  sample();
  const timer = setInterval(sample, 250);
  return { max: () => max, stop: () => clearInterval(timer) };
}

/** /proc/loadavg's 1-minute figure: the machine's load when a figure was taken. */
export function loadAverage(): number {
  return Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
}
