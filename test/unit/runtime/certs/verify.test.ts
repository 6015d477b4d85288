import { describe, expect, it } from '@jest/globals';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';
import { generateCA, generateServingCert, type KeyPairPem } from '../../../../lib/runtime/certs/generate.js';
import {
  isNewerBundle,
  joinPem,
  parseCertificates,
  verifyServing,
  verifySigningCA,
} from '../../../../lib/runtime/certs/verify.js';

const NOW = Date.UTC(2030, 0, 1);
const DAY = 86_400_000;
const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

async function pki(dnsNames = ['svc.ns.svc', 'localhost'], at = NOW) {
  const ca = await generateCA({ commonName: `ca@${at}`, now: at, validityMs: 3650 * DAY });
  const serving = await generateServingCert({ ca, dnsNames, now: at, validityMs: 30 * DAY });
  return { ca, serving };
}

/** root → intermediate (built here, as cert-manager's CA issuers do) → leaf. */
async function intermediateChain(): Promise<{ root: KeyPairPem; intermediate: KeyPairPem; leaf: KeyPairPem }> {
  x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
  const root = await generateCA({ commonName: 'root', now: NOW, validityMs: 3650 * DAY });
  const rootCert = new x509.X509Certificate(root.certPem);
  const rootKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(root.keyPem), ALG, false, [
    'sign',
  ]);
  const keys = await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    subject: 'CN=intermediate',
    issuer: rootCert.subject,
    publicKey: keys.publicKey,
    signingKey: rootKey,
    signingAlgorithm: ALG,
    notBefore: new Date(NOW - DAY),
    notAfter: new Date(NOW + 100 * DAY),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
    ],
  });
  const intermediate = {
    certPem: cert.toString('pem'),
    keyPem: x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey), 'PRIVATE KEY'),
  };
  const leaf = await generateServingCert({
    ca: intermediate,
    dnsNames: ['localhost'],
    now: NOW,
    validityMs: 365 * DAY,
  });
  return { root, intermediate, leaf };
}

describe('verifyServing', () => {
  it('accepts a matching pair that chains to the bundle and reports the expiry', async () => {
    const { ca, serving } = await pki();
    const v = verifyServing({
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      caPem: ca.certPem,
      dnsNames: ['svc.ns.svc', 'localhost'],
      now: NOW,
    });
    expect(v.notAfter).toBe(NOW + 30 * DAY);
    expect(v.root.subject).toBe(`CN=ca@${NOW}`);
  });

  it('follows intermediates carried in tls.crt, and the chain expires with its shortest link', async () => {
    const { root, intermediate, leaf } = await intermediateChain();
    const v = verifyServing({
      certPem: joinPem([leaf.certPem, intermediate.certPem]),
      keyPem: leaf.keyPem,
      caPem: root.certPem,
      dnsNames: ['localhost'],
      now: NOW,
    });
    expect(v.notAfter).toBe(NOW + 100 * DAY);
    expect(() =>
      verifyServing({
        certPem: leaf.certPem,
        keyPem: leaf.keyPem,
        caPem: root.certPem,
        dnsNames: ['localhost'],
        now: NOW,
      }),
    ).toThrow(/tls\.crt is not signed by a CA in ca\.crt/);
  });

  it('names what is wrong', async () => {
    const { ca, serving } = await pki();
    const other = await pki(['svc.ns.svc', 'localhost'], NOW + 1000);
    const base = {
      certPem: serving.certPem,
      keyPem: serving.keyPem,
      caPem: ca.certPem,
      dnsNames: ['localhost'],
      now: NOW,
    };
    expect(() => verifyServing({ ...base, keyPem: other.serving.keyPem })).toThrow(
      'tls.key does not match the certificate in tls.crt',
    );
    expect(() => verifyServing({ ...base, caPem: other.ca.certPem })).toThrow(
      'tls.crt is not signed by a CA in ca.crt',
    );
    expect(() => verifyServing({ ...base, dnsNames: ['svc.other.svc'] })).toThrow(
      /does not cover DNS name svc\.other\.svc/,
    );
    expect(() => verifyServing({ ...base, now: NOW + 31 * DAY })).toThrow(/tls\.crt expired at/);
    expect(() => verifyServing({ ...base, now: NOW - 2 * DAY })).toThrow(/tls\.crt is not valid before/);
    expect(() => verifyServing({ ...base, certPem: 'garbage' })).toThrow('tls.crt contains no PEM certificate');
    expect(() => verifyServing({ ...base, keyPem: 'garbage' })).toThrow(/tls\.key is not a readable private key/);
    expect(() =>
      verifyServing({
        ...base,
        sources: { cert: 'S tls.crt', key: 'S tls.key', ca: 'S ca.crt' },
        caPem: other.ca.certPem,
      }),
    ).toThrow('S tls.crt is not signed by a CA in S ca.crt');
  });

  it('rejects a corrupt certificate block by position', () => {
    const bad = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----';
    expect(() => parseCertificates(bad, 'ca.crt')).toThrow(/ca\.crt: certificate #1 cannot be parsed/);
  });
});

describe('verifySigningCA', () => {
  it('requires the first bundle entry to be a valid CA matching ca-key.pem', async () => {
    const { ca, serving } = await pki();
    const other = await pki();
    expect(verifySigningCA(ca.certPem, ca.keyPem, NOW).subject).toBe(`CN=ca@${NOW}`);
    expect(() => verifySigningCA(ca.certPem, other.ca.keyPem, NOW)).toThrow('ca-key.pem does not match ca-cert.pem');
    expect(() => verifySigningCA(serving.certPem, serving.keyPem, NOW)).toThrow(/not a CA/);
    expect(() => verifySigningCA(ca.certPem, ca.keyPem, NOW + 3651 * DAY)).toThrow(/ca-cert\.pem expired/);
  });
});

describe('isNewerBundle', () => {
  it('is true only when the existing bundle trusts a valid CA newer than all of ours', async () => {
    const older = await generateCA({ commonName: 'old', now: NOW, validityMs: 3650 * DAY });
    const newer = await generateCA({ commonName: 'new', now: NOW + DAY, validityMs: 3650 * DAY });
    expect(isNewerBundle(joinPem([newer.certPem, older.certPem]), older.certPem, NOW + DAY)).toBe(true);
    expect(isNewerBundle(older.certPem, joinPem([newer.certPem, older.certPem]), NOW + DAY)).toBe(false);
    expect(isNewerBundle(newer.certPem, newer.certPem, NOW + DAY)).toBe(false);
    expect(isNewerBundle('not pem', older.certPem, NOW)).toBe(false);
    expect(isNewerBundle(newer.certPem, older.certPem, NOW + 3652 * DAY)).toBe(false); // expired newer CA does not count
  });
});
