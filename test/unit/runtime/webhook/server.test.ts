import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import {
  allow,
  deny,
  exemptSystemNamespaces,
  mutating,
  patch,
  pointer,
  validating,
  WebhookServer,
  type AdmissionRequest,
} from '../../../../lib/runtime/webhook/index.js';
import { httpsRequest, makePki, quietLogger, review, tempDir, writePki, type TestPki } from '../tls-fixtures.js';

let pki: TestPki;
const dir = tempDir();
beforeAll(async () => {
  pki = await makePki();
  await writePki(dir.path, pki);
});
afterAll(() => dir.remove());

const servers: WebhookServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function startServer(opts: Partial<ConstructorParameters<typeof WebhookServer>[0]> = {}) {
  const registry = new Registry();
  const server = new WebhookServer({
    certDir: dir.path,
    logger: quietLogger(),
    registry,
    port: 0,
    host: '127.0.0.1',
    ...opts,
  });
  const seen: AdmissionRequest[] = [];
  server.register(
    '/mutate',
    mutating((req) => {
      seen.push(req);
      return patch([{ op: 'add', path: pointer('metadata', 'labels'), value: { 'kruise.io/injected': 'true' } }]);
    }),
  );
  server.register(
    '/validate',
    validating((req) => (req.name === 'forbidden' ? deny('name "forbidden" is reserved') : allow(['looks fine']))),
  );
  servers.push(server);
  await server.start();
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    httpsRequest({
      port: server.port(),
      ca: pki.ca.certPem,
      path,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers,
    });
  return { server, registry, seen, post };
}

const json = (text: string) => JSON.parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('WebhookServer round trips', () => {
  it('answers a v1 mutating review with a base64 JSONPatch, echoing uid and version', async () => {
    const { post, seen } = await startServer();
    const res = await post('/mutate', review());
    expect(res.status).toBe(200);
    const body = json(res.body);
    expect(body).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' });
    expect(body.response).toMatchObject({ uid: review().request.uid, allowed: true, patchType: 'JSONPatch' });
    expect(JSON.parse(Buffer.from(body.response.patch, 'base64').toString('utf8'))).toEqual([
      { op: 'add', path: '/metadata/labels', value: { 'kruise.io/injected': 'true' } },
    ]);
    expect(seen[0]).toMatchObject({
      operation: 'CREATE',
      namespace: 'default',
      name: 'web-0',
      dryRun: false,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { resource: 'pods' },
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
    });
    expect(seen[0].oldObject).toBeUndefined();
  });

  it('answers v1beta1 in v1beta1', async () => {
    const { post } = await startServer();
    const res = await post('/validate', review({}, 'admission.k8s.io/v1beta1'));
    expect(json(res.body)).toEqual({
      apiVersion: 'admission.k8s.io/v1beta1',
      kind: 'AdmissionReview',
      response: { uid: review().request.uid, allowed: true, warnings: ['looks fine'] },
    });
  });

  it('returns a denial with 403 and the handler message', async () => {
    const { post } = await startServer();
    const res = await post('/validate', review({ name: 'forbidden' }));
    expect(res.status).toBe(200);
    expect(json(res.body).response).toEqual({
      uid: review().request.uid,
      allowed: false,
      status: { code: 403, message: 'name "forbidden" is reserved' },
    });
  });

  it('accepts a Content-Type with parameters', async () => {
    const { post } = await startServer();
    const res = await post('/validate', review(), { 'Content-Type': 'application/json; charset=utf-8' });
    expect(res.status).toBe(200);
  });
});

describe('WebhookServer rejects bad requests with a clear status', () => {
  const cases: Array<
    [string, (p: Awaited<ReturnType<typeof startServer>>) => ReturnType<typeof httpsRequest>, number, RegExp]
  > = [
    ['an unknown path', ({ post }) => post('/nope', review()), 404, /no webhook is registered at \/nope/],
    [
      'a GET',
      ({ server }) => httpsRequest({ port: server.port(), ca: pki.ca.certPem, path: '/mutate', method: 'GET' }),
      405,
      /use POST/,
    ],
    [
      'a non-JSON content type',
      ({ post }) => post('/mutate', review(), { 'Content-Type': 'text/plain' }),
      415,
      /application\/json/,
    ],
    ['malformed JSON', ({ post }) => post('/mutate', '{"apiVersion":'), 400, /not valid JSON/],
    ['a JSON array', ({ post }) => post('/mutate', '[]'), 400, /\(body\): must be a JSON object/],
    [
      'a wrong apiVersion',
      ({ post }) => post('/mutate', { ...review(), apiVersion: 'admission.k8s.io/v2' }),
      400,
      /apiVersion: must be one of/,
    ],
    [
      'a wrong kind',
      ({ post }) => post('/mutate', { ...review(), kind: 'ConversionReview' }),
      400,
      /kind: must be AdmissionReview/,
    ],
    [
      'a missing request',
      ({ post }) => post('/mutate', { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }),
      400,
      /request: is missing/,
    ],
    ['a missing uid', ({ post }) => post('/mutate', review({ uid: undefined })), 400, /request\.uid: is missing/],
    ['an empty uid', ({ post }) => post('/mutate', review({ uid: '' })), 400, /request\.uid: must not be empty/],
    [
      'a numeric operation',
      ({ post }) => post('/mutate', review({ operation: 7 })),
      400,
      /request\.operation: must be a string/,
    ],
    [
      'an unknown operation',
      ({ post }) => post('/mutate', review({ operation: 'PATCH' })),
      400,
      /request\.operation: must be one of/,
    ],
    [
      'an object that is an array',
      ({ post }) => post('/mutate', review({ object: [1] })),
      400,
      /request\.object: must be an object/,
    ],
    [
      'a kind without kind',
      ({ post }) => post('/mutate', review({ kind: { version: 'v1' } })),
      400,
      /request\.kind\.kind: is missing/,
    ],
    [
      'groups that are not strings',
      ({ post }) => post('/mutate', review({ userInfo: { groups: [1] } })),
      400,
      /request\.userInfo\.groups/,
    ],
    [
      'a string dryRun',
      ({ post }) => post('/mutate', review({ dryRun: 'yes' })),
      400,
      /request\.dryRun: must be a boolean/,
    ],
  ];

  it.each(cases)('%s', async (_name, send, status, message) => {
    const ctx = await startServer();
    const res = await send(ctx);
    expect(res.status).toBe(status);
    const body = json(res.body);
    expect(body).toMatchObject({ kind: 'Status', status: 'Failure', code: status });
    expect(body.message).toMatch(message);
  });

  it('rejects an oversized body with 413, declared or streamed', async () => {
    const { server, post } = await startServer({ maxBodyBytes: 1024 });
    const big = JSON.stringify(review({ object: { pad: 'x'.repeat(4096) } }));
    expect((await post('/mutate', big)).status).toBe(413);
    // Chunked: no Content-Length, so the cap has to trip while streaming.
    const chunked = await httpsRequest({
      port: server.port(),
      ca: pki.ca.certPem,
      path: '/mutate',
      body: big,
      headers: { 'Transfer-Encoding': 'chunked' },
    });
    expect(chunked.status).toBe(413);
    expect((await post('/mutate', review())).status).toBe(200);
  });
});

describe('WebhookServer turns handler failures into denials', () => {
  it('denies with 500 when the handler throws', async () => {
    const { server, post } = await startServer();
    server.register(
      '/boom',
      validating(() => {
        throw new Error('database on fire');
      }),
    );
    const res = await post('/boom', review());
    expect(res.status).toBe(200);
    expect(json(res.body).response).toMatchObject({
      allowed: false,
      status: { code: 500, message: expect.stringContaining('database on fire') },
    });
  });

  it('denies when a mutating handler returns an invalid patch or a validating one returns patches', async () => {
    const { server, post } = await startServer();
    server.register(
      '/badpatch',
      mutating(() => patch([{ op: 'add', path: 'no-slash', value: 1 }])),
    );
    server.register(
      '/sneaky',
      validating(() => ({ allowed: true, patches: [] }) as never),
    );
    server.register(
      '/garbage',
      validating(() => 42 as never),
    );
    expect(json((await post('/badpatch', review())).body).response.status.message).toMatch(
      /patches\[0\]\.path must be a JSON pointer/,
    );
    expect(json((await post('/sneaky', review())).body).response.status.message).toMatch(
      /validating webhook cannot return patches/,
    );
    expect(json((await post('/garbage', review())).body).response.status.message).toMatch(/instead of a result object/);
  });

  it('denies a handler that does not answer in time and aborts its signal', async () => {
    const clock = new FakeClock(Date.now());
    const { server, post } = await startServer({ clock, handlerTimeoutMs: 5_000 });
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    let aborted = false;
    server.register(
      '/slow',
      validating(
        (_req, { signal }) =>
          new Promise(() => {
            signal.addEventListener('abort', () => {
              aborted = true;
            });
            entered();
          }),
      ),
    );
    const pending = post('/slow', review());
    await inside;
    await clock.advance(5_000);
    const res = await pending;
    expect(json(res.body).response).toMatchObject({
      allowed: false,
      status: { code: 500, message: expect.stringContaining('timed out after 5000ms') },
    });
    expect(aborted).toBe(true);
  });
});

describe('exemptSystemNamespaces', () => {
  it('allows kube-system and the manager namespace without a patch, and patches elsewhere', async () => {
    const { server, post } = await startServer();
    const inject = mutating(() => patch([{ op: 'add', path: '/metadata/labels', value: { a: 'b' } }]));
    server.register('/pods', exemptSystemNamespaces(inject, 'kruise-system'));
    for (const ns of ['kube-system', 'kruise-system']) {
      expect(json((await post('/pods', review({ namespace: ns }))).body).response).toEqual({
        uid: review().request.uid,
        allowed: true,
      });
    }
    expect(json((await post('/pods', review({ namespace: 'apps' }))).body).response.patch).toBeDefined();
  });
});

describe('WebhookServer metrics', () => {
  it('records controller-runtime metrics per registered webhook and never for unknown paths', async () => {
    const { registry, post } = await startServer();
    await post('/mutate', review());
    await post('/mutate', 'not json');
    await post('/unregistered', review());
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_webhook_requests_total{webhook="/mutate",code="200"} 1');
    expect(text).toContain('controller_runtime_webhook_requests_total{webhook="/mutate",code="400"} 1');
    expect(text).toContain('controller_runtime_webhook_latency_seconds_count{webhook="/mutate"} 2');
    expect(text).toContain('controller_runtime_webhook_requests_in_flight{webhook="/mutate"} 0');
    expect(text).not.toContain('/unregistered');
  });

  it('lets two servers share one registry, both counting into it', async () => {
    const registry = new Registry();
    const a = await startServer({ registry });
    const b = await startServer({ registry });
    expect((await a.post('/mutate', review())).status).toBe(200);
    expect((await b.post('/mutate', review())).status).toBe(200);
    expect((await b.post('/mutate', 'not json')).status).toBe(400);
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_webhook_requests_total{webhook="/mutate",code="200"} 2');
    expect(text).toContain('controller_runtime_webhook_requests_total{webhook="/mutate",code="400"} 1');
  });
});

describe('WebhookServer configuration errors', () => {
  it('refuses to start without certificates, naming the file', async () => {
    const empty = tempDir();
    try {
      const server = new WebhookServer({
        certDir: empty.path,
        logger: quietLogger(),
        registry: new Registry(),
        port: 0,
      });
      await expect(server.start()).rejects.toThrow(/cannot read serving certificate .*tls\.crt/);
    } finally {
      empty.remove();
    }
  });

  it('rejects duplicate, relative and reserved paths', async () => {
    const server = new WebhookServer({ certDir: dir.path, logger: quietLogger(), registry: new Registry() });
    server.register(
      '/a',
      validating(() => allow()),
    );
    expect(() =>
      server.register(
        '/a',
        validating(() => allow()),
      ),
    ).toThrow(/already registered/);
    expect(() =>
      server.register(
        'b',
        validating(() => allow()),
      ),
    ).toThrow(/must start with/);
    expect(() =>
      server.register(
        '/healthz',
        validating(() => allow()),
      ),
    ).toThrow(/reserved/);
  });
});
