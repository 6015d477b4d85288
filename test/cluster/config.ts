// What each process of the local cluster runs with: flags and config files. Kept apart from
// the orchestration in cluster.ts so each setting's reason is easy to find.
import { API_PORT, CLUSTER_CIDR, SERVICE_CIDR, type ClusterSite } from './paths.js';

/** etcd member i of n: plain HTTP on the bridge (a private, host-only network) and loopback. */
export function etcdFlags(site: ClusterSite, i: number, n: number, dataDir: string): string[] {
  const ip = site.controlPlaneIp(i);
  const peers = Array.from({ length: n }, (_, j) => `${site.cpName(j)}=http://${site.controlPlaneIp(j)}:2380`).join(
    ',',
  );
  return [
    `--name=${site.cpName(i)}`,
    `--data-dir=${dataDir}`,
    `--listen-client-urls=http://${ip}:2379,http://127.0.0.1:2379`,
    `--advertise-client-urls=http://${ip}:2379`,
    `--listen-peer-urls=http://${ip}:2380`,
    `--initial-advertise-peer-urls=http://${ip}:2380`,
    `--initial-cluster=${peers}`,
    '--initial-cluster-state=new',
    '--initial-cluster-token=kruise-ha-local',
    '--unsafe-no-fsync=true', // throwaway data: fsync dominates etcd latency on CI disks
    '--log-level=warn',
  ];
}

export interface PkiFiles {
  caCert: string;
  caKey: string;
  servingCert: string;
  servingKey: string;
  kubeletClientCert: string;
  kubeletClientKey: string;
  saKey: string;
  saPub: string;
}

/** kube-apiserver of member i of n, as a production control plane runs it (Node,RBAC; NodeRestriction). */
export function apiServerFlags(site: ClusterSite, i: number, n: number, pki: PkiFiles, certDir: string): string[] {
  const etcd = Array.from({ length: n }, (_, j) => `http://${site.controlPlaneIp(j)}:2379`).join(',');
  return [
    `--etcd-servers=${etcd}`,
    '--bind-address=0.0.0.0', // all addresses of its own netns: the bridge address and loopback
    `--advertise-address=${site.controlPlaneIp(i)}`, // its endpoint in the `kubernetes` Service
    `--secure-port=${API_PORT}`,
    `--cert-dir=${certDir}`,
    `--tls-cert-file=${pki.servingCert}`,
    `--tls-private-key-file=${pki.servingKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--authorization-mode=Node,RBAC',
    '--enable-admission-plugins=NodeRestriction',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--allow-privileged=true',
    `--kubelet-client-certificate=${pki.kubeletClientCert}`,
    `--kubelet-client-key=${pki.kubeletClientKey}`,
    '--kubelet-preferred-address-types=InternalIP,Hostname',
    '--endpoint-reconciler-type=lease',
    '--profiling=false',
  ];
}

export function schedulerFlags(kubeconfig: string, ha: boolean): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    '--secure-port=10259',
    `--leader-elect=${ha}`,
  ];
}

export function controllerManagerFlags(kubeconfig: string, ha: boolean, pki: PkiFiles): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--bind-address=127.0.0.1',
    '--secure-port=10257',
    `--leader-elect=${ha}`,
    '--controllers=*',
    '--use-service-account-credentials=true',
    `--service-account-private-key-file=${pki.saKey}`,
    `--root-ca-file=${pki.caCert}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
    `--service-cluster-ip-range=${SERVICE_CIDR}`,
    '--cluster-name=kruise-ha-local',
  ];
}

export const KUBE_PROXY_HEALTHZ_PORT = 10256;

/** KubeProxyConfiguration (JSON is YAML): iptables mode, and no change to any global sysctl. */
export function kubeProxyConfig(kubeconfig: string, hostname: string, ip: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
      kind: 'KubeProxyConfiguration',
      clientConnection: { kubeconfig },
      mode: 'iptables',
      hostnameOverride: hostname,
      bindAddress: ip,
      clusterCIDR: CLUSTER_CIDR,
      // On its own address, as production's 0.0.0.0:10256: the harness waits on it from the host.
      healthzBindAddress: `${ip}:${KUBE_PROXY_HEALTHZ_PORT}`,
      metricsBindAddress: '127.0.0.1:10249',
      // nf_conntrack_max and the TCP timeouts are global to the machine: leave them alone.
      conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
      // route_localnet would be set otherwise (per-netns, but nothing here needs NodePorts on 127.0.0.1).
      iptables: { localhostNodePorts: false },
    },
    null,
    2,
  );
}

/** containerd 1.6 (Debian) config: paths are the node's own (its mount namespace binds them). */
export function containerdConfig(pauseImage: string): string {
  return `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
# opt would install into the host's /opt/containerd; nothing here uses it.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "/run/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage}"
  enable_selinux = false
  # Root lacks CAP_SYS_RESOURCE on these machines: without this, runc fails to set the
  # kubelet's negative oom_score_adj on the sandbox (see docs/local-cluster.md).
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "/etc/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "/etc/containerd/certs.d"
`;
}

/**
 * Registries whose references the nodes resolve through the local one: the public ones the
 * synthesized output and Kubernetes name, and the private ones the examples name (as a user's
 * mirror would hold them).
 */
export const mirroredRegistries = (site: ClusterSite): string[] => [
  'docker.io',
  'registry.k8s.io',
  'ghcr.io',
  'quay.io',
  'registry.example.com',
  'registry.internal.example:5000',
  site.registry,
];

export function hostsToml(site: ClusterSite): string {
  return `server = "http://${site.registry}"
[host."http://${site.registry}"]
  capabilities = ["pull", "resolve"]
  skip_verify = true
`;
}

export function cniConfig(podCidr: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'kruise-ha-local',
      plugins: [
        {
          type: 'bridge',
          bridge: 'cni0',
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: { type: 'host-local', ranges: [[{ subnet: podCidr }]], routes: [{ dst: '0.0.0.0/0' }] },
        },
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/** KubeletConfiguration for a node at `ip` whose cgroups live under `cgroupRoot`. */
export function kubeletConfig(ip: string, cgroupRoot: string, caCert: string): string {
  return JSON.stringify(
    {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock',
      imageServiceEndpoint: 'unix:///run/containerd/containerd.sock',
      cgroupDriver: 'cgroupfs',
      cgroupRoot,
      failSwapOn: false,
      failCgroupV1: false, // these machines are cgroup v1 (hybrid)
      address: ip, // the API server dials it here for logs, exec and port-forward
      port: 10250,
      readOnlyPort: 0,
      healthzBindAddress: '127.0.0.1',
      healthzPort: 10248,
      authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: caCert } },
      authorization: { mode: 'Webhook' },
      resolvConf: '', // no cluster DNS and no way out: pods get no nameserver
      clusterDomain: 'cluster.local',
      serializeImagePulls: false,
      evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '2%', 'imagefs.available': '2%' },
      imageGCHighThresholdPercent: 99,
      imageGCLowThresholdPercent: 98,
      maxPods: 60,
      protectKernelDefaults: false, // it sets a few global sysctls; cluster.ts saves and restores them
    },
    null,
    2,
  );
}

export const registryConfig = (site: ClusterSite, storage: string): string =>
  [
    'version: 0.1',
    'log: { level: warn, accesslog: { disabled: true } }',
    `storage: { filesystem: { rootdirectory: ${storage} }, delete: { enabled: true } }`,
    `http: { addr: "${site.registry}", secret: kruise-ha-local-cluster }`,
    '',
  ].join('\n');
