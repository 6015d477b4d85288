/**
 * The load generator, in its own Node process (issue #29): the benchmark's orchestration (control plane, client-node,
 * the subjects' bookkeeping) never shares an event loop or a heap with the requests it times.
 *
 * Driven over IPC by {@link LoadGenerator} (bench/loadgen-client.ts): `open` creates a keep-alive agent and opens its
 * connections (TLS handshakes done, one request each) before any clock starts; `run` sends at a fixed rate (open loop,
 * each latency from its scheduled send time) or closed loop over N connections, and answers with the latency figures
 * and this process's own stalls during the run: event-loop delay from `monitorEventLoopDelay` at 1 ms resolution with
 * the 1 ms interval subtracted (so 0 means "no stall"), and garbage-collection pauses from `PerformanceObserver`.
 * Requests are pre-serialised; answers are checked by a substring test, not parsed, so the generator spends as
 * little CPU as it can on the shared cores.
 */
import { Agent, request, type RequestOptions } from 'node:https';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** What to send and how to judge an answer. */
export interface LoadTarget {
  /** HTTPS request options without body headers: host, port, path, method, TLS material, auth headers. */
  request: RequestOptions & { ca?: string; cert?: string; key?: string; servername?: string };
  /** Pre-serialised bodies, sent round-robin. */
  bodies: string[];
  /** The HTTP status a correct answer has. */
  status: number;
  /** Every one of these substrings must be in a correct answer's body ... */
  mustContain: string[];
  /** ... and none of these. */
  mustNotContain: string[];
  /** Connections kept open (maxSockets), all opened before the clock starts. */
  pool: number;
  /** Per-request timeout in ms: a request without an answer by then counts as an error. */
  timeoutMs: number;
}

export type LoadRun =
  { mode: 'rate'; rate: number; seconds: number } | { mode: 'closed'; connections: number; seconds: number };

/** The generator's own stalls during a run: what a latency outlier may be, if not the subject's. */
export interface GeneratorStalls {
  /** Event-loop delay beyond the 1 ms sampling interval, ms. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  gcPauses: number;
  gcPauseTotalMs: number;
  gcPauseMaxMs: number;
}

export interface LoadFigures {
  requests: number;
  errors: number;
  achievedPerSecond: number;
  /** From the first send to the last answer. */
  wallSeconds: number;
  answeredPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  generator: GeneratorStalls;
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

let target: LoadTarget | undefined;
let agent: Agent | undefined;

function send(i: number): Promise<boolean> {
  const t = target!;
  const body = t.bodies[i % t.bodies.length];
  return new Promise((resolve) => {
    const req = request(
      { ...t.request, agent, headers: { ...t.request.headers, 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve(
            res.statusCode === t.status &&
              t.mustContain.every((s) => text.includes(s)) &&
              !t.mustNotContain.some((s) => text.includes(s)),
          ),
        );
        res.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
    req.setTimeout(t.timeoutMs, () => req.destroy());
    req.end(body);
  });
}

async function open(t: LoadTarget): Promise<{ opened: number; failed: number }> {
  agent?.destroy();
  target = t;
  agent = new Agent({ keepAlive: true, maxSockets: t.pool, keepAliveMsecs: 1000 });
  // Every connection of the pool opened (and its TLS session established) before the clock starts, as the API
  // server's kept-alive connections to a webhook are.
  const results = await Promise.all(Array.from({ length: t.pool }, (_, i) => send(i)));
  return { opened: results.filter(Boolean).length, failed: results.filter((r) => !r).length };
}

/** Latencies in a growable typed array: no per-request object for the generator's own GC to copy. */
class Samples {
  private data = new Float64Array(1 << 14);
  length = 0;
  push(x: number) {
    if (this.length === this.data.length) {
      const next = new Float64Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = x;
  }
  sorted(): Float64Array {
    return this.data.slice(0, this.length).sort();
  }
}

async function openLoop(rate: number, seconds: number): Promise<{ samples: Samples; errors: number }> {
  const samples = new Samples();
  let errors = 0;
  let inFlight = 0;
  let drained: () => void = () => undefined;
  const total = Math.round(rate * seconds);
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate) + 1);
    for (; sent < due; sent++) {
      const scheduled = start + (sent / rate) * 1000;
      inFlight++;
      void send(sent).then((ok) => {
        if (ok) samples.push(performance.now() - scheduled);
        else errors++;
        if (--inFlight === 0) drained();
      });
    }
    await sleep(1);
  }
  if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve));
  return { samples, errors };
}

async function closedLoop(connections: number, seconds: number): Promise<{ samples: Samples; errors: number }> {
  const samples = new Samples();
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  let i = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        if (await send(i++)) samples.push(performance.now() - t0);
        else errors++;
      }
    }),
  );
  return { samples, errors };
}

async function run(r: LoadRun): Promise<LoadFigures> {
  if (!target) throw new Error('run before open');
  // A full collection before the clock (the child runs with --expose-gc): its own major GC stays out of the run.
  (globalThis as { gc?: () => void }).gc?.();
  const gc = { count: 0, total: 0, max: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.total += e.duration;
      gc.max = Math.max(gc.max, e.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  const { samples, errors } =
    r.mode === 'rate' ? await openLoop(r.rate, r.seconds) : await closedLoop(r.connections, r.seconds);
  const wallSeconds = (performance.now() - started) / 1000;
  loop.disable();
  observer.disconnect();
  const sorted = samples.sorted();
  // The histogram records the time between 1 ms timer ticks: the tick itself is not a stall.
  const stall = (ns: number) => round(Math.max(0, ns / 1e6 - 1), 1);
  return {
    requests: samples.length + errors,
    errors,
    achievedPerSecond: round(samples.length / r.seconds, 1),
    wallSeconds: round(wallSeconds, 1),
    answeredPerSecond: round(samples.length / wallSeconds, 1),
    p50Ms: round(percentile(sorted, 50)),
    p90Ms: round(percentile(sorted, 90)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? NaN),
    generator: {
      loopDelayP99Ms: stall(loop.percentile(99)),
      loopDelayMaxMs: stall(loop.max),
      gcPauses: gc.count,
      gcPauseTotalMs: round(gc.total, 1),
      gcPauseMaxMs: round(gc.max, 2),
    },
  };
}

type Message = { id: number } & ({ op: 'open'; target: LoadTarget } | { op: 'run'; run: LoadRun } | { op: 'close' });

if (process.send) {
  process.on('message', (m: Message) => {
    const reply = (result: unknown) => process.send!({ id: m.id, result });
    const fail = (e: Error) => process.send!({ id: m.id, error: e.stack ?? e.message });
    if (m.op === 'open') open(m.target).then(reply, fail);
    else if (m.op === 'run') run(m.run).then(reply, fail);
    else {
      agent?.destroy();
      reply('closed');
      process.disconnect();
    }
  });
}
