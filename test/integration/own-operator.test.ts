// The own-operator example (examples/own-operator) on the real API server, as its chart renders it: the bundle synth
// built (main.mjs, as the image runs it), two replicas with the Deployment's flags and env, acting as the rendered
// ServiceAccount (so the rendered RBAC is what authorizes them), the webhook Service routed to them. Pods in a
// team=x namespace get their label through either replica, no other pod is touched; the mirror controller runs on
// the Lease holder only and keeps running after that replica is SIGKILLed.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, KubeConfig, KubernetesObjectApi, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { Testing } from 'cdk8s';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OwnOperatorChart } from '../../examples/own-operator/chart.js';
import { serviceAccountKubeconfig } from './support/upstream-manager.js';
import { createReview, metricValue, postReview, reviewPatch, scrape, until, webhookCalls } from './support/ha.js';
import { SecretKeys } from '../../lib/contract.js';
import { ManagerProcess } from './support/manager-process.js';
import { addEndpoint, kubeConfig, removeEndpoint, serverSideApply } from './support/runtime-cluster.js';

const NS = 'team-operator';
const SERVICE = 'team-operator-webhook-service';
const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const suffix = Math.random().toString(16).slice(2, 8);
const team = `team-x-${suffix}`;
const other = `other-${suffix}`;
const replicas: ManagerProcess[] = [];
let objects: KubernetesObject[] = [];

/**
 * The Deployment's container as rendered: its flags and env, but the listeners' ports and the certificate folder, which
 * the harness gives each replica (two share this host's loopback).
 */
function rendered(): { args: string[]; env: Record<string, string> } {
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as {
    spec: {
      template: { spec: { containers: Array<{ args: string[]; env: Array<{ name: string; value?: string }> }> } };
    };
  };
  const c = deployment.spec.template.spec.containers[0];
  return {
    args: c.args.filter((a) => !/^--(metrics-addr|health-probe-addr)=/.test(a)),
    env: Object.fromEntries(
      c.env.filter((e) => e.value !== undefined && !/^WEBHOOK_/.test(e.name)).map((e) => [e.name, e.value!]),
    ),
  };
}

async function createPod(namespace: string, name: string): Promise<V1Pod> {
  return core.createNamespacedPod({
    namespace,
    body: { metadata: { name }, spec: { containers: [{ name: 'c', image: 'registry.example.com/app:1' }] } },
  });
}

const mirrored = (name: string) =>
  core.readNamespacedConfigMap({ name: `${team}.${name}`, namespace: 'mirror' }).catch(() => undefined);
const leader = async () => {
  const leading = await Promise.all(replicas.map((r) => r.leading()));
  return leading.filter(Boolean).length === 1 ? replicas[leading.indexOf(true)] : undefined;
};

describe('examples/own-operator on the real API server', () => {
  beforeAll(async () => {
    const chart = new OwnOperatorChart(Testing.app({ outdir: mkdtempSync(join(tmpdir(), 'own-operator-')) }), 'team');
    objects = Testing.synth(chart) as KubernetesObject[];
    for (const o of objects) if (o.kind !== 'Deployment') await serverSideApply(kc, o);
    for (const name of [team, other, 'mirror'])
      await core
        .createNamespace({ body: { metadata: { name, labels: name === team ? { team: 'x' } : {} } } })
        .catch(() => undefined);
    const kubeconfigPath = join(mkdtempSync(join(tmpdir(), 'own-operator-sa-')), 'kubeconfig');
    writeFileSync(kubeconfigPath, await serviceAccountKubeconfig(NS, 'team-operator'), { mode: 0o600 });
    const { args, env } = rendered();
    for (const name of ['team-operator-0', 'team-operator-1'])
      replicas.push(
        await ManagerProcess.start({
          name,
          kubeconfigPath,
          namespace: NS,
          bundle: join(chart.image.contextDir, 'main.mjs'),
          args,
          env,
        }),
      );
    await Promise.all(replicas.map((r) => r.waitReady(90_000)));
    for (const r of replicas) await addEndpoint(kc, NS, r.name, r.ports.webhook, SERVICE);
    await until('one replica to lead', leader, 30_000, 200);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    for (const name of [team, other, 'mirror', NS]) await core.deleteNamespace({ name }).catch(() => undefined);
    const api = KubernetesObjectApi.makeApiClient(kc);
    for (const o of objects)
      if (!o.metadata?.namespace && o.kind !== 'Namespace') await api.delete(o).catch(() => undefined);
  }, 60_000);

  it('both replicas serve the binding; through the API server, pods in team=x namespaces get the label, no other', async () => {
    // Each replica, directly (the API server keeps its connection to one replica while it lives).
    const secret = await core.readNamespacedSecret({ name: 'team-operator-webhook-certs', namespace: NS });
    const caPem = Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8');
    for (const r of replicas) {
      const res = await postReview(
        r.ports.webhook,
        '/mutate--v1-pod',
        caPem,
        createReview('Pod', 'pods', { metadata: { name: 'direct' } }, team),
      );
      expect(reviewPatch(res.body)).toEqual([{ op: 'add', path: '/metadata/labels', value: { team: 'x' } }]);
    }
    const calls = async () =>
      (await Promise.all(replicas.map((r) => webhookCalls(r, '/mutate--v1-pod')))).reduce((a, b) => a + b);
    const before = await calls();
    expect((await createPod(team, 'p')).metadata?.labels).toEqual({ team: 'x' });
    expect(await calls()).toBe(before + 1);
    const untouched = await createPod(other, 'p');
    expect(untouched.metadata?.labels).toBeUndefined();
    expect(await calls()).toBe(before + 1);
  }, 60_000);

  it('mirrors *-mirror ConfigMaps on the leader only, and survives its SIGKILL', async () => {
    const lead = (await leader())!;
    const standby = replicas.find((r) => r !== lead)!;
    await core.createNamespacedConfigMap({
      namespace: team,
      body: { metadata: { name: 'app-mirror' }, data: { k: 'v1' } },
    });
    await core.createNamespacedConfigMap({ namespace: team, body: { metadata: { name: 'plain' }, data: { k: 'v' } } });
    await until('the copy', async () => (await mirrored('app-mirror'))?.data?.k === 'v1', 20_000, 200);
    await core.patchNamespacedConfigMap({
      name: 'app-mirror',
      namespace: team,
      body: [{ op: 'replace', path: '/data/k', value: 'v2' }],
    });
    await until('the copy updated', async () => (await mirrored('app-mirror'))?.data?.k === 'v2', 20_000, 200);
    expect(await mirrored('plain')).toBeUndefined();
    const reconciles = async (r: ManagerProcess) =>
      metricValue(await scrape(r), 'controller_runtime_reconcile_total', {
        controller: 'configmap-mirror',
        result: 'success',
      }) ?? 0;
    expect(await reconciles(lead)).toBeGreaterThan(0);
    expect(await reconciles(standby)).toBe(0);

    lead.signal('SIGKILL');
    await removeEndpoint(kc, NS, lead.name, SERVICE);
    await until('the standby to lead', () => standby.leading(), 30_000, 200);
    await core.deleteNamespacedConfigMap({ name: 'app-mirror', namespace: team });
    await until('the copy deleted', async () => (await mirrored('app-mirror')) === undefined, 20_000, 200);
    await core.createNamespacedConfigMap({
      namespace: team,
      body: { metadata: { name: 'late-mirror' }, data: { k: 'x' } },
    });
    await until(
      'a copy made by the new leader',
      async () => (await mirrored('late-mirror'))?.data?.k === 'x',
      20_000,
      200,
    );
    // The API server's connection to the killed replica broke: it dials the one left.
    const served = await webhookCalls(standby, '/mutate--v1-pod');
    expect((await createPod(team, 'after-crash')).metadata?.labels).toEqual({ team: 'x' });
    expect(await webhookCalls(standby, '/mutate--v1-pod')).toBe(served + 1);
  }, 90_000);

  it('holds no grant beyond what the program registered', async () => {
    const sa = await serviceAccountKubeconfig(NS, 'team-operator');
    const path = join(mkdtempSync(join(tmpdir(), 'own-operator-sa-')), 'kubeconfig');
    writeFileSync(path, sa, { mode: 0o600 });
    const saKc = new KubeConfig();
    saKc.loadFromFile(path);
    const asOperator = saKc.makeApiClient(CoreV1Api);
    await expect(asOperator.listSecretForAllNamespaces()).rejects.toMatchObject({ code: 403 });
    await expect(asOperator.listPodForAllNamespaces()).rejects.toMatchObject({ code: 403 });
    await expect(asOperator.listConfigMapForAllNamespaces()).resolves.toBeDefined();
  });
});
