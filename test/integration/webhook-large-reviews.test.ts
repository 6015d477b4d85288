// Large reviews must not hold up small ones (#16: "a 7 MB review blocks the event loop, p99 of
// other requests 1.2 s meanwhile"). The runtime's webhook server runs in a process of its own
// (real TLS, the real pod injection webhook); while ~7 MB AdmissionReviews (a pod with 200,000
// env vars, a 2-million-element array, an object nested a million levels deep) are uploaded,
// parsed and answered, small reviews keep arriving from four clients.
//
// Judged against a negative control on the same machine, at the same time: the same server
// with its large-body path turned off (one JSON.parse and one walk per body, as before the fix).
// The claims are comparisons and orderings, never a speed: the answers are byte-identical; the
// server's own event-loop delay stays a fraction of the control's; small reviews keep
// completing between the moments the large ones are answered.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fork, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { fileURLToPath } from 'node:url';
import type { FixtureLag, FixtureReady } from './support/webhook-server-process.js';

const MiB = 1024 * 1024;
const FIXTURE = fileURLToPath(new URL('./support/webhook-server-process.ts', import.meta.url));

interface Target {
  child: ChildProcess;
  port: number;
  caPem: string;
}

async function startServer(env: Record<string, string> = {}): Promise<Target> {
  const child = fork(FIXTURE, [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, NODE_OPTIONS: '', ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<FixtureReady>((resolve, reject) => {
    child.once('message', (m) => resolve(m as FixtureReady));
    child.once('exit', (code) => reject(new Error(`webhook server process exited with ${code} before it was ready`)));
  });
  return { child, ...ready };
}

function lagOf(t: Target): Promise<FixtureLag> {
  return new Promise((resolve) => {
    t.child.once('message', (m) => resolve(m as FixtureLag));
    t.child.send('lag');
  });
}

function review(uid: string, pod: unknown): Buffer {
  return Buffer.from(
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid,
        kind: { group: '', version: 'v1', kind: 'Pod' },
        resource: { group: '', version: 'v1', resource: 'pods' },
        namespace: 'apps',
        operation: 'CREATE',
        userInfo: { username: 'system:admin' },
        object: { apiVersion: 'v1', kind: 'Pod', ...(pod as object) },
        dryRun: false,
      },
    }),
  );
}

const bigPod = (spec: unknown) => ({ metadata: { name: 'big', labels: { app: 'batch' } }, spec });
/** Big reviews, each under the server's 7 MiB limit: many small objects, a huge array, deep nesting. */
const LARGE: Record<string, Buffer> = {
  'env-1': review(
    'env-1',
    bigPod({
      containers: Array.from({ length: 40 }, (_, c) => ({
        name: `c${c}`,
        image: 'app:1',
        env: Array.from({ length: 5_000 }, (_, i) => ({ name: `VAR_${i}`, value: `v${i}` })),
      })),
    }),
  ),
  'env-2': review(
    'env-2',
    bigPod({
      containers: Array.from({ length: 40 }, (_, c) => ({
        name: `d${c}`,
        image: 'app:2',
        env: Array.from({ length: 5_000 }, (_, i) => ({ name: `VAR_${i}`, value: `w${i}` })),
      })),
    }),
  ),
  array: review(
    'array',
    bigPod({ containers: [{ name: 'app', image: 'app:1', args: Array.from({ length: 2_200_000 }, () => '') }] }),
  ),
  deep: Buffer.from(
    review('deep', bigPod({ containers: [{ name: 'app', image: 'app:1', lifecycle: '@@' }] }))
      .toString()
      .replace('"@@"', `${'{"a":'.repeat(1_150_000)}1${'}'.repeat(1_150_000)}`),
  ),
};
const SMALL_POD = {
  metadata: { name: 'small', labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'web:1' }] },
};

interface Answer {
  status: number;
  body: string;
  sent: number;
  end: number;
}

function post(t: Target, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    let sent = start;
    const req = request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port: t.port,
        path: '/mutate-pod',
        method: 'POST',
        ca: t.caPem,
        agent: false,
        headers: { 'Content-Type': 'application/json', 'Content-Length': body.length },
        signal: AbortSignal.timeout(120_000),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res
          .on('data', (d: Buffer) => chunks.push(d))
          .on('end', () =>
            resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), sent, end: performance.now() }),
          );
      },
    );
    req.on('finish', () => {
      sent = performance.now();
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Run {
  large: Record<string, Answer>;
  small: Answer[];
  lag: FixtureLag;
  windowStart: number;
  windowEnd: number;
}

/**
 * All large reviews at once, four clients sending small reviews one after another until the last large one is answered.
 */
async function load(t: Target): Promise<Run> {
  await lagOf(t); // resets the server's histogram: only this run counts
  let running = true;
  const small: Answer[] = [];
  const clients = Array.from({ length: 4 }, async (_, c) => {
    for (let i = 0; running; i++) small.push(await post(t, review(`small-${c}-${i}`, SMALL_POD)));
  });
  const entries = await Promise.all(
    Object.entries(LARGE).map(async ([name, body]) => [name, await post(t, body)] as const),
  );
  running = false;
  await Promise.all(clients);
  const lag = await lagOf(t);
  const large = Object.fromEntries(entries);
  return {
    large,
    small,
    lag,
    windowStart: Math.max(...entries.map(([, a]) => a.sent)),
    windowEnd: Math.max(...entries.map(([, a]) => a.end)),
  };
}

/** Longest stretch inside [from, to] in which no small review was answered. */
function longestSilence(run: Run): number {
  const ends = run.small
    .map((a) => a.end)
    .filter((e) => e > run.windowStart && e < run.windowEnd)
    .sort((a, b) => a - b);
  const points = [run.windowStart, ...ends, run.windowEnd];
  return Math.max(...points.slice(1).map((p, i) => p - points[i]));
}

let cooperative: Target;
let control: Target;

beforeAll(async () => {
  for (const [name, body] of Object.entries(LARGE)) {
    if (body.length > 7 * MiB || body.length < 6 * MiB)
      throw new Error(`fixture ${name} is ${body.length} bytes; keep it between 6 and 7 MiB`);
  }
  // The large reviews take turns (one at a time), and each may wait 9 s by default before it is refused with a 429.
  // On a loaded machine the last of them waited longer (a run at load 14-20 got a 429): what this file judges is the
  // event loop's fairness, not that budget (test/unit/runtime/webhook/limiter.test.ts times a waiter out), so both
  // servers here let a review wait for its turn as long as the test's own bound.
  const wait = { HANDLER_TIMEOUT_MS: '120000' };
  [cooperative, control] = await Promise.all([
    startServer(wait),
    startServer({ ...wait, LARGE_BODY_BYTES: String(8 * MiB) }),
  ]);
}, 60_000);

afterAll(() => {
  for (const t of [cooperative, control]) t?.child.disconnect();
});

describe('large AdmissionReviews do not hold up small ones', () => {
  it('answers small reviews while ~7 MB reviews are parsed and answered; answers identical to the blocking path', async () => {
    const blocking = await load(control);
    const sliced = await load(cooperative);
    const figures = (name: string, r: Run) =>
      `${name}: server event-loop delay max ${r.lag.maxMs.toFixed(0)} ms (p99 ${r.lag.p99Ms.toFixed(0)}), ` +
      `${r.small.length} small reviews, longest stretch without a small answer while large ones were in the server ${longestSilence(r).toFixed(0)} ms ` +
      `of ${(r.windowEnd - r.windowStart).toFixed(0)} ms`;
    process.stderr.write(
      `\nlarge reviews:\n  ${figures('blocking control', blocking)}\n  ${figures('cooperative', sliced)}\n`,
    );

    for (const r of [blocking, sliced]) {
      for (const a of r.small) {
        expect(a.status).toBe(200);
        expect(a.body).toContain('"allowed":true');
        expect(a.body).toContain('"patch"');
      }
    }
    for (const name of Object.keys(LARGE)) {
      expect(sliced.large[name].status).toBe(200);
      expect(sliced.large[name].body).toBe(blocking.large[name].body);
    }
    // Small reviews kept being answered all through the large ones' work: no silence longer
    // than a quarter of it (a blocking parse or walk of one 7 MB body is most of it; measured
    // 55-67% on the control), and the server's own event loop was held less than the control's.
    expect(longestSilence(sliced)).toBeLessThan((sliced.windowEnd - sliced.windowStart) / 4);
    expect(sliced.lag.maxMs).toBeLessThan(blocking.lag.maxMs);
    expect(JSON.parse(sliced.large.deep.body).response).toMatchObject({
      allowed: false,
      status: {
        code: 400,
        message: expect.stringMatching(
          /^request\.object\.spec\.containers\[0\]\.lifecycle\.a.*nests deeper than 100 levels/,
        ),
      },
    });
    expect(JSON.parse(sliced.large['env-1'].body).response).toEqual({ uid: 'env-1', allowed: true });
    expect(JSON.parse(sliced.large.array.body).response).toEqual({ uid: 'array', allowed: true });
  }, 300_000);
});
