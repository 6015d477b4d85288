// Property tests: whatever arrives, the webhook server answers with a 4xx or a well-formed
// AdmissionReview (never a 5xx, a hang or a crash), and keeps serving afterwards.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Agent } from 'node:https';
import { connect } from 'node:tls';
import { Registry } from 'prom-client';
import {
  allow,
  deny,
  mutating,
  patch,
  validating,
  WebhookServer,
  type KubeObject,
} from '../../../../lib/runtime/webhook/index.js';
import {
  httpsRequest,
  makePki,
  quietLogger,
  review,
  tempDir,
  writePki,
  type HttpResult,
  type TestPki,
} from '../tls-fixtures.js';

const LIMIT = 64 * 1024;
const dir = tempDir();
const registry = new Registry();
let pki: TestPki;
let server: WebhookServer;
let agent: Agent;

beforeAll(async () => {
  pki = await makePki();
  await writePki(dir.path, pki);
  server = new WebhookServer({
    certDir: dir.path,
    logger: quietLogger(),
    registry,
    port: 0,
    host: '127.0.0.1',
    maxBodyBytes: LIMIT,
  });
  // Handlers that dig into the object the way real ones do, so odd-but-valid input reaches user code.
  server.register(
    '/mutate',
    mutating((req) => {
      const meta = (req.object as KubeObject).metadata as KubeObject; // throws on DELETE-shaped input: must become a denial
      return patch([{ op: 'add', path: '/metadata/annotations', value: { seen: String(meta.name) } }]);
    }),
  );
  server.register(
    '/validate',
    validating((req) => (req.operation === 'DELETE' ? deny('no deletes') : allow())),
  );
  await server.start();
  agent = new Agent({ keepAlive: true, maxSockets: 8 });
});

afterAll(async () => {
  agent.destroy();
  await server.stop();
  dir.remove();
});

function send(
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = {},
  method = 'POST',
): Promise<HttpResult> {
  return httpsRequest({ port: server.port(), ca: pki.ca.certPem, path, method, body, headers, agent });
}

/** 4xx, or 200 with an AdmissionReview answering `uid` in the version that was asked. */
function assertWellFormed(res: HttpResult, sent: unknown): void {
  if (res.status >= 400 && res.status < 500) {
    expect(JSON.parse(res.body)).toMatchObject({ kind: 'Status', code: res.status, message: expect.any(String) });
    return;
  }
  expect(res.status).toBe(200);
  const { apiVersion, kind, response } = JSON.parse(res.body);
  const asked = sent as { apiVersion: string; request: { uid: string } };
  expect(kind).toBe('AdmissionReview');
  expect(apiVersion).toBe(asked.apiVersion);
  expect(response.uid).toBe(asked.request.uid);
  expect(typeof response.allowed).toBe('boolean');
  if (!response.allowed)
    expect(response.status).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
  if (response.patch !== undefined) {
    expect(response.patchType).toBe('JSONPatch');
    expect(Array.isArray(JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')))).toBe(true);
  }
}

// ---- generators ----------------------------------------------------------------------------
const fieldPaths = [
  'apiVersion',
  'kind',
  'request',
  'request.uid',
  'request.kind',
  'request.kind.kind',
  'request.kind.group',
  'request.resource',
  'request.resource.resource',
  'request.operation',
  'request.namespace',
  'request.name',
  'request.userInfo',
  'request.userInfo.groups',
  'request.userInfo.extra',
  'request.object',
  'request.oldObject',
  'request.dryRun',
  'request.options',
  'request.subResource',
];

function setPath(obj: Record<string, unknown>, path: string, value: unknown, remove: boolean): void {
  const keys = path.split('.');
  let at: Record<string, unknown> = obj;
  for (const k of keys.slice(0, -1)) {
    if (typeof at[k] !== 'object' || at[k] === null) return;
    at = at[k] as Record<string, unknown>;
  }
  if (remove) delete at[keys[keys.length - 1]];
  else at[keys[keys.length - 1]] = value;
}

const baseReview = fc
  .record({
    version: fc.constantFrom('admission.k8s.io/v1', 'admission.k8s.io/v1beta1'),
    uid: fc.uuid(),
    operation: fc.constantFrom('CREATE', 'UPDATE', 'DELETE', 'CONNECT'),
  })
  .map(
    ({ version, uid, operation }) =>
      review({ uid, operation, ...(operation === 'DELETE' ? { object: null } : {}) }, version) as unknown as Record<
        string,
        unknown
      >,
  );

/** A valid review with 1-3 fields deleted or replaced by arbitrary JSON (often the wrong type). */
const mutatedReview = fc
  .tuple(
    baseReview,
    fc.array(fc.tuple(fc.constantFrom(...fieldPaths), fc.jsonValue({ maxDepth: 3 }), fc.boolean()), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([r, edits]) => {
    const copy = structuredClone(r);
    for (const [path, value, remove] of edits) setPath(copy, path, value, remove);
    return copy;
  });

const target = fc.constantFrom('/mutate', '/validate');

const hostileRequest = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(target, mutatedReview)
      .map(([path, r]) => ({ path, body: JSON.stringify(r), sent: r as unknown })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(target, baseReview).map(([path, r]) => ({ path, body: JSON.stringify(r), sent: r as unknown })),
  },
  {
    weight: 2,
    arbitrary: fc.tuple(target, baseReview, fc.nat()).map(([path, r, cut]) => {
      const text = JSON.stringify(r);
      return { path, body: text.slice(0, cut % text.length), sent: undefined };
    }),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(target, fc.jsonValue({ maxDepth: 4 }))
      .map(([path, v]) => ({ path, body: JSON.stringify(v) ?? 'null', sent: v })),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(target, fc.uint8Array({ maxLength: 2048 }))
      .map(([path, bytes]) => ({ path, body: Buffer.from(bytes), sent: undefined })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(target, fc.string({ maxLength: 40 })).map(([path, s]) => ({
      path,
      body: `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":${s}`,
      sent: undefined,
    })),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(target, fc.integer({ min: LIMIT + 1, max: LIMIT * 3 })).map(([path, size]) => ({
      path,
      body: JSON.stringify(review({ object: { pad: 'x'.repeat(size) } })),
      sent: undefined,
    })),
  },
);

const hostileHeaders = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ headers: {} as Record<string, string>, method: 'POST' }) },
  {
    weight: 1,
    arbitrary: fc.record({
      headers: fc.constantFrom(
        { 'Content-Type': 'text/plain' },
        { 'Content-Type': 'application/jsonx' },
        { 'Content-Type': '' },
        { 'Content-Type': 'application/json; charset=utf-8' },
      ),
      method: fc.constant('POST'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      headers: fc.constant({} as Record<string, string>),
      method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH'),
    }),
  },
);

/** Mostly the real path; sometimes one the server must not route. */
const pathNoise = fc.oneof(
  { weight: 12, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('/nope', '/mutate/extra', '/mutate?x=1') },
);

describe('hostile AdmissionReview input', () => {
  it('answers thousands of malformed, truncated, oversized and mistyped bodies with a 4xx or a well-formed review', async () => {
    await fc.assert(
      fc.asyncProperty(hostileRequest, hostileHeaders, pathNoise, async (req, extra, noise) => {
        const path = noise === '' ? req.path : noise;
        const res = await send(path, extra.method === 'GET' ? '' : req.body, extra.headers, extra.method);
        if (req.sent === undefined || res.status !== 200) {
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
          return;
        }
        assertWellFormed(res, req.sent);
      }),
      { numRuns: 3500 },
    );

    // Still serving, and every request was accounted for.
    const ok = await send('/validate', JSON.stringify(review()));
    expect(JSON.parse(ok.body).response).toEqual({ uid: review().request.uid, allowed: true });
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/controller_runtime_webhook_requests_in_flight\{webhook="\/mutate"\} 0/);
    expect(metrics).toMatch(/controller_runtime_webhook_requests_in_flight\{webhook="\/validate"\} 0/);
    expect(metrics).not.toMatch(/code="5\d\d"/);
  }, 180_000);

  it('survives random bytes at the HTTP layer (inside TLS) and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 4096 }), async (bytes) => {
        const reply = await new Promise<string>((resolve, reject) => {
          const socket = connect(
            { host: '127.0.0.1', port: server.port(), servername: 'localhost', ca: pki.ca.certPem },
            () => {
              socket.end(Buffer.from(bytes));
            },
          );
          let got = '';
          socket.setEncoding('utf8').on('data', (d: string) => {
            got += d;
          });
          socket.on('close', () => resolve(got));
          socket.on('error', (e) => (/ECONNRESET|EPIPE/.test(e.message) ? resolve(got) : reject(e)));
        });
        // Either Node's parser rejected it (400) or it never became a complete request.
        if (reply !== '') expect(reply).toMatch(/^HTTP\/1\.1 4\d\d /);
      }),
      { numRuns: 300 },
    );
    const ok = await send('/validate', JSON.stringify(review()));
    expect(ok.status).toBe(200);
  }, 120_000);
});

describe('hostile objects inside a well-formed review (the contract: a 4xx naming the field, never a 500)', () => {
  /** `{"a":{"a":...}}` nested `depth` levels deep, as text (building it as an object would recurse to print it). */
  const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const reviewWith = (objectJson: string) =>
    JSON.stringify(review()).replace(/"object":\{.*?"spec":\{"containers":\[\]\}\}/, `"object":${objectJson}`);

  it('request.object: null on CREATE is a 400 naming request.object', async () => {
    const res = await send('/mutate', JSON.stringify(review({ object: null })));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).message).toBe(
      'invalid AdmissionReview: request.object: is required for CREATE, got null',
    );
  });

  /** The denial a well-formed review gets (the API server shows its message to the user). */
  const denial = (res: HttpResult) => {
    expect(res.status).toBe(200);
    const { response } = JSON.parse(res.body) as {
      response: { uid: string; allowed: boolean; status: { code: number; message: string } };
    };
    expect(response).toMatchObject({ uid: review().request.uid, allowed: false, status: { code: 400 } });
    return response.status.message;
  };

  it.each([150, 2_500, 10_000])(
    'an object nested %i levels deep is denied with a 400 naming where it goes too deep (no stack overflow)',
    async (depth) => {
      const body = reviewWith(
        `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"containers":[{"name":"a","image":"b","x":${nested(depth)}}]}}`,
      );
      expect(denial(await send('/mutate', body))).toMatch(
        /^request\.object\.spec\.containers\[0\]\.x\.a\.a.*: nests deeper than 100 levels/,
      );
    },
  );

  it('a number JSON cannot hold (1e999999 parses to Infinity) is denied with a 400 naming the field', async () => {
    const body = reviewWith(
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"inf"},"spec":{"containers":[],"priority":1e999999}}',
    );
    expect(denial(await send('/mutate', body))).toBe(
      'request.object.spec.priority: is a number out of range (it does not fit a 64-bit float)',
    );
  });
});
