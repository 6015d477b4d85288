/**
 * What the self-managed Secret should contain next, given what it contains now.
 *
 * Layout (upstream kruise keys): `ca-key.pem` signs; `ca-cert.pem` is the trust bundle, signing
 * CA first (so upstream, which reads only the first PEM block, still finds it), then older CAs
 * that are still valid; `tls.crt`/`tls.key` serve, mirrored in `cert.pem`/`key.pem`.
 */
import { X509Certificate } from 'node:crypto';
import { SecretKeys } from '../../contract.js';
import { generateCA, generateServingCert, type KeyPairPem } from './generate.js';
import { assess, type Assessment, type RotationPolicy } from './rotation.js';
import { joinPem } from './verify.js';

export interface PlanContext {
  dnsNames: string[];
  ipAddresses: string[];
  now: number;
  policy: RotationPolicy;
  /** Prefix of the CA's common name; the generation time is appended. */
  caName: string;
}

export interface Plan {
  data: Record<string, string>;
  /** False when `data` equals what is stored: nothing to write. */
  changed: boolean;
  action: Assessment['action'];
  reason?: string;
}

/** Old CAs kept in the trust bundle at most; more than a couple means something rotates too often. */
const MAX_TRUSTED_CAS = 4;

export async function planSecret(current: Record<string, string> | undefined, ctx: PlanContext): Promise<Plan> {
  const data = current ?? {};
  const a = assess(current, ctx.dnsNames, ctx.now, ctx.policy);
  let ca: KeyPairPem = { certPem: data[SecretKeys.caCert] ?? '', keyPem: data[SecretKeys.caKey] ?? '' };
  let trustBundle = ca.certPem;
  let serving: KeyPairPem = { certPem: data[SecretKeys.tlsCert] ?? '', keyPem: data[SecretKeys.tlsKey] ?? '' };

  if (a.action === 'generate-all' || a.action === 'rotate-ca') {
    ca = await generateCA({
      commonName: `${ctx.caName}@${Math.floor(ctx.now / 1000)}`,
      now: ctx.now,
      validityMs: ctx.policy.caValidityMs,
    });
    trustBundle = ca.certPem;
  }
  if (a.action === 'generate-all' || a.action === 'renew-serving' || (a.action === 'rotate-ca' && a.renewServing)) {
    serving = await generateServingCert({
      ca: { certPem: firstCert(ca.certPem), keyPem: ca.keyPem },
      dnsNames: ctx.dnsNames,
      ipAddresses: ctx.ipAddresses,
      now: ctx.now,
      validityMs: ctx.policy.servingValidityMs,
    });
  }
  const bundle = trustBundleWith(trustBundle, data[SecretKeys.caCert] ?? '', ctx.now);
  const next: Record<string, string> = {
    ...data,
    [SecretKeys.caKey]: ca.keyPem,
    [SecretKeys.caCert]: bundle,
    [SecretKeys.serverKey]: serving.keyPem,
    [SecretKeys.serverCert]: serving.certPem,
    [SecretKeys.tlsKey]: serving.keyPem,
    [SecretKeys.tlsCert]: serving.certPem,
  };
  const changed = Object.keys(next).some((k) => next[k] !== data[k]);
  return { data: next, changed, action: a.action, ...(a.action === 'keep' ? {} : { reason: a.reason }) };
}

/** `signingPem` first, then still-valid certificates from `previousPem`, without duplicates. */
function trustBundleWith(signingPem: string, previousPem: string, now: number): string {
  const blocks = [firstCert(signingPem)];
  const seen = new Set([fingerprint(blocks[0])]);
  for (const block of pemBlocks(previousPem)) {
    const fp = fingerprint(block);
    if (fp === undefined || seen.has(fp) || blocks.length >= MAX_TRUSTED_CAS) continue;
    const cert = new X509Certificate(block);
    if (cert.ca && cert.validToDate.getTime() > now) {
      blocks.push(block);
      seen.add(fp);
    }
  }
  return joinPem(blocks);
}

function pemBlocks(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function firstCert(pem: string): string {
  const [first] = pemBlocks(pem);
  if (!first) throw new Error('no CA certificate to sign with');
  return first;
}

function fingerprint(block: string): string | undefined {
  try {
    return new X509Certificate(block).fingerprint256;
  } catch {
    return undefined; // a corrupt old entry is dropped, not fatal
  }
}
