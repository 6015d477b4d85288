// Jest globalSetup for the `integration` project: one control plane for the
// whole run. Test files find it through ENVTEST_STATE (see state.ts).
//
// Jest loads this file with Node's own loader (type stripping), not ts-jest,
// and Node cannot resolve our `./x.js` specifiers to `.ts` files; so this file
// uses only erasable syntax and pulls the harness in through tsx's tsImport.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import type { ControlPlane } from './control-plane.js';
import type { EnvtestState } from './state.js';

/** Handed to global-teardown.ts: Jest shares globalThis between the two, nothing else. */
export interface EnvtestHandle {
  controlPlane: ControlPlane;
  control: Server;
}
export const HANDLE_KEY = '__kruiseTsEnvtest';

export default async function globalSetup(): Promise<void> {
  const { ControlPlane } = (await tsImport(
    './control-plane.ts',
    import.meta.url,
  )) as typeof import('./control-plane.js');
  const { STATE_ENV } = (await tsImport('./state.ts', import.meta.url)) as typeof import('./state.js');
  // e.g. ENVTEST_KUBE_APISERVER_FLAGS='--feature-gates=Foo=true --v=4' for one run, without code changes.
  const extraApiServerArgs = (process.env.ENVTEST_KUBE_APISERVER_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const controlPlane = new ControlPlane({ extraApiServerArgs });
  const info = await controlPlane.start();

  // Restarts are serialised: two tests asking at once get one restart each, never overlapping.
  let queue: Promise<void> = Promise.resolve();
  const control = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://control');
    const mode = url.searchParams.get('mode') ?? 'graceful';
    if (req.method !== 'POST' || url.pathname !== '/restart-apiserver' || (mode !== 'graceful' && mode !== 'kill')) {
      res.writeHead(404).end('envtest control: only POST /restart-apiserver?mode=graceful|kill exists\n');
      return;
    }
    queue = queue
      .then(() => controlPlane.restartApiServer(mode))
      .then(
        () => {
          res.writeHead(200).end('restarted\n');
        },
        (e: Error) => {
          res.writeHead(500).end(`${e.message}\n`);
        },
      );
  });
  await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
  control.unref(); // never the reason Jest fails to exit

  const state: EnvtestState = { ...info, controlUrl: `http://127.0.0.1:${(control.address() as AddressInfo).port}` };
  const statePath = join(info.dir, 'state.json');
  writeFileSync(statePath, JSON.stringify(state, null, 2));
  process.env[STATE_ENV] = statePath;
  process.env.ENVTEST_KUBECONFIG = info.kubeconfigPath;
  // Also KUBECONFIG, so a KubeConfig.loadFromDefault() in a test can never reach a real cluster.
  process.env.KUBECONFIG = info.kubeconfigPath;
  (globalThis as Record<string, unknown>)[HANDLE_KEY] = { controlPlane, control } satisfies EnvtestHandle;
}
