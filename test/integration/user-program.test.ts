// A user's program on the runtime (support/user-program.ts: its registrations on run(), nothing
// else) as a process against the real API server: its own flag, the certificates from a Secret
// (external mode, as cert-manager would write it: no caBundle of the shared API server is
// touched), its mutating webhook answering over TLS, its readiness check in /readyz, and exit 0
// on SIGTERM.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { SecretKeys } from '../../lib/contract.js';
import { envtest } from '../envtest/state.js';
import { makePki } from '../unit/runtime/tls-fixtures.js';
import { createReview, exitOf, postReview, reviewPatch } from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import { kubeConfig } from './support/runtime-cluster.js';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const ns = `user-program-${randomBytes(3).toString('hex')}`;
const service = 'greeter-webhook';
const secret = 'greeter-certs';
let program: ManagerProcess | undefined;
let caPem = '';

describe('a user program on run()', () => {
  beforeAll(async () => {
    await core.createNamespace({ body: { metadata: { name: ns } } });
    const pki = await makePki('greeter', [`${service}.${ns}.svc`, 'localhost']);
    caPem = pki.ca.certPem;
    await core.createNamespacedSecret({
      namespace: ns,
      body: {
        metadata: { name: secret },
        type: 'kubernetes.io/tls',
        stringData: {
          [SecretKeys.caCrt]: pki.ca.certPem,
          [SecretKeys.tlsCert]: pki.serving.certPem,
          [SecretKeys.tlsKey]: pki.serving.keyPem,
        },
      },
    });
    program = await ManagerProcess.start({
      name: 'greeter-0',
      kubeconfigPath: envtest().kubeconfigPath,
      namespace: ns,
      script: fileURLToPath(new URL('./support/user-program.ts', import.meta.url)),
      args: ['--role=webhook', '--cert-mode=external', '--greeting=bonjour'],
      env: { SECRET_NAME: secret, SERVICE_NAME: service },
    });
    await program.waitReady();
  }, 90_000);
  afterAll(async () => {
    await program?.stop();
    await core.deleteNamespace({ name: ns }).catch(() => undefined);
  }, 30_000);

  it('serves its mutating webhook with its flag, and its readiness check', async () => {
    const configMap = { metadata: { name: 'cm', labels: { app: 'x' } } };
    const review = createReview('ConfigMap', 'configmaps', configMap, ns);
    const res = await postReview(program!.ports.webhook, '/mutate-greeting', caPem, review);
    expect(res.status).toBe(200);
    expect(reviewPatch(res.body)).toEqual([{ op: 'add', path: '/metadata/labels/greeting', value: 'bonjour' }]);
    expect((await program!.get('/readyz?verbose')).body).toMatch(/\[\+\]greeter ok[\s\S]*\[\+\]webhook ok/);
  });

  it('exits 0 on SIGTERM', async () => {
    program!.signal('SIGTERM');
    expect(await exitOf(program!)).toEqual({ code: 0, signal: null });
    expect(program!.logs()).toMatch(/"msg":"exiting".*"code":0,"reason":"SIGTERM"/);
  }, 30_000);
});
