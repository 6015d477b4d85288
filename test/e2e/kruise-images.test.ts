// The real-cluster images (test/cluster/images) as real pods: pushed to the cluster's registry, pulled
// by each node's own containerd under the names the synthesized output uses (docker.io through the
// nodes' mirror), and started by the real kubelets with the output's hardening (non-root, read-only
// root, no capabilities, RuntimeDefault seccomp). The full output (Deployment, DaemonSet, webhooks)
// is the Kruise e2e tests' job; this file proves the images those tests run are real and runnable.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClusterImages, ensureClusterImages } from '../cluster/images/index.js';
import { kubectl, localCluster } from '../cluster/state.js';

jest.setTimeout(300_000);

const NS = 'e2e-kruise-images';
const state = localCluster();
let images: ClusterImages;

const hardened = (uid: number) => ({
  runAsNonRoot: true,
  runAsUser: uid,
  runAsGroup: uid,
  readOnlyRootFilesystem: true,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
});

interface ContainerSpec {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  uid: number;
}

function pod(name: string, node: string, containers: ContainerSpec[]) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS },
    spec: {
      nodeName: node,
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      hostNetwork: true,
      containers: containers.map(({ uid, ...c }) => ({
        ...c,
        imagePullPolicy: 'Always',
        securityContext: hardened(uid),
      })),
    },
  };
}

interface PodStatus {
  status: {
    phase: string;
    containerStatuses?: {
      name: string;
      imageID: string;
      state: { terminated?: { exitCode: number; reason: string } };
    }[];
  };
}

async function finished(name: string): Promise<PodStatus> {
  const deadline = Date.now() + 240_000;
  for (;;) {
    const p = JSON.parse(kubectl(['-n', NS, 'get', 'pod', name, '-o', 'json'])) as PodStatus;
    if (p.status.phase === 'Succeeded' || p.status.phase === 'Failed') return p;
    if (Date.now() > deadline)
      throw new Error(`pod ${name} still ${p.status.phase}:\n${kubectl(['-n', NS, 'describe', 'pod', name])}`);
    await sleep(1000);
  }
}
const logs = (pod: string, container: string) => kubectl(['-n', NS, 'logs', pod, '-c', container]);
const terminated = (p: PodStatus, container: string) => p.status.containerStatuses!.find((c) => c.name === container)!;

beforeAll(async () => {
  images = await ensureClusterImages({ registry: state.registry, plainHttp: true });
  kubectl(['create', 'namespace', NS]);
}, 45 * 60_000);

afterAll(() => {
  kubectl(['delete', 'namespace', NS, '--wait=true', '--timeout=120s']);
}, 180_000);

describe('upstream kruise-manager image on every real node', () => {
  it('is pulled as docker.io/openkruise/kruise-manager:<default release> (the unmodified name) and both binaries start as the output runs them', async () => {
    const nodes = state.nodes.map((n) => n.name);
    for (const node of nodes)
      kubectl(
        ['apply', '-f', '-'],
        JSON.stringify(
          pod(`upstream-${node}`, node, [
            // The name exactly as the synthesized Deployment and DaemonSet write it.
            { name: 'manager', image: images.upstreamManager.name, command: ['/manager', '--help'], uid: 65534 },
            { name: 'daemon', image: images.upstreamManager.name, command: ['/kruise-daemon', '--help'], uid: 65534 },
          ]),
        ),
      );
    for (const node of nodes) {
      const p = await finished(`upstream-${node}`);
      for (const [container, flag] of [
        ['manager', '--enable-leader-election'],
        ['daemon', '--addr string'],
      ] as const) {
        const s = terminated(p, container);
        // Resolved through the node's docker.io mirror to exactly the manifest pushed here.
        expect(s.imageID).toBe(`docker.io/openkruise/kruise-manager@${images.upstreamManager.digest}`);
        // pflag v1.0.5 (upstream's go.mod) prints the usage and exits 2 for --help.
        expect(s.state.terminated?.exitCode).toBe(2);
        const out = logs(`upstream-${node}`, container);
        expect(out).toContain(flag);
        expect(out).toContain('pflag: help requested');
      }
    }
  });
});

describe('runtime image and its base on a real node', () => {
  it('the RuntimeImage-built image runs its entrypoint as 65532 on a read-only root; the node base runs node 24.21.0', async () => {
    const node = state.nodes[0].name;
    kubectl(
      ['apply', '-f', '-'],
      JSON.stringify(
        pod('runtime', node, [
          { name: 'runtime', image: images.runtime.reference, args: ['--help'], uid: 65532 },
          { name: 'base', image: images.runtimeBase.name, command: ['node', '--version'], uid: 1000 },
        ]),
      ),
    );
    const p = await finished('runtime');
    expect(p.status.phase).toBe('Succeeded');
    const registry = state.registry;
    expect(terminated(p, 'runtime').imageID).toBe(`${registry}/kruise-ha/runtime@${images.runtime.digest}`);
    expect(logs('runtime', 'runtime')).toContain('kruise-ha manager: leader-elected controllers');
    expect(terminated(p, 'base').imageID).toBe(`docker.io/library/node@${images.runtimeBase.digest}`);
    expect(logs('runtime', 'base').trim()).toBe('v24.21.0');
  });
});
