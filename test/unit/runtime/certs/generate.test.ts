// Generated certificates, checked with node:crypto (OpenSSL), not with the library that made them.
import { describe, expect, it } from '@jest/globals';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import { createServer } from 'node:https';
import { request } from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  BACKDATE_MS,
  generateCA,
  generateServingCert,
  servingDnsNames,
} from '../../../../lib/runtime/certs/generate.js';

const NOW = Date.UTC(2030, 5, 1);
const DAY = 86_400_000;

describe('generateCA', () => {
  it('makes a self-signed CA with the requested validity', async () => {
    const ca = await generateCA({ commonName: 'svc-ca@1', now: NOW, validityMs: 3650 * DAY });
    const cert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=svc-ca@1');
    expect(cert.checkIssued(cert)).toBe(true);
    expect(cert.verify(cert.publicKey)).toBe(true);
    expect(cert.validFromDate.getTime()).toBe(NOW - BACKDATE_MS);
    expect(cert.validToDate.getTime()).toBe(NOW + 3650 * DAY);
    expect(cert.checkPrivateKey(createPrivateKey(ca.keyPem))).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
  });
});

describe('generateServingCert', () => {
  it('covers every Service name form plus localhost and the requested IPs, signed by the CA', async () => {
    const ca = await generateCA({ commonName: 'ca', now: NOW, validityMs: 3650 * DAY });
    const names = servingDnsNames('kruise-webhook-service', 'kruise-system');
    expect(names).toEqual([
      'kruise-webhook-service.kruise-system.svc',
      'kruise-webhook-service',
      'kruise-webhook-service.kruise-system',
      'kruise-webhook-service.kruise-system.svc.cluster.local',
      'localhost',
    ]);
    const serving = await generateServingCert({
      ca,
      dnsNames: names,
      ipAddresses: ['127.0.0.1'],
      now: NOW,
      validityMs: 365 * DAY,
    });
    const cert = new X509Certificate(serving.certPem);
    const caCert = new X509Certificate(ca.certPem);
    expect(cert.ca).toBe(false);
    for (const n of names) expect(cert.checkHost(n, { subject: 'never' })).toBe(n);
    expect(cert.checkHost('other.example')).toBeUndefined();
    expect(cert.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']); // serverAuth only
    expect(cert.validToDate.getTime()).toBe(NOW + 365 * DAY);
    expect(cert.checkPrivateKey(createPrivateKey(serving.keyPem))).toBe(true);
  });

  it('works for a real TLS handshake that trusts only the CA and checks the name', async () => {
    const now = Date.now();
    const ca = await generateCA({ commonName: 'live-ca', now, validityMs: DAY });
    const serving = await generateServingCert({ ca, dnsNames: ['localhost'], now, validityMs: DAY });
    const server = createServer({ cert: serving.certPem, key: serving.keyPem, minVersion: 'TLSv1.2' }, (_q, s) =>
      s.end('hi'),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const body = await new Promise<string>((resolve, reject) => {
        request(
          {
            host: '127.0.0.1',
            servername: 'localhost',
            port: (server.address() as AddressInfo).port,
            ca: ca.certPem,
            agent: false,
          },
          (res) => {
            let t = '';
            res
              .on('data', (d) => {
                t += d;
              })
              .on('end', () => resolve(t));
          },
        )
          .on('error', reject)
          .end();
      });
      expect(body).toBe('hi');
    } finally {
      server.close();
    }
  });

  it('signs with an RSA CA key in PKCS#1 form, as upstream kruise-manager stores it', async () => {
    x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
    const alg = {
      name: 'RSASSA-PKCS1-v1_5',
      hash: 'SHA-256',
      publicExponent: new Uint8Array([1, 0, 1]),
      modulusLength: 2048,
    };
    const keys = await webcrypto.subtle.generateKey(alg, true, ['sign', 'verify']);
    const caCert = await x509.X509CertificateGenerator.createSelfSigned({
      name: 'CN=upstream-ca',
      keys,
      signingAlgorithm: alg,
      notBefore: new Date(NOW - DAY),
      notAfter: new Date(NOW + 3650 * DAY),
      extensions: [
        new x509.BasicConstraintsExtension(true, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
      ],
    });
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
    const pkcs1Pem = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({
      type: 'pkcs1',
      format: 'pem',
    }) as string;
    expect(pkcs1Pem).toContain('BEGIN RSA PRIVATE KEY');

    const serving = await generateServingCert({
      ca: { certPem: caCert.toString('pem'), keyPem: pkcs1Pem },
      dnsNames: ['localhost'],
      now: NOW,
      validityMs: DAY,
    });
    const leaf = new X509Certificate(serving.certPem);
    expect(leaf.verify(new X509Certificate(caCert.toString('pem')).publicKey)).toBe(true);
  });

  it('refuses to issue a certificate without names', async () => {
    const ca = await generateCA({ commonName: 'ca', now: NOW, validityMs: DAY });
    await expect(generateServingCert({ ca, dnsNames: [], now: NOW, validityMs: DAY })).rejects.toThrow(
      /at least one DNS name/,
    );
  });
});
