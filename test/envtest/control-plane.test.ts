// Proves the envtest control plane is a real, correctly configured API server:
// versioned as pinned, persisting objects, enforcing RBAC and validation, and
// restartable (which cuts watches) without losing state.
import { describe, expect, it } from '@jest/globals';
import {
  ApiException,
  CoreV1Api,
  KubeConfig,
  RbacAuthorizationV1Api,
  VersionApi,
  Watch,
} from '@kubernetes/client-node';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { envtest, kubeconfigForUser, restartApiServer } from './state.js';

const BINARIES = join(dirname(fileURLToPath(import.meta.url)), 'binaries');
const SLOW = 120_000; // bound for steps that wait on the API server; never a speed assertion
const state = envtest();
const admin = new KubeConfig();
admin.loadFromFile(state.kubeconfigPath);
const core = admin.makeApiClient(CoreV1Api);
const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (e) {
    if (e instanceof ApiException) return e.code;
    throw e;
  }
}

describe('envtest control plane', () => {
  it('serves the Kubernetes version it was built for', async () => {
    const version = await admin.makeApiClient(VersionApi).getCode();
    expect(version.gitVersion).toBe(state.kubernetesVersion);
    if (state.kubeApiServerSource === 'built') {
      // Judged apart from the build's own version stamp: the pin is the wrapper module's require line, and the
      // binary's Go build information names the module version it was compiled from (with its go.sum hash).
      const goMod = readFileSync(join(BINARIES, 'kube-apiserver', 'go.mod'), 'utf8');
      const pinned = /^\s*k8s\.io\/kubernetes (v\S+)(?:\s|$)/m.exec(goMod)?.[1];
      const buildInfo = execFileSync('go', ['version', '-m', state.kubeApiServerPath], { encoding: 'utf8' });
      const compiled = /^\s*mod\s+k8s\.io\/kubernetes\s+(v\S+)\s+h1:/m.exec(buildInfo)?.[1];
      expect({ pinned, compiled, served: version.gitVersion }).toEqual({
        pinned: version.gitVersion,
        compiled: version.gitVersion,
        served: state.pinnedKubernetesVersion,
      });
    }
    expect(version.gitVersion).toMatch(new RegExp(`^v${version.major}\\.${version.minor}\\.`));
  });

  it('stores a namespace and reads it back', async () => {
    const name = uniqueName('envtest-ns');
    await core.createNamespace({ body: { metadata: { name, labels: { purpose: 'roundtrip' } } } });
    const read = await core.readNamespace({ name });
    expect(read.metadata?.name).toBe(name);
    expect(read.metadata?.labels).toMatchObject({ purpose: 'roundtrip' });
    expect(read.metadata?.uid).toBeTruthy();
  });

  it(
    'enforces RBAC: a user without bindings gets 403 until a binding grants access',
    async () => {
      const user = uniqueName('envtest-nobody');
      const kc = new KubeConfig();
      kc.loadFromString(await kubeconfigForUser(user));
      const asUser = kc.makeApiClient(CoreV1Api);
      expect(await statusOf(asUser.listNamespace())).toBe(403);

      // Positive control: the same certificate works once RBAC allows it, so the 403 was authorization.
      // (A dedicated role, not `view`: aggregated roles stay empty without kube-controller-manager.)
      const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
      await rbac.createClusterRole({
        body: {
          metadata: { name: user },
          rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list'] }],
        },
      });
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: user },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: user },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
        },
      });
      let status = 0;
      for (let i = 0; i < 100 && status !== 200; i++) {
        // the authorizer's cache catches up asynchronously
        status = await statusOf(asUser.listNamespace());
        if (status !== 200) await sleep(100);
      }
      expect(status).toBe(200);
      expect(await statusOf(asUser.createNamespace({ body: { metadata: { name: uniqueName('denied') } } }))).toBe(403);
    },
    SLOW,
  );

  it('rejects invalid objects, and allocates ClusterIPs from 10.0.0.0/24', async () => {
    expect(await statusOf(core.createNamespace({ body: { metadata: { name: 'Not_A_DNS_Label' } } }))).toBe(422);
    const service = (name: string, clusterIP?: string) =>
      core.createNamespacedService({
        namespace: 'default',
        body: { metadata: { name }, spec: { clusterIP, ports: [{ port: 443 }] } },
      });
    expect(await statusOf(service(uniqueName('outside-range'), '10.0.1.5'))).toBe(422);
    const created = await service(uniqueName('allocated'));
    expect(created.spec?.clusterIP).toMatch(/^10\.0\.0\.\d+$/);
  });

  it.each(['graceful', 'kill'] as const)(
    'restartApiServer(%s) cuts open watches and keeps the data in etcd',
    async (mode) => {
      const name = uniqueName(`survives-${mode}`);
      await core.createNamespace({ body: { metadata: { name } } });
      let sawNamespace!: () => void;
      let watchEnded!: () => void;
      const seen = new Promise<void>((resolve) => {
        sawNamespace = resolve;
      });
      const ended = new Promise<void>((resolve) => {
        watchEnded = resolve;
      });
      const watch = await new Watch(admin).watch(
        '/api/v1/namespaces',
        {},
        (_phase, obj: { metadata?: { name?: string } }) => {
          if (obj.metadata?.name === name) sawNamespace();
        },
        () => watchEnded(),
      );
      await seen; // the watch is live before the restart

      await restartApiServer(mode);
      await ended; // ...and its done callback fires because the server went away
      watch.abort();
      expect((await core.readNamespace({ name })).metadata?.name).toBe(name);
    },
    SLOW,
  );
});
