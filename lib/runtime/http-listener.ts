import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';

/** How the kernel side of a listening socket is set up. */
export interface ListenOptions {
  /** Connections the kernel holds until accepted (Node's default 511; capped by net.core.somaxconn). */
  backlog?: number;
  /** SO_REUSEPORT: several listening sockets share the port, the kernel spreading connections over them. */
  reusePort?: boolean;
}

/** Listens and resolves once bound, or rejects with the bind error (port in use, bad host). */
export async function listen(
  server: Server,
  port: number,
  host: string | undefined,
  o: ListenOptions = {},
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ...o }, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The bound port (tests listen on port 0). */
export function boundPort(server: Server | undefined, what: string): number {
  if (!server) throw new Error(`${what} is not started`);
  return (server.address() as AddressInfo).port;
}

/** Closes at once, open connections included: for endpoints whose clients simply retry. */
export async function closeNow(server: HttpServer): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}
