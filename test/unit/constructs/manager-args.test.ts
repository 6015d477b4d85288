import { describe, expect, it } from '@jest/globals';
import { Duration } from 'cdk8s';
import {
  renderManagerArgs,
  resolveLeaderElection,
  type ManagerArgsInput,
} from '../../../lib/constructs/manager/manager-args.js';
import { LeaseTiming } from '../../../lib/index.js';

const base = {
  upstream: false,
  role: 'all',
  metricsPort: 8080,
  healthPort: 8000,
  featureGates: {},
  controllerWorkers: {},
  certMode: 'self-managed',
  extraArgs: [],
  leaderElection: resolveLeaderElection(undefined, 'kruise-system'),
} satisfies ManagerArgsInput;

describe('resolveLeaderElection', () => {
  it('defaults to client-go timing on Lease kruise-manager in the install namespace', () => {
    expect(resolveLeaderElection(undefined, 'ns1')).toEqual({
      namespace: 'ns1',
      id: 'kruise-manager',
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
    });
  });

  it('enforces leaseDuration > renewDeadline > 1.2 x retryPeriod', () => {
    expect(() => resolveLeaderElection({ leaseDuration: Duration.seconds(10) }, 'ns')).toThrow(
      /leaderElection.leaseDuration: must exceed renewDeadline \(10s\).*got "10s"/,
    );
    expect(() =>
      resolveLeaderElection({ renewDeadline: Duration.seconds(5), retryPeriod: Duration.seconds(5) }, 'ns'),
    ).toThrow(/leaderElection.renewDeadline: must exceed 1.2 x retryPeriod/);
    expect(() => resolveLeaderElection({ retryPeriod: Duration.millis(500) }, 'ns')).toThrow(
      /leaderElection.retryPeriod: must be a whole number of seconds/,
    );
    expect(() => resolveLeaderElection({ id: 'Bad_Id' }, 'ns')).toThrow(
      /leaderElection.id: is not a valid DNS subdomain/,
    );
  });
});

describe('LeaseTiming', () => {
  const timing = (t: LeaseTiming) => {
    const le = resolveLeaderElection({ timing: t }, 'ns');
    return [le.leaseDurationSeconds, le.renewDeadlineSeconds, le.retryPeriodSeconds];
  };

  it("names the trade-offs, each valid under client-go's rule", () => {
    expect(timing(LeaseTiming.standard())).toEqual([15, 10, 2]);
    expect(timing(LeaseTiming.fastHandover())).toEqual([8, 5, 2]);
    expect(timing(LeaseTiming.tolerant())).toEqual([30, 20, 4]);
    expect(timing(LeaseTiming.of(Duration.seconds(20), Duration.seconds(12), Duration.seconds(3)))).toEqual([
      20, 12, 3,
    ]);
  });

  it('checks explicit timings like the separate durations, and refuses both at once', () => {
    expect(() => timing(LeaseTiming.of(Duration.seconds(5), Duration.seconds(5), Duration.seconds(1)))).toThrow(
      /^leaderElection.leaseDuration: must exceed renewDeadline/,
    );
    expect(() => LeaseTiming.of(Duration.seconds(5), Duration.millis(4500), Duration.seconds(1))).toThrow(
      /^leaderElection.renewDeadline: must be a whole number of seconds/,
    );
    expect(() =>
      resolveLeaderElection({ timing: LeaseTiming.standard(), retryPeriod: Duration.seconds(1) }, 'ns'),
    ).toThrow(/^leaderElection.timing: gives the timing twice .*Fix: use timing .* or the three durations, not both/);
  });
});

describe('renderManagerArgs', () => {
  it('renders upstream flag names for the runtime, with its role and cert mode', () => {
    expect(renderManagerArgs(base)).toEqual([
      '--enable-leader-election=true',
      '--leader-election-namespace=kruise-system',
      '--leader-election-id=kruise-manager',
      '--leader-election-lease-duration=15s',
      '--leader-election-renew-deadline=10s',
      '--leader-election-retry-period=2s',
      '--metrics-addr=:8080',
      '--health-probe-addr=:8000',
      '--role=all',
      '--cert-mode=self-managed',
    ]);
  });

  it('disables leader election and worker flags for webhook-only replicas', () => {
    const args = renderManagerArgs({ ...base, role: 'webhook', controllerWorkers: { sidecarset: 5 } });
    expect(args[0]).toBe('--enable-leader-election=false');
    expect(args.some((a) => a.startsWith('--leader-election-'))).toBe(false);
    expect(args.some((a) => a.includes('workers'))).toBe(false);
  });

  it('renders sorted feature gates and per-controller workers', () => {
    const args = renderManagerArgs({
      ...base,
      upstream: true,
      featureGates: { PodWebhook: false, ImagePullJobGate: true },
      controllerWorkers: { sidecarset: 5, cloneset: 2 },
    });
    expect(args).toContain('--feature-gates=ImagePullJobGate=true,PodWebhook=false');
    expect(args.filter((a) => a.endsWith('workers=5') || a.endsWith('workers=2'))).toEqual([
      '--cloneset-workers=2',
      '--sidecarset-workers=5',
    ]);
    expect(args).toContain('--leader-election-resource-lock=leases');
  });

  // Upstream serves pprof on every interface of :8090 unless told otherwise: with host network
  // an undeclared port on the node.
  it('turns upstream pprof off unless a port is given', () => {
    const upstream = { ...base, upstream: true };
    expect(renderManagerArgs(upstream)).toContain('--enable-pprof=false');
    const on = renderManagerArgs({ ...upstream, pprofPort: 8091 });
    expect(on).toEqual(expect.arrayContaining(['--enable-pprof=true', '--pprof-addr=:8091']));
    expect(on).not.toContain('--enable-pprof=false');
    // The runtime parses no pprof flag.
    expect(renderManagerArgs(base).some((a) => a.includes('pprof'))).toBe(false);
    expect(() => renderManagerArgs({ ...base, pprofPort: 8090 })).toThrow(
      /^pprof: is served by upstream kruise-manager only.*\(got true\)\. Fix: remove pprof, or use ManagerImage.upstream\(\)/,
    );
  });

  it('rejects bad gates and worker counts by name', () => {
    expect(() => renderManagerArgs({ ...base, featureGates: { 'bad gate': true } })).toThrow(
      /featureGates: is not a feature gate name \(got "bad gate"\)/,
    );
    expect(() => renderManagerArgs({ ...base, controllerWorkers: { sidecarset: 0 } })).toThrow(
      /controllerWorkers.sidecarset: must be a whole number from 1 to 1000 \(got 0\)/,
    );
    expect(() => renderManagerArgs({ ...base, controllerWorkers: { 'Side-Car': 1 } })).toThrow(
      /controllerWorkers: is not a controller name/,
    );
  });
});
