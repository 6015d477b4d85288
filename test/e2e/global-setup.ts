// Jest globalSetup for the `e2e` project: one real local cluster (test/cluster) for every e2e
// file. Test files find it through KRUISE_HA_CLUSTER_STATE (see test/cluster/state.ts).
//
// Jest loads this file with Node's own loader (type stripping), not ts-jest, so it uses only
// erasable syntax and pulls the harness in through tsx's tsImport (as test/envtest/global-setup.ts).
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import type { LocalCluster } from '../cluster/cluster.js';
import type { ClusterState } from '../cluster/state.js';

/** Handed to global-teardown.ts: Jest shares globalThis between the two, nothing else. */
export interface ClusterHandle {
  cluster: LocalCluster;
  control: Server;
}
export const HANDLE_KEY = '__kruiseHaCluster';

export default async function globalSetup(): Promise<void> {
  const { LocalCluster } = (await tsImport(
    '../cluster/cluster.ts',
    import.meta.url,
  )) as typeof import('../cluster/cluster.js');
  const { CLUSTER_STATE_ENV } = (await tsImport(
    '../cluster/state.ts',
    import.meta.url,
  )) as typeof import('../cluster/state.js');
  const started = Date.now();
  // Four nodes over three zones: the default output's 2 replicas plus a 100 % surge need 4 nodes
  // with the host ports free (the doctor's rollout-capacity check says so on 3).
  const nodes = Number(process.env.KRUISE_HA_CLUSTER_NODES ?? 4);
  const cluster = new LocalCluster({ ha: process.env.KRUISE_HA_CLUSTER_HA === '1', nodes });
  // A SIGKILLed jest leaves processes behind; the next start cleans them (cleanupLeftovers).
  process.once('exit', () => cluster.killNow());
  const info = await cluster.start();
  process.stderr.write(`\ne2e: local cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s (${info.dir})\n`);

  // Stop/start requests are serialised: two tests asking at once never overlap.
  let queue: Promise<void> = Promise.resolve();
  const control = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control');
    const owner = url.searchParams.get('owner') ?? '';
    const component = url.searchParams.get('component') ?? '';
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
          ? cluster.stopComponent(owner, component as 'kubelet', mode)
          : cluster.startComponent(owner, component as 'kubelet'),
      )
      .then(
        () => void res.writeHead(200).end('ok\n'),
        (e: Error) => void res.writeHead(500).end(`${e.message}\n`),
      );
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  control.unref(); // never the reason Jest fails to exit

  const state: ClusterState = { ...info, controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}` };
  const statePath = join(info.dir, 'state.json');
  writeFileSync(statePath, JSON.stringify(state, null, 2));
  process.env[CLUSTER_STATE_ENV] = statePath;
  // Also KUBECONFIG, so a KubeConfig.loadFromDefault() in a test can never reach another cluster.
  process.env.KUBECONFIG = info.kubeconfigPath;
  (globalThis as Record<string, unknown>)[HANDLE_KEY] = { cluster, control } satisfies ClusterHandle;
}
