// Self-managed certificates against a real kube-apiserver: replicas racing on an empty
// namespace, caBundle injection into webhook configurations and conversion CRDs, and
// rotation while the webhook server keeps serving.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1MutatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { Names, SecretKeys } from '../../lib/contract.js';
import { FakeClock } from '../../lib/runtime/clock.js';
import {
  ConversionWebhookTarget,
  KubeSecretStore,
  SelfManagedCertificates,
  verifyServing,
  WebhookConfigurationTarget,
  type SelfManagedOptions,
} from '../../lib/runtime/certs/index.js';
import { admissionregistrationV1, apiextensionsV1, coreV1, kubeClient } from '../../lib/runtime/kube/index.js';
import { Logger } from '../../lib/runtime/log.js';
import { WebhookServer } from '../../lib/runtime/webhook/index.js';
import { envtest } from '../envtest/state.js';
import { fingerprintOf, httpsRequest, presentedFingerprint, tempDir } from '../unit/runtime/tls-fixtures.js';

const SLOW = 120_000; // bound for waits on the API server; never a speed assertion
const HOUR = 3_600_000;
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(envtest().kubeconfigPath);
const core = kubeConfig.makeApiClient(CoreV1Api);
const admission = kubeConfig.makeApiClient(AdmissionregistrationV1Api);
const extensions = kubeConfig.makeApiClient(ApiextensionsV1Api);
// What the runtime itself talks through (the clients above only arrange and inspect).
const runtime = kubeClient(kubeConfig);
const logger = new Logger({ test: 'runtime-certs' }, 'warn');
const suffix = randomBytes(3).toString('hex');
const cleanups: Array<() => unknown> = [];

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = SLOW): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** A webhook configuration whose entries can never match anything: only its caBundle matters here. */
function inertWebhooks(name: string, ns: string): V1MutatingWebhookConfiguration {
  const entry = (n: string) => ({
    name: `${n}.kruise-ts.test`,
    clientConfig: { service: { namespace: ns, name: Names.webhookService, path: `/${n}` } },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    namespaceSelector: { matchLabels: { 'kruise-ts.test/never': 'true' } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Ignore',
  });
  return { metadata: { name }, webhooks: [entry('a'), entry('b')] };
}

async function namespace(prefix: string): Promise<string> {
  const ns = `${prefix}-${suffix}`;
  await core.createNamespace({ body: { metadata: { name: ns } } });
  return ns;
}

function replica(ns: string, extra: Partial<SelfManagedOptions> = {}) {
  const dir = tempDir();
  const certDir = extra.certDir ?? dir.path;
  const certs = new SelfManagedCertificates({
    secrets: new KubeSecretStore(coreV1(runtime), ns, Names.webhookSecret),
    certDir,
    serviceName: Names.webhookService,
    namespace: ns,
    logger,
    ...extra,
  });
  cleanups.push(dir.remove, () => certs.stop());
  return { certs, file: (n: string) => readFileSync(join(certDir, n), 'utf8') };
}

afterAll(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('self-managed certificates against the API server', () => {
  const mwc = `certs-mutating-${suffix}`;
  const vwc = `certs-validating-${suffix}`;
  let ns: string;

  beforeAll(async () => {
    ns = await namespace('certs');
    await admission.createMutatingWebhookConfiguration({ body: inertWebhooks(mwc, ns) });
    await admission.createValidatingWebhookConfiguration({ body: inertWebhooks(vwc, ns) });
    cleanups.push(
      () => admission.deleteMutatingWebhookConfiguration({ name: mwc }),
      () => admission.deleteValidatingWebhookConfiguration({ name: vwc }),
    );
  });

  it(
    'two replicas started together converge on one Secret, the same files and caBundles',
    async () => {
      const targets = () => [
        new WebhookConfigurationTarget(admissionregistrationV1(runtime), 'mutating', mwc),
        new WebhookConfigurationTarget(admissionregistrationV1(runtime), 'validating', vwc),
      ];
      const a = replica(ns, { caBundleTargets: targets() });
      const b = replica(ns, { caBundleTargets: targets() });
      await Promise.all([a.certs.start(), b.certs.start()]);
      await Promise.all([a.certs.waitReady(AbortSignal.timeout(SLOW)), b.certs.waitReady(AbortSignal.timeout(SLOW))]);

      const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
      const data = Object.fromEntries(
        Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
      );
      expect(Object.keys(data).sort()).toEqual(
        Object.values(SecretKeys)
          .filter((k) => k !== SecretKeys.caCrt)
          .sort(),
      );
      for (const r of [a, b]) {
        expect(r.file('tls.crt')).toBe(data[SecretKeys.tlsCert]);
        expect(r.file('tls.key')).toBe(data[SecretKeys.tlsKey]);
        expect(r.certs.caPem()).toBe(data[SecretKeys.caCert]);
      }
      verifyServing({
        certPem: data[SecretKeys.tlsCert],
        keyPem: data[SecretKeys.tlsKey],
        caPem: data[SecretKeys.caCert],
        dnsNames: [`${Names.webhookService}.${ns}.svc`, 'localhost'],
        now: Date.now(),
      });

      const caBundle = Buffer.from(data[SecretKeys.caCert]).toString('base64');
      await until('caBundle in both configurations', async () => {
        const m = await admission.readMutatingWebhookConfiguration({ name: mwc });
        const v = await admission.readValidatingWebhookConfiguration({ name: vwc });
        return [...(m.webhooks ?? []), ...(v.webhooks ?? [])].every((w) => w.clientConfig.caBundle === caBundle);
      });
      // Only caBundle changed: the rest of each entry is as created.
      const m = await admission.readMutatingWebhookConfiguration({ name: mwc });
      expect(m.webhooks?.map((w) => [w.name, w.failurePolicy, w.clientConfig.service?.path])).toEqual([
        ['a.kruise-ts.test', 'Ignore', '/a'],
        ['b.kruise-ts.test', 'Ignore', '/b'],
      ]);
    },
    SLOW,
  );

  it(
    'puts the caBundle into a CRD that converts through our webhook',
    async () => {
      const group = `certs-${suffix}.kruise-ts.test`;
      const crdName = `widgets.${group}`;
      const schema = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
      await extensions.createCustomResourceDefinition({
        body: {
          metadata: { name: crdName },
          spec: {
            group,
            scope: 'Namespaced',
            names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
            versions: [
              { name: 'v1', served: true, storage: true, schema },
              { name: 'v2', served: true, storage: false, schema },
            ],
            conversion: {
              strategy: 'Webhook',
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { service: { namespace: ns, name: Names.webhookService, path: '/convert' } },
              },
            },
          },
        },
      });
      cleanups.push(() => extensions.deleteCustomResourceDefinition({ name: crdName }));
      const r = replica(ns, { caBundleTargets: [new ConversionWebhookTarget(apiextensionsV1(runtime), crdName)] });
      await r.certs.start();
      await r.certs.waitReady(AbortSignal.timeout(SLOW));
      const expected = Buffer.from(r.certs.caPem()!).toString('base64');
      await until('caBundle in the CRD', async () => {
        const crd = await extensions.readCustomResourceDefinition({ name: crdName });
        return crd.spec.conversion?.webhook?.clientConfig?.caBundle === expected;
      });
    },
    SLOW,
  );
});

describe('rotation while serving', () => {
  it(
    'renews the serving certificate and the running server presents it without a restart',
    async () => {
      const ns = await namespace('rotation');
      // Certificates are backdated an hour, so a clock up to an hour ahead of real time still
      // yields certificates real TLS clients accept: time moves by hand instead of by waiting.
      const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
      const dir = tempDir();
      cleanups.push(dir.remove);
      const serving = new WebhookServer({
        certDir: dir.path,
        logger,
        registry: new Registry(),
        port: 0,
        host: '127.0.0.1',
      });
      const r = replica(ns, {
        certDir: dir.path,
        clock,
        resyncIntervalMs: 24 * HOUR,
        policy: { caValidityMs: 48 * HOUR, servingValidityMs: 2 * HOUR, renewBeforeMs: HOUR },
        onCertificatesWritten: () => serving.reloadCertificates(),
      });
      await r.certs.start();
      await r.certs.waitReady(AbortSignal.timeout(SLOW));
      cleanups.push(() => serving.stop());
      await serving.start();
      const port = serving.port();
      const first = await presentedFingerprint(port);
      expect(first).toBe(fingerprintOf(r.file('tls.crt')));

      await until('the provider loop to wait for the renewal time', () => clock.pending() > 0);
      await clock.advance(HOUR);
      await until(
        'the server to present the renewed certificate',
        async () => (await presentedFingerprint(port)) !== first,
      );

      expect(serving.port()).toBe(port);
      const renewed = await presentedFingerprint(port);
      expect(renewed).toBe(fingerprintOf(r.file('tls.crt')));
      const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
      expect(Buffer.from(secret.data![SecretKeys.tlsCert], 'base64').toString('utf8')).toBe(r.file('tls.crt'));
      // Same CA: clients holding the old caBundle trust the new certificate.
      const res = await httpsRequest({ port, ca: r.certs.caPem()!, path: '/healthz', method: 'GET' });
      expect(res.status).toBe(200);
    },
    SLOW,
  );
});
