/**
 * Certificate generation with @peculiar/x509 on Node's WebCrypto.
 *
 * Keys are ECDSA P-256: generating one takes about a millisecond where RSA 2048 takes tens to
 * hundreds (and replicas generate at start-up, racing each other), handshakes are cheaper, and
 * every client that calls a webhook (Go's crypto/tls in the API server) supports it with TLS 1.2
 * and 1.3. CA keys found in an existing Secret (RSA from upstream kruise-manager) are still used
 * to sign, so upgrading from upstream keeps its CA.
 */
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, webcrypto } from 'node:crypto';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKey = webcrypto.CryptoKey;

const EC_ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const RSA_ALG = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } as const;

/** Issued certificates start this far in the past, so peers whose clock lags still accept them. */
export const BACKDATE_MS = 60 * 60 * 1000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface CaOptions {
  /** Distinct per generation (a timestamp suffix), so rotated CAs in one trust bundle are told apart. */
  commonName: string;
  now: number;
  validityMs: number;
}

export async function generateCA(opts: CaOptions): Promise<KeyPairPem> {
  const keys = await webcrypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: [{ CN: [opts.commonName] }],
    keys,
    signingAlgorithm: EC_ALG,
    notBefore: new Date(opts.now - BACKDATE_MS),
    notAfter: new Date(opts.now + opts.validityMs),
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await pkcs8Pem(keys.privateKey) };
}

export interface ServingOptions {
  ca: KeyPairPem;
  dnsNames: string[];
  ipAddresses?: string[];
  now: number;
  validityMs: number;
}

export async function generateServingCert(opts: ServingOptions): Promise<KeyPairPem> {
  if (opts.dnsNames.length === 0) throw new Error('a serving certificate needs at least one DNS name');
  const caCert = new x509.X509Certificate(opts.ca.certPem);
  const signer = await importSigningKey(opts.ca.keyPem);
  const keys = await webcrypto.subtle.generateKey(EC_ALG, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.create({
    subject: [{ CN: [opts.dnsNames[0]] }],
    issuer: caCert.subjectName,
    publicKey: keys.publicKey,
    signingKey: signer.key,
    signingAlgorithm: signer.algorithm,
    notBefore: new Date(opts.now - BACKDATE_MS),
    notAfter: new Date(opts.now + opts.validityMs),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
      new x509.SubjectAlternativeNameExtension([
        ...opts.dnsNames.map((value) => ({ type: 'dns' as const, value })),
        ...(opts.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
      ]),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await pkcs8Pem(keys.privateKey) };
}

/** The names the API server and the readiness self-check dial. */
export function servingDnsNames(service: string, namespace: string): string[] {
  return [
    `${service}.${namespace}.svc`,
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc.cluster.local`,
    'localhost',
  ];
}

async function importSigningKey(pem: string): Promise<{ key: CryptoKey; algorithm: typeof EC_ALG | typeof RSA_ALG }> {
  // node:crypto reads PKCS#1, SEC1 and PKCS#8; WebCrypto only PKCS#8.
  const keyObject = createPrivateKey(pem);
  const der = keyObject.export({ type: 'pkcs8', format: 'der' });
  const type = keyObject.asymmetricKeyType;
  if (type === 'rsa') {
    return { key: await webcrypto.subtle.importKey('pkcs8', der, RSA_ALG, false, ['sign']), algorithm: RSA_ALG };
  }
  if (type === 'ec' && keyObject.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return { key: await webcrypto.subtle.importKey('pkcs8', der, EC_ALG, false, ['sign']), algorithm: EC_ALG };
  }
  throw new Error(
    `unsupported CA key type ${type}${type === 'ec' ? ` (${keyObject.asymmetricKeyDetails?.namedCurve})` : ''}`,
  );
}

async function pkcs8Pem(key: CryptoKey): Promise<string> {
  return x509.PemConverter.encode(await webcrypto.subtle.exportKey('pkcs8', key), 'PRIVATE KEY');
}
