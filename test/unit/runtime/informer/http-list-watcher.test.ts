// The HTTP transport against a local server speaking the API server's list/watch wire format,
// so chunking, query parameters, auth headers and error mapping are tested without a cluster.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiException, type KubeConfig } from '@kubernetes/client-node';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpListWatcher, type WatchEvent } from '../../../../lib/runtime/informer/index.js';
import { localKubeConfig } from '../kube/local-kubeconfig.js';
import type { Obj } from './fake-api.js';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;
let handler: Handler = (_req, res) => res.writeHead(500).end();
let server: Server;
let kubeConfig: KubeConfig;
const closedRequests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    res.on('close', () => closedRequests.push(url.pathname + url.search));
    handler(req, res, url);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  kubeConfig = localKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const lw = (labelSelector?: string) =>
  new HttpListWatcher<Obj>({ kubeConfig, path: '/api/v1/namespaces/ns/configmaps', labelSelector });
const signal = () => new AbortController().signal;

describe('HttpListWatcher.list', () => {
  it('sends selectors, paging and credentials, and fills in apiVersion/kind of items', async () => {
    let seen: { url?: URL; auth?: string } = {};
    handler = (req, res, url) => {
      seen = { url, auth: req.headers.authorization };
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMapList',
          metadata: { resourceVersion: '42', continue: 'next-page' },
          items: [{ metadata: { name: 'a', namespace: 'ns' } }],
        }),
      );
    };
    const page = await lw('app=web').list({ limit: 2, continueToken: 'tok', signal: signal() });
    expect(seen.url?.pathname).toBe('/api/v1/namespaces/ns/configmaps');
    expect(Object.fromEntries(seen.url?.searchParams ?? [])).toEqual({
      labelSelector: 'app=web',
      limit: '2',
      continue: 'tok',
    });
    expect(seen.auth).toBe('Bearer secret-token');
    expect(page).toEqual({
      items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns' } }],
      resourceVersion: '42',
      continueToken: 'next-page',
    });
  });

  it('maps error responses to ApiException with the HTTP status', async () => {
    handler = (_req, res) =>
      res
        .writeHead(403, { 'content-type': 'application/json' })
        .end(JSON.stringify({ kind: 'Status', code: 403, message: 'configmaps is forbidden' }));
    const err = await lw()
      .list({ signal: signal() })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiException);
    expect((err as ApiException<unknown>).code).toBe(403);
    expect((err as Error).message).toMatch(/forbidden/);
  });

  it('rejects a body that is not a list', async () => {
    handler = (_req, res) => res.writeHead(200).end('<html>proxy error</html>');
    await expect(lw().list({ signal: signal() })).rejects.toThrow(/not JSON/);
  });
});

describe('HttpListWatcher.watch', () => {
  it('asks for bookmarks and a server-side timeout, and decodes events split across chunks', async () => {
    let seen: URL | undefined;
    const lines = [
      { type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' }, data: { text: 'ü✓ multi-byte' } } },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '6' } } },
      { type: 'DELETED', object: { metadata: { name: 'a', resourceVersion: '7' } } },
    ]
      .map((e) => JSON.stringify(e) + '\n')
      .join('');
    handler = (_req, res, url) => {
      seen = url;
      res.writeHead(200, { 'content-type': 'application/json' });
      const bytes = Buffer.from(lines);
      // Dribble the stream out in 7-byte chunks: lines and UTF-8 sequences split mid-way.
      let i = 0;
      const timer = setInterval(() => {
        if (i >= bytes.length) {
          clearInterval(timer);
          res.end();
          return;
        }
        res.write(bytes.subarray(i, i + 7));
        i += 7;
      }, 1);
    };
    const events: Array<WatchEvent<Obj>> = [];
    let connected = false;
    await lw().watch(
      { resourceVersion: '4', timeoutSeconds: 321, signal: signal() },
      (e) => events.push(e),
      () => {
        connected = true;
      },
    );
    expect(connected).toBe(true);
    expect(Object.fromEntries(seen?.searchParams ?? [])).toEqual({
      watch: 'true',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '321',
      resourceVersion: '4',
    });
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK', 'DELETED']);
    expect((events[0].object as Obj).data?.text).toBe('ü✓ multi-byte');
  });

  it('fails on an undecodable line instead of silently dropping an event', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.end('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ADDED","obj\n');
    };
    const events: string[] = [];
    await expect(
      lw().watch({ resourceVersion: '1', timeoutSeconds: 60, signal: signal() }, (e) => events.push(e.type)),
    ).rejects.toThrow(/not JSON/);
    expect(events).toEqual(['ADDED']);
  });

  it('rejects events without a known type', async () => {
    handler = (_req, res) => res.writeHead(200).end('{"type":"EXPLODED","object":{}}\n');
    await expect(
      lw().watch({ resourceVersion: '1', timeoutSeconds: 60, signal: signal() }, () => undefined),
    ).rejects.toThrow(/undecodable watch event/);
  });

  it('maps a refused watch to ApiException (410 for an expired resourceVersion)', async () => {
    handler = (_req, res) =>
      res.writeHead(410).end(JSON.stringify({ kind: 'Status', code: 410, reason: 'Expired', message: 'too old' }));
    const err = await lw()
      .watch({ resourceVersion: '1', timeoutSeconds: 60, signal: signal() }, () => undefined)
      .catch((e: unknown) => e);
    expect((err as ApiException<unknown>).code).toBe(410);
  });

  it('closes the connection when aborted, and propagates an error thrown by the event callback', async () => {
    handler = (_req, res) => {
      res.writeHead(200);
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n'); // and then stays open
    };
    const abort = new AbortController();
    const before = closedRequests.length;
    const watching = lw().watch({ resourceVersion: '1', timeoutSeconds: 60, signal: abort.signal }, () =>
      abort.abort(new Error('enough')),
    );
    await expect(watching).rejects.toThrow();
    for (let i = 0; i < 100 && closedRequests.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(closedRequests.length).toBeGreaterThan(before);

    const failing = lw().watch({ resourceVersion: '1', timeoutSeconds: 60, signal: signal() }, () => {
      throw new Error('410 from ERROR event');
    });
    await expect(failing).rejects.toThrow('410 from ERROR event');
  });

  it('insists on paths that start with a slash', () => {
    expect(() => new HttpListWatcher<Obj>({ kubeConfig, path: 'api/v1/pods' })).toThrow(/must start with/);
  });
});
