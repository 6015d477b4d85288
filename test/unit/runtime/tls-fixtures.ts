// Shared test plumbing for the serving side: throwaway CAs and cert dirs, an HTTPS client that
// returns status/headers/body, and a peek at the certificate a server presents.
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { writeCertDir } from '../../../lib/runtime/certs/cert-dir.js';
import { generateCA, generateServingCert, type KeyPairPem } from '../../../lib/runtime/certs/generate.js';
import { Logger } from '../../../lib/runtime/log.js';

const DAY = 24 * 3_600_000;

export const quietLogger = (): Logger => new Logger({}, 'error', { write: () => undefined });

/** A logger that keeps its lines, for asserting what was logged. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  return {
    logger: new Logger({}, 'debug', { write: (l) => lines.push(JSON.parse(l) as Record<string, unknown>) }),
    lines,
  };
}

export interface TestPki {
  ca: KeyPairPem;
  serving: KeyPairPem;
}

export async function makePki(name = 'test', dnsNames = ['localhost'], now = Date.now()): Promise<TestPki> {
  const ca = await generateCA({ commonName: `${name}-ca`, now, validityMs: 30 * DAY });
  const serving = await generateServingCert({ ca, dnsNames, ipAddresses: ['127.0.0.1'], now, validityMs: 7 * DAY });
  return { ca, serving };
}

export function tempDir(prefix = 'kruise-serving-test-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export async function writePki(dir: string, pki: TestPki): Promise<void> {
  await writeCertDir(dir, { cert: pki.serving.certPem, key: pki.serving.keyPem, ca: pki.ca.certPem });
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RequestOptions {
  port: number;
  ca: string;
  path?: string;
  method?: string;
  body?: string | Buffer;
  headers?: Record<string, string>;
  agent?: Agent | false;
  host?: string;
}

export function httpsRequest(o: RequestOptions): Promise<HttpResult> {
  // Node's client sends a DELETE/GET body with no framing unless told its length; say it always.
  const framing: Record<string, string> =
    o.body !== undefined && !o.headers?.['Transfer-Encoding']
      ? { 'Content-Length': String(Buffer.byteLength(o.body)) }
      : {};
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: o.host ?? '127.0.0.1',
        servername: 'localhost',
        port: o.port,
        path: o.path ?? '/',
        method: o.method ?? 'POST',
        ca: o.ca,
        agent: o.agent ?? false,
        headers: { 'Content-Type': 'application/json', ...framing, ...o.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(o.body);
  });
}

/** The SHA-256 fingerprint of the certificate the server presents to a new connection. */
export function presentedFingerprint(port: number, host = '127.0.0.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername: 'localhost', rejectUnauthorized: false }, () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (!cert) reject(new Error('no peer certificate'));
      else resolve(cert.fingerprint256);
    });
    socket.on('error', reject);
  });
}

export const fingerprintOf = (pem: string): string => new X509Certificate(pem).fingerprint256;

export function review(overrides: Record<string, unknown> = {}, apiVersion = 'admission.k8s.io/v1') {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: 'c0ffee00-0000-4000-8000-000000000001',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: 'default',
      name: 'web-0',
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web-0', namespace: 'default' },
        spec: { containers: [] },
      },
      oldObject: null,
      dryRun: false,
      ...overrides,
    },
  };
}
