import { describe, expect, it } from '@jest/globals';
import {
  controllerNameProblems,
  describeProblem,
  distinctPortProblems,
  dnsLabelProblems,
  dnsSubdomainProblems,
  featureGateNameProblems,
  Flags,
  leaseTimingProblems,
  portProblems,
  Ports,
  withoutUndefined,
  workersFlag,
  workersProblems,
} from '../../lib/contract.js';

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

  describe('rules', () => {
    const timing = (leaseDuration: number, renewDeadline: number, retryPeriod: number) =>
      leaseTimingProblems({ leaseDuration, renewDeadline, retryPeriod }).map((p) => describeProblem(p));

    it("accepts client-go's default Lease timing and the tightest legal one", () => {
      expect(timing(15_000, 10_000, 2_000)).toEqual([]);
      expect(timing(1_000, 999, 832)).toEqual([]);
    });

    it('refuses Lease timing that breaks leaseDuration > renewDeadline > 1.2 x retryPeriod, naming the field', () => {
      expect(timing(10_000, 10_000, 2_000)).toEqual([
        'leaseDuration: must exceed renewDeadline (10s), or two leaders can overlap (got "10s"). Fix: keep leaseDuration > renewDeadline > 1.2 x retryPeriod, e.g. 15s / 10s / 2s',
      ]);
      expect(timing(15_000, 6_000, 5_000)).toEqual([
        expect.stringMatching(/^renewDeadline: must exceed 1.2 x retryPeriod \(5s\).*\(got "6s"\)/),
      ]);
      expect(
        leaseTimingProblems({ leaseDuration: 15_000, renewDeadline: 6_000, retryPeriod: 5_000, jitterFactor: 1 }),
      ).toEqual([]);
      expect(timing(900, 500, 100).map((m) => m.split(':')[0])).toEqual(['leaseDuration']);
      expect(timing(500, 600, 100)).toHaveLength(2);
      expect(timing(15_000, Number.NaN, -1).map((m) => m.split(' (got')[0])).toEqual([
        'renewDeadline: must be a positive duration',
        'retryPeriod: must be a positive duration',
      ]);
    });

    it('checks names against the Kubernetes and upstream patterns', () => {
      expect(featureGateNameProblems('gates', 'PodWebhook')).toEqual([]);
      expect(featureGateNameProblems('gates', 'podWebhook')).toEqual([
        {
          field: 'gates',
          value: 'podWebhook',
          message: 'is not a feature gate name',
          fix: expect.stringContaining('CamelCase'),
        },
      ]);
      expect(dnsLabelProblems('n', 'kruise-system')).toEqual([]);
      expect(dnsLabelProblems('n', 'x'.repeat(63))).toEqual([]);
      for (const bad of ['x'.repeat(64), '-bad', 'bad-', 'Upper', 'a.b', ''])
        expect(dnsLabelProblems('n', bad)).toHaveLength(1);
      expect(dnsSubdomainProblems('n', 'a.b-c.d')).toEqual([]);
      for (const bad of ['a..b', '.a', 'a_b', `${'a'.repeat(63)}.`.repeat(4) + 'a'])
        expect(dnsSubdomainProblems('n', bad)).toHaveLength(1);
      expect(controllerNameProblems('c', 'sidecarset')).toEqual([]);
      expect(controllerNameProblems('c', 'Side-Car')).toHaveLength(1);
      // Words joined by "-", as a long flag --<name>-workers carries them.
      expect(['configmap-mirror', 'a1-b2-c3'].flatMap((n) => controllerNameProblems('c', n))).toEqual([]);
      for (const bad of ['configmap--mirror', '-a', 'a-', '1a', 'a_b', 'a=b'])
        expect(controllerNameProblems('c', bad)).toHaveLength(1);
    });

    it('bounds workers to 1..1000 and ports to 1..65535, whole numbers only', () => {
      expect([1, 3, 1000].flatMap((n) => workersProblems('w', n))).toEqual([]);
      expect([0, 1001, 2.5].map((n) => workersProblems('w', n).length)).toEqual([1, 1, 1]);
      expect(describeProblem(workersProblems('controllerWorkers.sidecarset', 0)[0])).toBe(
        'controllerWorkers.sidecarset: must be a whole number from 1 to 1000 (got 0). Fix: e.g. 3',
      );
      expect([1, 8080, 65535].flatMap((n) => portProblems('p', n))).toEqual([]);
      expect([0, 65536, 80.5].map((n) => portProblems('p', n).length)).toEqual([1, 1, 1]);
    });

    it('finds the first port each collision repeats, skipping unset listeners', () => {
      const fix = 'give each its own port';
      expect(distinctPortProblems({ webhook: 9876, metrics: 8080, health: undefined }, fix)).toEqual([]);
      expect(
        distinctPortProblems({ webhook: 8080, metrics: 8080, health: 8080 }, fix, (k) => `--${k}`).map((p) =>
          describeProblem(p),
        ),
      ).toEqual([
        '--metrics: collides with --webhook (got 8080). Fix: give each its own port',
        '--health: collides with --webhook (got 8080). Fix: give each its own port',
      ]);
      expect(distinctPortProblems({ webhook: 0 }, fix).map((p) => p.message)).toEqual(['is not a TCP port']);
    });

    it('drops undefined values and keeps every other falsy one', () => {
      expect(withoutUndefined({ a: undefined, b: 0, c: '', d: null, e: false })).toEqual({
        b: 0,
        c: '',
        d: null,
        e: false,
      });
      expect(Object.keys(withoutUndefined({ a: undefined }))).toEqual([]);
    });
  });
});
