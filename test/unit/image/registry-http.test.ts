import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CredentialSource } from '../../../lib/image/docker-config.js';
import { RegistryHttp, parseChallenge } from '../../../lib/image/registry-http.js';

// A fake registry with a token service, as Docker Hub, GHCR or Harbor run them: 401 with a
// Bearer challenge, a token for Basic credentials (or a refresh token), 403 for one repository.
const tokenRequests: { url: URL; authorization?: string; body: string; method?: string }[] = [];
let server: Server;
let host = '';

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let b = '';
    req.on('data', (c) => {
      b += c;
    });
    req.on('end', () => resolve(b));
  });
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const url = new URL(req.url!, `http://${host}`);
    if (url.pathname === '/token') {
      tokenRequests.push({ url, authorization: req.headers.authorization, body: await body(req), method: req.method });
      const good =
        req.headers.authorization === `Basic ${Buffer.from('alice:secret').toString('base64')}` ||
        req.method === 'POST';
      res
        .writeHead(good ? 200 : 401, { 'content-type': 'application/json' })
        .end(good ? '{"access_token":"T1"}' : '{"details":"bad credentials"}');
      return;
    }
    if (req.headers.authorization !== 'Bearer T1') {
      res
        .writeHead(401, {
          'www-authenticate': `Bearer realm="http://${host}/token",service="fake.registry",scope="repository:team/app:pull"`,
        })
        .end();
      return;
    }
    if (url.pathname.startsWith('/v2/secret/')) {
      res
        .writeHead(403, { 'content-type': 'application/json' })
        .end('{"errors":[{"code":"DENIED","message":"requested access to the resource is denied"}]}');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const creds = (c?: { username?: string; password?: string; identityToken?: string }): CredentialSource => ({
  searched: '/home/me/.docker/config.json',
  find: () => (c ? { ...c, source: 'test config' } : undefined),
});
const get = (http: RegistryHttp, repo = 'team/app') =>
  http.request({
    method: 'GET',
    url: `/v2/${repo}/manifests/1`,
    scopes: [`repository:${repo}:pull,push`],
    action: `pulling ${host}/${repo}:1`,
    accept: [200],
  });

describe('RegistryHttp', () => {
  it('follows a Bearer challenge with Basic credentials and reuses the token', async () => {
    tokenRequests.length = 0;
    const http = new RegistryHttp(host, { credentials: creds({ username: 'alice', password: 'secret' }) });
    expect(await (await get(http)).text()).toBe('ok');
    expect(await (await get(http)).text()).toBe('ok');
    expect(tokenRequests).toHaveLength(1);
    expect(tokenRequests[0].url.searchParams.get('service')).toBe('fake.registry');
    expect(tokenRequests[0].url.searchParams.getAll('scope').sort()).toEqual([
      'repository:team/app:pull',
      'repository:team/app:pull,push',
    ]);
  });

  it('exchanges an identity token with the refresh-token grant', async () => {
    tokenRequests.length = 0;
    const http = new RegistryHttp(host, { credentials: creds({ identityToken: 'refresh-me' }) });
    expect((await get(http)).status).toBe(200);
    expect(tokenRequests[0].method).toBe('POST');
    expect(new URLSearchParams(tokenRequests[0].body).get('grant_type')).toBe('refresh_token');
    expect(new URLSearchParams(tokenRequests[0].body).get('refresh_token')).toBe('refresh-me');
  });

  it('names the registry, the image and where it looked when credentials are missing or wrong', async () => {
    await expect(get(new RegistryHttp(host, { credentials: creds() }))).rejects.toThrow(
      new RegExp(
        `^registry ${host} requires credentials \\(401\\) and none were found for it in /home/me/.docker/config.json while pulling ${host}/team/app:1: .*Fix: run docker login ${host}`,
      ),
    );
    await expect(
      get(new RegistryHttp(host, { credentials: creds({ username: 'alice', password: 'wrong' }) })),
    ).rejects.toThrow(
      new RegExp(
        `^registry ${host} rejected the credentials from test config \\(401\\) while pulling ${host}/team/app:1`,
      ),
    );
  });

  it('explains a 403 as missing permission', async () => {
    const http = new RegistryHttp(host, { credentials: creds({ username: 'alice', password: 'secret' }) });
    await expect(get(http, 'secret')).rejects.toThrow(
      new RegExp(
        `^registry ${host} denied access \\(403\\) to the account from test config while pulling ${host}/secret:1: DENIED requested access to the resource is denied\\. Fix: grant the account pull access`,
      ),
    );
  });

  it('says a stopped registry is unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(get(new RegistryHttp(`127.0.0.1:${port}`))).rejects.toThrow(
      new RegExp(
        `^registry 127.0.0.1:${port} is unreachable \\(ECONNREFUSED\\) at http://127.0.0.1:${port} while pulling`,
      ),
    );
  });

  it('parses quoted challenge parameters', () => {
    expect(
      parseChallenge('Bearer realm="https://auth.example.com/token",service="reg",scope="repository:a/b:pull,push"'),
    ).toEqual({ realm: 'https://auth.example.com/token', service: 'reg', scope: 'repository:a/b:pull,push' });
  });
});
