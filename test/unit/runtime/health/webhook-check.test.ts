import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { webhookSelfCheck } from '../../../../lib/runtime/health/webhook-check.js';
import { WebhookServer } from '../../../../lib/runtime/webhook/index.js';
import { makePki, quietLogger, tempDir, writePki, type TestPki } from '../tls-fixtures.js';

const ours = tempDir();
const theirs = tempDir();
let pki: TestPki;
let foreign: TestPki;
let server: WebhookServer;
let impostor: WebhookServer;
let silent: TcpServer;

beforeAll(async () => {
  [pki, foreign] = await Promise.all([makePki('ours'), makePki('theirs')]);
  await writePki(ours.path, pki);
  await writePki(theirs.path, foreign); // valid for localhost, but signed by another CA
  server = new WebhookServer({ certDir: ours.path, logger: quietLogger(), registry: new Registry(), port: 0 });
  impostor = new WebhookServer({ certDir: theirs.path, logger: quietLogger(), registry: new Registry(), port: 0 });
  await Promise.all([server.start(), impostor.start()]);
  silent = createTcpServer(() => undefined); // accepts and never speaks: a wedged server
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  await Promise.all([server.stop(), impostor.stop()]);
  silent.close();
  ours.remove();
  theirs.remove();
});

const run = (check: ReturnType<typeof webhookSelfCheck>) => Promise.resolve(check(new AbortController().signal));

describe('webhookSelfCheck', () => {
  it('passes against our server, verified against our CA over localhost', async () => {
    await expect(run(webhookSelfCheck({ port: server.port(), caPem: () => pki.ca.certPem }))).resolves.toBeUndefined();
  });

  it('fails against a server presenting a certificate from another CA', async () => {
    await expect(run(webhookSelfCheck({ port: impostor.port(), caPem: () => pki.ca.certPem }))).rejects.toThrow(
      /is not serving TLS we trust: .*(unable to verify the first certificate|unable to get local issuer certificate|self[- ]signed)/,
    );
  });

  it('fails when the certificate does not name the host we dial', async () => {
    await expect(
      run(webhookSelfCheck({ port: server.port(), host: '127.0.0.2', caPem: () => pki.ca.certPem })),
    ).rejects.toThrow(/IP: 127\.0\.0\.2 is not in the cert's list|not in the cert's altnames/);
  });

  it('fails while there is no CA yet', async () => {
    await expect(run(webhookSelfCheck({ port: server.port(), caPem: () => undefined }))).rejects.toThrow(
      /no CA to verify/,
    );
  });

  it('fails when nothing listens', async () => {
    const closed = createTcpServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(run(webhookSelfCheck({ port, host: '127.0.0.1', caPem: () => pki.ca.certPem }))).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });

  it('fails within its bound against a server that never answers', async () => {
    const port = (silent.address() as AddressInfo).port;
    await expect(
      run(webhookSelfCheck({ port, host: '127.0.0.1', caPem: () => pki.ca.certPem, timeoutMs: 200 })),
    ).rejects.toThrow('no answer within 200ms');
  });

  it('stops when the caller aborts', async () => {
    const port = (silent.address() as AddressInfo).port;
    const abort = new AbortController();
    const pending = Promise.resolve(
      webhookSelfCheck({ port, host: '127.0.0.1', caPem: () => pki.ca.certPem, timeoutMs: 3_600_000 })(abort.signal),
    );
    abort.abort(new Error('probe deadline'));
    await expect(pending).rejects.toThrow('check aborted: probe deadline');
  });
});
