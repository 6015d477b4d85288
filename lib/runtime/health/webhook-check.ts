/**
 * Readiness self-check for the webhook server, as upstream kruise does it: a real HTTPS request
 * to our own server over localhost, trusting only OUR CA and checking the name `localhost`.
 * It proves the port is open, the served certificate chains to the CA we publish in caBundle,
 * and the HTTP layer answers; a replica failing it leaves the Service instead of failing
 * admission calls. A fresh connection each time (no agent), so a stale session proves nothing.
 */
import { request } from 'node:https';
import { isIP } from 'node:net';
import { WEBHOOK_HEALTH_PATH } from '../webhook/server.js';
import type { HealthCheck } from './checks.js';

export interface WebhookSelfCheckOptions {
  port: number;
  /** PEM bundle the server's certificate must chain to; undefined while certificates are not ready. */
  caPem: () => string | undefined;
  /** What to dial and verify; the serving certificate covers `localhost`. */
  host?: string;
  timeoutMs?: number;
}

export function webhookSelfCheck(opts: WebhookSelfCheckOptions): HealthCheck {
  const host = opts.host ?? 'localhost';
  const timeoutMs = opts.timeoutMs ?? 500;
  return (signal) =>
    new Promise<void>((resolve, reject) => {
      const ca = opts.caPem();
      if (!ca) return reject(new Error('no CA to verify the webhook server against yet (certificates not ready)'));
      const req = request(
        {
          host,
          port: opts.port,
          path: WEBHOOK_HEALTH_PATH,
          method: 'GET',
          ca,
          servername: isIP(host) ? undefined : host,
          rejectUnauthorized: true,
          agent: false,
          signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]),
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200
              ? resolve()
              : reject(new Error(`webhook server at ${host}:${opts.port} answered ${res.statusCode}`)),
          );
          res.on('error', (e) => reject(new Error(`webhook server at ${host}:${opts.port}: ${e.message}`)));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        let why = e.message;
        if (signal.aborted) why = `check aborted: ${(signal.reason as Error | undefined)?.message ?? 'by the caller'}`;
        else if (e.name === 'AbortError' || e.code === 'ABORT_ERR') why = `no answer within ${timeoutMs}ms`;
        reject(new Error(`webhook server at ${host}:${opts.port} is not serving TLS we trust: ${why}`));
      });
      req.end();
    });
}
