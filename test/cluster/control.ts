// The cluster's control endpoint: what only the process that owns the cluster can do (stop and
// start one of its processes), served on loopback for test files (see state.ts). Used by the e2e
// global setup and by `npm run cluster -- --serve-state` (a long-lived cluster tests attach to).
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { ClusterInfo, ControlPlaneComponent, LocalCluster, NodeComponent } from './cluster.js';

/** Serves POST /stop and /start for `cluster`, writes `<dir>/state.json` and returns its path. */
export async function serveClusterControl(
  cluster: LocalCluster,
  info: ClusterInfo,
): Promise<{ server: Server; statePath: string }> {
  // Stop/start requests are serialised: two tests asking at once never overlap.
  let queue: Promise<void> = Promise.resolve();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control');
    const owner = url.searchParams.get('owner') ?? '';
    const component = (url.searchParams.get('component') ?? '') as NodeComponent | ControlPlaneComponent;
    const mode = url.searchParams.get('mode') === 'kill' ? 'kill' : 'graceful';
    if (req.method !== 'POST' || (url.pathname !== '/stop' && url.pathname !== '/start')) {
      res
        .writeHead(404)
        .end('cluster control: POST /stop?owner=&component=&mode=graceful|kill or /start?owner=&component=\n');
      return;
    }
    queue = queue
      .then(() =>
        url.pathname === '/stop'
          ? cluster.stopComponent(owner, component, mode)
          : cluster.startComponent(owner, component),
      )
      .then(
        () => void res.writeHead(200).end('ok\n'),
        (e: Error) => void res.writeHead(500).end(`${e.message}\n`),
      );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref(); // never the reason a process fails to exit
  const statePath = join(info.dir, 'state.json');
  const state = { ...info, controlUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  writeFileSync(statePath, JSON.stringify(state, null, 2));
  return { server, statePath };
}
