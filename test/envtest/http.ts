// Minimal HTTP(S) helpers for readiness probes and raw API calls, independent
// of @kubernetes/client-node so the harness can start before any client exists.
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface HttpResponse {
  status: number;
  body: string;
}

export interface ClientCredentials {
  server: string;
  caCertPath: string;
  adminCertPath: string;
  adminKeyPath: string;
}

const TIMEOUT_MS = 10_000;

function collect(req: ReturnType<typeof httpRequest>, body?: string, timeoutMs = TIMEOUT_MS): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    req.once('response', (res) => {
      let data = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        data += d;
      });
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${req.method} ${req.path} timed out after ${timeoutMs}ms`)));
    req.end(body);
  });
}

export const plainHttp = (method: string, url: string, timeoutMs = TIMEOUT_MS): Promise<HttpResponse> =>
  collect(httpRequest(url, { method, agent: false }), undefined, timeoutMs);

/** Calls the API server as the admin (system:masters) client certificate. */
export function apiRequest(
  creds: ClientCredentials,
  method: string,
  path: string,
  json?: unknown,
): Promise<HttpResponse> {
  const req = httpsRequest(new URL(path, creds.server), {
    method,
    agent: false, // no keep-alive: a restarted API server must not see stale sockets
    ca: readFileSync(creds.caCertPath),
    cert: readFileSync(creds.adminCertPath),
    key: readFileSync(creds.adminKeyPath),
    headers: json === undefined ? {} : { 'content-type': 'application/json' },
  });
  return collect(req, json === undefined ? undefined : JSON.stringify(json));
}
