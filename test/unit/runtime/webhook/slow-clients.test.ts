// Slow and hostile clients against the webhook server (#25): each holds only what it sends, for a
// bounded time, and never what others need. Real loopback TLS; every bound is a behaviour
// (served, closed, refused), the waits are generous, nothing asserts a speed.
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect as netConnect } from 'node:net';
import { once } from 'node:events';
import { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { allow, mutating, WebhookServer } from '../../../../lib/runtime/webhook/index.js';
import { httpsRequest, makePki, quietLogger, review, tempDir, writePki, type TestPki } from '../tls-fixtures.js';

let pki: TestPki;
const dir = tempDir();
beforeAll(async () => {
  pki = await makePki();
  await writePki(dir.path, pki);
});
afterAll(() => dir.remove());

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
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
  server.register(
    '/mutate',
    mutating(() => allow()),
  );
  await server.start();
  cleanups.push(() => server.stop(2_000));
  const post = (body: string | Buffer) =>
    httpsRequest({ port: server.port(), ca: pki.ca.certPem, path: '/mutate', body });
  return { server, registry, post };
}

/** A TLS connection that completed its handshake; `closed` resolves when the server closes it. */
async function openTls(port: number): Promise<{ socket: TLSSocket; closed: Promise<void> }> {
  const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: pki.ca.certPem });
  socket.on('error', () => undefined);
  socket.on('data', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  cleanups.push(() => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('close', () => reject(new Error('closed before the handshake')));
  });
  return { socket, closed };
}

/**
 * A TLS client that sends its ClientHello and never finishes its handshake (the server's answer is
 * read and dropped); `closed` resolves when the server closes the connection.
 */
async function stalledHandshake(port: number): Promise<{ closed: Promise<void> }> {
  const raw = netConnect(port, '127.0.0.1');
  raw.on('error', () => undefined);
  raw.on('data', () => undefined);
  await once(raw, 'connect');
  let sent = false;
  const wire = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, done) {
      if (!sent) raw.write(chunk); // the ClientHello only
      sent = true;
      done();
    },
  });
  const client = tlsConnect({ socket: wire, servername: 'localhost', ca: pki.ca.certPem });
  client.on('error', () => undefined);
  cleanups.push(() => {
    client.destroy();
    raw.destroy();
  });
  return { closed: new Promise<void>((resolve) => raw.once('close', () => resolve())) };
}

/** TCP connections that never send a byte. */
function silentTcp(port: number, count: number): Array<Promise<void>> {
  return Array.from({ length: count }, () => {
    const s = netConnect(port, '127.0.0.1');
    s.on('error', () => undefined);
    cleanups.push(() => s.destroy());
    return new Promise<void>((resolve) => s.once('close', () => resolve()));
  });
}

/** Starts a POST declaring `length` bytes and sends its first byte; one more byte every `everyMs` until closed. */
async function slowUpload(port: number, length: number | 'chunked', everyMs = 1_000) {
  const { socket, closed } = await openTls(port);
  const framing = length === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${length}`;
  socket.write(`POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`);
  const byte = () => socket.write(length === 'chunked' ? '1\r\n{\r\n' : '{');
  byte();
  const timer = setInterval(byte, everyMs);
  void closed.then(() => clearInterval(timer));
  cleanups.push(() => clearInterval(timer));
  return { socket, closed };
}

const small = JSON.stringify(review());
const metric = async (registry: Registry, reason: string) =>
  Number(
    new RegExp(`webhook_connections_dropped_total\\{reason="${reason}"\\} (\\d+)`).exec(
      await registry.metrics(),
    )?.[1] ?? 0,
  );

describe('slow bodies', () => {
  it('charges bytes received, not declared: slow uploads declaring more than the budget block nobody, and lose their connection', async () => {
    // A budget the slow clients' declared lengths exceed 40 times over.
    const { server, registry, post } = await startServer({ maxInFlightBodyBytes: 64 * 1024, bodyGraceMs: 500 });
    const slow = await Promise.all(Array.from({ length: 40 }, () => slowUpload(server.port(), 65_536, 200)));
    for (let i = 0; i < 5; i++) expect((await post(small)).status).toBe(200);
    await Promise.all(slow.map((s) => s.closed)); // each closed for its rate, none answered
    expect(await metric(registry, 'slow-body')).toBe(40);
    expect((await post(small)).status).toBe(200);
  }, 30_000);

  it('takes the large-body lane only once a body is in memory: a slow large upload does not hold up a large review', async () => {
    const { server, post } = await startServer({ largeBodyBytes: 1024, bodyGraceMs: 60_000, bodyTimeoutMs: 60_000 });
    await slowUpload(server.port(), 2 * 1024 * 1024, 500);
    await slowUpload(server.port(), 'chunked', 500);
    await sleep(200);
    const big = JSON.stringify(
      review({ object: { apiVersion: 'v1', kind: 'Pod', metadata: { annotations: { a: 'x'.repeat(4096) } } } }),
    );
    expect((await post(big)).status).toBe(200);
    expect((await post(`{"a":${' '.repeat(2048)}1}`)).status).toBe(400); // large and invalid: answered too
  }, 30_000);
});

describe('idle and slowloris connections', () => {
  it('idle connections hold no working slot, and past the open cap a newcomer takes the slot of one', async () => {
    const { server, registry, post } = await startServer({
      maxConnections: 4,
      maxOpenConnections: 4,
      evictIdleAfterMs: 200,
    });
    const idle = await Promise.all(Array.from({ length: 4 }, () => openTls(server.port())));
    await sleep(300);
    expect(await registry.metrics()).toMatch(/webhook_connections\{state="active"\} 0/);
    expect((await post(small)).status).toBe(200);
    expect(await metric(registry, 'evicted')).toBeGreaterThanOrEqual(1);
    const closed = await Promise.race([Promise.any(idle.map((c) => c.closed)).then(() => true), sleep(100, false)]);
    expect(closed).toBe(true);
  }, 30_000);

  it('connections that send nothing hold no working slot (and are closed after the handshake timeout)', async () => {
    const { server, registry, post } = await startServer({ maxConnections: 2, handshakeTimeoutMs: 5_000 });
    const silent = silentTcp(server.port(), 6);
    await sleep(300);
    // Answered now, not once the silent ones time out: a review waiting behind them would take 5 s.
    expect(await Promise.race([post(small).then((r) => r.status), sleep(2_500, 'no answer')])).toBe(200);
    expect(await registry.metrics()).toMatch(/webhook_connections\{state="silent"\} 6/);
    expect(await Promise.race([Promise.all(silent).then(() => 'closed'), sleep(15_000, 'open')])).toBe('closed');
    expect(await metric(registry, 'silent')).toBe(6);
  }, 30_000);

  it('a client whose first bytes arrived while this process was stalled is not taken for a silent one', async () => {
    const { server, registry } = await startServer({ handshakeTimeoutMs: 300 });
    const socket = netConnect(server.port(), '127.0.0.1');
    socket.on('error', () => undefined);
    cleanups.push(() => socket.destroy());
    await once(socket, 'connect');
    for (let i = 0; !/webhook_connections\{state="silent"\} 1/.test(await registry.metrics()); i++) {
      if (i > 100) throw new Error('the server never saw the connection');
      await sleep(10);
    }
    socket.write(Buffer.from([0x16, 0x03, 0x01])); // the start of a TLS record, in the kernel at once
    const stalledUntil = Date.now() + 600; // the process gets no turn past the silent timeout
    while (Date.now() < stalledUntil);
    await sleep(100);
    expect(await metric(registry, 'silent')).toBe(0);
  }, 30_000);

  it('past the bound on silent connections, the one silent longest is closed for a newcomer', async () => {
    const { server, registry, post } = await startServer({ maxQueuedConnections: 3, handshakeTimeoutMs: 20_000 });
    const conns = silentTcp(server.port(), 4);
    expect(await Promise.race([conns[0].then(() => 'closed'), sleep(5_000, 'open')])).toBe('closed');
    expect(await metric(registry, 'silent')).toBe(1);
    expect((await post(small)).status).toBe(200); // a newcomer that speaks is served
    expect(await Promise.race([conns[3].then(() => 'closed'), sleep(300, 'open')])).toBe('open');
  }, 30_000);

  it('a client that stalls in its TLS handshake holds no working slot', async () => {
    const { server, post } = await startServer({ maxConnections: 2, handshakeTimeoutMs: 5_000 });
    const stalled = await Promise.all(Array.from({ length: 4 }, () => stalledHandshake(server.port())));
    await sleep(300);
    expect(await Promise.race([post(small).then((r) => r.status), sleep(2_500, 'no answer')])).toBe(200);
    const all = Promise.all(stalled.map((s) => s.closed)).then(() => 'closed');
    expect(await Promise.race([all, sleep(15_000, 'open')])).toBe('closed'); // by the handshake timeout
  }, 30_000);

  it('a connection sending its body below the minimum rate gives its working slot up', async () => {
    const { server, registry, post } = await startServer({ maxConnections: 4, bodyGraceMs: 60_000 });
    const slow = await Promise.all(Array.from({ length: 4 }, () => slowUpload(server.port(), 65_536, 100)));
    await sleep(1_000);
    expect(await registry.metrics()).toMatch(/webhook_connections\{state="active"\} 0/);
    expect((await post(small)).status).toBe(200);
    const closed = await Promise.race([Promise.any(slow.map((c) => c.closed)).then(() => true), sleep(100, false)]);
    expect(closed).toBe(false); // nobody had to be pushed out
  }, 30_000);

  it('closes connections that send nothing, or their headers a byte at a time, after the header timeout', async () => {
    const { server } = await startServer({ headersTimeoutMs: 1_000, handshakeTimeoutMs: 1_000 });
    const idle = await openTls(server.port());
    const loris = await openTls(server.port());
    loris.socket.write('POST /mutate HTTP/1.1\r\n');
    const timer = setInterval(() => loris.socket.write('X-A: b\r\n'), 200);
    cleanups.push(() => clearInterval(timer));
    const tcp = netConnect(server.port(), '127.0.0.1'); // never starts TLS
    tcp.on('error', () => undefined);
    cleanups.push(() => tcp.destroy());
    const tcpClosed = new Promise<void>((resolve) => tcp.once('close', () => resolve()));
    const all = Promise.all([idle.closed, loris.closed, tcpClosed]).then(() => 'closed');
    expect(await Promise.race([all, sleep(15_000, 'open')])).toBe('closed');
  }, 30_000);
});

describe('stop', () => {
  it('is not held by a connection that was opened and never used', async () => {
    const { server, post } = await startServer();
    expect((await post(small)).status).toBe(200);
    const unused = await openTls(server.port());
    const outcome = await Promise.race([server.stop(20_000).then(() => 'stopped'), sleep(10_000, 'waiting')]);
    expect(outcome).toBe('stopped');
    await unused.closed;
  }, 30_000);

  it('cuts whatever is left at the end of its grace period', async () => {
    const { server } = await startServer({ bodyGraceMs: 60_000, bodyTimeoutMs: 60_000 });
    const upload = await slowUpload(server.port(), 1_000_000, 100);
    await sleep(200);
    const outcome = await Promise.race([server.stop(1_000).then(() => 'stopped'), sleep(10_000, 'waiting')]);
    expect(outcome).toBe('stopped');
    await upload.closed;
  }, 30_000);
});

describe('denials', () => {
  it('name a huge key without echoing it', async () => {
    const { post } = await startServer();
    const key = 'k'.repeat(1024 * 1024);
    const deep = `${'{"a":'.repeat(120)}1${'}'.repeat(120)}`;
    const body = JSON.stringify(
      review({ object: { apiVersion: 'v1', kind: 'Pod', metadata: { annotations: { [key]: 'DEEP' } } } }),
    ).replace('"DEEP"', deep);
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(res.body.length).toBeLessThan(8_192);
    expect(res.body).toMatch(/k… \(1048576 characters\)/);
    expect(res.body).toMatch(/nests deeper than 100 levels/);
  }, 30_000);
});
