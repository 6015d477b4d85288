// cert-manager mode with the upstream image, judged by the real things: the real kruise-manager
// (built from the pinned upstream module) and a real cert-manager (its controller and cainjector,
// built from cert-manager's checksum-pinned module by test/envtest/binaries/build.sh), all as local
// processes on the same kube-apiserver. The output of `certificates: WebhookCertificates.certManager()`
// is applied in one `kubectl apply --server-side`, as a user would.
//
// What it proves ([chart-parity]): upstream with external certificates does not become ready until
// the caBundle of every CRD with a conversion webhook (Advanced StatefulSet) matches the CA
// (pkg/webhook/util/crd.Ensure); only the CA injection annotation on that CRD makes cert-manager's
// cainjector fill it. First the output without that annotation (what this library rendered before):
// the manager stays unready, saying why; then the output as rendered now: it turns ready and serves.
//
// Adaptations: cert-manager runs as the admin user, not under its chart's RBAC (its own permissions
// are not what is judged here); its CRDs' labels are dropped (Helm template expressions in the
// module's manifests). The kruise-manager replica is adapted as in upstream-real.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { KruiseManager, WebhookCertificates } from '../../lib/index.js';
import { apiRequest } from '../envtest/http.js';
import { envtest } from '../envtest/state.js';
import { startCertManager, type RunningCertManager } from '../support/cert-manager.js';
import { kubectlApply, objectPath, removeCrds } from './support/apply.js';
import { until } from './support/ha.js';
import { addEndpoint, kubeConfig, removeEndpoint, uninstallWebhooks } from './support/runtime-cluster.js';
import { renderedManager, UpstreamManager } from './support/upstream-manager.js';

const INJECT = 'cert-manager.io/inject-ca-from';
const ASTS_CRD = 'statefulsets.apps.kruise.io';
const state = envtest();
const kc = kubeConfig();
const runDir = mkdtempSync(join(tmpdir(), 'cert-manager-upstream-'));
const log = (msg: string) => process.stderr.write(`cert-manager-upstream: ${msg}\n`);

const chart = new Chart(Testing.app(), 'cm');
new KruiseManager(chart, 'kruise', { certificates: WebhookCertificates.certManager() });
const objects = Testing.synth(chart) as KubernetesObject[];
const rendered = renderedManager(objects);
const ns = rendered.namespace;
/** The output as this library rendered it before the fix: no CA injection on the conversion CRD. */
const withoutCrdInjection = objects.map((o) => {
  if (o.kind !== 'CustomResourceDefinition' || o.metadata?.name !== ASTS_CRD) return o;
  const annotations = Object.fromEntries(Object.entries(o.metadata.annotations ?? {}).filter(([k]) => k !== INJECT));
  return { ...o, metadata: { ...o.metadata, annotations } };
});

let certManager: RunningCertManager | undefined;
let replica: UpstreamManager | undefined;

async function getJson<T>(path: string): Promise<T | undefined> {
  const res = await apiRequest(state, 'GET', path);
  return res.status === 200 ? (JSON.parse(res.body) as T) : undefined;
}

/** The CA cert-manager issued the serving certificate from (the Secret's `ca.crt`), base64. */
async function issuedCa(): Promise<string | undefined> {
  const secret = await getJson<{ data?: Record<string, string> }>(
    `/api/v1/namespaces/${ns}/secrets/${rendered.container.env?.find((e) => e.name === 'SECRET_NAME')?.value}`,
  );
  return secret?.data?.['tls.crt'] && secret.data['ca.crt'] ? secret.data['ca.crt'] : undefined;
}

async function crdCaBundle(): Promise<string | undefined> {
  const crd = await getJson<{ spec: { conversion?: { webhook?: { clientConfig?: { caBundle?: string } } } } }>(
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${ASTS_CRD}`,
  );
  return crd?.spec.conversion?.webhook?.clientConfig?.caBundle;
}

async function apply(stream: KubernetesObject[], file: string): Promise<void> {
  // Earlier suites on this shared API server may have applied the same CRDs (cert-manager's, stand-ins
  // for the example checks) under other field managers; an operator installing cert-manager takes them over.
  const result = await kubectlApply(stream, join(runDir, file), {
    serverSide: true,
    fieldManager: 'kruise-ha',
    forceConflicts: true,
  });
  if (!result.ok) throw new Error(`kubectl apply --server-side failed:\n${result.output}`);
}

beforeAll(async () => {
  await uninstallWebhooks(kc);
  certManager = await startCertManager({
    kubeconfig: state.kubeconfigPath,
    clusterResourceNamespace: ns,
    logDir: runDir,
    apply: (crds) => apply(crds, 'cert-manager-crds.yaml'),
  });
  log(`cert-manager ${certManager.binaries.version} running; logs in ${runDir}`);
}, 3_600_000);

afterAll(async () => {
  await uninstallWebhooks(kc);
  if (replica) {
    await replica.stop('SIGTERM', 10_000);
    await removeEndpoint(kc, ns, replica.name);
  }
  await certManager?.stop();
  // The Secrets cert-manager wrote (type kubernetes.io/tls): a later suite's Opaque Secret of the
  // same name would be refused.
  for (const secret of ['kruise-webhook-certs', 'kruise-webhook-ca'])
    await apiRequest(state, 'DELETE', `/api/v1/namespaces/${ns}/secrets/${secret}`).catch(() => undefined);
  await apiRequest(
    state,
    'DELETE',
    `/apis/coordination.k8s.io/v1/namespaces/${rendered.lease.namespace}/leases/${rendered.lease.name}`,
  ).catch(() => undefined);
  for (const o of [...objects].reverse().filter((x) => x.kind !== 'Namespace' && x.kind !== 'CustomResourceDefinition'))
    await apiRequest(state, 'DELETE', await objectPath(o)).catch(() => undefined);
  await removeCrds([...objects.filter((o) => o.kind === 'CustomResourceDefinition'), ...(certManager?.crds ?? [])]);
  rmSync(runDir, { recursive: true, force: true });
}, 180_000);

describe('cert-manager mode with the upstream image and a real cert-manager', () => {
  it('cert-manager issues the serving certificate and injects the CA into both webhook configurations', async () => {
    await apply(withoutCrdInjection, 'install-before-fix.yaml');
    const ca = await until('cert-manager to issue kruise-webhook-certs (tls.crt and ca.crt)', issuedCa, 180_000, 1_000);
    await until(
      'cainjector to put that CA into every entry of both webhook configurations',
      async () => {
        for (const kind of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
          const c = await getJson<{ webhooks: Array<{ clientConfig: { caBundle?: string } }> }>(
            `/apis/admissionregistration.k8s.io/v1/${kind}/kruise-${kind.startsWith('mutating') ? 'mutating' : 'validating'}-webhook-configuration`,
          );
          if (!c || c.webhooks.some((w) => w.clientConfig.caBundle !== ca)) return false;
        }
        return true;
      },
      120_000,
      1_000,
    );
    expect(await crdCaBundle()).not.toBe(ca);
  }, 300_000);

  it('without the injection annotation on the conversion CRD, upstream never turns ready and says why', async () => {
    replica = await UpstreamManager.start(rendered, `${rendered.deployment.metadata!.name}-cm0`, runDir);
    await addEndpoint(kc, ns, replica.name, replica.webhookPort);
    const why = `caBundle of CRD ${ASTS_CRD} does not match external caBundle`;
    await until(`the replica to log "${why}"`, async () => replica!.logs().includes(why), 120_000, 1_000);
    expect(await replica.probe(rendered.container.readinessProbe)).toBeDefined();
  }, 180_000);

  it('with the output as rendered now, cainjector fills the CRD and the replica turns ready and serves', async () => {
    await apply(objects, 'install.yaml');
    const ca = await issuedCa();
    await until(
      'cainjector to fill the Advanced StatefulSet CRD caBundle',
      async () => (await crdCaBundle()) === ca,
      120_000,
      1_000,
    );
    await replica!.waitReady(180_000);
    // A write through the API server that a FAIL webhook with the injected caBundle must admit.
    const name = `cm-${Date.now().toString(36)}`;
    const res = await apiRequest(state, 'POST', `/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets`, {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      },
    });
    expect([res.status, res.body.slice(0, 300)]).toEqual([201, expect.any(String)]);
    await apiRequest(state, 'DELETE', `/apis/apps.kruise.io/v1alpha1/namespaces/default/clonesets/${name}`);
  }, 420_000);
});
