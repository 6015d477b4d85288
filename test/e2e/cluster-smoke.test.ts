// Proves the local cluster is a real one: real kubelets run hardened pods from the local registry,
// the scheduler spreads them over zones, probes are real HTTP, kube-proxy routes ClusterIPs from
// the API server's namespace and from nodes, pods on different nodes reach each other and the
// `kubernetes` Service, logs/exec go through the kubelets, and each node's /var/run is its own.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { execInControlPlane, execInNode, kubectl, localCluster } from '../cluster/state.js';

// Debian's busybox 1.35 wget segfaults on -T (its timeout option), so requests are bounded by
// `timeout 5` instead.

jest.setTimeout(240_000);

const NS = 'e2e-cluster-smoke';
const state = localCluster();
const hardened = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  capabilities: { drop: ['ALL'] },
};
const podSecurity = {
  runAsNonRoot: true,
  runAsUser: 65532,
  runAsGroup: 65532,
  seccompProfile: { type: 'RuntimeDefault' },
};
const probe = (port: number) => ({ httpGet: { path: '/index.html', port }, periodSeconds: 2, failureThreshold: 3 });
const httpd = (port: number) => ({
  name: 'httpd',
  image: state.images.busybox,
  command: ['/bin/httpd', '-f', '-v', '-p', String(port), '-h', '/www'],
  securityContext: hardened,
  readinessProbe: probe(port),
  livenessProbe: probe(port),
});

const manifests = {
  apiVersion: 'v1',
  kind: 'List',
  items: [
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NS },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            hostNetwork: true,
            automountServiceAccountToken: false,
            securityContext: podSecurity,
            topologySpreadConstraints: [
              {
                maxSkew: 1,
                topologyKey: 'topology.kubernetes.io/zone',
                whenUnsatisfiable: 'DoNotSchedule',
                labelSelector: { matchLabels: { app: 'web' } },
              },
            ],
            containers: [httpd(18080)],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: NS },
      spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 18080 }] },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: NS },
      spec: {
        selector: { matchLabels: { app: 'agent' } },
        template: {
          metadata: { labels: { app: 'agent' } },
          spec: {
            securityContext: podSecurity,
            containers: [
              {
                ...httpd(8080),
                volumeMounts: [{ name: 'var-run', mountPath: '/host/var/run', readOnly: true }],
              },
            ],
            // What kruise-daemon mounts to find the node's container runtime.
            volumes: [{ name: 'var-run', hostPath: { path: '/var/run', type: 'Directory' } }],
          },
        },
      },
    },
  ],
};

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string };
  status: { podIP?: string; phase?: string; conditions?: Array<{ type: string; status: string }> };
}
const pods = (app: string): Pod[] =>
  (JSON.parse(kubectl(['-n', NS, 'get', 'pods', '-l', `app=${app}`, '-o', 'json'])) as { items: Pod[] }).items;
const ready = (p: Pod) => p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

async function eventually<T>(what: string, fn: () => T, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return fn();
    } catch (e) {
      last = e;
    }
    await sleep(1_000);
  }
  throw new Error(`${what}: still failing after ${timeoutMs} ms: ${(last as Error)?.message ?? String(last)}`);
}

describe('the local cluster', () => {
  beforeAll(() => {
    kubectl(['create', 'namespace', NS]);
    kubectl(['apply', '--server-side', '-f', '-'], JSON.stringify(manifests));
  });
  afterAll(() => {
    kubectl(['delete', 'namespace', NS, '--wait=false']);
  });

  it('has three Ready nodes, one per zone, each with its own InternalIP', () => {
    const nodes = (
      JSON.parse(kubectl(['get', 'nodes', '-o', 'json'])) as {
        items: Array<{
          metadata: { name: string; labels: Record<string, string> };
          status: {
            addresses: Array<{ type: string; address: string }>;
            conditions: Array<{ type: string; status: string }>;
          };
        }>;
      }
    ).items;
    expect(
      nodes.map((n) => ({
        name: n.metadata.name,
        zone: n.metadata.labels['topology.kubernetes.io/zone'],
        ip: n.status.addresses.find((a) => a.type === 'InternalIP')?.address,
        ready: n.status.conditions.find((c) => c.type === 'Ready')?.status,
      })),
    ).toEqual(state.nodes.map((n) => ({ name: n.name, zone: n.zone, ip: n.ip, ready: 'True' })));
    expect(new Set(state.nodes.map((n) => n.zone))).toEqual(new Set(['zone-a', 'zone-b', 'zone-c']));
  });

  it('runs a hardened host-network Deployment Ready through real HTTP probes, one replica per zone', async () => {
    kubectl(['-n', NS, 'rollout', 'status', 'deployment/web', '--timeout=180s']);
    const web = pods('web').filter(ready);
    expect(web).toHaveLength(3);
    const byNode = new Map(state.nodes.map((n) => [n.name, n]));
    expect(new Set(web.map((p) => byNode.get(p.spec.nodeName!)?.zone))).toEqual(
      new Set(['zone-a', 'zone-b', 'zone-c']),
    );
    // Host network: the pod IP is the node's.
    for (const p of web) expect(p.status.podIP).toBe(byNode.get(p.spec.nodeName!)?.ip);

    const pod = web[0].metadata.name;
    const status = kubectl(['-n', NS, 'exec', pod, '--', 'cat', '/proc/1/status']);
    expect(status).toMatch(/^Uid:\s+65532\s+65532/m);
    expect(status).toMatch(/^CapEff:\s+0000000000000000$/m);
    expect(status).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status).toMatch(/^Seccomp:\s+2$/m);
    expect(() => kubectl(['-n', NS, 'exec', pod, '--', 'touch', '/x'])).toThrow(/Read-only file system/);
    // The kubelet's probes are real requests from the node: httpd -v logs each, and kubectl logs
    // reads the log through the kubelet.
    const nodeIp = byNode.get(web[0].spec.nodeName!)!.ip;
    await eventually('probe requests in the log', () => {
      expect(kubectl(['-n', NS, 'logs', pod])).toContain(`[::ffff:${nodeIp}]`);
    });
  });

  it('routes the ClusterIP Service through kube-proxy from the API server namespace and from a node', async () => {
    const ip = kubectl(['-n', NS, 'get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}']);
    expect(ip).toMatch(/^10\.96\./);
    const get = (run: (cmd: string, args: string[]) => string) =>
      eventually(`GET http://${ip}/index.html`, () =>
        expect(run('busybox', ['timeout', '5', 'busybox', 'wget', '-q', '-O', '-', `http://${ip}/index.html`])).toBe(
          'hello from busybox httpd\n',
        ),
      );
    await get((cmd, args) => execInControlPlane(state.controlPlane[0].name, cmd, args));
    await get((cmd, args) => execInNode('node-2', cmd, args));
  });

  it('runs a DaemonSet pod on every node, on the pod network, reaching other nodes and the kubernetes Service', async () => {
    kubectl(['-n', NS, 'rollout', 'status', 'daemonset/agent', '--timeout=180s']);
    const agents = pods('agent').filter(ready);
    expect(agents.map((p) => p.spec.nodeName).sort()).toEqual(state.nodes.map((n) => n.name));
    for (const p of agents) {
      const node = state.nodes.find((n) => n.name === p.spec.nodeName)!;
      expect(p.status.podIP?.startsWith(node.podCIDR.split('.').slice(0, 3).join('.') + '.')).toBe(true);
    }
    // Pod on node-1 -> pod on node-3 (routed between the node namespaces).
    const from = agents.find((p) => p.spec.nodeName === 'node-1')!.metadata.name;
    const to = agents.find((p) => p.spec.nodeName === 'node-3')!.status.podIP!;
    await eventually('pod-to-pod across nodes', () =>
      expect(
        kubectl([
          '-n',
          NS,
          'exec',
          from,
          '--',
          'timeout',
          '5',
          'wget',
          '-q',
          '-O',
          '-',
          `http://${to}:8080/index.html`,
        ]),
      ).toBe('hello from busybox httpd\n'),
    );
    // Pod -> the `kubernetes` Service (ClusterIP -> an API server, DNATed in the node's netns). A TCP
    // connect is the check: busybox's TLS client cannot handshake with the API server's ECDSA cert.
    await eventually('pod to the kubernetes Service', () =>
      kubectl([
        '-n',
        NS,
        'exec',
        from,
        '--',
        'timeout',
        '5',
        'nc',
        state.kubernetesServiceIP,
        '443',
        '-e',
        '/bin/true',
      ]),
    );
  });

  it("gives each node's pods the node's own containerd under /var/run, as kruise-daemon mounts it", () => {
    const inodes = new Set<number>();
    for (const p of pods('agent')) {
      const node = state.nodes.find((n) => n.name === p.spec.nodeName)!;
      const seen = kubectl([
        '-n',
        NS,
        'exec',
        p.metadata.name,
        '--',
        'stat',
        '-c',
        '%i',
        '/host/var/run/containerd/containerd.sock',
      ]);
      expect(Number(seen.trim())).toBe(statSync(node.containerdSocket).ino);
      // And the node itself (its mount namespace) sees that same socket at the standard path.
      expect(Number(execInNode(node.name, 'stat', ['-c', '%i', '/var/run/containerd/containerd.sock']).trim())).toBe(
        statSync(node.containerdSocket).ino,
      );
      inodes.add(Number(seen.trim()));
    }
    expect(inodes.size).toBe(state.nodes.length);
  });
});
