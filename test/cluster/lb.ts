// The TCP load balancer in front of the API servers with --ha, as kind's haproxy or a cloud LB:
// each new connection goes to the next backend that accepts it within a second, so a dead or
// unreachable API server costs a connect attempt, never a failed request.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { pathToFileURL } from 'node:url';

export interface Backend {
  host: string;
  port: number;
}

export class TcpLoadBalancer {
  private server?: Server;
  private next = 0;
  private readonly sockets = new Set<Socket>();

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly backends: Backend[],
  ) {}

  start(): Promise<void> {
    const server = (this.server = createServer((client) => this.accept(client)));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => resolve());
    });
  }

  private accept(client: Socket): void {
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    client.pause();
    const order = this.backends.map((_, i) => this.backends[(this.next + i) % this.backends.length]);
    this.next = (this.next + 1) % this.backends.length;
    const attempt = (i: number): void => {
      if (i >= order.length || client.destroyed) {
        client.destroy();
        return;
      }
      const upstream = createConnection({ host: order[i].host, port: order[i].port });
      let connected = false;
      const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), 1_000);
      upstream.once('error', () => {
        clearTimeout(timer);
        if (!connected) attempt(i + 1);
      });
      upstream.once('connect', () => {
        connected = true;
        clearTimeout(timer);
        this.sockets.add(upstream);
        upstream.once('close', () => {
          this.sockets.delete(upstream);
          client.destroy();
        });
        upstream.on('error', () => client.destroy());
        client.once('close', () => upstream.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    attempt(0);
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((r) => server.close(r));
  }
}

/**
 * `node --import tsx lb.ts <host> <port> <backendHost:port>...`: the balancer as its own process,
 * so a client that blocks the harness's event loop (execFileSync of kubectl in a test running in
 * the same process as Jest's globalSetup) can never stall it.
 */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [host, port, ...backends] = process.argv.slice(2);
  const lb = new TcpLoadBalancer(
    host,
    Number(port),
    backends.map((b) => ({ host: b.slice(0, b.lastIndexOf(':')), port: Number(b.slice(b.lastIndexOf(':') + 1)) })),
  );
  await lb.start();
  process.stdout.write(`load balancer on ${host}:${port} -> ${backends.join(', ')}\n`);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => void lb.stop().then(() => process.exit(0)));
  }
}
