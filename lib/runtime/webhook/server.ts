/**
 * The admission webhook HTTPS server (controller-runtime's webhook.Server): handlers by path,
 * hot-reloaded certificates, strict request checks, bounded everything, and a drain mode so a
 * replica can leave the Service without failing a single admission call.
 */
import { createServer, type Server } from 'node:https';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { realClock, sleep, type Clock } from '../clock.js';
import { boundPort, listen } from '../http-listener.js';
import { Ports } from '../../contract.js';
import type { Logger } from '../log.js';
import { parseAdmissionReview, reviewResponse } from './admission.js';
import { BodyTooLargeError, ClientGoneError, readBody } from './body.js';
import { CertReloader, type TlsMaterial } from './cert-reloader.js';
import { formatFieldError } from './fields.js';
import { checkJsonShape, checkJsonShapeCooperatively, MAX_JSON_DEPTH } from './limits.js';
import { parseJsonCooperatively } from './parse.js';
import { BudgetTimeoutError, ByteBudget, ConnectionGate, yieldToLoop } from './limiter.js';
import type { Webhook } from './handler.js';
import { dispatch } from './dispatch.js';
import { WebhookMetrics } from './metrics.js';

/** Answers GET with 200 so the readiness self-check proves TLS and HTTP work end to end. */
export const WEBHOOK_HEALTH_PATH = '/healthz';

export interface WebhookServerOptions {
  /** Directory holding `tls.crt` and `tls.key` (names configurable below). */
  certDir: string;
  logger: Logger;
  registry: Registry;
  port?: number;
  /** Default: all interfaces (upstream WEBHOOK_HOST empty). */
  host?: string;
  certName?: string;
  keyName?: string;
  clock?: Clock;
  /**
   * 7 MiB, as controller-runtime: the API server accepts objects up to 3 MiB and an UPDATE review
   * carries the object and the old object. A smaller cap would deny legitimate big updates.
   */
  maxBodyBytes?: number;
  /**
   * A handler still running after this is answered with a denial. Kept under the API server's
   * default 10s webhook timeout so the caller gets our reason instead of a timeout.
   */
  handlerTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** Whole request, body included: slow-body clients cannot hold a socket forever. */
  requestTimeoutMs?: number;
  /**
   * Longer than the API server's idle-connection timeout (90s in client-go), so the client always
   * closes an idle connection first. A server-side close races with the client reusing the
   * connection, and a POST lost in that race is a failed admission.
   */
  keepAliveTimeoutMs?: number;
  /** How long `stop()` waits for in-flight requests before cutting connections. */
  stopGraceMs?: number;
  certPollIntervalMs?: number;
  /** Watch the cert dir for changes (default); polling alone where inotify is unreliable. */
  watchCertDir?: boolean;
  /**
   * Connections with TLS and HTTP state at once (default 256). The API server keeps a pool of a
   * few dozen kept-alive connections per replica; the cap only bites in a flood, where each TLS
   * connection costs tens of KiB plus native buffers.
   */
  maxConnections?: number;
  /** Further connections wait as bare sockets, up to this many (default 4096), FIFO; beyond it they are closed. */
  maxQueuedConnections?: number;
  /** A queued connection not admitted within this is closed (default 10s, the API server's webhook timeout). */
  connectionQueueTimeoutMs?: number;
  /**
   * Request bodies being read, parsed or handled at once, by their declared size (default 32 MiB).
   * A request that does not fit waits (FIFO); one that waited past handlerTimeoutMs gets a 429.
   */
  maxInFlightBodyBytes?: number;
  /** Bodies above this are read, parsed and handled one at a time, yielding between steps (default 1 MiB). */
  largeBodyBytes?: number;
}

const MiB = 1024 * 1024;

export class WebhookServer {
  private readonly webhooks = new Map<string, Webhook>();
  private readonly metrics: WebhookMetrics;
  private readonly reloader: CertReloader;
  private readonly clock: Clock;
  private readonly log: Logger;
  private server?: Server;
  private listener?: NetServer;
  private gate?: ConnectionGate;
  private readonly budget: ByteBudget;
  /** One large body at a time: a second one waits instead of stacking event-loop work. */
  private readonly largeLane: ByteBudget;
  private draining = false;

  constructor(private readonly opts: WebhookServerOptions) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger.child({ component: 'webhook-server' });
    this.metrics = new WebhookMetrics(opts.registry);
    this.budget = new ByteBudget(opts.maxInFlightBodyBytes ?? 32 * MiB, this.clock);
    this.largeLane = new ByteBudget(1, this.clock);
    this.reloader = new CertReloader({
      certFile: join(opts.certDir, opts.certName ?? 'tls.crt'),
      keyFile: join(opts.certDir, opts.keyName ?? 'tls.key'),
      logger: this.log,
      clock: this.clock,
      pollIntervalMs: opts.certPollIntervalMs,
      watch: opts.watchCertDir,
      onChange: (material) => this.server?.setSecureContext(tlsOptions(material)),
    });
  }

  /** Registers `webhook` at `path` (for example `/mutate-pod`). Paths are exact matches. */
  register(path: string, webhook: Webhook): void {
    if (!path.startsWith('/')) throw new Error(`webhook path must start with "/", got ${JSON.stringify(path)}`);
    if (path === WEBHOOK_HEALTH_PATH) throw new Error(`webhook path ${path} is reserved for the readiness self-check`);
    if (this.webhooks.has(path)) throw new Error(`a webhook is already registered at ${path}`);
    this.webhooks.set(path, webhook);
  }

  /** Fails, naming the files, when the certificate pair is missing or unusable. */
  async start(): Promise<void> {
    if (this.server) return;
    const material = await this.reloader.init();
    const server = createServer(
      {
        ...tlsOptions(material),
        handshakeTimeout: 10_000,
        headersTimeout: this.opts.headersTimeoutMs ?? 10_000,
        requestTimeout: this.opts.requestTimeoutMs ?? 30_000,
        keepAliveTimeout: this.opts.keepAliveTimeoutMs ?? 120_000,
      },
      (req, res) => this.onRequest(req, res),
    );
    server.on('tlsClientError', (err) => this.log.debug('TLS handshake failed', { err }));
    server.on('error', (err) => this.log.error('webhook server error', { err }));
    // The TLS server never listens itself: a plain TCP listener hands it connections through the
    // gate, so a flood waits as bare sockets instead of each one costing a TLS session.
    const gate = new ConnectionGate({
      maxConnections: this.opts.maxConnections ?? 256,
      maxQueued: this.opts.maxQueuedConnections ?? 4096,
      queueTimeoutMs: this.opts.connectionQueueTimeoutMs ?? 10_000,
      clock: this.clock,
      admit: (socket) => server.emit('connection', socket),
      onDropped: (reason) => this.metrics.connectionDropped(reason),
    });
    const listener = createNetServer({ pauseOnConnect: true }, gate.onConnection);
    await listen(listener, this.opts.port ?? Ports.webhook, this.opts.host);
    listener.on('error', (err) => this.log.error('webhook listener error', { err }));
    // Starts the HTTP server's header/request timeout checks, which it arms when it listens.
    server.emit('listening');
    this.server = server;
    this.listener = listener;
    this.gate = gate;
    this.metrics.trackConnections(() => gate.counts());
    this.draining = false;
    this.reloader.start();
    this.log.info('webhook server listening', { port: this.port() });
  }

  port(): number {
    return boundPort(this.listener, 'webhook server');
  }

  /** Re-reads the cert dir now (the cert manager calls this after writing); true if it changed. */
  reloadCertificates(): Promise<boolean> {
    return this.reloader.reload();
  }

  /** The certificate currently served. */
  certificatePem(): string | undefined {
    return this.reloader.current()?.cert;
  }

  /**
   * Keep serving, but close every connection after its response, so callers reconnect through
   * the Service and land on replicas that stay. Call on SIGTERM, before the drain window.
   */
  drain(): void {
    if (!this.draining) this.log.info('draining: connections close after their current response');
    this.draining = true;
  }

  /**
   * Stops accepting, closes idle keep-alive sockets and waits for in-flight requests (bounded by `graceMs`, default
   * stopGraceMs).
   */
  async stop(graceMs = this.opts.stopGraceMs ?? 25_000): Promise<void> {
    const server = this.server;
    const listener = this.listener;
    const gate = this.gate;
    if (!server || !listener || !gate) return;
    this.server = this.listener = this.gate = undefined;
    this.draining = true;
    this.reloader.stop();
    const listenerClosed = new Promise<void>((resolve) => listener.close(() => resolve()));
    gate.dropQueued();
    server.close(); // stops the timeout checks and closes idle keep-alive connections
    server.closeIdleConnections();
    const grace = new AbortController();
    const outcome = await Promise.race([
      gate.whenIdle().then(() => 'closed' as const),
      sleep(this.clock, graceMs, grace.signal).then(
        () => 'timeout' as const,
        () => 'closed' as const,
      ),
    ]);
    grace.abort();
    if (outcome === 'timeout') {
      this.log.warn('in-flight webhook requests outlived the stop grace period; closing their connections');
      server.closeAllConnections();
    }
    await listenerClosed;
    this.log.info('webhook server stopped');
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    this.serve(req, res).catch((err: Error) => {
      this.log.error('unexpected error serving a webhook request', { err, url: req.url });
      if (!res.headersSent) this.fail(res, 500, 'InternalError', 'internal error');
      else res.destroy();
    });
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === WEBHOOK_HEALTH_PATH && req.method === 'GET') {
      this.send(res, 200, { status: 'ok' });
      return;
    }
    const webhook = this.webhooks.get(path);
    if (!webhook) {
      req.resume();
      this.fail(res, 404, 'NotFound', `no webhook is registered at ${path.slice(0, 200)}`);
      return;
    }
    const finish = this.metrics.begin(path, () => this.clock.now());
    res.once('close', () => finish(res.writableFinished ? res.statusCode : 'aborted'));
    if (req.method !== 'POST') {
      req.resume();
      this.fail(res, 405, 'MethodNotAllowed', `method ${req.method} is not allowed; use POST`, { Allow: 'POST' });
      return;
    }
    if (!isJsonContentType(req.headers['content-type'])) {
      req.resume();
      this.fail(
        res,
        415,
        'UnsupportedMediaType',
        `Content-Type must be application/json, got ${JSON.stringify(req.headers['content-type'] ?? '')}`,
      );
      return;
    }
    const declared = Number(req.headers['content-length']);
    const maxBody = this.opts.maxBodyBytes ?? 7 * MiB;
    const size = Number.isFinite(declared) && declared >= 0 ? Math.min(declared, maxBody) : maxBody;
    const large = size > (this.opts.largeBodyBytes ?? MiB);
    const waitMs = this.opts.handlerTimeoutMs ?? 9_000;
    const gone = new AbortController();
    const onGone = () => gone.abort(new ClientGoneError());
    res.once('close', onGone);
    const releases: Array<() => void> = [];
    try {
      // Memory in flight stays bounded: wait for room (FIFO) before reading the body.
      if (large) releases.push(await this.largeLane.acquire(1, waitMs, gone.signal));
      releases.push(await this.budget.acquire(size, waitMs, gone.signal));
    } catch (e) {
      releases.forEach((r) => r());
      res.off('close', onGone);
      if (e instanceof BudgetTimeoutError) {
        req.resume();
        this.fail(res, 429, 'TooManyRequests', `${e.message}; retry`, { 'Retry-After': '1' });
        return;
      }
      if (e instanceof ClientGoneError) return;
      throw e;
    }
    try {
      await this.handleBody(path, webhook, req, res, maxBody, large);
    } finally {
      res.off('close', onGone);
      releases.forEach((r) => r());
    }
  }

  private async handleBody(
    path: string,
    webhook: Webhook,
    req: IncomingMessage,
    res: ServerResponse,
    maxBody: number,
    large: boolean,
  ): Promise<void> {
    let body: Buffer;
    try {
      body = await readBody(req, maxBody);
    } catch (e) {
      if (e instanceof BodyTooLargeError) this.fail(res, 413, 'RequestEntityTooLarge', e.message);
      else if (!(e instanceof ClientGoneError)) throw e;
      return;
    }
    // A large body is parsed and checked in slices (one JSON.parse or walk of 7 MB holds the
    // event loop for hundreds of ms, seconds for a huge array), and handled after a yield, so other
    // requests' work runs in between instead of after all of it.
    const step = large ? yieldToLoop : () => Promise.resolve();
    await step();
    let json: unknown;
    try {
      const text = body.toString('utf8');
      json = large
        ? await parseJsonCooperatively(text, { yieldNow: yieldToLoop, emptyAtDepth: MAX_JSON_DEPTH })
        : JSON.parse(text);
    } catch (e) {
      this.fail(res, 400, 'BadRequest', `request body is not valid JSON: ${(e as Error).message}`);
      return;
    }
    await step();
    // The envelope's checks read only its top levels, so they are safe on any depth.
    const parsed = parseAdmissionReview(json);
    if (!parsed.ok) {
      this.fail(res, 400, 'BadRequest', `invalid AdmissionReview: ${formatFieldError(parsed.error)}`);
      return;
    }
    const { request } = parsed;
    // An object no handler can safely walk (too deep, a number out of range) is denied with a 400
    // naming the field, in a well-formed review, so the API server shows the user why.
    // (A large body deeper than the limit was parsed with the too-deep containers left empty:
    // the check stops at them, so it names the same field as on the whole object.)
    const shape = large ? await checkJsonShapeCooperatively(json, '', yieldToLoop) : checkJsonShape(json, '');
    if (shape) {
      this.send(
        res,
        200,
        reviewResponse(request.apiVersion, {
          uid: request.uid,
          allowed: false,
          status: { code: 400, reason: 'BadRequest', message: formatFieldError(shape) },
        }),
      );
      return;
    }
    await step();
    if (res.destroyed) return;
    const response = await dispatch({
      path,
      webhook,
      request,
      res,
      clock: this.clock,
      logger: this.log,
      timeoutMs: this.opts.handlerTimeoutMs ?? 9_000,
    });
    if (!res.destroyed) this.send(res, 200, reviewResponse(request.apiVersion, response));
  }

  private fail(
    res: ServerResponse,
    code: number,
    reason: string,
    message: string,
    headers: Record<string, string> = {},
  ): void {
    this.send(res, code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }, headers);
  }

  private send(res: ServerResponse, code: number, body: object, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(code, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(text),
      ...(this.draining ? { Connection: 'close' } : {}),
      ...headers,
    });
    res.end(text);
  }
}

function tlsOptions(material: TlsMaterial) {
  return { cert: material.cert, key: material.key, minVersion: 'TLSv1.2' as const };
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  return value.split(';', 1)[0].trim().toLowerCase() === 'application/json';
}
