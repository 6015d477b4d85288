/**
 * When to regenerate what, as a pure function of the Secret's contents and the time.
 *
 * - The serving certificate is renewed `renewBefore` ahead of its expiry (or of its CA's, if
 *   earlier), and at once when it is missing, broken, or does not cover the required names.
 * - The CA is rotated while it can still outlive one full serving certificate plus the renewal
 *   window. The new CA joins the trust bundle next to the old one, but the current serving
 *   certificate stays until its own renewal: by the time anything is signed by the new CA, every
 *   caBundle has long trusted it. Only a CA that is already unusable forces an immediate switch.
 */
import type { X509Certificate } from 'node:crypto';
import { SecretKeys } from '../../contract.js';
import { verifyServing, verifySigningCA } from './verify.js';

export interface RotationPolicy {
  caValidityMs: number;
  servingValidityMs: number;
  renewBeforeMs: number;
}

const DAY = 24 * 3_600_000;
export const DEFAULT_POLICY: RotationPolicy = {
  caValidityMs: 10 * 365 * DAY,
  servingValidityMs: 365 * DAY,
  /** 30 days (`720h`): several weeks of daily re-checks before anything could expire. */
  renewBeforeMs: 30 * DAY,
};

/** Throws, naming the setting, for a policy that would rotate continuously. */
export function validatePolicy(p: RotationPolicy): void {
  if (!(p.renewBeforeMs > 0)) throw new Error('renewBefore (CERTS_RENEW_BEFORE) must be positive');
  if (p.renewBeforeMs >= p.servingValidityMs) {
    throw new Error('renewBefore (CERTS_RENEW_BEFORE) must be shorter than the serving certificate validity');
  }
  if (p.servingValidityMs + p.renewBeforeMs >= p.caValidityMs) {
    throw new Error(
      'the CA validity must exceed the serving certificate validity plus renewBefore (CERTS_RENEW_BEFORE)',
    );
  }
}

export type Assessment =
  | { action: 'generate-all'; reason: string }
  | { action: 'rotate-ca'; reason: string; renewServing: boolean }
  | { action: 'renew-serving'; reason: string }
  | { action: 'keep'; nextCheckAt: number; ca: X509Certificate; servingNotAfter: number };

export function assess(
  data: Record<string, string> | undefined,
  dnsNames: string[],
  now: number,
  p: RotationPolicy,
): Assessment {
  const d = data ?? {};
  let ca: X509Certificate;
  try {
    ca = verifySigningCA(d[SecretKeys.caCert] ?? '', d[SecretKeys.caKey] ?? '', now);
  } catch (e) {
    return {
      action: 'generate-all',
      reason: data ? `no usable CA: ${(e as Error).message}` : 'the Secret does not exist',
    };
  }
  let servingNotAfter: number | undefined;
  let servingProblem: string | undefined;
  try {
    servingNotAfter = verifyServing({
      certPem: d[SecretKeys.tlsCert] ?? '',
      keyPem: d[SecretKeys.tlsKey] ?? '',
      caPem: d[SecretKeys.caCert],
      dnsNames,
      now,
      sources: { cert: SecretKeys.tlsCert, key: SecretKeys.tlsKey, ca: SecretKeys.caCert },
    }).notAfter;
    if (servingNotAfter - now <= p.renewBeforeMs) {
      servingProblem = `the serving certificate expires at ${new Date(servingNotAfter).toISOString()}, within renewBefore`;
    }
  } catch (e) {
    servingProblem = (e as Error).message;
  }
  const caRotateAt = ca.validToDate.getTime() - (p.servingValidityMs + p.renewBeforeMs);
  if (now >= caRotateAt) {
    return {
      action: 'rotate-ca',
      reason: `the CA expires at ${ca.validToDate.toISOString()}, too soon to sign another serving certificate`,
      renewServing: servingProblem !== undefined,
    };
  }
  if (servingProblem !== undefined || servingNotAfter === undefined) {
    return { action: 'renew-serving', reason: servingProblem ?? 'no serving certificate' };
  }
  return { action: 'keep', ca, servingNotAfter, nextCheckAt: Math.min(caRotateAt, servingNotAfter - p.renewBeforeMs) };
}
