import { describe, expect, it } from '@jest/globals';
import { Flags, Ports, workersFlag } from '../../lib/contract.js';

describe('contract', () => {
  it('keeps the upstream default ports distinct', () => {
    const ports = [Ports.webhook, Ports.metrics, Ports.health];
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('uses upstream flag names', () => {
    expect(Flags.enableLeaderElection).toBe('enable-leader-election');
    expect(workersFlag('sidecarset')).toBe('sidecarset-workers');
  });

  it('loads the ESM-only Kubernetes client under Jest', async () => {
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    expect(kc.makeApiClient(k8s.CoreV1Api)).toBeInstanceOf(k8s.CoreV1Api);
  });
});
