// Test-side view of the cluster that test/e2e/global-setup.ts started. Jest runs test files in
// other module registries than global setup, so they reach it through a state file (plain data)
// and a small HTTP control endpoint for what only the owning process can do (stop/start processes).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { plainHttp } from '../envtest/http.js';
import type { ClusterInfo, ControlPlaneComponent, NodeComponent, StopMode } from './cluster.js';
import { hostVeth } from './paths.js';

/** Env var global-setup sets to the state file's path. */
export const CLUSTER_STATE_ENV = 'KRUISE_HA_CLUSTER_STATE';

export interface ClusterState extends ClusterInfo {
  /** http://127.0.0.1:port of the control endpoint served by global setup. */
  controlUrl: string;
}

/** The running cluster; throws with a how-to if the test was not started by the e2e project. */
export function localCluster(): ClusterState {
  const path = process.env[CLUSTER_STATE_ENV];
  if (!path) {
    throw new Error(
      `cluster: ${CLUSTER_STATE_ENV} is not set, so no local cluster is running for this test. ` +
        'Run it through the Jest "e2e" project (npm run test:e2e), whose globalSetup is test/e2e/global-setup.ts.',
    );
  }
  return JSON.parse(readFileSync(path, 'utf8')) as ClusterState;
}

const run = (cmd: string, args: string[], input?: string) =>
  execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 64 << 20 });

/** Runs a command in a node's mount and network namespaces: what its kubelet and containerd see. */
export function execInNode(node: string, cmd: string, args: string[] = [], state = localCluster()): string {
  const info = state.nodes.find((n) => n.name === node);
  if (!info) throw new Error(`cluster: no node ${node} (have ${state.nodes.map((n) => n.name).join(', ')})`);
  return run('nsenter', ['-t', String(info.holderPid), '-m', '-n', '--', cmd, ...args]);
}

/** Runs a command in a control-plane member's network namespace (its API server's view). */
export function execInControlPlane(member: string, cmd: string, args: string[] = []): string {
  return run('nsenter', [`--net=/run/netns/${member}`, '--', cmd, ...args]);
}

/** kubectl against the cluster as admin; `input` goes to stdin (e.g. `apply -f -`). */
export function kubectl(args: string[], input?: string, state = localCluster()): string {
  return run('kubectl', ['--kubeconfig', state.kubeconfigPath, ...args], input);
}

async function control(path: string): Promise<void> {
  const state = localCluster();
  const res = await plainHttp('POST', `${state.controlUrl}${path}`, 300_000);
  if (res.status !== 200) throw new Error(`cluster: ${path} failed (${res.status}): ${res.body}`);
}

/** Stops one process of a node (`node-2`) or control-plane member (`kha-cp-1`). */
export const stopComponent = (
  owner: string,
  component: NodeComponent | ControlPlaneComponent,
  mode: StopMode = 'graceful',
) => control(`/stop?owner=${encodeURIComponent(owner)}&component=${component}&mode=${mode}`);

/** Starts it again (same flags, namespaces, cgroup); for an API server, resolves once it is ready. */
export const startComponent = (owner: string, component: NodeComponent | ControlPlaneComponent) =>
  control(`/start?owner=${encodeURIComponent(owner)}&component=${component}`);

/** Cuts (`up=false`) or restores a node's or member's only link, to the bridge: a partition. */
export function setLink(netns: string, up: boolean): void {
  run('ip', ['link', 'set', hostVeth(netns), up ? 'up' : 'down']);
}
