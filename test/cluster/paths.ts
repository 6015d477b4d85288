// Names and places the local cluster owns. Everything it creates on the host is named from
// these, so a crashed run's leftovers can be found again by name (see cleanup.ts).
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Same cache root as test/envtest/binaries/build.sh. */
export function cacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  return env.ENVTEST_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kruise-ts-envtest');
}

/**
 * Which local cluster a process means: several can run side by side on one machine (the e2e tier runs two), each in
 * a slot of its own with its own names, bridge, subnet, registry address, cgroups and files. Slot 0 is the default
 * (`npm run cluster`, a lone e2e run); `KRUISE_HA_CLUSTER_SLOT` or `npm run cluster -- --slot N` picks another.
 */
export const CLUSTER_SLOT_ENV = 'KRUISE_HA_CLUSTER_SLOT';
/** Slots 0..MAX_SLOT: a letter of the prefix and the second octet of the subnet each. */
export const MAX_SLOT = 7;

/** The slot named by `value` (an env var or a flag), or why not, naming where it came from. */
export function parseSlot(value: string | undefined, from = CLUSTER_SLOT_ENV): number {
  if (value === undefined || value === '') return 0;
  const slot = Number(value);
  if (!Number.isInteger(slot) || slot < 0 || slot > MAX_SLOT)
    throw new Error(`cluster: ${from} is '${value}'; give an integer from 0 to ${MAX_SLOT} (default 0)`);
  return slot;
}

/** Everything one cluster names on the host: its slot decides each. */
export interface ClusterSite {
  readonly slot: number;
  /** Prefix of every netns, link and cgroup the cluster creates (`kha` for slot 0, `khb` for 1, ...). */
  readonly prefix: string;
  readonly bridge: string;
  /** Host-only subnet on the bridge: no uplink, no route out of the machine. */
  readonly bridgeCidr: string;
  readonly hostIp: string;
  /** The registry every node pulls through, on the bridge address. */
  readonly registry: string;
  /** Where the cluster keeps its files; fixed per slot so a crashed run's leftovers are found again. */
  readonly dir: string;
  /** Control-plane member i (0-based) is .(10+i) of the subnet. */
  controlPlaneIp(i: number): string;
  /** Node n (1-based) is .(20+n) of the subnet. */
  nodeIp(n: number): string;
  cpName(i: number): string;
  nodeNetns(n: number): string;
  /** Each node's kubelet cgroupRoot, created in every v1 hierarchy. */
  nodeCgroupRoot(n: number): string;
}

export function clusterSite(slot = 0): ClusterSite {
  parseSlot(String(slot), 'the cluster slot');
  const prefix = `kh${'abcdefgh'[slot]}`;
  const net = `10.${77 + slot}.0`;
  const hostIp = `${net}.1`;
  return {
    slot,
    prefix,
    bridge: `${prefix}0`,
    bridgeCidr: `${net}.0/24`,
    hostIp,
    registry: `${hostIp}:${REGISTRY_PORT}`,
    dir: join(tmpdir(), slot === 0 ? 'kruise-ha-cluster' : `kruise-ha-cluster-${slot}`),
    controlPlaneIp: (i) => `${net}.${10 + i}`,
    nodeIp: (n) => `${net}.${20 + n}`,
    cpName: (i) => `${prefix}-cp-${i + 1}`,
    nodeNetns: (n) => `${prefix}-node-${n}`,
    nodeCgroupRoot: (n) => `${prefix}-node-${n}`,
  };
}

export const REGISTRY_PORT = 5000;
export const SERVICE_CIDR = '10.96.0.0/16';
export const KUBERNETES_SERVICE_IP = '10.96.0.1';
export const CLUSTER_CIDR = '10.244.0.0/16';
export const podCidr = (n: number) => `10.244.${n}.0/24`;
export const API_PORT = 6443;
/** The TCP load balancer in front of the API servers with --ha (on the host's bridge address). */
export const LB_PORT = 6443;

export const nodeName = (n: number) => `node-${n}`;
export const ZONES = ['zone-a', 'zone-b', 'zone-c'] as const;
export const zoneOf = (n: number) => ZONES[(n - 1) % ZONES.length];
/** Host-side end of a namespace's veth (interface names are at most 15 characters). */
export const hostVeth = (ns: string) => `v${ns.replace(/-/g, '')}`.slice(0, 15);
/** Inside each namespace the veth is called eth0, as on a real machine. */
export const NS_IFACE = 'eth0';

export const CGROUP_ROOT = '/sys/fs/cgroup';
/** Every process of a cluster runs in <pids hierarchy>/<prefix>/<name>, so leftovers are found by cgroup. */
export const PROCESS_CGROUP_HIERARCHY = 'pids';

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
