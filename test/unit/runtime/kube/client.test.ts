// The runtime's API client against a local server: paths, query, JSON bodies and the patch
// Content-Type each call sends, credentials from the KubeConfig, errors as ApiException with the
// parsed Status, abort, and one kept-alive connection for consecutive calls.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiException, KubeConfig } from '@kubernetes/client-node';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  admissionregistrationV1,
  appsV1,
  coordinationV1,
  coreV1,
  customObjects,
  KubeClient,
  kubeClient,
  PatchTypes,
} from '../../../../lib/runtime/kube/index.js';
import { localKubeConfig } from './local-kubeconfig.js';

interface Seen {
  method?: string;
  url: URL;
  headers: IncomingMessage['headers'];
  body: string;
  port?: number;
}
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const ok: Handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"kind":"X"}');
let handler: Handler = ok;
const seen: Seen[] = [];
let server: Server;
let kubeConfig: KubeConfig;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method,
        url: new URL(req.url ?? '/', 'http://localhost'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        port: req.socket.remotePort,
      });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  // A trailing slash on the server, as kubeconfigs often have: paths must not double it.
  kubeConfig = localKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const last = () => seen[seen.length - 1];

describe('typed calls', () => {
  it('read, create and replace send JSON to the object or collection path, with the bearer token', async () => {
    const core = coreV1(kubeClient(kubeConfig));
    expect(await core.readNamespacedSecret({ name: 'a/b', namespace: 'ns' })).toEqual({ kind: 'X' });
    expect(last()).toMatchObject({ method: 'GET', body: '' });
    expect(last().url.pathname).toBe('/api/v1/namespaces/ns/secrets/a%2Fb');
    expect(last().headers.authorization).toBe('Bearer secret-token');
    expect(last().headers.accept).toBe('application/json');

    await core.createNamespacedSecret({ namespace: 'ns', body: { metadata: { name: 's' }, data: { k: 'dg==' } } });
    expect(last()).toMatchObject({ method: 'POST', body: '{"metadata":{"name":"s"},"data":{"k":"dg=="}}' });
    expect(last().url.pathname).toBe('/api/v1/namespaces/ns/secrets');
    expect(last().headers['content-type']).toBe('application/json');

    const lease = coordinationV1(kubeClient(kubeConfig));
    await lease.replaceNamespacedLease({
      name: 'l',
      namespace: 'kube-system',
      body: { spec: { holderIdentity: 'me' } },
    });
    expect(last()).toMatchObject({ method: 'PUT', body: '{"spec":{"holderIdentity":"me"}}' });
    expect(last().url.pathname).toBe('/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/l');
  });

  it('patches with the Content-Type of the patch type the call site chose', async () => {
    const client = kubeClient(kubeConfig);
    await coreV1(client).patchNamespacedPod(
      { name: 'p', namespace: 'ns', body: [{ op: 'test', path: '/metadata/resourceVersion', value: '1' }] },
      { patchType: PatchTypes.json },
    );
    expect(last()).toMatchObject({ method: 'PATCH' });
    expect(last().headers['content-type']).toBe('application/json-patch+json');
    expect(JSON.parse(last().body)).toEqual([{ op: 'test', path: '/metadata/resourceVersion', value: '1' }]);

    await admissionregistrationV1(client).patchMutatingWebhookConfiguration(
      { name: 'hooks', body: { webhooks: [] } },
      { patchType: PatchTypes.strategicMerge },
    );
    expect(last().url.pathname).toBe('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hooks');
    expect(last().headers['content-type']).toBe('application/strategic-merge-patch+json');

    await customObjects(client).patchClusterCustomObjectStatus(
      { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets', name: 's', body: { status: {} } },
      { patchType: PatchTypes.merge },
    );
    expect(last().url.pathname).toBe('/apis/apps.kruise.io/v1alpha1/sidecarsets/s/status');
    expect(last().headers['content-type']).toBe('application/merge-patch+json');
  });

  it('lists with a label selector and deletes', async () => {
    const apps = appsV1(kubeClient(kubeConfig));
    await apps.listNamespacedControllerRevision({ namespace: 'kruise-system', labelSelector: 'a=b,c' });
    expect(last().url.pathname).toBe('/apis/apps/v1/namespaces/kruise-system/controllerrevisions');
    expect(Object.fromEntries(last().url.searchParams)).toEqual({ labelSelector: 'a=b,c' });
    await apps.listNamespacedControllerRevision({ namespace: 'kruise-system' });
    expect(last().url.search).toBe('');
    await apps.deleteNamespacedControllerRevision({ name: 'r-1', namespace: 'kruise-system' });
    expect(last()).toMatchObject({ method: 'DELETE', body: '' });
    expect(last().url.pathname).toBe('/apis/apps/v1/namespaces/kruise-system/controllerrevisions/r-1');
  });
});

describe('KubeClient', () => {
  it('turns a non-2xx answer into ApiException with the parsed Status and the headers', async () => {
    handler = (_req, res) =>
      res
        .writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' })
        .end(JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }));
    const err = await coreV1(kubeClient(kubeConfig))
      .readNamespacedSecret({ name: 's', namespace: 'ns' })
      .catch((e: unknown) => e);
    handler = ok;
    expect(err).toBeInstanceOf(ApiException);
    const api = err as ApiException<{ message: string }>;
    expect(api.code).toBe(429);
    expect(api.body).toEqual({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' });
    expect(api.headers['retry-after']).toBe('3');
    expect(api.message).toMatch(/GET \/api\/v1\/namespaces\/ns\/secrets\/s: HTTP 429: slow down/);
  });

  it('keeps an error body that is not JSON as text, and rejects a 2xx answer that is not JSON', async () => {
    const client = kubeClient(kubeConfig);
    const answer = (status: number) => {
      handler = (_req, res) => res.writeHead(status).end('<html>proxy</html>');
      return client.call({ method: 'GET', path: `/${status}` }).catch((e: unknown) => e);
    };
    const failed = await answer(502);
    const garbled = await answer(200);
    handler = ok;
    expect((failed as ApiException<unknown>).code).toBe(502);
    expect((failed as ApiException<unknown>).body).toBe('<html>proxy</html>');
    expect((garbled as Error).message).toMatch(/GET \/200 response is not JSON/);
  });

  it('aborts a request when its signal aborts', async () => {
    handler = () => undefined; // never answers
    const abort = new AbortController();
    const pending = kubeClient(kubeConfig).call({ method: 'GET', path: '/slow', signal: abort.signal });
    for (let i = 0; i < 100 && last()?.url.pathname !== '/slow'; i++) await new Promise((r) => setTimeout(r, 10));
    abort.abort(new Error('stop'));
    await expect(pending).rejects.toThrow();
    handler = ok;
  });

  it('fails a request that receives nothing for idleTimeoutMs, before or after the headers', async () => {
    const client = new KubeClient(kubeConfig, { idleTimeoutMs: 50 });
    handler = () => undefined; // never answers
    await expect(client.call({ method: 'GET', path: '/silent' })).rejects.toThrow(/GET \/silent: no data for 50ms/);
    handler = (_req, res) => res.writeHead(200).write('{"items":['); // then stalls
    await expect(client.call({ method: 'GET', path: '/stalled' })).rejects.toThrow();
    handler = ok;
  });

  it('reuses one kept-alive connection for consecutive calls, and one client per KubeConfig', async () => {
    expect(kubeClient(kubeConfig)).toBe(kubeClient(kubeConfig));
    const client = new KubeClient(kubeConfig);
    await client.call({ method: 'GET', path: '/one' });
    await client.call({ method: 'GET', path: '/two' });
    const [one, two] = seen.slice(-2);
    expect(one.port).toBe(two.port);
  });

  it('refuses a kubeconfig without a current cluster', async () => {
    await expect(new KubeClient(new KubeConfig()).call({ method: 'GET', path: '/' })).rejects.toThrow(
      /no current cluster/,
    );
  });
});
