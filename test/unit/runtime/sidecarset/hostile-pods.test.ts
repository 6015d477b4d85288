// Defect 5 of #16 through the real pod injection webhook (a SidecarSet selects the pod, so
// injection runs): hostile pods get a 4xx naming the field, never a 500 and never a patch.
// Each case also goes through the large-body path (largeBodyBytes 1: parsed in slices), which
// must answer byte for byte the same.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { realClock } from '../../../../lib/runtime/clock.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { podInjectionWebhook } from '../../../../lib/runtime/sidecarset/webhooks.js';
import { WebhookServer } from '../../../../lib/runtime/webhook/index.js';
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

const proxy: SidecarSet = {
  metadata: { name: 'proxy' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }] },
};
/** Injection stamps the time into annotations: one instant for both servers, so answers compare byte for byte. */
const fixedClock = { ...realClock, now: () => Date.parse('2026-11-21T00:00:00Z') };
const dir = tempDir();
let pki: TestPki;
const servers: WebhookServer[] = [];

beforeAll(async () => {
  pki = await makePki();
  await writePki(dir.path, pki);
  for (const largeBodyBytes of [undefined, 1]) {
    const server = new WebhookServer({
      certDir: dir.path,
      logger: quietLogger(),
      registry: new Registry(),
      port: 0,
      host: '127.0.0.1',
      largeBodyBytes,
    });
    server.register(
      '/mutate-pod',
      podInjectionWebhook({ sidecarSets: () => [proxy], namespaceLabels: () => ({}) }, 'kruise-system', fixedClock),
    );
    await server.start();
    servers.push(server);
  }
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.stop()));
  dir.remove();
});

/** Posts to both servers; their answers must be identical. */
async function send(body: string): Promise<HttpResult> {
  const [plain, sliced] = await Promise.all(
    servers.map((s) =>
      httpsRequest({ port: s.port(), ca: pki.ca.certPem, path: '/mutate-pod', method: 'POST', body, agent: false }),
    ),
  );
  expect({ status: sliced.status, body: sliced.body }).toEqual({ status: plain.status, body: plain.body });
  return plain;
}

/** A CREATE review of a pod the SidecarSet selects, with `spec` spliced in as JSON text. */
const podReview = (specJson: string) =>
  JSON.stringify(review()).replace(
    /"object":\{.*?"spec":\{"containers":\[\]\}\}/,
    `"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","labels":{"app":"web"}},"spec":${specJson}}`,
  );

function denial(res: HttpResult): string {
  expect(res.status).toBe(200);
  const { response } = JSON.parse(res.body) as {
    response: { allowed: boolean; patch?: string; status: { code: number; message: string } };
  };
  expect(response).toMatchObject({ allowed: false, status: { code: 400 } });
  expect(response.patch).toBeUndefined();
  return response.status.message;
}

describe('hostile pods through the real injection webhook: a 400 naming the field', () => {
  it('injects into a well-formed pod (the control: the SidecarSet selects these pods)', async () => {
    const res = await send(podReview('{"containers":[{"name":"app","image":"web:1"}]}'));
    expect(JSON.parse(res.body).response).toMatchObject({ allowed: true, patchType: 'JSONPatch' });
  });

  it('request.object: null on CREATE', async () => {
    const res = await send(JSON.stringify(review({ object: null })));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body).message).toBe(
      'invalid AdmissionReview: request.object: is required for CREATE, got null',
    );
  });

  it('a pod nested 2,500 levels deep (injection copies and diffs the pod: it used to overflow the stack, a 500)', async () => {
    const deep = `${'{"a":'.repeat(2_500)}1${'}'.repeat(2_500)}`;
    expect(denial(await send(podReview(`{"containers":[{"name":"app","image":"web:1","x":${deep}}]}`)))).toMatch(
      /^request\.object\.spec\.containers\[0\]\.x\.a\.a.*: nests deeper than 100 levels/,
    );
  });

  it('containers: "abc" (it used to be allowed with a patch)', async () => {
    expect(denial(await send(podReview('{"containers":"abc"}')))).toBe(
      'request.object.spec.containers: must be a list, got a string',
    );
  });

  it('1e999999 in the spec (it used to be allowed with a patch)', async () => {
    expect(denial(await send(podReview('{"containers":[{"name":"app","image":"web:1"}],"priority":1e999999}')))).toBe(
      'request.object.spec.priority: is a number out of range (it does not fit a 64-bit float)',
    );
  });
});
