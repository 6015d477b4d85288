// A real local Kubernetes cluster, daemonless, from source: etcd, kube-apiserver, kube-scheduler,
// kube-controller-manager and kube-proxy in one network namespace per control-plane member, and
// nodes node-1..N (zones zone-a/b/c), each a network namespace plus a mount namespace of its own
// (held by a small holder process) running its own containerd, kubelet and kube-proxy. All of them
// hang off a host-only bridge with no uplink. See docs/local-cluster.md.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runBuildScript } from '../envtest/binaries.js';
import { API_SERVER_DNS_NAMES } from '../envtest/config.js';
import { apiRequest, plainHttp, type ClientCredentials } from '../envtest/http.js';
import { alive } from '../envtest/process.js';
import {
  createCertificateAuthority,
  createServiceAccountKeys,
  issueCertificate,
  renderKubeconfig,
  type CertificateAuthority,
  type KeyPairPem,
} from '../envtest/pki.js';
import {
  apiServerFlags,
  cniConfig,
  containerdConfig,
  controllerManagerFlags,
  etcdFlags,
  hostsToml,
  KUBE_PROXY_HEALTHZ_PORT,
  kubeletConfig,
  kubeProxyConfig,
  mirroredRegistries,
  registryConfig,
  schedulerFlags,
  type PkiFiles,
} from './config.js';
import { hostMountPoint, joinHost, leaveHost } from './host.js';
import { buildNodeImages, pushNodeImages, type NodeImages } from './images.js';
import {
  API_PORT,
  cacheRoot,
  CLUSTER_CIDR,
  CLUSTER_SLOT_ENV,
  clusterSite,
  hostVeth,
  KUBERNETES_SERVICE_IP,
  LB_PORT,
  NODE_PRIVATE_PATHS,
  nodeName,
  NS_IFACE,
  podCidr,
  REPO_ROOT,
  SERVICE_CIDR,
  zoneOf,
  type ClusterSite,
} from './paths.js';
import {
  createCgroup,
  inNetns,
  killCgroup,
  removeCgroups,
  running,
  sh,
  spawnInCgroup,
  stopChild,
  tail,
  trySh,
  type SpawnSpec,
} from './sys.js';

const OWNER_FILE = 'owner.json';
const LB_SCRIPT = join(REPO_ROOT, 'test', 'cluster', 'lb.ts');
const ENSURE_PACKAGES = join(REPO_ROOT, 'test', 'setup', 'ensure-node-packages.sh');

export interface ClusterOptions {
  /**
   * Which of the machine's local clusters this is (paths.ts `clusterSite`): clusters in different slots run side by
   * side, each with its own names, bridge, subnet and files. @default 0
   */
  slot?: number;
  /** Three etcd members and three API servers behind a load balancer; scheduler and KCM leader-elected. */
  ha?: boolean;
  /** Number of real nodes (1..9), zones assigned round-robin zone-a, zone-b, zone-c. @default 3 */
  nodes?: number;
  /** Also write the admin kubeconfig here (it is always at `<dir>/kubeconfig`). */
  kubeconfigPath?: string;
  /** Per wait (API server ready, nodes Ready); generous because CI machines have 2 cores. @default 180000 */
  readyTimeoutMs?: number;
  log?: (msg: string) => void;
}

export interface NodeInfo {
  name: string;
  zone: string;
  /** InternalIP on the bridge. */
  ip: string;
  /** Network namespace name (`ip netns`). */
  netns: string;
  podCIDR: string;
  /** PID of the process holding the node's mount + network namespaces (nsenter -t PID -m -n). */
  holderPid: number;
  /** Host path of this node's containerd socket (inside the node it is /run/containerd/containerd.sock). */
  containerdSocket: string;
  /** The node's private directory: `fs/<path>` is what it sees at <path> for the NODE_PRIVATE_PATHS. */
  dir: string;
  /** kubelet's cgroupRoot (in every v1 hierarchy). */
  cgroupRoot: string;
  logs: { kubelet: string; containerd: string; kubeProxy: string };
}

export interface ControlPlaneMember {
  name: string;
  ip: string;
  netns: string;
  /** https://<ip>:6443 */
  apiServer: string;
  /** http://<ip>:2379 */
  etcd: string;
  logDir: string;
}

/** Everything a test needs; plain data so it can go into a state file. */
export interface ClusterInfo {
  /** Its slot on the machine (ClusterOptions.slot). */
  slot: number;
  dir: string;
  ha: boolean;
  /** The admin (system:masters) kubeconfig. */
  kubeconfigPath: string;
  /** What the kubeconfig points at: the load balancer with --ha, else the API server. */
  server: string;
  apiServers: string[];
  caCertPath: string;
  caKeyPath: string;
  adminCertPath: string;
  adminKeyPath: string;
  kubernetesVersion: string;
  /** host:port of the local registry (plain HTTP) that every node pulls through. */
  registry: string;
  /** Registries whose references containerd resolves through the local registry. */
  mirroredRegistries: string[];
  images: { pause: string; busybox: string };
  bridge: string;
  hostIp: string;
  serviceCIDR: string;
  clusterCIDR: string;
  kubernetesServiceIP: string;
  controlPlane: ControlPlaneMember[];
  nodes: NodeInfo[];
}

export type StopMode = 'graceful' | 'kill';
/** What can be stopped and started again on a node or a control-plane member. */
export type NodeComponent = 'kubelet' | 'containerd' | 'kube-proxy';
export type ControlPlaneComponent =
  'etcd' | 'kube-apiserver' | 'kube-scheduler' | 'kube-controller-manager' | 'kube-proxy';

interface Managed {
  spec: Omit<SpawnSpec, 'prefix'>;
  child?: ChildProcess;
}

interface Binaries {
  kubeApiServer: string;
  etcd: string;
  kubelet: string;
  kubeProxy: string;
  kubeScheduler: string;
  kubeControllerManager: string;
}

/**
 * Removes what a previous cluster left behind when its process died without cleaning up: kills
 * every process in our cgroups, deletes our namespaces, links and cgroups, restores the saved
 * sysctls and removes the mount points it created. Refuses while that cluster's process lives.
 */
export async function cleanupLeftovers(site: ClusterSite, log: (m: string) => void = () => undefined): Promise<void> {
  const ownerFile = join(site.dir, OWNER_FILE);
  if (existsSync(ownerFile)) {
    const owner = (JSON.parse(readFileSync(ownerFile, 'utf8')) as { pid: number }).pid;
    if (owner !== process.pid && alive(owner)) {
      throw new Error(
        `cluster: another local cluster is running in slot ${site.slot} (process ${owner}, files in ${site.dir}). ` +
          'Only one can run per slot (they would share the bridge, namespaces and registry address): stop it first ' +
          `(Ctrl-C, or kill ${owner}), or start this one in another slot (--slot, or ${CLUSTER_SLOT_ENV}).`,
      );
    }
  }
  await undoSystemChanges(site, log);
}

/** Undoes what cluster `site` changed on the machine; what all clusters share, only when no other one is left. */
async function undoSystemChanges(site: ClusterSite, log: (m: string) => void): Promise<string[]> {
  const problems: string[] = [];
  await killCgroup(site.prefix).catch((e: Error) => problems.push(e.message));
  for (const ns of sh('ip', ['netns', 'list']).split('\n')) {
    const name = ns.split(' ')[0];
    if (name.startsWith(`${site.prefix}-`)) {
      log(`deleting netns ${name}`);
      if (!trySh('ip', ['netns', 'delete', name])) problems.push(`netns ${name} could not be deleted`);
    }
  }
  if (trySh('ip', ['link', 'show', site.bridge])) {
    log(`deleting bridge ${site.bridge}`);
    if (!trySh('ip', ['link', 'delete', site.bridge])) problems.push(`link ${site.bridge} could not be deleted`);
  }
  problems.push(...(await removeCgroups(site.prefix)).map((c) => `cgroup ${c} could not be removed`));
  const ownerFile = join(site.dir, OWNER_FILE);
  if (existsSync(ownerFile)) {
    const owner = (JSON.parse(readFileSync(ownerFile, 'utf8')) as { pid: number }).pid;
    problems.push(...leaveHost(site.slot, owner));
  }
  rmSync(site.dir, { recursive: true, force: true, maxRetries: 3 });
  return problems;
}

export class LocalCluster {
  private readonly procs = new Map<string, Managed>();
  private current?: ClusterInfo;
  private readonly log: (m: string) => void;
  private stopped = false;
  readonly site: ClusterSite;

  constructor(private readonly opts: ClusterOptions = {}) {
    this.site = clusterSite(opts.slot ?? 0);
    const tag = this.site.slot === 0 ? 'cluster' : `cluster ${this.site.slot}`;
    this.log = opts.log ?? ((m) => process.stderr.write(`${tag}: ${m}\n`));
    const n = opts.nodes ?? 3;
    if (!Number.isInteger(n) || n < 1 || n > 9) {
      throw new Error(`cluster: nodes is ${String(opts.nodes)}; give an integer from 1 to 9 (default 3)`);
    }
  }

  get info(): ClusterInfo {
    if (!this.current) throw new Error('cluster: info read before start() completed');
    return this.current;
  }

  /** Starts everything; on failure undoes what it did and rethrows. */
  async start(): Promise<ClusterInfo> {
    if (process.getuid?.() !== 0) {
      throw new Error('cluster: the local cluster needs root (namespaces, cgroups, bridge, mounts); run it as root');
    }
    execFileSync('bash', [ENSURE_PACKAGES], { stdio: ['ignore', 'inherit', 'inherit'] });
    const bins = await this.binaries();
    const images = buildNodeImages(this.log);
    await cleanupLeftovers(this.site, this.log);
    mkdirSync(this.site.dir, { recursive: true });
    writeFileSync(join(this.site.dir, OWNER_FILE), JSON.stringify({ pid: process.pid }));
    try {
      for (const problem of joinHost(this.site.slot)) this.log(`a dead cluster left: ${problem}`);
      return await this.boot(bins, images);
    } catch (e) {
      await this.stop().catch(() => undefined);
      throw e;
    }
  }

  private async binaries(): Promise<Binaries> {
    const kv = await runBuildScript(
      ['cluster'],
      ['KUBE_APISERVER', 'ETCD', 'KUBELET', 'KUBE_PROXY', 'KUBE_SCHEDULER', 'KUBE_CONTROLLER_MANAGER'],
    );
    return {
      kubeApiServer: kv.KUBE_APISERVER,
      etcd: kv.ETCD,
      kubelet: kv.KUBELET,
      kubeProxy: kv.KUBE_PROXY,
      kubeScheduler: kv.KUBE_SCHEDULER,
      kubeControllerManager: kv.KUBE_CONTROLLER_MANAGER,
    };
  }

  private async boot(bins: Binaries, images: NodeImages): Promise<ClusterInfo> {
    const site = this.site;
    const dir = site.dir;
    const ha = !!this.opts.ha;
    const members = ha ? 3 : 1;
    const nodeCount = this.opts.nodes ?? 3;
    const version = sh(bins.kubeApiServer, ['--version'])
      .trim()
      .replace(/^Kubernetes /, '');

    // --- network: bridge, one netns per member and node, routes between pod CIDRs -------------
    this.log(
      `creating bridge ${site.bridge} (${site.hostIp}, host-only) and ${members + nodeCount} network namespaces`,
    );
    sh('ip', ['link', 'add', site.bridge, 'type', 'bridge']);
    sh('ip', ['addr', 'add', `${site.hostIp}/24`, 'dev', site.bridge]);
    sh('ip', ['link', 'set', site.bridge, 'up']);
    const namespaces: Array<{ netns: string; ip: string; podCidr?: string }> = [
      ...Array.from({ length: members }, (_, i) => ({ netns: site.cpName(i), ip: site.controlPlaneIp(i) })),
      ...Array.from({ length: nodeCount }, (_, k) => ({
        netns: site.nodeNetns(k + 1),
        ip: site.nodeIp(k + 1),
        podCidr: podCidr(k + 1),
      })),
    ];
    for (const { netns, ip } of namespaces) {
      sh('ip', ['netns', 'add', netns]);
      const veth = hostVeth(netns);
      sh('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', NS_IFACE, 'netns', netns]);
      sh('ip', ['link', 'set', veth, 'master', site.bridge, 'up']);
      inNetns(netns, 'ip', ['addr', 'add', `${ip}/24`, 'dev', NS_IFACE]);
      inNetns(netns, 'ip', ['link', 'set', NS_IFACE, 'up']);
      inNetns(netns, 'ip', ['link', 'set', 'lo', 'up']);
      // Service ClusterIPs are DNATed by kube-proxy after the first route lookup, which needs a route.
      inNetns(netns, 'ip', ['route', 'add', SERVICE_CIDR, 'via', site.hostIp]);
      inNetns(netns, 'sysctl', ['-qw', 'net.ipv4.ip_forward=1']); // per-netns
      for (const other of namespaces) {
        if (other.podCidr && other.netns !== netns)
          inNetns(netns, 'ip', ['route', 'add', other.podCidr, 'via', other.ip]);
      }
    }

    // --- registry, on the bridge address, storage in the cache -------------------------------
    const registryDir = join(cacheRoot(), 'cluster-registry');
    mkdirSync(registryDir, { recursive: true });
    writeFileSync(join(dir, 'registry.yml'), registryConfig(site, registryDir));
    await this.launch({
      name: 'registry',
      bin: 'docker-registry',
      args: ['serve', join(dir, 'registry.yml')],
      logFile: join(dir, 'logs', 'registry.log'),
    });
    await this.waitFor(
      'the registry',
      'registry',
      async () => (await plainHttp('GET', `http://${site.registry}/v2/`)).status === 200,
    );
    pushNodeImages(images, site.registry);

    // --- PKI ------------------------------------------------------------------------------
    const pkiDir = join(dir, 'pki');
    mkdirSync(pkiDir, { recursive: true });
    const ca = await createCertificateAuthority('kruise-ha-local-ca');
    const write = (name: string, pem: string) => {
      writeFileSync(join(pkiDir, name), pem, { mode: 0o600 });
      return join(pkiDir, name);
    };
    const serving = await issueCertificate(ca, {
      commonName: 'kube-apiserver',
      usage: 'server',
      dnsNames: API_SERVER_DNS_NAMES,
      ipAddresses: [
        '127.0.0.1',
        site.hostIp,
        KUBERNETES_SERVICE_IP,
        ...Array.from({ length: 3 }, (_, i) => site.controlPlaneIp(i)),
      ],
    });
    const kubeletClient = await issueCertificate(ca, {
      commonName: 'kube-apiserver-kubelet-client',
      organizations: ['system:masters'],
      usage: 'client',
    });
    const admin = await issueCertificate(ca, {
      commonName: 'kubernetes-admin',
      organizations: ['system:masters'],
      usage: 'client',
    });
    const sa = await createServiceAccountKeys();
    const pki: PkiFiles = {
      caCert: write('ca.crt', ca.certPem),
      caKey: write('ca.key', ca.keyPem),
      servingCert: write('apiserver.crt', serving.certPem),
      servingKey: write('apiserver.key', serving.keyPem),
      kubeletClientCert: write('apiserver-kubelet-client.crt', kubeletClient.certPem),
      kubeletClientKey: write('apiserver-kubelet-client.key', kubeletClient.keyPem),
      saKey: write('sa.key', sa.privatePem),
      saPub: write('sa.pub', sa.publicPem),
    };
    const adminCertPath = write('admin.crt', admin.certPem);
    const adminKeyPath = write('admin.key', admin.keyPem);
    const server = ha ? `https://${site.hostIp}:${LB_PORT}` : `https://${site.controlPlaneIp(0)}:${API_PORT}`;
    const kubeconfig = async (path: string, srv: string, user: string, groups: string[] = []) => {
      const cert = await issueCertificate(ca, { commonName: user, organizations: groups, usage: 'client' });
      writeFileSync(path, kubeconfigText(srv, ca, cert, user), { mode: 0o600 });
      return path;
    };

    // --- control plane ----------------------------------------------------------------------
    const controlPlane: ControlPlaneMember[] = Array.from({ length: members }, (_, i) => ({
      name: site.cpName(i),
      ip: site.controlPlaneIp(i),
      netns: site.cpName(i),
      apiServer: `https://${site.controlPlaneIp(i)}:${API_PORT}`,
      etcd: `http://${site.controlPlaneIp(i)}:2379`,
      logDir: join(dir, site.cpName(i), 'logs'),
    }));
    this.log(`starting ${members === 1 ? 'etcd' : `${members} etcd members`}`);
    for (const [i, m] of controlPlane.entries()) {
      mkdirSync(join(dir, m.name), { recursive: true });
      await this.launch({
        name: `${m.name}-etcd`,
        bin: bins.etcd,
        args: etcdFlags(site, i, members, join(dir, m.name, 'etcd')),
        logFile: join(m.logDir, 'etcd.log'),
        netns: m.netns,
      });
    }
    for (const m of controlPlane) {
      await this.waitFor(`etcd ${m.name}`, `${m.name}-etcd`, async () =>
        (await plainHttp('GET', `${m.etcd}/health`)).body.includes('"health":"true"'),
      );
    }
    this.log(`starting kube-apiserver ${version} on ${controlPlane.map((m) => m.apiServer).join(', ')}`);
    const creds = (srv: string): ClientCredentials => ({
      server: srv,
      caCertPath: pki.caCert,
      adminCertPath,
      adminKeyPath,
    });
    for (const [i, m] of controlPlane.entries()) {
      await this.launch({
        name: `${m.name}-kube-apiserver`,
        bin: bins.kubeApiServer,
        args: apiServerFlags(site, i, members, pki, join(dir, m.name, 'apiserver-certs')),
        logFile: join(m.logDir, 'kube-apiserver.log'),
        netns: m.netns,
      });
    }
    for (const m of controlPlane) await this.waitApiServer(m, creds(m.apiServer));
    if (ha) {
      // Its own process (see lb.ts): supervised and cleaned up like every other one.
      await this.launch({
        name: 'load-balancer',
        bin: process.execPath,
        args: [
          '--import',
          'tsx',
          LB_SCRIPT,
          site.hostIp,
          String(LB_PORT),
          ...controlPlane.map((m) => `${m.ip}:${API_PORT}`),
        ],
        logFile: join(dir, 'logs', 'load-balancer.log'),
        cwd: REPO_ROOT,
      });
      await this.waitFor(
        'the API server load balancer',
        'load-balancer',
        async () => (await apiRequest(creds(server), 'GET', '/readyz')).status === 200,
      );
    }
    for (const m of controlPlane) {
      const local = `https://127.0.0.1:${API_PORT}`;
      const d = join(dir, m.name);
      const schedKc = await kubeconfig(join(d, 'scheduler.kubeconfig'), local, 'system:kube-scheduler');
      const kcmKc = await kubeconfig(join(d, 'controller-manager.kubeconfig'), local, 'system:kube-controller-manager');
      const proxyKc = await kubeconfig(join(d, 'kube-proxy.kubeconfig'), local, 'system:kube-proxy');
      writeFileSync(join(d, 'kube-proxy.yaml'), kubeProxyConfig(proxyKc, m.name, m.ip));
      await this.launch({
        name: `${m.name}-kube-scheduler`,
        bin: bins.kubeScheduler,
        args: schedulerFlags(schedKc, ha),
        logFile: join(m.logDir, 'kube-scheduler.log'),
        netns: m.netns,
      });
      await this.launch({
        name: `${m.name}-kube-controller-manager`,
        bin: bins.kubeControllerManager,
        args: controllerManagerFlags(kcmKc, ha, pki),
        logFile: join(m.logDir, 'kube-controller-manager.log'),
        netns: m.netns,
      });
      await this.launch({
        name: `${m.name}-kube-proxy`,
        bin: bins.kubeProxy,
        args: [`--config=${join(d, 'kube-proxy.yaml')}`],
        logFile: join(m.logDir, 'kube-proxy.log'),
        netns: m.netns,
      });
    }

    // --- nodes (the sysctls their kubelets set were saved by joinHost) --------------------------
    const nodes: NodeInfo[] = [];
    for (let n = 1; n <= nodeCount; n++) {
      nodes.push(await this.startNode(n, { bins, images, server, ca, kubeconfig }));
    }

    this.current = {
      slot: site.slot,
      dir,
      ha,
      kubeconfigPath: join(dir, 'kubeconfig'),
      server,
      apiServers: controlPlane.map((m) => m.apiServer),
      caCertPath: pki.caCert,
      caKeyPath: pki.caKey,
      adminCertPath,
      adminKeyPath,
      kubernetesVersion: version,
      registry: site.registry,
      mirroredRegistries: mirroredRegistries(site),
      images: { pause: images.pause, busybox: images.busybox },
      bridge: site.bridge,
      hostIp: site.hostIp,
      serviceCIDR: SERVICE_CIDR,
      clusterCIDR: CLUSTER_CIDR,
      kubernetesServiceIP: KUBERNETES_SERVICE_IP,
      controlPlane,
      nodes,
    };
    const adminKubeconfig = kubeconfigText(server, ca, admin, 'kubernetes-admin');
    for (const path of [this.current.kubeconfigPath, this.opts.kubeconfigPath]) {
      if (!path) continue;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, adminKubeconfig, { mode: 0o600 });
    }
    await this.waitNodesReady(
      creds(server),
      nodes.map((x) => x.name),
    );
    // Until its kube-proxy has synced, an API server cannot reach a Service (a webhook) by
    // ClusterIP. kube-proxy first waits up to 30 s for a Node object named like itself, and
    // control-plane members have none (no kubelet), so this wait is most of the start time.
    // /livez, not /healthz: /healthz also answers 503 while the Node object is missing.
    for (const [owner, ip] of [...controlPlane.map((m) => [m.name, m.ip]), ...nodes.map((x) => [x.name, x.ip])]) {
      await this.waitFor(`kube-proxy on ${owner} to sync its rules`, `${owner}-kube-proxy`, async () => {
        const res = await plainHttp('GET', `http://${ip}:${KUBE_PROXY_HEALTHZ_PORT}/livez`);
        const body = JSON.parse(res.body) as { status?: { IPv4?: { lastUpdated?: string } } };
        const synced = body.status?.IPv4?.lastUpdated ?? '0001-';
        return res.status === 200 && !synced.startsWith('0001-');
      });
    }
    return this.current;
  }

  private async startNode(
    n: number,
    ctx: {
      bins: Binaries;
      images: NodeImages;
      server: string;
      ca: CertificateAuthority;
      kubeconfig: (path: string, srv: string, user: string, groups?: string[]) => Promise<string>;
    },
  ): Promise<NodeInfo> {
    const name = nodeName(n);
    const site = this.site;
    const d = join(site.dir, name);
    const fs = join(d, 'fs');
    for (const p of NODE_PRIVATE_PATHS) {
      mkdirSync(join(fs, p), { recursive: true });
      hostMountPoint(p);
    }
    const cgroupRoot = site.nodeCgroupRoot(n);
    createCgroup(cgroupRoot);
    // What the node's processes see at /etc/containerd, /etc/cni/net.d and /var/lib/kubelet.
    writeFileSync(join(fs, 'etc/containerd/config.toml'), containerdConfig(ctx.images.pause));
    for (const host of mirroredRegistries(site)) {
      mkdirSync(join(fs, 'etc/containerd/certs.d', host), { recursive: true });
      writeFileSync(join(fs, 'etc/containerd/certs.d', host, 'hosts.toml'), hostsToml(site));
    }
    writeFileSync(join(fs, 'etc/cni/net.d/10-kruise-ha-local.conflist'), cniConfig(podCidr(n)));
    const ip = site.nodeIp(n);
    const conf = join(d, 'conf');
    mkdirSync(conf, { recursive: true });
    writeFileSync(join(conf, 'ca.crt'), ctx.ca.certPem);
    writeFileSync(join(conf, 'kubelet.yaml'), kubeletConfig(ip, `/${cgroupRoot}`, join(conf, 'ca.crt')));
    const kubeletKc = await ctx.kubeconfig(join(conf, 'kubelet.kubeconfig'), ctx.server, `system:node:${name}`, [
      'system:nodes',
    ]);
    const proxyKc = await ctx.kubeconfig(join(conf, 'kube-proxy.kubeconfig'), ctx.server, 'system:kube-proxy');
    writeFileSync(join(conf, 'kube-proxy.yaml'), kubeProxyConfig(proxyKc, name, ip));

    // The holder: enters the node's netns, unshares a private mount namespace, binds the node's
    // own directories over the shared host paths, then sleeps; everything else of the node joins it.
    const ready = join(d, 'holder.ready');
    const binds = NODE_PRIVATE_PATHS.map((p) => `mount --bind '${join(fs, p)}' '${p}'`).join(' && ');
    const holderName = `${name}-holder`;
    await this.launch({
      name: holderName,
      bin: 'unshare',
      args: [
        '--mount',
        '--propagation',
        'private',
        '--',
        'sh',
        '-c',
        `${binds} && touch '${ready}' && exec sleep infinity`,
      ],
      logFile: join(d, 'logs', 'holder.log'),
      netns: site.nodeNetns(n),
    });
    await this.waitFor(`${name}'s namespaces`, holderName, () => Promise.resolve(existsSync(ready)));
    const holderPid = this.procs.get(holderName)!.child!.pid!;
    const logs = {
      kubelet: join(d, 'logs', 'kubelet.log'),
      containerd: join(d, 'logs', 'containerd.log'),
      kubeProxy: join(d, 'logs', 'kube-proxy.log'),
    };
    const socket = join(fs, 'run/containerd/containerd.sock');
    this.log(`starting ${name} (${zoneOf(n)}, ${ip}): containerd, kubelet, kube-proxy`);
    await this.launch({
      name: `${name}-containerd`,
      bin: 'containerd',
      args: ['--config', '/etc/containerd/config.toml'],
      logFile: logs.containerd,
      holderPid,
    });
    await this.waitFor(`${name}'s containerd`, `${name}-containerd`, () => Promise.resolve(existsSync(socket)));
    await this.launch({
      name: `${name}-kubelet`,
      bin: ctx.bins.kubelet,
      args: [
        `--config=${join(conf, 'kubelet.yaml')}`,
        `--kubeconfig=${kubeletKc}`,
        `--hostname-override=${name}`,
        `--node-ip=${ip}`,
        `--node-labels=topology.kubernetes.io/zone=${zoneOf(n)}`,
        '--v=1',
      ],
      logFile: logs.kubelet,
      holderPid,
    });
    await this.launch({
      name: `${name}-kube-proxy`,
      bin: ctx.bins.kubeProxy,
      args: [`--config=${join(conf, 'kube-proxy.yaml')}`],
      logFile: logs.kubeProxy,
      holderPid,
    });
    return {
      name,
      zone: zoneOf(n),
      ip,
      netns: site.nodeNetns(n),
      podCIDR: podCidr(n),
      holderPid,
      containerdSocket: socket,
      dir: d,
      cgroupRoot,
      logs,
    };
  }

  private async launch(spec: Managed['spec']): Promise<void> {
    const m: Managed = { spec };
    m.child = spawnInCgroup({ ...spec, prefix: this.site.prefix });
    this.procs.set(spec.name, m);
    await new Promise<void>((resolve, reject) => {
      m.child!.once('spawn', () => resolve());
      m.child!.once('error', (e) => reject(new Error(`cluster: cannot start ${spec.bin}: ${e.message}`)));
    });
  }

  private async waitFor(what: string, proc: string, probe: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + (this.opts.readyTimeoutMs ?? 180_000);
    let last = '';
    const m = this.procs.get(proc);
    while (Date.now() < deadline) {
      if (m && !running(m.child)) {
        throw new Error(
          `cluster: waiting for ${what}: ${m.spec.bin} exited (${m.child?.exitCode ?? m.child?.signalCode}). ` +
            `Last lines of ${m.spec.logFile}:\n${tail(m.spec.logFile)}`,
        );
      }
      try {
        if (await probe()) return;
      } catch (e) {
        last = (e as Error).message;
      }
      await sleep(250);
    }
    throw new Error(
      `cluster: timed out waiting for ${what} (last error: ${last || 'none'})` +
        (m ? `. Last lines of ${m.spec.logFile}:\n${tail(m.spec.logFile)}` : ''),
    );
  }

  private async waitApiServer(m: ControlPlaneMember, creds: ClientCredentials): Promise<void> {
    const get = async (path: string) => (await apiRequest(creds, 'GET', path)).status === 200;
    await this.waitFor(`kube-apiserver ${m.name} /readyz`, `${m.name}-kube-apiserver`, () => get('/readyz'));
    await this.waitFor(
      `kube-apiserver ${m.name} RBAC bootstrap`,
      `${m.name}-kube-apiserver`,
      async () =>
        (await get('/api/v1/namespaces/default')) &&
        (await get('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:kube-scheduler')),
    );
  }

  private async waitNodesReady(creds: ClientCredentials, names: string[]): Promise<void> {
    this.log(`waiting for ${names.join(', ')} to be Ready`);
    await this.waitFor(`nodes ${names.join(', ')} Ready`, '', async () => {
      const res = await apiRequest(creds, 'GET', '/api/v1/nodes');
      if (res.status !== 200) throw new Error(`GET /api/v1/nodes: ${res.status}`);
      const items = (
        JSON.parse(res.body) as {
          items: Array<{
            metadata: { name: string };
            status?: { conditions?: Array<{ type: string; status: string }> };
          }>;
        }
      ).items;
      const ready = new Set(
        items
          .filter((i) => i.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
          .map((i) => i.metadata.name),
      );
      for (const [k, v] of this.procs) {
        if (k.endsWith('-kubelet') && !running(v.child))
          throw new Error(`cluster: ${k} exited; last lines of ${v.spec.logFile}:\n${tail(v.spec.logFile)}`);
      }
      return names.every((n) => ready.has(n));
    });
  }

  // --- drills: stop/start single processes, cut links ------------------------------------------

  private key(owner: string, component: string): string {
    const k = `${owner}-${component}`;
    if (!this.procs.has(k))
      throw new Error(`cluster: no ${component} on ${owner} (known: ${[...this.procs.keys()].join(', ')})`);
    return k;
  }

  /** Stops one process: `graceful` is SIGTERM (SIGKILL after 10 s), `kill` is SIGKILL. */
  async stopComponent(
    owner: string,
    component: NodeComponent | ControlPlaneComponent,
    mode: StopMode = 'graceful',
  ): Promise<void> {
    const m = this.procs.get(this.key(owner, component))!;
    await stopChild(m.child, mode === 'kill' ? 0 : 10_000);
  }

  /** Starts a stopped process again with the same flags, in the same namespaces and cgroup. */
  async startComponent(owner: string, component: NodeComponent | ControlPlaneComponent): Promise<void> {
    const k = this.key(owner, component);
    const m = this.procs.get(k)!;
    if (running(m.child)) return;
    await this.launch(m.spec);
    if (component === 'kube-apiserver') {
      const member = this.info.controlPlane.find((c) => c.name === owner)!;
      await this.waitApiServer(member, {
        server: member.apiServer,
        caCertPath: this.info.caCertPath,
        adminCertPath: this.info.adminCertPath,
        adminKeyPath: this.info.adminKeyPath,
      });
    }
  }

  /** Takes a node's or member's link to the bridge down (`up=false`) or back up: a network partition. */
  setLink(netns: string, up: boolean): void {
    sh('ip', ['link', 'set', hostVeth(netns), up ? 'up' : 'down']);
  }

  /** Runs a command in a node's mount and network namespaces (as its kubelet sees the machine). */
  execInNode(node: string, cmd: string, args: string[] = []): string {
    const info = this.info.nodes.find((x) => x.name === node);
    if (!info) throw new Error(`cluster: no node ${node} (have ${this.info.nodes.map((x) => x.name).join(', ')})`);
    return sh('nsenter', ['-t', String(info.holderPid), '-m', '-n', '--', cmd, ...args]);
  }

  /** Runs a command in a control-plane member's network namespace (where its API server runs). */
  execInControlPlane(member: string, cmd: string, args: string[] = []): string {
    return inNetns(member, cmd, args);
  }

  /** Stops every process it started, then undoes every system change. Safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    const byOrder = (suffix: string) =>
      [...this.procs.entries()].filter(([k]) => k.endsWith(suffix)).map(([, v]) => v.child);
    // kubelets first (they would restart containers), then the containers, then the rest.
    await Promise.all(byOrder('-kubelet').map((c) => stopChild(c, 5_000)));
    for (let n = 1; n <= (this.opts.nodes ?? 3); n++)
      await killCgroup(this.site.prefix, this.site.nodeCgroupRoot(n)).catch(() => undefined);
    await Promise.all(
      [...this.procs.entries()]
        .filter(([k]) => !k.endsWith('-etcd') && !k.endsWith('-holder'))
        .map(([, v]) => stopChild(v.child, 5_000)),
    );
    await Promise.all(byOrder('-etcd').map((c) => stopChild(c, 5_000)));
    const problems = await undoSystemChanges(this.site, () => undefined);
    // A kubeconfig left behind would point at a dead server with a dead CA.
    if (this.opts.kubeconfigPath) rmSync(this.opts.kubeconfigPath, { force: true });
    if (problems.length) this.log(`teardown left: ${problems.join('; ')}`);
  }

  /** Synchronous last resort for exit hooks: SIGKILL everything in our cgroups (cleanup runs next start). */
  killNow(): void {
    for (const m of this.procs.values()) {
      if (m.child?.pid && running(m.child)) {
        try {
          process.kill(m.child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }
}

function kubeconfigText(server: string, ca: CertificateAuthority, cert: KeyPairPem, user: string): string {
  const kc = JSON.parse(renderKubeconfig(server, ca.certPem, cert, user)) as {
    clusters: Array<{ name: string }>;
    contexts: Array<{ name: string; context: { cluster: string } }>;
    'current-context': string;
  };
  kc.clusters[0].name = 'kruise-ha-local';
  kc.contexts[0].name = 'kruise-ha-local';
  kc.contexts[0].context.cluster = 'kruise-ha-local';
  kc['current-context'] = 'kruise-ha-local';
  return `${JSON.stringify(kc, null, 2)}\n`;
}

/** Starts a cluster; `stop()` undoes everything. */
export async function startCluster(opts: ClusterOptions = {}): Promise<LocalCluster> {
  const cluster = new LocalCluster(opts);
  await cluster.start();
  return cluster;
}
