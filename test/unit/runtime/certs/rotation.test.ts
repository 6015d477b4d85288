// Rotation decisions over simulated time: what the Secret needs next at each moment.
import { describe, expect, it } from '@jest/globals';
import { X509Certificate } from 'node:crypto';
import { SecretKeys } from '../../../../lib/contract.js';
import { parseDuration } from '../../../../lib/runtime/certs/duration.js';
import { planSecret, type PlanContext } from '../../../../lib/runtime/certs/plan.js';
import { assess, DEFAULT_POLICY, validatePolicy, type RotationPolicy } from '../../../../lib/runtime/certs/rotation.js';
import { parseCertificates, verifyServing } from '../../../../lib/runtime/certs/verify.js';

const T0 = Date.UTC(2030, 0, 1);
const DAY = 86_400_000;
const NAMES = ['svc.ns.svc', 'localhost'];
// 101 days: the CA rotation (day 76) falls between two serving renewals (days 75 and 90).
const POLICY: RotationPolicy = { caValidityMs: 101 * DAY, servingValidityMs: 20 * DAY, renewBeforeMs: 5 * DAY };
const ctx = (now: number, policy = POLICY): PlanContext => ({
  dnsNames: NAMES,
  ipAddresses: [],
  now,
  policy,
  caName: 'svc-ca',
});
const serial = (pem: string) => new X509Certificate(pem).serialNumber;
const caSubjects = (bundle: string) => parseCertificates(bundle, 'bundle').map((c) => c.subject);

describe('validatePolicy', () => {
  it('accepts the defaults and rejects policies that would rotate forever', () => {
    expect(() => validatePolicy(DEFAULT_POLICY)).not.toThrow();
    expect(DEFAULT_POLICY.renewBeforeMs).toBe(parseDuration('720h', 'CERTS_RENEW_BEFORE'));
    expect(() => validatePolicy({ ...POLICY, renewBeforeMs: 20 * DAY })).toThrow(
      /CERTS_RENEW_BEFORE.*shorter than the serving certificate validity/,
    );
    expect(() => validatePolicy({ ...POLICY, renewBeforeMs: 0 })).toThrow(/must be positive/);
    expect(() => validatePolicy({ ...POLICY, caValidityMs: 25 * DAY })).toThrow(/CA validity must exceed/);
  });
});

describe('assess and planSecret over time', () => {
  it('generates everything for a missing, empty or garbage Secret', async () => {
    expect(assess(undefined, NAMES, T0, POLICY)).toMatchObject({
      action: 'generate-all',
      reason: 'the Secret does not exist',
    });
    expect(assess({}, NAMES, T0, POLICY)).toMatchObject({
      action: 'generate-all',
      reason: expect.stringMatching(/no usable CA: ca-cert\.pem contains no PEM/),
    });
    const plan = await planSecret({ [SecretKeys.caCert]: 'junk', extra: 'kept' }, ctx(T0));
    expect(plan).toMatchObject({ action: 'generate-all', changed: true });
    expect(plan.data.extra).toBe('kept');
    expect(plan.data[SecretKeys.tlsCert]).toBe(plan.data[SecretKeys.serverCert]);
    expect(plan.data[SecretKeys.tlsKey]).toBe(plan.data[SecretKeys.serverKey]);
    expect(assess(plan.data, NAMES, T0, POLICY).action).toBe('keep');
  });

  it('keeps a healthy Secret until renewBefore, then renews only the serving certificate', async () => {
    const { data } = await planSecret(undefined, ctx(T0));
    const keep = assess(data, NAMES, T0, POLICY);
    expect(keep).toMatchObject({ action: 'keep', nextCheckAt: T0 + 15 * DAY });
    expect(await planSecret(data, ctx(T0 + 15 * DAY - 1))).toMatchObject({ action: 'keep', changed: false });

    const renewed = await planSecret(data, ctx(T0 + 15 * DAY));
    expect(renewed).toMatchObject({
      action: 'renew-serving',
      changed: true,
      reason: expect.stringMatching(/within renewBefore/),
    });
    expect(renewed.data[SecretKeys.caCert]).toBe(data[SecretKeys.caCert]);
    expect(renewed.data[SecretKeys.caKey]).toBe(data[SecretKeys.caKey]);
    expect(serial(renewed.data[SecretKeys.tlsCert])).not.toBe(serial(data[SecretKeys.tlsCert]));
    expect(assess(renewed.data, NAMES, T0 + 15 * DAY, POLICY)).toMatchObject({
      action: 'keep',
      nextCheckAt: T0 + 30 * DAY,
    });
  });

  it('renews the serving certificate at once when it stops covering the required names', async () => {
    const { data } = await planSecret(undefined, ctx(T0));
    expect(assess(data, ['svc.other.svc'], T0, POLICY)).toMatchObject({
      action: 'renew-serving',
      reason: expect.stringMatching(/does not cover DNS name svc\.other\.svc/),
    });
  });

  it('rotates the CA early, trusting old and new, and switches the serving cert to the new CA only at its own renewal', async () => {
    let { data } = await planSecret(undefined, ctx(T0));
    const firstCA = caSubjects(data[SecretKeys.caCert])[0];
    // Renew the serving cert on schedule until the CA is within one serving lifetime + renewBefore of expiry.
    let now = T0;
    for (;;) {
      const a = assess(data, NAMES, now, POLICY);
      if (a.action !== 'keep') break;
      now = a.nextCheckAt;
      if (assess(data, NAMES, now, POLICY).action === 'rotate-ca') break;
      data = (await planSecret(data, ctx(now))).data;
    }
    expect(now).toBe(T0 + 76 * DAY); // CA expiry (T0+101d) - serving validity (20d) - renewBefore (5d)
    const rotated = await planSecret(data, ctx(now));
    expect(rotated).toMatchObject({ action: 'rotate-ca', changed: true });
    const subjects = caSubjects(rotated.data[SecretKeys.caCert]);
    expect(subjects).toHaveLength(2);
    expect(subjects[1]).toBe(firstCA);
    expect(subjects[0]).toBe(`CN=svc-ca@${Math.floor(now / 1000)}`);
    // The serving certificate did not change: whatever is serving it stays trusted.
    expect(rotated.data[SecretKeys.tlsCert]).toBe(data[SecretKeys.tlsCert]);

    const next = assess(rotated.data, NAMES, now, POLICY);
    if (next.action !== 'keep') throw new Error(`expected keep, got ${next.action}`);
    const renewal = await planSecret(rotated.data, ctx(next.nextCheckAt));
    expect(renewal.action).toBe('renew-serving');
    const chain = verifyServing({
      certPem: renewal.data[SecretKeys.tlsCert],
      keyPem: renewal.data[SecretKeys.tlsKey],
      caPem: renewal.data[SecretKeys.caCert],
      dnsNames: NAMES,
      now: next.nextCheckAt,
    });
    expect(chain.root.subject).toBe(subjects[0]);

    // Once the old CA expired it leaves the bundle.
    const later = await planSecret(renewal.data, ctx(T0 + 101 * DAY + 1));
    expect(caSubjects(later.data[SecretKeys.caCert])).toEqual([subjects[0]]);
  });

  it('replaces an expired CA and its serving certificate together', async () => {
    const { data } = await planSecret(undefined, ctx(T0));
    const plan = await planSecret(data, ctx(T0 + 102 * DAY));
    expect(plan.action).toBe('generate-all');
    expect(caSubjects(plan.data[SecretKeys.caCert])).toHaveLength(1);
    expect(assess(plan.data, NAMES, T0 + 102 * DAY, POLICY).action).toBe('keep');
  });
});
