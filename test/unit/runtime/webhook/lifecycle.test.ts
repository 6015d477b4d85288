// Certificate hot reload and graceful shutdown of the webhook server, over real loopback TLS.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { FakeClock, settle } from '../../../../lib/runtime/clock.js';
import { allow, validating, WebhookServer } from '../../../../lib/runtime/webhook/index.js';
import {
  fingerprintOf,
  httpsRequest,
  makePki,
  presentedFingerprint,
  quietLogger,
  review,
  tempDir,
  writePki,
  type TestPki,
} from '../tls-fixtures.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(opts: Partial<ConstructorParameters<typeof WebhookServer>[0]> = {}) {
  const dir = tempDir();
  cleanups.push(dir.remove);
  const pki = await makePki('first');
  await writePki(dir.path, pki);
  const server = new WebhookServer({
    certDir: dir.path,
    logger: quietLogger(),
    registry: new Registry(),
    port: 0,
    host: '127.0.0.1',
    ...opts,
  });
  cleanups.push(() => server.stop());
  return { dir, pki, server };
}

/** Polls until `probe` returns true; the bound only stops a broken test, it is not a speed claim. */
async function eventually(probe: () => Promise<boolean>, what: string, boundMs = 20_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (!(await probe())) {
    if (Date.now() > until) throw new Error(`never happened: ${what}`);
    await sleep(25);
  }
}

describe('certificate hot reload', () => {
  it('serves a new certificate after reloadCertificates(), on the same listening socket', async () => {
    const { dir, pki, server } = await setup();
    server.register(
      '/v',
      validating(() => allow()),
    );
    await server.start();
    const port = server.port();
    expect(await presentedFingerprint(port)).toBe(fingerprintOf(pki.serving.certPem));

    const next: TestPki = await makePki('second');
    await writePki(dir.path, next);
    expect(await server.reloadCertificates()).toBe(true);
    expect(server.port()).toBe(port);
    expect(await presentedFingerprint(port)).toBe(fingerprintOf(next.serving.certPem));
    const res = await httpsRequest({ port, ca: next.ca.certPem, path: '/v', body: JSON.stringify(review()) });
    expect(res.status).toBe(200);
  });

  it('picks up changed files by itself (directory watch)', async () => {
    // The fallback poll is an hour away on a fake clock that only the watch's 50 ms debounce moves: only the watch
    // can reload (with `watchCertDir: false` this test fails).
    const clock = new FakeClock(Date.now());
    const { dir, server } = await setup({ clock, certPollIntervalMs: 3_600_000 });
    await server.start();
    const next = await makePki('watched');
    await writePki(dir.path, next);
    await eventually(async () => {
      await clock.advance(50);
      return (await presentedFingerprint(server.port())) === fingerprintOf(next.serving.certPem);
    }, 'watched reload');
  });

  it('keeps the working certificate when the new files do not form a pair', async () => {
    const { dir, pki, server } = await setup();
    await server.start();
    const other = await makePki('other');
    // A cert whose key is not the one on disk: exactly what a torn write would look like.
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${dir.path}/tls.crt`, other.serving.certPem);
    expect(await server.reloadCertificates()).toBe(false);
    expect(await presentedFingerprint(server.port())).toBe(fingerprintOf(pki.serving.certPem));
  });

  it('polls when no watch event arrives', async () => {
    const clock = new FakeClock(Date.now());
    const { dir, pki, server } = await setup({ clock, certPollIntervalMs: 60_000, watchCertDir: false });
    await server.start();
    const next = await makePki('polled');
    await writePki(dir.path, next);
    await clock.advance(59_000);
    expect(await presentedFingerprint(server.port())).toBe(fingerprintOf(pki.serving.certPem));
    await clock.advance(1_000);
    await eventually(
      async () => (await presentedFingerprint(server.port())) === fingerprintOf(next.serving.certPem),
      'polled reload',
    );
  });
});

describe('drain and stop', () => {
  it('closes connections after each response once draining, while still serving', async () => {
    const { pki, server } = await setup();
    server.register(
      '/v',
      validating(() => allow()),
    );
    await server.start();
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const send = () =>
      httpsRequest({ port: server.port(), ca: pki.ca.certPem, path: '/v', body: JSON.stringify(review()), agent });
    expect((await send()).headers.connection).toBe('keep-alive');
    server.drain();
    const drained = await send();
    expect(drained.status).toBe(200);
    expect(drained.headers.connection).toBe('close');
  });

  it('stop() waits for an in-flight request, which still gets its answer', async () => {
    const { pki, server } = await setup();
    let release!: () => void;
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    server.register(
      '/slow',
      validating(
        () =>
          new Promise((resolve) => {
            release = () => resolve(allow());
            entered();
          }),
      ),
    );
    await server.start();
    const pending = httpsRequest({
      port: server.port(),
      ca: pki.ca.certPem,
      path: '/slow',
      body: JSON.stringify(review()),
    });
    await inside;
    let stopped = false;
    const stopping = server.stop().then(() => {
      stopped = true;
    });
    await settle(10);
    expect(stopped).toBe(false);
    release();
    const res = await pending;
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).response.allowed).toBe(true);
    await stopping;
    expect(stopped).toBe(true);
  });

  it('stop() closes idle keep-alive connections instead of waiting for their timeout', async () => {
    const { pki, server } = await setup({ keepAliveTimeoutMs: 600_000 });
    server.register(
      '/v',
      validating(() => allow()),
    );
    await server.start();
    const agent = new Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    await httpsRequest({ port: server.port(), ca: pki.ca.certPem, path: '/v', body: JSON.stringify(review()), agent });
    const idle = Object.values(agent.freeSockets).flat();
    expect(idle).toHaveLength(1);
    const closed = new Promise<void>((r) => idle[0]!.once('close', () => r()));
    await server.stop();
    await closed;
  });

  it('stop() cuts requests that outlive the grace period', async () => {
    const clock = new FakeClock(Date.now());
    const { pki, server } = await setup({ clock, stopGraceMs: 1_000, handlerTimeoutMs: 3_600_000 });
    let entered!: () => void;
    const inside = new Promise<void>((r) => {
      entered = r;
    });
    server.register(
      '/stuck',
      validating(() => new Promise(() => entered())),
    );
    await server.start();
    const pending = httpsRequest({
      port: server.port(),
      ca: pki.ca.certPem,
      path: '/stuck',
      body: JSON.stringify(review()),
    });
    pending.catch(() => undefined);
    await inside;
    const stopping = server.stop();
    await clock.advance(1_000);
    await stopping;
    await expect(pending).rejects.toThrow(/socket hang up|ECONNRESET/);
  });
});
