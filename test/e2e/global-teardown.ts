// Jest globalTeardown for the `e2e` project: stops the cluster global-setup.ts started and undoes
// every system change. Loaded by Node's own loader like global-setup.ts, hence only type imports here.
import type { ClusterHandle, HANDLE_KEY as HandleKey } from './global-setup.js';

const HANDLE_KEY: typeof HandleKey = '__kruiseHaCluster'; // the compiler checks it matches global-setup.ts

export default async function globalTeardown(): Promise<void> {
  const g = globalThis as Record<string, unknown>;
  const handle = g[HANDLE_KEY] as ClusterHandle | undefined;
  if (!handle) return; // setup failed before starting anything; its own cleanup already ran
  delete g[HANDLE_KEY];
  handle.control.closeAllConnections();
  await new Promise((resolve) => handle.control.close(resolve));
  await handle.cluster.stop();
}
