/**
 * Installs what the runtime needs into the envtest API server, from the constructs themselves
 * (so the tests exercise what users deploy), and routes the webhook Service to local replicas.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AdmissionregistrationV1Api,
  DiscoveryV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { request, type RequestOptions } from 'node:https';
import { KruiseManager, ManagerImage } from '../../../lib/index.js';
import { Names } from '../../../lib/contract.js';
import type { ControlPlane } from '../../envtest/control-plane.js';
import { envtest } from '../../envtest/state.js';
import { until } from './ha.js';

export function kubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(envtest().kubeconfigPath);
  return kc;
}

/** Kinds a control plane without kubelets or controllers has no use for. */
const SKIPPED = new Set(['Deployment', 'PodDisruptionBudget', 'DaemonSet', 'Job']);

/**
 * Starts a test's own control plane (one it kills, restarts or floods, apart from the shared envtest) and installs
 * the runtime flavour into `namespace`; returns the admin KubeConfig.
 */
export async function startWithRuntime(cp: ControlPlane, namespace: string): Promise<KubeConfig> {
  await cp.start();
  const kc = new KubeConfig();
  kc.loadFromFile(cp.info.kubeconfigPath);
  await installRuntime(kc, namespace);
  return kc;
}

/** Every object of the runtime flavor of KruiseManager in `namespace`, the workloads included. */
export function synthRuntime(namespace: string): KubernetesObject[] {
  const chart = new Chart(Testing.app(), 'test');
  new KruiseManager(chart, 'kruise', { image: ManagerImage.runtime('example.com/kruise-ha:test'), namespace });
  return Testing.synth(chart) as KubernetesObject[];
}

/** Server-side applies the runtime flavor of KruiseManager (CRDs first, webhooks last). */
export async function installRuntime(kc: KubeConfig, namespace: string): Promise<KubernetesObject[]> {
  const objects = synthRuntime(namespace).filter((o) => !SKIPPED.has(o.kind!));
  const api = KubernetesObjectApi.makeApiClient(kc);
  for (const object of objects) {
    if (object.kind === 'CustomResourceDefinition') await asFreshInstall(object, kc);
    await serverSideApply(kc, object);
    if (object.kind === 'CustomResourceDefinition') await waitEstablished(api, object);
  }
  return objects;
}

/**
 * Deletes the live CRD of `crd`'s name when it has stored versions `crd` does not serve (and
 * waits until it is gone), so `crd` applies as on a fresh cluster. The API server refuses a CRD
 * that drops a stored version: after upstream v1.9's SidecarSet CRD (stores v1beta1), the
 * runtime's v1alpha1-only one cannot be applied (docs/upstream-releases.md). Talks to the API
 * server of `kc` (the Jest run's envtest by default): `npm run envtest:install-runtime` and tests
 * with a control plane of their own install through here too.
 */
export async function asFreshInstall(crd: KubernetesObject, kc: KubeConfig = kubeConfig()): Promise<void> {
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name}`;
  const res = await kubeRequest(kc, 'GET', path);
  if (res.status !== 200) return;
  const stored = (JSON.parse(res.body) as { status?: { storedVersions?: string[] } }).status?.storedVersions ?? [];
  const served = ((crd as { spec?: { versions?: Array<{ name: string }> } }).spec?.versions ?? []).map((v) => v.name);
  if (stored.every((v) => served.includes(v))) return;
  const deleted = await kubeRequest(kc, 'DELETE', path);
  // A refusal (an admission webhook's, say a deletion protection whose server is gone) ends it here, named.
  if (deleted.status !== 200 && deleted.status !== 202 && deleted.status !== 404) {
    throw new Error(`DELETE CRD ${crd.metadata!.name}: ${deleted.status} ${deleted.body.slice(0, 500)}`);
  }
  await until(
    `CRD ${crd.metadata!.name} to be deleted`,
    async () => (await kubeRequest(kc, 'GET', path)).status === 404,
    60_000,
    200,
    // What holds it: the API server's CRD finalizer says why it could not delete the instances in the conditions.
    async () => {
      const live = await kubeRequest(kc, 'GET', path);
      const { metadata, status } = JSON.parse(live.body) as {
        metadata?: { deletionTimestamp?: string; finalizers?: string[] };
        status?: { conditions?: Array<{ type: string; status: string; reason?: string; message?: string }> };
      };
      const conditions = (status?.conditions ?? []).map(
        (c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`,
      );
      return [
        `deletionTimestamp ${metadata?.deletionTimestamp ?? 'none'}, finalizers ${JSON.stringify(metadata?.finalizers ?? [])}`,
        ...conditions,
      ].join('\n');
    },
  );
}

/** One request to the API server of `kc` with its credentials; any status resolves. */
export async function kubeRequest(
  kc: KubeConfig,
  method: string,
  path: string,
  body?: string,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  const url = new URL(path, kc.getCurrentCluster()!.server);
  const httpOptions: RequestOptions = { method, headers: body === undefined ? {} : { 'Content-Type': contentType } };
  await kc.applyToHTTPSOptions(httpOptions);
  return new Promise((resolve, reject) => {
    const req = request(url, httpOptions, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => {
          text += d;
        })
        .on('end', () => resolve({ status: res.statusCode!, body: text }));
    });
    req.on('error', reject).end(body);
  });
}

/**
 * Server-side apply of raw JSON. client-node's KubernetesObjectApi re-serializes objects through
 * its typed models, which drops schema keys such as `x-kubernetes-int-or-string` from CRDs.
 */
export async function serverSideApply(
  kc: KubeConfig,
  object: KubernetesObject,
  options: { dryRun?: boolean } = {},
): Promise<void> {
  const [group, version] = object.apiVersion!.includes('/') ? object.apiVersion!.split('/') : ['', object.apiVersion!];
  const plural = object.kind!.toLowerCase().replace(/y$/, 'ie') + 's';
  const ns = object.metadata?.namespace ? `/namespaces/${object.metadata.namespace}` : '';
  const path = `${group ? `/apis/${group}` : '/api'}/${version}${ns}/${plural}/${object.metadata!.name}?fieldManager=kruise-ha-tests&force=true${options.dryRun ? '&dryRun=All' : ''}`;
  const res = await kubeRequest(kc, 'PATCH', path, JSON.stringify(object), 'application/apply-patch+yaml');
  if (res.status >= 300)
    throw new Error(`apply ${object.kind}/${object.metadata!.name}: HTTP ${res.status}: ${res.body}`);
}

export async function waitEstablished(api: KubernetesObjectApi, crd: KubernetesObject): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const read = (await api.read({
      apiVersion: crd.apiVersion!,
      kind: crd.kind!,
      metadata: { name: crd.metadata!.name! },
    })) as { status?: { conditions?: Array<{ type: string; status: string }> } };
    if (read.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`CRD ${crd.metadata!.name} not established`);
}

/** Removes the cluster-scoped webhook configurations, so later suites' pods are not intercepted. */
export async function uninstallWebhooks(kc: KubeConfig): Promise<void> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  await api.deleteMutatingWebhookConfiguration({ name: Names.mutatingWebhookConfiguration }).catch(() => undefined);
  await api.deleteValidatingWebhookConfiguration({ name: Names.validatingWebhookConfiguration }).catch(() => undefined);
}

/**
 * Routes the webhook Service to a replica on 127.0.0.1:`port` through its own EndpointSlice.
 * The API server rejects loopback IPs in IPv4 slices but dials an FQDN-type dotted quad as-is
 * (with --enable-aggregator-routing), so replicas stay on loopback.
 */
export async function addEndpoint(
  kc: KubeConfig,
  namespace: string,
  replica: string,
  port: number,
  service: string = Names.webhookService,
): Promise<void> {
  await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
    namespace,
    body: {
      metadata: {
        name: `${service}-${replica}`,
        labels: { 'kubernetes.io/service-name': service },
      },
      addressType: 'FQDN',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    },
  });
}

/** Takes a replica out of the Service, as the endpoints controller does when readiness fails. */
export async function removeEndpoint(
  kc: KubeConfig,
  namespace: string,
  replica: string,
  service: string = Names.webhookService,
): Promise<void> {
  await kc
    .makeApiClient(DiscoveryV1Api)
    .deleteNamespacedEndpointSlice({ namespace, name: `${service}-${replica}` })
    .catch(() => undefined);
}
