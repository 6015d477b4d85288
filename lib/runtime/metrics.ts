/**
 * Prometheus metrics: one Registry per manager (never prom-client's global one, so two managers
 * in a test process never collide) and a plain HTTP server for `/metrics`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { boundPort, closeNow, listen } from './http-listener.js';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { Paths, Ports } from '../contract.js';
import type { Logger } from './log.js';

export interface MetricsRegistryOptions {
  /** Process metrics (CPU, memory, event-loop lag, GC); on by default like controller-runtime. */
  processMetrics?: boolean;
  /** Constant labels on every series, for example `{ replica: podName }`. */
  labels?: Record<string, string>;
}

export function createMetricsRegistry(opts: MetricsRegistryOptions = {}): Registry {
  const registry = new Registry();
  if (opts.labels) registry.setDefaultLabels(opts.labels);
  if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry });
  return registry;
}

/** Serves `registry` in the Prometheus text format on GET/HEAD `path`; 404 elsewhere. */
function metricsHandler(registry: Registry, path: string = Paths.metrics) {
  return (req: IncomingMessage, res: ServerResponse): void => {
    const pathname = (req.url ?? '/').split('?', 1)[0];
    if (pathname !== path) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end(`not found: ${pathname}\n`);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain' }).end('only GET and HEAD are allowed\n');
      return;
    }
    registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': registry.contentType });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: Error) => {
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end(`collecting metrics failed: ${err.message}\n`);
      },
    );
  };
}

export interface MetricsServerOptions {
  registry: Registry;
  logger: Logger;
  port?: number;
  /** Default all interfaces, like upstream's `--metrics-addr=:8080`. */
  host?: string;
}

export class MetricsServer {
  private server?: Server;

  constructor(private readonly opts: MetricsServerOptions) {}

  async start(): Promise<void> {
    if (this.server) return;
    const server = createServer(metricsHandler(this.opts.registry));
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await listen(server, this.opts.port ?? Ports.metrics, this.opts.host);
    server.on('error', (err) => this.opts.logger.error('metrics server error', { err }));
    this.server = server;
    this.opts.logger.info('metrics server listening', { port: this.port() });
  }

  /** The bound port (useful with port 0 in tests). */
  port(): number {
    return boundPort(this.server, 'metrics server');
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await closeNow(server); // scrapes are idempotent: nothing to drain
  }
}
