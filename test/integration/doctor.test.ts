/**
 * `kruise-ha doctor` against a real API server, with this project's manager running as two
 * processes: all green on a healthy install, and for each injected fault exactly that failure,
 * its fix and exit code 1. No kubelet runs here, so the test acts as one: it creates the nodes
 * and the manager pods (named like the processes), marks them Ready by patching status, and
 * routes the webhook Service to the processes through FQDN EndpointSlices.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  PatchStrategy,
  PolicyV1Api,
  RbacAuthorizationV1Api,
  setHeaderOptions,
  type KubernetesObject,
  type V1ClusterRole,
  type V1Deployment,
  type V1MutatingWebhookConfiguration,
  type V1Pod,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { setTimeout as sleep } from 'node:timers/promises';
import { KruiseManager, ManagerImage, Rollout } from '../../lib/index.js';
import { Names, SecretKeys } from '../../lib/contract.js';
import { generateCA, generateServingCert, servingDnsNames } from '../../lib/runtime/certs/generate.js';
import { envtest } from '../envtest/state.js';
import { doctorJson, runDoctorCli } from './support/doctor-run.js';
import { until } from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import {
  addEndpoint,
  kubeConfig,
  removeEndpoint,
  serverSideApply,
  uninstallWebhooks,
  waitEstablished,
} from './support/runtime-cluster.js';
import { KubernetesObjectApi } from '@kubernetes/client-node';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const admission = kc.makeApiClient(AdmissionregistrationV1Api);
const namespace = 'kruise-doctor';
const NODES: Record<string, string> = {
  'doctor-a1': 'zone-a',
  'doctor-b1': 'zone-b',
  'doctor-a2': 'zone-a',
  'doctor-b2': 'zone-b',
};
const REPLICAS: Array<[string, string]> = [
  ['kruise-controller-manager-doc-0', 'doctor-a1'],
  ['kruise-controller-manager-doc-1', 'doctor-b1'],
];
const LEASE_ARGS = [
  '--leader-election-lease-duration=4s',
  '--leader-election-renew-deadline=3s',
  '--leader-election-retry-period=1s',
];
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);
const b64 = (s: string) => Buffer.from(s).toString('base64');

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function synthInstall(): Json[] {
  const chart = new Chart(Testing.app(), 'doctor');
  new KruiseManager(chart, 'kruise', {
    namespace,
    image: ManagerImage.runtime('example.com/kruise-ha:test'),
    rollout: Rollout.fullSurge(),
  });
  return Testing.synth(chart);
}

/** What a kubelet and the node lifecycle controller do: Ready, and the creation-time not-ready taint lifted. */
async function nodeReady(name: string): Promise<void> {
  await core.patchNode({ name, body: { spec: { taints: null } } }, merge);
  await core.patchNodeStatus(
    {
      name,
      body: {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              lastHeartbeatTime: new Date().toISOString(),
              lastTransitionTime: new Date().toISOString(),
            },
          ],
        },
      },
    },
    merge,
  );
}

async function podReady(name: string): Promise<void> {
  const now = new Date().toISOString();
  await core.patchNamespacedPodStatus(
    {
      name,
      namespace,
      body: {
        status: {
          phase: 'Running',
          conditions: [
            { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
            { type: 'Ready', status: 'True', lastTransitionTime: now },
          ],
        },
      },
    },
    merge,
  );
}

/** Every check's id and status, for readable failures. */
const summary = (report: { checks: Array<{ id: string; status: string; message: string }> }) =>
  report.checks.map((c) => `${c.status} ${c.id}: ${c.message}`).join('\n');

describe('kruise-ha doctor on a live install (runtime flavour, manager processes)', () => {
  const managers: ManagerProcess[] = [];
  let objects: Json[] = [];
  const kubeconfig = envtest().kubeconfigPath;

  beforeAll(async () => {
    objects = synthInstall().filter((o) => o.kind !== 'DaemonSet' && o.kind !== 'Job');
    const api = KubernetesObjectApi.makeApiClient(kc);
    for (const o of objects) {
      await serverSideApply(kc, o as KubernetesObject);
      if (o.kind === 'CustomResourceDefinition') await waitEstablished(api, o as KubernetesObject);
    }
    for (const [name, zone] of Object.entries(NODES)) {
      await core.createNode({
        body: { metadata: { name, labels: { 'kubernetes.io/hostname': name, 'topology.kubernetes.io/zone': zone } } },
      });
      await nodeReady(name);
    }
    const deployment = objects.find((o) => o.kind === 'Deployment') as V1Deployment;
    for (const [pod, node] of REPLICAS) {
      // The pod a ReplicaSet would create from the Deployment's template, on its node.
      const body: V1Pod = {
        metadata: {
          name: pod,
          namespace,
          labels: { ...deployment.spec!.template.metadata!.labels, 'pod-template-hash': 'doc' },
        },
        spec: { ...deployment.spec!.template.spec!, nodeName: node },
      };
      await core.createNamespacedPod({ namespace, body });
      await podReady(pod);
      const m = await ManagerProcess.start({ name: pod, kubeconfigPath: kubeconfig, namespace, args: LEASE_ARGS });
      managers.push(m);
    }
    await Promise.all(managers.map((m) => m.waitReady()));
    for (const m of managers) await addEndpoint(kc, namespace, m.name, m.ports.webhook);
    // The disruption controller's verdict (no kube-controller-manager runs here).
    const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget');
    const policy = kc.makeApiClient(PolicyV1Api);
    const live = await policy.readNamespacedPodDisruptionBudget({ name: pdb.metadata.name, namespace });
    await policy.patchNamespacedPodDisruptionBudgetStatus(
      {
        name: pdb.metadata.name,
        namespace,
        body: {
          status: {
            observedGeneration: live.metadata!.generation,
            disruptionsAllowed: 1,
            currentHealthy: 2,
            desiredHealthy: 1,
            expectedPods: 2,
          },
        },
      },
      merge,
    );
    // Both replicas patched the caBundles and one leads.
    await until(
      'a leader',
      async () => (await Promise.all(managers.map((m) => m.leading()))).some(Boolean),
      30_000,
      200,
    );
  }, 180_000);

  afterAll(async () => {
    for (const m of managers) {
      m.signal('SIGCONT');
      await m.stop(5_000);
    }
    await uninstallWebhooks(kc);
    for (const m of managers) await removeEndpoint(kc, namespace, m.name);
    for (const name of Object.keys(NODES)) await core.deleteNode({ name }).catch(() => undefined);
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }, 60_000);

  it('reports all green on a healthy install, exit code 0, and prints a readable table', async () => {
    const { code, report } = await doctorJson(kubeconfig, namespace);
    expect(summary(report)).not.toMatch(/^(fail|warn|skip) /m);
    expect([code, report.ok, report.flavour]).toEqual([0, true, 'runtime']);
    const table = await runDoctorCli(['doctor', `--kubeconfig=${kubeconfig}`, '-n', namespace]);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toContain('\u001b[');
    expect(table.stdout).toMatch(
      /^PASS {2}rbac +ServiceAccount kruise-doctor\/kruise-manager has all \d+ permissions the runtime manager needs$/m,
    );
    expect(table.stdout).toMatch(/^13 passed, 0 failed, 0 warnings$/m);
    process.stdout.write(`\n--- doctor on a healthy install ---\n${table.stdout}`);
  }, 120_000);

  it('exports every metric the dashboard and the alerts query from the manager job', async () => {
    const chart = new Chart(Testing.app(), 'metrics');
    new KruiseManager(chart, 'kruise', {
      namespace,
      image: ManagerImage.runtime('example.com/kruise-ha:test'),
      monitoring: { grafanaDashboard: true, alertRules: true },
    });
    const out = Testing.synth(chart);
    const dashboard = out.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'kruise-manager-dashboard').data[
      'kruise-manager.json'
    ];
    const rules = JSON.stringify(out.find((o) => o.kind === 'PrometheusRule').spec);
    // Series selected by the manager's scrape job (`job="$job"` in the dashboard, `job="kruise-manager-metrics"` in the
    // rules).
    const names = new Set(
      [
        ...`${dashboard}\n${rules}`.matchAll(
          /([a-zA-Z_:][a-zA-Z0-9_:]*)\{[^}]*job=\\?"(?:\$job|kruise-manager-metrics)/g,
        ),
      ].map((m) => m[1].replace(/_bucket$/, '')),
    );
    expect(names.size).toBeGreaterThanOrEqual(9);
    const leader = (await Promise.all(managers.map(async (m) => ((await m.leading()) ? m : undefined)))).find(Boolean)!;
    const scraped = (await leader.get('/metrics', leader.ports.metrics)).body;
    const missing = [...names].filter((n) => n !== 'up' && !new RegExp(`^# TYPE ${n} `, 'm').test(scraped));
    expect(missing).toEqual([]);
  }, 60_000);

  /** Injects a fault, runs the doctor, restores; the doctor must fail exactly `id` with `message`. */
  async function fault(
    id: string,
    message: RegExp,
    inject: () => Promise<void>,
    restore: () => Promise<void>,
  ): Promise<void> {
    await inject();
    try {
      const { code, report, failing } = await doctorJson(kubeconfig, namespace);
      expect({ failing, code }).toEqual({ failing: [id], code: 1 });
      const check = report.checks.find((c) => c.id === id)!;
      expect(check.message).toMatch(message);
      expect(check.fix).toBeTruthy();
    } finally {
      await restore();
    }
    // Restored: green again, so the next fault starts from a healthy install.
    const after = await doctorJson(kubeconfig, namespace);
    expect(summary(after.report)).not.toMatch(/^fail /m);
  }

  it('finds a webhook Service without a ready endpoint, and which webhooks fail closed', async () => {
    await fault(
      'webhook-endpoints',
      /has no ready endpoint: 6 webhooks fail closed now \(mpod.kb.io, msidecarset.kb.io, vsidecarset.kb.io, vpod.kb.io and 2 more\), so pod creation fails cluster-wide/,
      async () => {
        for (const m of managers) await removeEndpoint(kc, namespace, m.name);
        const table = await runDoctorCli(['doctor', `--kubeconfig=${kubeconfig}`, '-n', namespace]);
        expect(table.code).toBe(1);
        process.stdout.write(`\n--- doctor with no ready endpoint ---\n${table.stdout}`);
      },
      async () => {
        for (const m of managers) await addEndpoint(kc, namespace, m.name, m.ports.webhook);
      },
    );
  }, 120_000);

  it('finds a stale caBundle', async () => {
    const saved = await admission.readMutatingWebhookConfiguration({ name: Names.mutatingWebhookConfiguration });
    const other = await generateCA({ commonName: 'not-the-webhook-ca', now: Date.now(), validityMs: 86400_000 });
    await fault(
      'ca-bundle',
      /1 of 6 caBundles do not contain the CA .*: mutating webhook mpod.kb.io/,
      async () => {
        await admission.patchMutatingWebhookConfiguration(
          {
            name: saved.metadata!.name!,
            body: [{ op: 'replace', path: '/webhooks/0/clientConfig/caBundle', value: b64(other.certPem) }],
          },
          jsonPatch,
        );
      },
      () => replaceMutating(saved),
    );
  }, 120_000);

  it('finds an expired serving certificate', async () => {
    const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace });
    const data = secret.data!;
    const caPems = Buffer.from(data[SecretKeys.caCert], 'base64').toString();
    const ca = {
      certPem: caPems.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/)![0],
      keyPem: Buffer.from(data[SecretKeys.caKey], 'base64').toString(),
    };
    const expired = await generateServingCert({
      ca,
      dnsNames: servingDnsNames(Names.webhookService, namespace),
      now: Date.now() - 3 * 86400_000,
      validityMs: 86400_000,
    });
    await fault(
      'certificate',
      /the serving certificate expired (1d 23h|2d) ago .*the API server rejects every webhook call/,
      async () => {
        await core.patchNamespacedSecret(
          {
            name: Names.webhookSecret,
            namespace,
            body: {
              data: { [SecretKeys.serverCert]: b64(expired.certPem), [SecretKeys.tlsCert]: b64(expired.certPem) },
            },
          },
          merge,
        );
      },
      async () => {
        await core.patchNamespacedSecret({ name: Names.webhookSecret, namespace, body: { data } }, merge);
      },
    );
  }, 120_000);

  it('finds a webhook entry removed from its configuration', async () => {
    const saved = await admission.readValidatingWebhookConfiguration({ name: Names.validatingWebhookConfiguration });
    const index = saved.webhooks!.findIndex((w) => w.name === 'vsidecarset.kb.io');
    await fault(
      'webhook-configurations',
      /1 webhook is missing: validating vsidecarset.kb.io \(\/validate-apps-kruise-io-v1alpha1-sidecarset\)/,
      async () => {
        await admission.patchValidatingWebhookConfiguration(
          { name: saved.metadata!.name!, body: [{ op: 'remove', path: `/webhooks/${index}` }] },
          jsonPatch,
        );
      },
      () => replaceValidating(saved),
    );
  }, 120_000);

  it('finds nodes without zone labels', async () => {
    const label = (zone: string | null) =>
      Promise.all(
        Object.keys(NODES).map((name) =>
          core.patchNode(
            { name, body: { metadata: { labels: { 'topology.kubernetes.io/zone': zone ?? null } } } },
            merge,
          ),
        ),
      );
    await fault(
      'zone-labels',
      /4 of 4 nodes have no topology.kubernetes.io\/zone label .*replicas can share a failure domain/,
      async () => {
        await label(null);
      },
      async () => {
        await Promise.all(
          Object.entries(NODES).map(([name, zone]) =>
            core.patchNode({ name, body: { metadata: { labels: { 'topology.kubernetes.io/zone': zone } } } }, merge),
          ),
        );
      },
    );
  }, 120_000);

  it("finds a missing permission, asked of the API server as the manager's ServiceAccount", async () => {
    const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
    const saved = await rbac.readClusterRole({ name: 'kruise-manager-role' });
    const without: V1ClusterRole = {
      ...saved,
      rules: saved
        .rules!.map((r) =>
          r.resources?.includes('pods') ? { ...r, resources: r.resources.filter((x) => x !== 'pods') } : r,
        )
        .filter((r) => (r.resources ?? []).length > 0),
    };
    await fault(
      'rbac',
      /is missing \d of \d+ permissions the manager needs: .*patch pods \(cluster-wide\)/,
      async () => {
        await rbac.replaceClusterRole({ name: saved.metadata!.name!, body: without });
      },
      async () => {
        const current = await rbac.readClusterRole({ name: saved.metadata!.name! });
        await rbac.replaceClusterRole({
          name: saved.metadata!.name!,
          body: { ...saved, metadata: { ...saved.metadata, resourceVersion: current.metadata!.resourceVersion } },
        });
      },
    );
  }, 120_000);

  it('finds a missing CRD', async () => {
    const crd = objects.find((o) => o.kind === 'CustomResourceDefinition');
    const ext = kc.makeApiClient(ApiextensionsV1Api);
    await fault(
      'crds',
      /1 CRD is missing: sidecarsets.apps.kruise.io/,
      async () => {
        await ext.deleteCustomResourceDefinition({ name: crd.metadata.name });
        await until(
          'the CRD to be gone',
          async () =>
            ext.readCustomResourceDefinition({ name: crd.metadata.name }).then(
              () => false,
              () => true,
            ),
          30_000,
          200,
        );
      },
      async () => {
        await serverSideApply(kc, crd);
        await waitEstablished(KubernetesObjectApi.makeApiClient(kc), crd);
      },
    );
  }, 120_000);

  it('finds a leader that stopped renewing (every replica frozen)', async () => {
    const leases = kc.makeApiClient(CoordinationV1Api);
    const lease = await leases.readNamespacedLease({ name: Names.leaderElectionId, namespace });
    for (const m of managers) m.signal('SIGSTOP');
    try {
      // Past the lease duration (4 s) since the last renewal.
      await sleep(Math.max(0, new Date(lease.spec!.renewTime!).getTime() + 5_500 - Date.now()));
      await until(
        'the Lease to expire',
        async () =>
          Date.now() -
            new Date(
              (await leases.readNamespacedLease({ name: Names.leaderElectionId, namespace })).spec!.renewTime!,
            ).getTime() >
          5_000,
        30_000,
        500,
      );
      const { code, report, failing } = await doctorJson(kubeconfig, namespace);
      expect({ failing, code }).toEqual({ failing: ['leader'], code: 1 });
      expect(report.checks.find((c) => c.id === 'leader')!.message).toMatch(
        /^leader kruise-controller-manager-doc-\d_[0-9a-f]+ stopped renewing \d+s ago \(lease duration 4s\) and no standby took over/,
      );
    } finally {
      for (const m of managers) m.signal('SIGKILL');
    }
  }, 120_000);
});

async function replaceMutating(saved: V1MutatingWebhookConfiguration): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const current = await api.readMutatingWebhookConfiguration({ name: saved.metadata!.name! });
  await api.replaceMutatingWebhookConfiguration({
    name: saved.metadata!.name!,
    body: { ...saved, metadata: { ...saved.metadata, resourceVersion: current.metadata!.resourceVersion } },
  });
}

async function replaceValidating(saved: V1ValidatingWebhookConfiguration): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const current = await api.readValidatingWebhookConfiguration({ name: saved.metadata!.name! });
  await api.replaceValidatingWebhookConfiguration({
    name: saved.metadata!.name!,
    body: { ...saved, metadata: { ...saved.metadata, resourceVersion: current.metadata!.resourceVersion } },
  });
}
