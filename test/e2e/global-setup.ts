// Jest globalSetup for the `e2e` project: one real local cluster (test/cluster) for every e2e
// file. Test files find it through KRUISE_HA_CLUSTER_STATE (see test/cluster/state.ts).
//
// Jest loads this file with Node's own loader (type stripping), not ts-jest, so it uses only
// erasable syntax and pulls the harness in through tsx's tsImport (as test/envtest/global-setup.ts).
import { existsSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { tsImport } from 'tsx/esm/api';
import type { LocalCluster } from '../cluster/cluster.js';

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
  const { CLUSTER_SLOT_ENV, parseSlot } = (await tsImport(
    '../cluster/paths.ts',
    import.meta.url,
  )) as typeof import('../cluster/paths.js');
  // A cluster already running (`npm run cluster -- --serve-state`) and named by the state
  // variable is used as it is, and left running at the end.
  const existing = process.env[CLUSTER_STATE_ENV];
  if (existing && existsSync(existing)) {
    const state = JSON.parse(readFileSync(existing, 'utf8')) as { kubeconfigPath: string; controlUrl: string };
    const res = await fetch(`${state.controlUrl}/`, { method: 'POST' }).catch(() => undefined);
    if (res?.status !== 404) throw new Error(`e2e: ${CLUSTER_STATE_ENV}=${existing} names no running cluster`);
    process.env.KUBECONFIG = state.kubeconfigPath;
    process.stderr.write(`\ne2e: using the running local cluster of ${existing}\n`);
    return;
  }
  const started = Date.now();
  // Four nodes over three zones: the default output's 2 replicas plus a 100 % surge need 4 nodes
  // with the host ports free (the doctor's rollout-capacity check says so on 3).
  const nodes = Number(process.env.KRUISE_HA_CLUSTER_NODES ?? 4);
  // The highly available control plane (3 etcd members, 3 API servers): the HA drills lose a member
  // of it (drill 8). KRUISE_HA_CLUSTER_HA=0 starts the single control plane instead.
  // npm test runs the tier as two Jest processes, each with a cluster of its own (tools/test/run.ts): the slot
  // says which.
  const slot = parseSlot(process.env[CLUSTER_SLOT_ENV]);
  const cluster = new LocalCluster({ ha: process.env.KRUISE_HA_CLUSTER_HA !== '0', nodes, slot });
  // A SIGKILLed jest leaves processes behind; the next start cleans them (cleanupLeftovers).
  process.once('exit', () => cluster.killNow());
  const info = await cluster.start();
  process.stderr.write(`\ne2e: local cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s (${info.dir})\n`);

  const { serveClusterControl } = (await tsImport(
    '../cluster/control.ts',
    import.meta.url,
  )) as typeof import('../cluster/control.js');
  const { server: control, statePath } = await serveClusterControl(cluster, info);
  process.env[CLUSTER_STATE_ENV] = statePath;
  // Also KUBECONFIG, so a KubeConfig.loadFromDefault() in a test can never reach another cluster.
  process.env.KUBECONFIG = info.kubeconfigPath;
  (globalThis as Record<string, unknown>)[HANDLE_KEY] = { cluster, control } satisfies ClusterHandle;
}
