/**
 * The runtime's whole HTTP path to the API server: node:http(s) with one keep-alive Agent per
 * KubeConfig, TLS material and credentials from client-node's KubeConfig on every request (so a
 * rotated token file, exec and OIDC credentials keep working), JSON in and out, and non-2xx
 * answers as a StatusError (client-node's ApiException) carrying the parsed Status. We do not use client-node's
 * generated API classes and undici fetch: they cost ~20 MB of idle RSS for ~20 distinct calls
 * (figures in lib/constructs/runtime-image/runtime-bundle.ts), and several times the CPU per request.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { KubeConfig } from './client-node.js';
import { StatusError } from './errors.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface KubeRequest {
  method: HttpMethod;
  /** Absolute API path, e.g. `/api/v1/namespaces/ns/secrets/name`. */
  path: string;
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** @default application/json (when there is a body) */
  contentType?: string;
  signal?: AbortSignal;
}

const clients = new WeakMap<KubeConfig, KubeClient>();

/** The one client (and so the one connection pool) of a KubeConfig. */
export function kubeClient(kubeConfig: KubeConfig): KubeClient {
  let client = clients.get(kubeConfig);
  if (!client) clients.set(kubeConfig, (client = new KubeClient(kubeConfig)));
  return client;
}

export interface KubeClientOptions {
  /**
   * A request that receives nothing (no headers, no body bytes) for this long fails, so a
   * half-open connection cannot hang a caller without a signal. undici's headers/body timeouts.
   * @default 300_000
   */
  idleTimeoutMs?: number;
}

// undici's keepAliveTimeout: an idle pooled connection is closed before the server closes it
// under us (a request sent just then would fail). The lease renewal keeps one warm.
const POOLED_IDLE_MS = 4_000;

export class KubeClient {
  // The TLS options travel with each request; Node's Agent keys its socket pools by them, so one
  // Agent serves a rotated client certificate too (on fresh connections).
  private readonly httpsAgent = new https.Agent({ keepAlive: true, timeout: POOLED_IDLE_MS });
  private readonly httpAgent = new http.Agent({ keepAlive: true, timeout: POOLED_IDLE_MS });
  private readonly idleTimeoutMs: number;

  constructor(
    readonly kubeConfig: KubeConfig,
    options: KubeClientOptions = {},
  ) {
    this.idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  }

  /** Sends the request and parses the JSON answer (undefined for an empty one). */
  async call<T>(req: KubeRequest): Promise<T> {
    const text = await readText(await this.open(req));
    return (text ? parseJson(text, `${req.method} ${req.path} response`) : undefined) as T;
  }

  /** Sends the request and hands over the 2xx response to be streamed; anything else throws StatusError. */
  async open(req: KubeRequest): Promise<IncomingMessage> {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (!cluster?.server) throw new Error('kubeconfig has no current cluster');
    const url = new URL(cluster.server.replace(/\/+$/, '') + req.path);
    for (const [k, v] of Object.entries(req.query ?? {})) if (v !== undefined) url.searchParams.set(k, v);
    const body = req.body === undefined ? undefined : Buffer.from(JSON.stringify(req.body), 'utf8');
    const headers: Record<string, string | number> = { Accept: 'application/json' };
    if (body) {
      headers['Content-Type'] = req.contentType ?? 'application/json';
      headers['Content-Length'] = body.length;
    }
    const options: https.RequestOptions = { method: req.method, headers };
    // Credentials (headers, basic auth), TLS material, and client-node's agent (a proxy's, if any).
    await this.kubeConfig.applyToHTTPSOptions(options);
    const plain = url.protocol === 'http:';
    if (!cluster.proxyUrl) options.agent = plain ? this.httpAgent : this.httpsAgent;
    options.signal = req.signal;
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = (plain ? http : https).request(url, options, resolve);
      request.on('error', reject);
      // Covers the response body too (the socket's idle timer): a stalled stream errors.
      request.setTimeout(this.idleTimeoutMs, () =>
        request.destroy(new Error(`${req.method} ${req.path}: no data for ${this.idleTimeoutMs}ms`)),
      );
      request.end(body);
    });
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return response;
    throw await statusError(response, `${req.method} ${req.path}`);
  }
}

/** A non-2xx answer as a StatusError, its body the parsed Status when it is JSON. */
async function statusError(response: IncomingMessage, what: string): Promise<StatusError> {
  const code = response.statusCode ?? 0;
  const text = await readText(response).catch(() => '');
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not a Status object: keep the raw text
  }
  const message = (body as { message?: unknown } | null)?.message;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(response.headers)) if (v !== undefined) headers[k] = [v].flat().join(', ');
  return new StatusError(
    code,
    `${what}: HTTP ${code}${typeof message === 'string' ? `: ${message}` : ''}`,
    body,
    headers,
  );
}

/** The whole body of a response, as UTF-8. */
export async function readText(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${what} is not JSON (${(e as Error).message}): ${text.slice(0, 200)}`, { cause: e });
  }
}
