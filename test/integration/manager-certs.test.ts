// Self-managed certificates across manager processes: two replicas started at the same moment
// on a fresh install converge on one Secret, written once; both serve exactly the certificate
// stored there, and the webhook configurations trust its CA. Once with the empty Secret the
// constructs render (the update race), once with no Secret at all (the create race).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AdmissionregistrationV1Api, CoreV1Api, type KubernetesObject, type V1Secret } from '@kubernetes/client-node';
import { randomBytes, X509Certificate } from 'node:crypto';
import { Names, SecretKeys } from '../../lib/contract.js';
import { Informer, resourcePath } from '../../lib/runtime/informer/index.js';
import { Logger } from '../../lib/runtime/log.js';
import { envtest } from '../envtest/state.js';
import { presentedCertificate, until } from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import { installRuntime, kubeConfig, uninstallWebhooks } from './support/runtime-cluster.js';

const SLOW = 60_000; // bound for waits on the API server; never a speed assertion
const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const admission = kc.makeApiClient(AdmissionregistrationV1Api);
const ns = `certs-${randomBytes(3).toString('hex')}`;
const processes: ManagerProcess[] = [];

/** Every version of the certificate Secret, from a watch. */
const versions: V1Secret[] = [];
let secrets: Informer<V1Secret & KubernetesObject>;

const decode = (s: V1Secret, key: string) => Buffer.from(s.data?.[key] ?? '', 'base64').toString('utf8');
const hasCertificates = (s: V1Secret) => decode(s, SecretKeys.tlsCert) !== '';

async function startPair(tag: string): Promise<ManagerProcess[]> {
  const pair = await Promise.all(
    ['a', 'b'].map((r) =>
      ManagerProcess.start({ name: `certs-${tag}-${r}`, kubeconfigPath: envtest().kubeconfigPath, namespace: ns }),
    ),
  );
  processes.push(...pair);
  await Promise.all(pair.map((m) => m.waitReady()));
  return pair;
}

async function expectConverged(pair: ManagerProcess[], writesBefore: number): Promise<V1Secret> {
  const stored = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
  const storedCert = new X509Certificate(decode(stored, SecretKeys.tlsCert));
  // Written once: however the two raced, one generated bundle was stored and neither overwrote it.
  await until(
    'the Secret watch to catch up',
    () => versions.at(-1)?.metadata?.resourceVersion === stored.metadata?.resourceVersion,
    10_000,
  );
  expect(versions.slice(writesBefore).filter(hasCertificates)).toHaveLength(1);
  expect(decode(stored, SecretKeys.serverCert)).toBe(decode(stored, SecretKeys.tlsCert));
  expect(storedCert.subjectAltName).toContain(`DNS:${Names.webhookService}.${ns}.svc`);
  expect(storedCert.verify(new X509Certificate(decode(stored, SecretKeys.caCert)).publicKey)).toBe(true);

  // For the record: who generated, who lost a race (409) and used theirs.
  const said = (m: ManagerProcess, msg: string) =>
    m
      .logs()
      .split('\n')
      .filter((l) => l.includes(`"msg":"${msg}"`)).length;
  process.stderr.write(
    `${pair.map((m) => `${m.name}: generated ${said(m, 'generating certificates')}×, lost a write race ${said(m, 'another replica wrote the certificate Secret first; using theirs')}×`).join('; ')}\n`,
  );
  // Both serve exactly that certificate over TLS.
  for (const m of pair) {
    const presented = await presentedCertificate(m.ports.webhook);
    expect(presented.fingerprint256).toBe(storedCert.fingerprint256);
  }
  // And the API server is told to trust its CA, in every webhook entry.
  const ca = Buffer.from(decode(stored, SecretKeys.caCert)).toString('base64');
  await until(
    'the caBundle of every webhook entry to be the stored CA',
    async () => {
      const mutating = await admission.readMutatingWebhookConfiguration({ name: Names.mutatingWebhookConfiguration });
      const validating = await admission.readValidatingWebhookConfiguration({
        name: Names.validatingWebhookConfiguration,
      });
      return [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])].every(
        (w) => w.clientConfig.caBundle === ca,
      );
    },
    SLOW,
  );
  return stored;
}

beforeAll(async () => {
  await installRuntime(kc, ns);
  secrets = new Informer<V1Secret & KubernetesObject>({
    path: resourcePath({ version: 'v1', plural: 'secrets', namespace: ns }),
    fieldSelector: `metadata.name=${Names.webhookSecret}`,
    kubeConfig: kc,
    logger: new Logger({ test: 'manager-certs' }, 'error'),
  });
  const record = (s: V1Secret) => {
    versions.push(s);
  };
  secrets.addEventHandler({ onAdd: record, onUpdate: (_o, s) => record(s) });
  await secrets.start();
  await secrets.waitForSync(AbortSignal.timeout(SLOW));
}, 90_000);

afterAll(async () => {
  await Promise.all(processes.map((m) => m.stop()));
  await secrets?.stop();
  await uninstallWebhooks(kc);
}, 60_000);

describe('certificates across manager processes', () => {
  it('two replicas started at once on the empty Secret of a fresh install write it once and serve the same certificate', async () => {
    const installed = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
    expect(hasCertificates(installed)).toBe(false); // what the constructs render for self-managed mode
    const writesBefore = versions.length;
    const pair = await startPair('update');
    await expectConverged(pair, writesBefore);
    await Promise.all(pair.map((m) => m.stop()));
  }, 120_000);

  it('two replicas started at once with no Secret at all create it once (the loser uses theirs) and serve the same certificate', async () => {
    const previous = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
    await core.deleteNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
    const writesBefore = versions.length;
    const pair = await startPair('create');
    const stored = await expectConverged(pair, writesBefore);
    // A new CA (the old Secret is gone), and the webhook configurations moved to it.
    expect(decode(stored, SecretKeys.caCert)).not.toBe(decode(previous, SecretKeys.caCert));
    expect(stored.metadata?.uid).not.toBe(previous.metadata?.uid);
  }, 120_000);
});
