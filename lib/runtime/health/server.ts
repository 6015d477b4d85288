/**
 * The probe server (`--health-probe-addr`, port 8000): `/readyz` and `/healthz`, each the
 * aggregate of named checks, with Kubernetes' conventions: `/readyz/<check>` for one check,
 * `?verbose` for the full list, `?exclude=<check>` (repeatable) to skip some.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { boundPort, closeNow, listen } from '../http-listener.js';
import { Paths, Ports } from '../../contract.js';
import { realClock, type Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { CheckSet, formatReport, type HealthCheck } from './checks.js';

export interface HealthServerOptions {
  logger: Logger;
  port?: number;
  /** Default all interfaces, like upstream's `--health-probe-addr=:8000`. */
  host?: string;
  clock?: Clock;
  /** Per check; under the kubelet's default 1s probe timeout so the probe sees our reason. */
  checkTimeoutMs?: number;
}

/** Always present in readiness; fails from `markShuttingDown()` on. */
const SHUTDOWN_CHECK = 'shutdown';

export class HealthServer {
  readonly readiness: CheckSet;
  readonly liveness: CheckSet;
  private server?: Server;
  private shuttingDown = false;

  constructor(private readonly opts: HealthServerOptions) {
    const clock = opts.clock ?? realClock;
    this.readiness = new CheckSet(clock);
    this.liveness = new CheckSet(clock);
    this.readiness.add(SHUTDOWN_CHECK, () => {
      if (this.shuttingDown) throw new Error('shutting down: leaving the Service endpoints before stopping');
    });
  }

  addReadinessCheck(name: string, check: HealthCheck): void {
    this.readiness.add(name, check);
  }

  addLivenessCheck(name: string, check: HealthCheck): void {
    this.liveness.add(name, check);
  }

  /** SIGTERM path: readiness fails from now on, so endpoints drop this replica while it drains. */
  markShuttingDown(): void {
    this.shuttingDown = true;
  }

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer((req, res) => {
      this.serve(req, res).catch((err: Error) => {
        this.opts.logger.error('health endpoint failed', { err });
        if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' }).end('internal error\n');
      });
    });
    server.headersTimeout = 5_000;
    server.requestTimeout = 10_000;
    await listen(server, this.opts.port ?? Ports.health, this.opts.host);
    server.on('error', (err) => this.opts.logger.error('health server error', { err }));
    this.server = server;
    this.opts.logger.info('health probe server listening', { port: this.port() });
  }

  port(): number {
    return boundPort(this.server, 'health server');
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeNow(server); // probes are retried by the kubelet: nothing to drain
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://health.invalid');
    const [, kind, single, ...rest] = url.pathname.split('/');
    const set = `/${kind}` === Paths.readyz ? this.readiness : `/${kind}` === Paths.healthz ? this.liveness : undefined;
    if (!set || rest.length > 0) return text(res, 404, `not found: ${url.pathname}\n`);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return text(res, 405, 'only GET and HEAD are allowed\n', { Allow: 'GET, HEAD' });
    if (single !== undefined && single !== '' && !set.has(single))
      return text(res, 404, `no ${kind} check named ${single}\n`);
    const exclude = new Set(url.searchParams.getAll('exclude'));
    const select = single ? (n: string) => n === single : (n: string) => !exclude.has(n);
    const results = await set.run(this.opts.checkTimeoutMs ?? 800, select);
    const report = formatReport(kind as 'readyz' | 'healthz', results, url.searchParams.has('verbose'));
    if (!report.ok) this.opts.logger.debug(`${kind} failing`, { failing: results.filter((r) => !r.ok) });
    text(res, report.ok ? 200 : 500, req.method === 'HEAD' ? '' : report.text);
  }
}

function text(res: ServerResponse, code: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', ...headers });
  res.end(body);
}
