import { afterEach, describe, expect, it } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SecretKeys } from '../../../../lib/contract.js';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { planSecret } from '../../../../lib/runtime/certs/plan.js';
import type { RotationPolicy } from '../../../../lib/runtime/certs/rotation.js';
import { SelfManagedCertificates, type SelfManagedOptions } from '../../../../lib/runtime/certs/self-managed.js';
import { verifyServing } from '../../../../lib/runtime/certs/verify.js';
import { capturingLogger, quietLogger, tempDir } from '../tls-fixtures.js';
import { MemorySecretStore, RecordingTarget } from './fakes.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const POLICY: RotationPolicy = { caValidityMs: 400 * DAY, servingValidityMs: 30 * DAY, renewBeforeMs: 10 * DAY };
const NAMES = ['webhook.kruise-system.svc', 'localhost'];

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function replica(store: MemorySecretStore, clock: FakeClock, extra: Partial<SelfManagedOptions> = {}) {
  const dir = tempDir();
  const written: number[] = [];
  const certs = new SelfManagedCertificates({
    secrets: store,
    certDir: dir.path,
    serviceName: 'webhook',
    namespace: 'kruise-system',
    logger: quietLogger(),
    clock,
    policy: POLICY,
    onCertificatesWritten: () => {
      written.push(clock.now());
    },
    ...extra,
  });
  cleanups.push(dir.remove, () => certs.stop());
  const file = (name: string) => readFileSync(join(dir.path, name), 'utf8');
  return { certs, dir: dir.path, written, file };
}

describe('SelfManagedCertificates: convergence across replicas', () => {
  it('two replicas starting on an empty namespace create one Secret and serve the same certificate', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore();
    const a = replica(store, clock);
    const b = replica(store, clock);
    await Promise.all([a.certs.start(), b.certs.start()]);
    await Promise.all([a.certs.waitReady(), b.certs.waitReady()]);

    expect(store.calls.create).toBe(1);
    expect(store.calls.conflicts).toBeGreaterThanOrEqual(1); // the loser hit AlreadyExists and re-read
    const stored = store.snapshot()!.data;
    for (const r of [a, b]) {
      expect(r.file('tls.crt')).toBe(stored[SecretKeys.tlsCert]);
      expect(r.file('tls.key')).toBe(stored[SecretKeys.tlsKey]);
      expect(r.file('ca.crt')).toBe(stored[SecretKeys.caCert]);
      expect(r.certs.caPem()).toBe(stored[SecretKeys.caCert]);
      expect(r.written).toHaveLength(1);
    }
    expect(
      verifyServing({
        certPem: stored[SecretKeys.tlsCert],
        keyPem: stored[SecretKeys.tlsKey],
        caPem: stored[SecretKeys.caCert],
        dnsNames: NAMES,
        now: clock.now(),
      }).notAfter,
    ).toBe(clock.now() + POLICY.servingValidityMs);
  });

  it('fills a pre-created empty Secret (as the chart renders it) with one winning update', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore({});
    const replicas = [replica(store, clock), replica(store, clock), replica(store, clock)];
    await Promise.all(replicas.map((r) => r.certs.start()));
    await Promise.all(replicas.map((r) => r.certs.waitReady()));
    expect(store.calls.update).toBe(1);
    expect(store.calls.conflicts).toBeGreaterThanOrEqual(2);
    const certs = new Set(replicas.map((r) => r.file('tls.crt')));
    expect(certs.size).toBe(1);
  });

  it('regenerates a Secret whose contents are garbage, keeping unrelated keys', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore({
      [SecretKeys.caCert]: 'garbage',
      [SecretKeys.caKey]: 'garbage',
      note: 'hello',
    });
    const { certs, written } = replica(store, clock);
    await certs.start();
    await certs.waitReady();
    expect(store.snapshot()!.data.note).toBe('hello');
    expect(new X509Certificate(store.snapshot()!.data[SecretKeys.caCert]).ca).toBe(true);
    expect(written).toHaveLength(1);
  });
});

describe('SelfManagedCertificates: rotation while running', () => {
  it('renews the serving certificate at expiry minus renewBefore, keeps the CA, and tells the server', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore();
    const target = new RecordingTarget('MutatingWebhookConfiguration test');
    // No periodic resync in the way: the only timer is the renewal itself.
    const r = replica(store, clock, { caBundleTargets: [target], resyncIntervalMs: 365 * DAY });
    await r.certs.start();
    await r.certs.waitReady();
    await asleep(clock);
    const before = store.snapshot()!.data;

    await clock.advance(POLICY.servingValidityMs - POLICY.renewBeforeMs - 1);
    expect(r.file('tls.crt')).toBe(before[SecretKeys.tlsCert]);
    await clock.advance(1);
    await eventually(() => r.written.length === 2);

    const after = store.snapshot()!.data;
    expect(after[SecretKeys.tlsCert]).not.toBe(before[SecretKeys.tlsCert]);
    expect(after[SecretKeys.caCert]).toBe(before[SecretKeys.caCert]);
    expect(r.file('tls.crt')).toBe(after[SecretKeys.tlsCert]);
    expect(r.certs.ready()).toBe(true);
    expect(target.injected.every((i) => i.bundle === before[SecretKeys.caCert])).toBe(true);
  });

  it('adopts a rotation another replica stored, at the next resync', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore();
    const r = replica(store, clock, { resyncIntervalMs: 5 * 60_000 });
    await r.certs.start();
    await r.certs.waitReady();
    const rotated = await planSecret(undefined, {
      dnsNames: [...NAMES, 'webhook', 'webhook.kruise-system', 'webhook.kruise-system.svc.cluster.local'],
      ipAddresses: [],
      now: clock.now(),
      policy: POLICY,
      caName: 'elsewhere',
    });
    store.put(rotated.data);
    await asleep(clock);
    await clock.advance(5 * 60_000);
    await eventually(() => r.written.length === 2);
    expect(r.file('tls.crt')).toBe(rotated.data[SecretKeys.tlsCert]);
    expect(r.certs.caPem()).toBe(rotated.data[SecretKeys.caCert]);
  });
});

describe('SelfManagedCertificates: caBundle injection', () => {
  it('injects before writing files, and stays ready when injection fails, retrying with backoff', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore();
    const target = new RecordingTarget('ValidatingWebhookConfiguration x');
    target.outcome = new Error('forbidden: cannot patch');
    const { logger, lines } = capturingLogger();
    const r = replica(store, clock, { caBundleTargets: [target], logger });
    await r.certs.start();
    await r.certs.waitReady();
    await eventually(() => r.certs.lastSyncError() !== undefined);
    expect(r.certs.lastSyncError()).toMatch(/caBundle injection failed: forbidden: cannot patch/);
    expect(r.certs.ready()).toBe(true);
    expect(lines.some((l) => l.msg === 'certificate sync failed; retrying' && l.retryInMs === 1000)).toBe(true);

    target.outcome = 'updated';
    await asleep(clock);
    await clock.advance(1_000);
    await eventually(() => r.certs.lastSyncError() === undefined);
    expect(target.injected.at(-1)?.bundle).toBe(store.snapshot()!.data[SecretKeys.caCert]);
  });

  it('re-reads soon when a caBundle already trusts a newer CA, and overrides after repeated rounds', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore();
    const target = new RecordingTarget('MutatingWebhookConfiguration y');
    target.outcome = 'stale';
    const r = replica(store, clock, { caBundleTargets: [target] });
    await r.certs.start();
    await r.certs.waitReady();
    for (let i = 1; i <= 5; i++) {
      await eventually(() => target.injected.length === i);
      expect(target.injected[i - 1].overrideNewer).toBe(false);
      await asleep(clock);
      await clock.advance(1_000);
    }
    await eventually(() => target.injected.length === 6);
    expect(target.injected[5].overrideNewer).toBe(true);
  });
});

describe('SelfManagedCertificates: lifecycle', () => {
  it('is not ready, with a reason, until the first sync succeeds', async () => {
    const clock = wholeSecondClock();
    const store = new MemorySecretStore();
    store.hang = true;
    const r = replica(store, clock);
    expect(r.certs.ready()).toBe(false);
    expect(r.certs.notReadyReason()).toBe('certificates have not been set up yet');
    await r.certs.start();
    const abort = new AbortController();
    const waiting = r.certs.waitReady(abort.signal);
    abort.abort(new Error('gave up'));
    await expect(waiting).rejects.toThrow('gave up');
    await r.certs.stop(); // returns although the API call never does
  });

  it('rejects a policy that would rotate forever', () => {
    expect(() => replica(new MemorySecretStore(), new FakeClock(), { policy: { renewBeforeMs: 400 * DAY } })).toThrow(
      /CERTS_RENEW_BEFORE/,
    );
  });
});

// X.509 times have whole-second precision; starting on a second keeps expiry arithmetic exact.
const wholeSecondClock = () => new FakeClock(Math.floor(Date.now() / 1000) * 1000);

/** Waits (in real time) until the provider loop is asleep on the fake clock, so advancing it wakes the loop. */
const asleep = (clock: FakeClock) => eventually(() => clock.pending() > 0);

/** Real-time polling for work the fake clock already released (promise chains, file writes). */
async function eventually(cond: () => boolean, boundMs = 10_000): Promise<void> {
  const until = Date.now() + boundMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition never became true');
    await new Promise((r) => setTimeout(r, 5));
  }
}
