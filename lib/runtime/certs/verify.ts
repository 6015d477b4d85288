/**
 * Certificate checks with node:crypto (OpenSSL), independent of the library that generated the
 * certificates, so a generator bug cannot hide behind a verifier with the same bug. Every failure
 * is a sentence naming the Secret key it came from.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates in a PEM text, in order; throws naming `source` if there are none or one is corrupt. */
export function parseCertificates(pem: string, source: string): X509Certificate[] {
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new Error(`${source} contains no PEM certificate`);
  return blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (e) {
      throw new Error(`${source}: certificate #${i + 1} cannot be parsed: ${(e as Error).message}`, { cause: e });
    }
  });
}

function parsePrivateKey(pem: string, source: string): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (e) {
    throw new Error(`${source} is not a readable private key: ${(e as Error).message}`, { cause: e });
  }
}

/** Joins PEM blocks with exactly one newline between and after them. */
export function joinPem(blocks: string[]): string {
  return blocks.map((b) => b.trim()).join('\n') + '\n';
}

function checkValidAt(cert: X509Certificate, now: number, source: string): void {
  if (now < cert.validFromDate.getTime())
    throw new Error(`${source} is not valid before ${cert.validFromDate.toISOString()}`);
  if (now >= cert.validToDate.getTime()) throw new Error(`${source} expired at ${cert.validToDate.toISOString()}`);
}

export interface ServingCheck {
  /** PEM: the leaf first, then any intermediates (cert-manager's tls.crt may carry them). */
  certPem: string;
  keyPem: string;
  /** PEM bundle of trusted CAs. */
  caPem: string;
  dnsNames: string[];
  now: number;
  /** Secret key names, for messages. */
  sources?: { cert: string; key: string; ca: string };
}

export interface VerifiedServing {
  leaf: X509Certificate;
  /** The CA from the bundle the chain ends at. */
  root: X509Certificate;
  /** The earliest expiry along the chain: a leaf is only as good as its issuers. */
  notAfter: number;
}

/** Throws with the first reason the pair cannot serve `dnsNames` under `caPem` at `now`. */
export function verifyServing(check: ServingCheck): VerifiedServing {
  const src = check.sources ?? { cert: 'tls.crt', key: 'tls.key', ca: 'ca.crt' };
  const [leaf, ...intermediates] = parseCertificates(check.certPem, src.cert);
  const roots = parseCertificates(check.caPem, src.ca);
  if (!leaf.checkPrivateKey(parsePrivateKey(check.keyPem, src.key))) {
    throw new Error(`${src.key} does not match the certificate in ${src.cert}`);
  }
  checkValidAt(leaf, check.now, src.cert);
  for (const name of check.dnsNames) {
    if (leaf.checkHost(name, { subject: 'never' }) === undefined) {
      throw new Error(`${src.cert} does not cover DNS name ${name} (it has ${leaf.subjectAltName ?? 'no SANs'})`);
    }
  }
  let notAfter = leaf.validToDate.getTime();
  // A self-signed leaf listed in the bundle itself (cert-manager's SelfSigned issuer) is trusted as is.
  const pinned = roots.find((ca) => ca.fingerprint256 === leaf.fingerprint256);
  if (pinned) return { leaf, root: pinned, notAfter };
  let current = leaf;
  for (let depth = 0; depth < 8; depth++) {
    const root = roots.find((ca) => issuedBy(current, ca));
    if (root) {
      checkValidAt(root, check.now, `the CA in ${src.ca} that issued ${src.cert}`);
      return { leaf, root, notAfter: Math.min(notAfter, root.validToDate.getTime()) };
    }
    const next = intermediates.find((ca) => issuedBy(current, ca));
    if (!next) break;
    checkValidAt(next, check.now, `an intermediate CA in ${src.cert}`);
    notAfter = Math.min(notAfter, next.validToDate.getTime());
    current = next;
  }
  throw new Error(`${src.cert} is not signed by a CA in ${src.ca}`);
}

function issuedBy(child: X509Certificate, ca: X509Certificate): boolean {
  return ca.ca && child.checkIssued(ca) && child.verify(ca.publicKey);
}

/** The signing CA of a self-managed bundle: the first certificate, whose key is `keyPem`. */
export function verifySigningCA(caPem: string, keyPem: string, now: number): X509Certificate {
  const [ca] = parseCertificates(caPem, 'ca-cert.pem');
  if (!ca.ca) throw new Error('ca-cert.pem: the first certificate is not a CA');
  if (!ca.checkPrivateKey(parsePrivateKey(keyPem, 'ca-key.pem')))
    throw new Error('ca-key.pem does not match ca-cert.pem');
  checkValidAt(ca, now, 'ca-cert.pem');
  return ca;
}

/**
 * True when `existingPem` (a caBundle found in the cluster) holds a still-valid CA newer than
 * every CA in `desiredPem`: someone already rotated, and our copy of the Secret is out of date.
 * Writing ours would remove the CA the other replicas' new certificates chain to.
 */
export function isNewerBundle(existingPem: string, desiredPem: string, now: number): boolean {
  let existing: X509Certificate[];
  try {
    existing = parseCertificates(existingPem, 'caBundle');
  } catch {
    return false; // unreadable: ours replaces it
  }
  const desired = parseCertificates(desiredPem, 'desired caBundle');
  const desiredFingerprints = new Set(desired.map((c) => c.fingerprint256));
  const newestDesired = Math.max(...desired.map((c) => c.validFromDate.getTime()));
  return existing.some(
    (c) =>
      !desiredFingerprints.has(c.fingerprint256) &&
      c.validToDate.getTime() > now &&
      c.validFromDate.getTime() > newestDesired,
  );
}
