import { afterEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { ExternalCertificates } from '../../../../lib/runtime/certs/external.js';
import { generateCA, generateServingCert } from '../../../../lib/runtime/certs/generate.js';
import { quietLogger, tempDir } from '../tls-fixtures.js';
import { MemorySecretStore } from './fakes.js';

const DAY = 86_400_000;
const NAMES = ['kruise-webhook-service.kruise-system.svc', 'localhost'];

/** What cert-manager puts in the Secret. */
async function issued(now: number, dnsNames = NAMES, validityMs = 90 * DAY) {
  const ca = await generateCA({ commonName: 'cert-manager-ca', now, validityMs: 3650 * DAY });
  const leaf = await generateServingCert({ ca, dnsNames, now, validityMs });
  return { 'ca.crt': ca.certPem, 'tls.crt': leaf.certPem, 'tls.key': leaf.keyPem };
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function setup(store: MemorySecretStore, clock: FakeClock) {
  const dir = tempDir();
  const written: number[] = [];
  // Only `get` and `ref` exist on what it receives: a write would not even compile, and would throw here.
  const readOnly = { ref: store.ref, get: () => store.get() };
  const certs = new ExternalCertificates({
    secrets: readOnly,
    certDir: dir.path,
    serviceName: 'kruise-webhook-service',
    namespace: 'kruise-system',
    logger: quietLogger(),
    clock,
    onCertificatesWritten: () => {
      written.push(clock.now());
    },
  });
  cleanups.push(dir.remove, () => certs.stop());
  return { certs, written, file: (n: string) => readFileSync(join(dir.path, n), 'utf8') };
}

async function eventually(cond: () => boolean, boundMs = 10_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition never became true');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('ExternalCertificates (cert-manager mode)', () => {
  it('waits for the Secret, then installs it without ever writing to the API', async () => {
    const clock = new FakeClock(Date.now());
    const store = new MemorySecretStore();
    const { certs, written, file } = setup(store, clock);
    await certs.start();
    await eventually(() => certs.notReadyReason() !== 'certificates have not been set up yet');
    expect(certs.ready()).toBe(false);
    expect(certs.notReadyReason()).toBe('Secret ns/certs does not exist yet; waiting for cert-manager to issue it');

    const data = await issued(clock.now());
    store.put(data);
    await eventually(() => clock.pending() > 0);
    await clock.advance(1_000); // first backoff step
    await certs.waitReady();
    expect(file('tls.crt')).toBe(data['tls.crt']);
    expect(file('ca.crt')).toBe(data['ca.crt']);
    expect(certs.caPem()).toBe(data['ca.crt']);
    expect(written).toHaveLength(1);
    expect(store.calls.create + store.calls.update).toBe(0);
  });

  it.each([
    ['a missing key', async (now: number) => ({ ...(await issued(now)), 'tls.key': '' }), /has no tls\.key yet/],
    [
      'a certificate from another CA',
      async (now: number) => ({ ...(await issued(now)), 'ca.crt': (await issued(now))['ca.crt'] }),
      /tls\.crt is not signed by a CA in Secret ns\/certs ca\.crt/,
    ],
    [
      'a certificate without localhost',
      async (now: number) => issued(now, ['kruise-webhook-service.kruise-system.svc']),
      /does not cover DNS name localhost/,
    ],
    ['an expired certificate', async (now: number) => issued(now - 10 * DAY, NAMES, DAY), /tls\.crt expired at/],
  ])('reports not ready for %s, naming the problem', async (_name, make, reason) => {
    const clock = new FakeClock(Date.now());
    const store = new MemorySecretStore(await make(clock.now()));
    const { certs } = setup(store, clock);
    await certs.start();
    await eventually(() => certs.notReadyReason() !== 'certificates have not been set up yet');
    expect(certs.ready()).toBe(false);
    expect(certs.notReadyReason()).toMatch(reason);
  });

  it('keeps serving a good certificate when the Secret later breaks, and installs cert-manager renewals', async () => {
    const clock = new FakeClock(Date.now());
    const first = await issued(clock.now());
    const store = new MemorySecretStore(first);
    const { certs, file, written } = setup(store, clock);
    await certs.start();
    await certs.waitReady();
    await eventually(() => clock.pending() > 0);

    store.put({ ...first, 'tls.key': 'broken' });
    await clock.advance(60_000); // resync
    await eventually(() => certs.lastSyncError() !== undefined);
    expect(certs.ready()).toBe(true);
    expect(file('tls.crt')).toBe(first['tls.crt']);

    const renewed = await issued(clock.now());
    store.put(renewed);
    await eventually(() => clock.pending() > 0);
    await clock.advance(1_000);
    await eventually(() => written.length === 2);
    expect(file('tls.crt')).toBe(renewed['tls.crt']);
    expect(certs.lastSyncError()).toBeUndefined();
  });

  it('stops being ready when the installed certificate expires', async () => {
    const clock = new FakeClock(Date.now());
    const store = new MemorySecretStore(await issued(clock.now(), NAMES, 2 * DAY));
    const { certs } = setup(store, clock);
    await certs.start();
    await certs.waitReady();
    store.hang = true; // nothing new arrives
    clock.jump(2 * DAY);
    expect(certs.ready()).toBe(false);
    expect(certs.notReadyReason()).toMatch(/the serving certificate expired at/);
  });
});
