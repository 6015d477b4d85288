// The API server calling our webhook servers: two replicas behind a selector-less Service (the
// envtest API server routes to EndpointSlice addresses), certificates and caBundle from the
// self-managed cert managers, and a graceful stop of one replica while objects keep being
// created: not a single admission may fail.
//
// The replicas listen on 127.0.0.1 only, one port each, and are published the way
// test/envtest/webhook-routing.test.ts proves works: the API server rejects loopback addresses
// in IPv4 EndpointSlices ("may not be in the loopback range") but dials an FQDN-type slice's
// dotted quad as-is (with --enable-aggregator-routing), so all traffic stays on loopback.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AdmissionregistrationV1Api,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { KubeSecretStore, SelfManagedCertificates, WebhookConfigurationTarget } from '../../lib/runtime/certs/index.js';
import { HealthServer, readyCheck, webhookSelfCheck } from '../../lib/runtime/health/index.js';
import { admissionregistrationV1, coreV1, kubeClient } from '../../lib/runtime/kube/index.js';
import { Logger } from '../../lib/runtime/log.js';
import { mutating, patch, pointer, WebhookServer } from '../../lib/runtime/webhook/index.js';
import { envtest } from '../envtest/state.js';
import { freePort } from '../envtest/process.js';
import { tempDir } from '../unit/runtime/tls-fixtures.js';

const SLOW = 180_000; // bound for waits on the API server; never a speed assertion
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(envtest().kubeconfigPath);
const core = kubeConfig.makeApiClient(CoreV1Api);
const discovery = kubeConfig.makeApiClient(DiscoveryV1Api);
const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
const logger = new Logger({ test: 'runtime-webhook' }, 'warn');
const suffix = randomBytes(3).toString('hex');
const ns = `webhook-${suffix}`;
const service = 'hooks';
const mwc = `webhook-roundtrip-${suffix}`;
const MUTATE_LABEL = 'kruise-ts.test/mutate';
const MUTATED_BY = 'kruise-ts.test/mutated-by';
const cleanups: Array<() => unknown> = [];

interface Replica {
  name: string;
  port: number;
  server: WebhookServer;
  certs: SelfManagedCertificates;
  health: HealthServer;
}
const replicas: Replica[] = [];

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = SLOW): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** What the EndpointSlice controller would publish: one slice per ready replica. */
async function publishEndpoints(ready: Replica[]): Promise<void> {
  const existing = await discovery.listNamespacedEndpointSlice({
    namespace: ns,
    labelSelector: `kubernetes.io/service-name=${service}`,
  });
  for (const slice of existing.items) {
    if (!ready.some((r) => slice.metadata?.name === `${service}-${r.name}`)) {
      await discovery.deleteNamespacedEndpointSlice({ name: slice.metadata!.name!, namespace: ns });
    }
  }
  for (const r of ready) {
    const name = `${service}-${r.name}`;
    if (existing.items.some((s) => s.metadata?.name === name)) continue;
    await discovery.createNamespacedEndpointSlice({
      namespace: ns,
      body: {
        metadata: { name, namespace: ns, labels: { 'kubernetes.io/service-name': service } },
        addressType: 'FQDN', // IPv4 slices may not hold 127.x; an FQDN slice's dotted quad is dialed as-is
        ports: [{ name: 'https', port: r.port, protocol: 'TCP' }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      },
    });
  }
}

async function startReplica(name: string): Promise<Replica> {
  const dir = tempDir();
  cleanups.push(dir.remove);
  const port = await freePort();
  const server = new WebhookServer({ certDir: dir.path, logger, registry: new Registry(), port, host: '127.0.0.1' });
  server.register(
    '/mutate-configmap',
    mutating(async (req) => {
      // Slow enough that admissions are in flight whenever a replica stops: cutting them would fail
      // the API call (an abrupt stop here loses several; checked by hand).
      await sleep(100);
      const labels = (req.object?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {};
      return labels[MUTATED_BY]
        ? { allowed: true }
        : patch([{ op: 'add', path: pointer('metadata', 'labels', MUTATED_BY), value: name }]);
    }),
  );
  let started = false;
  const certs = new SelfManagedCertificates({
    secrets: new KubeSecretStore(coreV1(kubeClient(kubeConfig)), ns, 'hooks-certs'),
    certDir: dir.path,
    serviceName: service,
    namespace: ns,
    logger,
    caBundleTargets: [new WebhookConfigurationTarget(admissionregistrationV1(kubeClient(kubeConfig)), 'mutating', mwc)],
    onCertificatesWritten: () => (started ? server.reloadCertificates() : undefined),
  });
  await certs.start();
  await certs.waitReady(AbortSignal.timeout(SLOW));
  await server.start();
  started = true;
  const health = new HealthServer({ logger, port: 0, host: '127.0.0.1' });
  health.addReadinessCheck('certs', readyCheck(certs, 'certificates'));
  health.addReadinessCheck('webhook', webhookSelfCheck({ port, caPem: () => certs.caPem() }));
  await health.start();
  const replica = { name, port, server, certs, health };
  cleanups.push(
    () => health.stop(),
    () => certs.stop(),
    () => server.stop(),
  );
  replicas.push(replica);
  return replica;
}

let seq = 0;
async function createLabelled(): Promise<V1ConfigMap> {
  return core.createNamespacedConfigMap({
    namespace: ns,
    body: { metadata: { name: `cm-${seq++}`, labels: { [MUTATE_LABEL]: 'true' } }, data: { k: 'v' } },
  });
}

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: ns } } });
  await core.createNamespacedService({
    namespace: ns,
    body: { metadata: { name: service }, spec: { ports: [{ name: 'https', port: 443, targetPort: 'https' }] } },
  });
  await admission.createMutatingWebhookConfiguration({
    body: {
      metadata: { name: mwc },
      webhooks: [
        {
          name: 'configmaps.kruise-ts.test',
          clientConfig: { service: { namespace: ns, name: service, port: 443, path: '/mutate-configmap' } },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
          objectSelector: { matchLabels: { [MUTATE_LABEL]: 'true' } },
          sideEffects: 'None',
          admissionReviewVersions: ['v1', 'v1beta1'],
          failurePolicy: 'Fail',
          timeoutSeconds: 10,
        },
      ],
    },
  });
  cleanups.push(() => admission.deleteMutatingWebhookConfiguration({ name: mwc }));
  await Promise.all([startReplica('a'), startReplica('b')]);
  await publishEndpoints(replicas);
}, SLOW);

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('API server → webhook round trip', () => {
  it(
    'mutates objects created through the API, over TLS trusted via the injected caBundle',
    async () => {
      // The API server learns about the configuration and its caBundle asynchronously.
      await until('a created ConfigMap to come back mutated', async () => {
        try {
          return (await createLabelled()).metadata?.labels?.[MUTATED_BY] !== undefined;
        } catch {
          return false;
        }
      });
      const cm = await createLabelled();
      expect(['a', 'b']).toContain(cm.metadata?.labels?.[MUTATED_BY]);
      const plain = await core.createNamespacedConfigMap({
        namespace: ns,
        body: { metadata: { name: `plain-${suffix}` } },
      });
      expect(plain.metadata?.labels?.[MUTATED_BY]).toBeUndefined();
      for (const r of replicas) {
        const ready = await fetch(`http://127.0.0.1:${r.health.port()}/readyz?verbose`);
        expect(await ready.text()).toContain('[+]webhook ok');
      }
    },
    SLOW,
  );

  it(
    'loses no admission while one of two replicas drains and stops',
    async () => {
      const failures: string[] = [];
      const admitted: Array<{ phase: string; by: string }> = [];
      let phase = 'both serving';
      let running = true;
      const creator = async () => {
        while (running) {
          const during = phase;
          try {
            const cm = await createLabelled();
            admitted.push({ phase: during, by: cm.metadata?.labels?.[MUTATED_BY] ?? 'nobody' });
          } catch (e) {
            failures.push(`${during}: ${(e as Error).message.slice(0, 300)}`);
          }
        }
      };
      const count = (p: string, by?: string) =>
        admitted.filter((a) => a.phase === p && (by === undefined || a.by === by)).length;
      const load = Promise.all([creator(), creator(), creator(), creator()]);
      await until('objects admitted with both replicas serving', () => count(phase) >= 30);
      // Stop the replica carrying the most traffic (the API server keeps connections alive, so it
      // may be carrying all of it): the drain must move every caller to the other one.
      const [leaving, staying] = [...replicas].sort((x, y) => count(phase, y.name) - count(phase, x.name));
      expect(count(phase, leaving.name)).toBeGreaterThan(0);

      // SIGTERM path: readiness fails, the endpoints drop the replica, it serves through a drain window, then stops.
      leaving.health.markShuttingDown();
      expect((await fetch(`http://127.0.0.1:${leaving.health.port()}/readyz`)).status).toBe(500);
      await publishEndpoints([staying]);
      leaving.server.drain();
      phase = 'draining';
      await until('objects admitted during the drain window', () => count('draining') >= 40);
      await leaving.server.stop();
      phase = 'stopped';
      await until('objects admitted after the stop', () => count('stopped') >= 80);
      running = false;
      await load;

      expect(failures).toEqual([]);
      expect(admitted.filter((a) => a.by === 'nobody')).toEqual([]);
      expect(count('stopped', leaving.name)).toBe(0);
    },
    SLOW,
  );
});
