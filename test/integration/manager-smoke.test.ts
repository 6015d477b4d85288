import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { envtest } from '../envtest/state.js';
import { ManagerProcess } from './support/manager-process.js';
import { installRuntime, kubeConfig, uninstallWebhooks } from './support/runtime-cluster.js';

const kc = kubeConfig();
const namespace = 'kruise-smoke';

describe('manager process (smoke)', () => {
  let manager: ManagerProcess;
  beforeAll(async () => {
    await installRuntime(kc, namespace);
    manager = await ManagerProcess.start({ name: 'smoke-0', kubeconfigPath: envtest().kubeconfigPath, namespace });
    await manager.waitReady();
  }, 90_000);
  afterAll(async () => {
    await manager?.stop();
    await uninstallWebhooks(kc);
  }, 30_000);

  it('is ready, live, leads, and exposes controller-runtime metrics', async () => {
    expect((await manager.get('/readyz?verbose')).body).toMatch(/\[\+\]webhook ok[\s\S]*readyz check passed/);
    expect((await manager.get('/healthz')).status).toBe(200);
    for (let i = 0; i < 50 && !(await manager.leading()); i++) await new Promise((r) => setTimeout(r, 200));
    expect(await manager.leading()).toBe(true);
    const metrics = (await manager.get('/metrics', manager.ports.metrics)).body;
    expect(metrics).toMatch(/^controller_runtime_max_concurrent_reconciles\{controller="sidecarset"\} 3$/m);
    expect(metrics).toMatch(/^process_resident_memory_bytes /m);
    // The serving certificate's expiry, for the dashboard and the expiry alert (about a year ahead).
    const expiry = Number(/^kruise_webhook_certificate_expiration_timestamp_seconds (\d+)$/m.exec(metrics)?.[1]);
    expect(expiry * 1000 - Date.now()).toBeGreaterThan(300 * 86400_000);
  });

  it('releases the Lease and exits 0 on SIGTERM', async () => {
    expect(await manager.stop()).toEqual({ code: 0, signal: null });
    expect(manager.logs()).toMatch(/"msg":"released the lease"/);
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'kruise-manager', namespace });
    expect([lease.spec?.holderIdentity ?? '', lease.spec?.leaseDurationSeconds]).toEqual(['', 1]);
  }, 30_000);
});
