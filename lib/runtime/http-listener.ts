import type { Server as HttpServer } from 'node:http';
import type { AddressInfo, Server } from 'node:net';

/** Listens and resolves once bound, or rejects with the bind error (port in use, bad host). */
export async function listen(server: Server, port: number, host: string | undefined): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
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
