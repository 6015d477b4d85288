// Names and places the local cluster owns. Everything it creates on the host is named from
// these, so a crashed run's leftovers can be found again by name (see cleanup.ts).
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Same cache root as test/envtest/binaries/build.sh. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.ENVTEST_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kruise-ts-envtest');
}

/** Prefix of every netns, link and cgroup the cluster creates. */
export const PREFIX = 'kha';
export const BRIDGE = `${PREFIX}0`;
/** Host-only subnet on the bridge: no uplink, no route out of the machine. */
export const BRIDGE_CIDR = '10.77.0.0/24';
export const HOST_IP = '10.77.0.1';
export const REGISTRY_PORT = 5000;
export const REGISTRY = `${HOST_IP}:${REGISTRY_PORT}`;
/** Control-plane member i (0-based) is 10.77.0.(10+i); node i (1-based) is 10.77.0.(20+i). */
export const controlPlaneIp = (i: number) => `10.77.0.${10 + i}`;
export const nodeIp = (n: number) => `10.77.0.${20 + n}`;
export const SERVICE_CIDR = '10.96.0.0/16';
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const CLUSTER_CIDR = '10.244.0.0/16';
export const podCidr = (n: number) => `10.244.${n}.0/24`;
export const API_PORT = 6443;
/** The TCP load balancer in front of the API servers with --ha (on the host's bridge address). */
export const LB_PORT = 6443;

export const cpName = (i: number) => `${PREFIX}-cp-${i + 1}`;
export const nodeNetns = (n: number) => `${PREFIX}-node-${n}`;
export const nodeName = (n: number) => `node-${n}`;
export const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;
export const zoneOf = (n: number) => ZONES[(n - 1) % ZONES.length];
/** Host-side end of a namespace's veth (interface names are at most 15 characters). */
export const hostVeth = (ns: string) => `v${ns.replace(/-/g, '')}`.slice(0, 15);
/** Inside each namespace the veth is called eth0, as on a real machine. */
export const NS_IFACE = 'eth0';

export const CGROUP_ROOT = '/sys/fs/cgroup';
/** Every process of the cluster runs in <pids hierarchy>/kha/<name>, so leftovers are found by cgroup. */
export const PROCESS_CGROUP_HIERARCHY = 'pids';
export const PROCESS_CGROUP = PREFIX;
/** Each node's kubelet cgroupRoot, created in every v1 hierarchy. */
export const nodeCgroupRoot = (n: number) => `${PREFIX}-node-${n}`;

/** Host paths each node sees as its own (bind-mounted in its mount namespace). */
export const NODE_PRIVATE_PATHS = [
  '/run',
  '/var/lib/kubelet',
  '/var/lib/containerd',
  '/var/lib/cni',
  '/var/log/pods',
  '/var/log/containers',
  '/etc/cni/net.d',
  '/etc/containerd',
] as const;
