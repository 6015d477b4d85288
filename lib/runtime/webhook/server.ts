/**
 * The admission webhook HTTPS server (controller-runtime's webhook.Server): handlers by path,
 * hot-reloaded certificates, strict request checks, bounded everything, and a drain mode so a
 * replica can leave the Service without failing a single admission call.
 */
import { createServer, type Server } from 'node:https';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { Registry } from 'prom-client';
import { realClock, sleep, type Clock } from '../clock.js';
import { boundPort, listen } from '../http-listener.js';
import { Ports, withoutUndefined } from '../../contract.js';
import type { Logger } from '../log.js';
import { parseAdmissionReview, reviewResponse } from './admission.js';
import { BodyTooLargeError, ClientGoneError, readBody, SlowBodyError, type Body } from './body.js';
import { CertReloader, type TlsMaterial } from './cert-reloader.js';
import { boundMessage, formatFieldError } from './fields.js';
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
  /**
   * A connection must complete its TLS handshake within this (default 5 s), and then send a
   * request's headers whole within headersTimeoutMs (default 5 s) of connecting or of its last
   * response: a connection that sends nothing, or its headers a byte at a time (slowloris), is
   * closed then. Checked every second (Node's own default check is every 30 s).
   */
  handshakeTimeoutMs?: number;
  headersTimeoutMs?: number;
  /** Whole request, body included (default 30 s): a backstop; the body's own limits below bite first. */
  requestTimeoutMs?: number;
  /**
   * A request body must arrive within this (default 10 s, the API server's default webhook
   * timeout: a review that arrives later is one the API server has given up on).
   */
  bodyTimeoutMs?: number;
  /**
   * From bodyGraceMs (default 5 s) on, a body must have arrived at this average rate at least
   * (default 64 KiB/s; the API server sends a 7 MiB review in milliseconds over any real link).
   * A slower client's connection is closed: it loses its own request and nobody else's.
   */
  minBodyBytesPerSecond?: number;
  bodyGraceMs?: number;
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
   * Connections working at once (default 256): in their TLS handshake, or with a request in
   * progress whose client keeps up. That is what costs CPU and memory in a flood (2,000 concurrent
   * reviews peaked at 495 MiB with 1,396 working, against 263-354 MiB at 256), so more wait as bare
   * sockets. A connection sending its body below the minimum rate gives its slot to a newcomer.
   */
  maxConnections?: number;
  /**
   * Connections open at all, idle ones included (default 4096): an idle TLS connection costs
   * ~36 KiB (2,000 took 73 MB), so idle and slowloris clients hold no working slot, and at most
   * ~150 MB. Past it, a newcomer takes the slot of the connection idle the longest.
   */
  maxOpenConnections?: number;
  /** How long a connection must have been idle to be closed for a newcomer past maxOpenConnections (default 1 s). */
  evictIdleAfterMs?: number;
  /**
   * Further connections wait as bare sockets, up to this many (default 4096), admitted newest
   * first; beyond it they are closed.
   */
  maxQueuedConnections?: number;
  /** A queued connection not admitted within this is closed (default 10s, the API server's webhook timeout). */
  connectionQueueTimeoutMs?: number;
  /**
   * Connections the kernel holds until the process accepts them (default 4096, Node's own 511; the
   * kernel caps it at net.core.somaxconn). Past it the kernel drops the client's SYN and the client
   * retries only after 1 s, then 3 s: under a reconnecting flood with the event loop busy, 511 overflowed.
   */
  listenBacklog?: number;
  /**
   * Listening sockets sharing the port through SO_REUSEPORT (default 16; one on port 0). Node
   * accepts one connection per listening socket per turn of its event loop; under a flood one
   * socket's accepts fall behind and new connections wait in the kernel's queue behind the
   * attackers'. SO_REUSEPORT lets another process of the same user bind the same port too: one
   * replica per node and port, as the hostPort of the rendered Deployment already ensures.
   */
  acceptSockets?: number;
  /**
   * Bytes of request bodies in memory at once (default 32 MiB), charged as they arrive and held
   * until the response. A chunk that does not fit pauses its connection until room frees (any
   * waiter that fits goes first); one that waited past handlerTimeoutMs gets a 429.
   */
  maxInFlightBodyBytes?: number;
  /**
   * Bodies above this are parsed and handled one at a time once read whole, yielding between
   * steps (default 1 MiB).
   */
  largeBodyBytes?: number;
}

const MiB = 1024 * 1024;

/** The default of every optional WebhookServerOptions field that has one (the field's comment says why). */
export const WEBHOOK_SERVER_DEFAULTS = {
  port: Ports.webhook,
  certName: 'tls.crt',
  keyName: 'tls.key',
  maxBodyBytes: 7 * MiB,
  handlerTimeoutMs: 9_000,
  handshakeTimeoutMs: 5_000,
  headersTimeoutMs: 5_000,
  requestTimeoutMs: 30_000,
  bodyTimeoutMs: 10_000,
  minBodyBytesPerSecond: 64 * 1024,
  bodyGraceMs: 5_000,
  keepAliveTimeoutMs: 120_000,
  stopGraceMs: 25_000,
  maxConnections: 256,
  maxOpenConnections: 4096,
  evictIdleAfterMs: 1_000,
  maxQueuedConnections: 4096,
  connectionQueueTimeoutMs: 10_000,
  listenBacklog: 4096,
  acceptSockets: 16,
  maxInFlightBodyBytes: 32 * MiB,
  largeBodyBytes: MiB,
} as const satisfies Partial<WebhookServerOptions>;

type Defaulted = keyof typeof WEBHOOK_SERVER_DEFAULTS;

/** WebhookServerOptions with every default applied: what the server reads, never the raw options. */
export type ResolvedWebhookServerOptions = Omit<WebhookServerOptions, Defaulted | 'clock'> & {
  readonly [K in Defaulted]-?: NonNullable<WebhookServerOptions[K]>;
} & { readonly clock: Clock };

/** Resolves every default once (controller-runtime's Options.setDefaults); an undefined field takes its default. */
export function webhookServerOptionsWithDefaults(opts: WebhookServerOptions): ResolvedWebhookServerOptions {
  const o = { ...opts, ...WEBHOOK_SERVER_DEFAULTS, clock: realClock, ...withoutUndefined(opts) };
  // Idle connections are counted among the open ones, so the open cap is never below the working one.
  return { ...o, maxOpenConnections: Math.max(o.maxOpenConnections, o.maxConnections) };
}

export class WebhookServer {
  private readonly webhooks = new Map<string, Webhook>();
  private readonly metrics: WebhookMetrics;
  private readonly reloader: CertReloader;
  private readonly clock: Clock;
  private readonly log: Logger;
  private server?: Server;
  /** Listening sockets sharing the port (SO_REUSEPORT): Node accepts one connection per socket per loop turn. */
  private listeners: NetServer[] = [];
  private gate?: ConnectionGate;
  private readonly budget: ByteBudget;
  /** One large body at a time: a second one waits instead of stacking event-loop work. */
  private readonly largeLane: ByteBudget;
  private draining = false;

  private readonly opts: ResolvedWebhookServerOptions;

  constructor(options: WebhookServerOptions) {
    const opts = webhookServerOptionsWithDefaults(options);
    this.opts = opts;
    this.clock = opts.clock;
    this.log = opts.logger.child({ component: 'webhook-server' });
    this.metrics = new WebhookMetrics(opts.registry);
    this.budget = new ByteBudget(opts.maxInFlightBodyBytes, this.clock);
    this.largeLane = new ByteBudget(1, this.clock);
    this.reloader = new CertReloader({
      certFile: join(opts.certDir, opts.certName),
      keyFile: join(opts.certDir, opts.keyName),
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
        handshakeTimeout: this.opts.handshakeTimeoutMs,
        headersTimeout: this.opts.headersTimeoutMs,
        requestTimeout: this.opts.requestTimeoutMs,
        keepAliveTimeout: this.opts.keepAliveTimeoutMs,
        // Node checks the header and request timeouts on this interval (default 30 s, so a
        // 5 s timeout held up to 35 s).
        connectionsCheckingInterval: 1_000,
      },
      (req, res) => this.onRequest(req, res),
    );
    server.on('tlsClientError', (err: NodeJS.ErrnoException) => {
      // The handshake bound (handshakeTimeout) sheds a client that cannot finish in time, e.g. one of
      // thousands of connections opened at once: counted like the gate's own sheds.
      if (err.code === 'ERR_TLS_HANDSHAKE_TIMEOUT') this.metrics.connectionDropped('handshake-timeout');
      this.log.debug('TLS handshake failed', { err });
    });
    server.on('secureConnection', (socket: Socket) => this.gate?.handshakeDone(rawSocket(socket)));
    server.on('error', (err) => this.log.error('webhook server error', { err }));
    // The TLS server never listens itself: a plain TCP listener hands it connections through the
    // gate, so a flood waits as bare sockets instead of each one costing a TLS session.
    const gate = new ConnectionGate({
      maxConnections: this.opts.maxConnections,
      maxOpenConnections: this.opts.maxOpenConnections,
      maxQueued: this.opts.maxQueuedConnections,
      queueTimeoutMs: this.opts.connectionQueueTimeoutMs,
      silentTimeoutMs: this.opts.handshakeTimeoutMs,
      evictIdleAfterMs: this.opts.evictIdleAfterMs,
      clock: this.clock,
      admit: (socket) => server.emit('connection', socket),
      onDropped: (reason) => this.metrics.connectionDropped(reason),
    });
    // Node (libuv) accepts one connection per listening socket per turn of the event loop. Under a
    // flood each turn handles the I/O of thousands of sockets, so one socket's accepts fell behind
    // the arrivals: the kernel's first-in-first-out accept queue held 1,000-2,000 connections and a
    // new connection from the API server waited there for seconds before its handshake began.
    // Several sockets on the port (the kernel spreads connections over them) accept that many per turn.
    const listeners: NetServer[] = [];
    try {
      const port = this.opts.port;
      // Port 0 (tests): one socket. The kernel may hand an ephemeral port already shared by another
      // process's SO_REUSEPORT sockets of the same user, and the two servers would then split connections.
      const sockets = port === 0 ? 1 : this.opts.acceptSockets;
      for (let i = 0; i < sockets; i++) {
        const listener = createNetServer({ pauseOnConnect: true }, gate.onConnection);
        listener.on('error', (err) => this.log.error('webhook listener error', { err }));
        listeners.push(listener);
        await listen(listener, i === 0 ? port : boundPort(listeners[0], 'webhook server'), this.opts.host, {
          backlog: this.opts.listenBacklog,
          reusePort: sockets > 1,
        });
      }
    } catch (e) {
      for (const l of listeners) l.close();
      throw e;
    }
    // Starts the HTTP server's header/request timeout checks, which it arms when it listens.
    server.emit('listening');
    this.server = server;
    this.listeners = listeners;
    this.gate = gate;
    this.metrics.trackConnections(() => gate.counts());
    this.draining = false;
    this.reloader.start();
    this.log.info('webhook server listening', { port: this.port() });
  }

  port(): number {
    return boundPort(this.listeners[0], 'webhook server');
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
   * Stops accepting, closes every connection without a request in progress (kept-alive, or
   * connected and never used), and waits for in-flight requests, each connection closing as its
   * response ends; after `graceMs` (default stopGraceMs) it cuts whatever is left, so the stop is
   * bounded whatever clients do.
   */
  async stop(graceMs = this.opts.stopGraceMs): Promise<void> {
    const server = this.server;
    const listeners = this.listeners;
    const gate = this.gate;
    if (!server || !gate) return;
    this.server = this.gate = undefined;
    this.listeners = [];
    this.draining = true;
    this.reloader.stop();
    const listenerClosed = Promise.all(
      listeners.map((listener) => new Promise<void>((resolve) => listener.close(() => resolve()))),
    );
    server.close(); // stops the timeout checks and closes idle keep-alive connections
    server.closeIdleConnections();
    gate.close(); // and the connections Node does not count as idle (connected, no request yet)
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
      gate.destroyAll();
      await gate.whenIdle();
    }
    await listenerClosed;
    this.log.info('webhook server stopped');
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    const raw = rawSocket(req.socket);
    const gate = this.gate;
    res.once('close', () => gate?.requestEnded(raw));
    const waitMs = this.opts.handlerTimeoutMs;
    // A request on an open connection waits for a working slot (most requests get one at once).
    (gate ? gate.requestStarted(raw, waitMs) : Promise.resolve(true))
      .then(async (admitted) => {
        if (admitted) {
          await this.serve(req, res);
          return;
        }
        if (res.destroyed) return;
        req.resume();
        this.fail(
          res,
          429,
          'TooManyRequests',
          `the webhook is at its concurrency limit and could not take this request within ${waitMs}ms; retry`,
          {
            'Retry-After': '1',
          },
        );
      })
      .catch((err: Error) => {
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
    const maxBody = this.opts.maxBodyBytes;
    const waitMs = this.opts.handlerTimeoutMs;
    const started = this.clock.now();
    let body: Body;
    try {
      // Memory in flight stays bounded, charged for the bytes that arrived, not the length declared.
      body = await readBody(req, {
        limit: maxBody,
        budget: this.budget,
        budgetWaitMs: waitMs,
        deadlineMs: this.opts.bodyTimeoutMs,
        minBytesPerSecond: this.opts.minBodyBytesPerSecond,
        graceMs: this.opts.bodyGraceMs,
        clock: this.clock,
        onReading: (behind) => this.gate?.readingBody(rawSocket(req.socket), behind),
        onPace: (behind) => this.gate?.pace(rawSocket(req.socket), behind),
      });
    } catch (e) {
      if (e instanceof BodyTooLargeError) this.fail(res, 413, 'RequestEntityTooLarge', e.message);
      else if (e instanceof BudgetTimeoutError) {
        this.fail(res, 429, 'TooManyRequests', `${e.message}; retry`, { 'Retry-After': '1', Connection: 'close' });
      } else if (e instanceof SlowBodyError) {
        this.log.debug('closing a connection that sent its body too slowly', { reason: e.message });
        this.metrics.connectionDropped('slow-body');
        req.socket.destroy();
      } else if (!(e instanceof ClientGoneError)) throw e;
      return;
    }
    try {
      const large = body.data.length > this.opts.largeBodyBytes;
      if (large) {
        // One large body at a time, taken once it is in memory (a client still uploading holds nothing).
        const gone = new AbortController();
        const onGone = () => gone.abort(new ClientGoneError());
        res.once('close', onGone);
        let release: () => void;
        try {
          release = await this.largeLane.acquire(1, Math.max(1, waitMs - (this.clock.now() - started)), gone.signal);
        } catch (e) {
          if (e instanceof BudgetTimeoutError) {
            this.fail(res, 429, 'TooManyRequests', `${e.message}; retry`, { 'Retry-After': '1' });
            return;
          }
          if (e instanceof ClientGoneError) return;
          throw e;
        } finally {
          res.off('close', onGone);
        }
        try {
          await this.handleBody(path, webhook, body.data, res, true);
        } finally {
          release();
        }
      } else await this.handleBody(path, webhook, body.data, res, false);
    } finally {
      body.release();
    }
  }

  private async handleBody(
    path: string,
    webhook: Webhook,
    body: Buffer,
    res: ServerResponse,
    large: boolean,
  ): Promise<void> {
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
      timeoutMs: this.opts.handlerTimeoutMs,
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
    this.send(
      res,
      code,
      { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message: boundMessage(message) },
      headers,
    );
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

/** The TCP socket under a TLS socket (what the connection gate tracks). */
function rawSocket(socket: Socket): Socket {
  return (socket as Socket & { _parent?: Socket })._parent ?? socket;
}

function tlsOptions(material: TlsMaterial) {
  return { cert: material.cert, key: material.key, minVersion: 'TLSv1.2' as const };
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  return value.split(';', 1)[0].trim().toLowerCase() === 'application/json';
}
