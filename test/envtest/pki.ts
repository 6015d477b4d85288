// Throwaway PKI for the envtest control plane: one CA signs the API server's
// serving cert and every client cert, so client-certificate auth (and the
// groups in a cert's O= fields) work exactly as on a real cluster.
// @peculiar/x509 resolves its internals through tsyringe, which needs this polyfill loaded first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { webcrypto } from 'node:crypto';

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;

// Node >= 20 has WebCrypto on globalThis; @peculiar/x509 needs it registered.
x509.cryptoProvider.set(globalThis.crypto);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface KeyPairPem {
  certPem: string;
  keyPem: string;
}

export interface CertificateAuthority extends KeyPairPem {
  cert: x509.X509Certificate;
  key: CryptoKey;
}

const keyToPem = async (key: CryptoKey, kind: 'pkcs8' | 'spki'): Promise<string> =>
  x509.PemConverter.encode(await crypto.subtle.exportKey(kind, key), kind === 'pkcs8' ? 'PRIVATE KEY' : 'PUBLIC KEY');

const newKeys = (): Promise<CryptoKeyPair> =>
  crypto.subtle.generateKey(ALG, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;

// Backdated a little so clock skew between the test host and the cert checks never matters.
const validity = () => ({ notBefore: new Date(Date.now() - DAY_MS), notAfter: new Date(Date.now() + 30 * DAY_MS) });

export async function createCertificateAuthority(commonName = 'kruise-ts-envtest-ca'): Promise<CertificateAuthority> {
  const keys = await newKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: [{ CN: [commonName] }],
    keys,
    signingAlgorithm: ALG,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return {
    cert,
    key: keys.privateKey,
    certPem: cert.toString('pem'),
    keyPem: await keyToPem(keys.privateKey, 'pkcs8'),
  };
}

/** Re-opens a CA written by {@link createCertificateAuthority}, e.g. in a Jest worker minting user certs. */
export async function loadCertificateAuthority(certPem: string, keyPem: string): Promise<CertificateAuthority> {
  const cert = new x509.X509Certificate(certPem);
  const key = await crypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(keyPem), ALG, true, ['sign']);
  return { cert, key, certPem, keyPem };
}

export interface LeafOptions {
  commonName: string;
  /** Become the O= attributes: Kubernetes reads them as the user's groups. */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: 'server' | 'client';
}

export async function issueCertificate(ca: CertificateAuthority, opts: LeafOptions): Promise<KeyPairPem> {
  const keys = await newKeys();
  // One RDN per group, as openssl and Go's crypto/x509 write them.
  const subject: x509.JsonName = [{ CN: [opts.commonName] }, ...(opts.organizations ?? []).map((o) => ({ O: [o] }))];
  const sans = [
    ...(opts.dnsNames ?? []).map((value) => ({ type: 'dns' as const, value })),
    ...(opts.ipAddresses ?? []).map((value) => ({ type: 'ip' as const, value })),
  ];
  const eku = opts.usage === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth;
  const cert = await x509.X509CertificateGenerator.create({
    subject,
    issuer: ca.cert.subject,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    signingAlgorithm: ALG,
    ...validity(),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([eku]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
      ...(sans.length ? [new x509.SubjectAlternativeNameExtension(sans)] : []),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await keyToPem(keys.privateKey, 'pkcs8') };
}

/** Key pair for signing service-account tokens (kube-apiserver accepts PKCS#8 and SPKI PEM). */
export async function createServiceAccountKeys(): Promise<{ privatePem: string; publicPem: string }> {
  const keys = await newKeys();
  return { privatePem: await keyToPem(keys.privateKey, 'pkcs8'), publicPem: await keyToPem(keys.publicKey, 'spki') };
}

/** A kubeconfig with embedded credentials, so the file alone is enough to connect. */
export function renderKubeconfig(server: string, caPem: string, client: KeyPairPem, user: string): string {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return (
    JSON.stringify(
      {
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'envtest', cluster: { server, 'certificate-authority-data': b64(caPem) } }],
        users: [
          {
            name: user,
            user: { 'client-certificate-data': b64(client.certPem), 'client-key-data': b64(client.keyPem) },
          },
        ],
        contexts: [{ name: 'envtest', context: { cluster: 'envtest', user } }],
        'current-context': 'envtest',
      },
      null,
      2,
    ) + '\n'
  );
}
