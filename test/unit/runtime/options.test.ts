import { describe, expect, it } from '@jest/globals';
import { controllerNameProblems, RuntimeControllers, runtimeFlagProblems } from '../../../lib/contract.js';
import {
  CONTROLLERS,
  helpText,
  OptionsError,
  parseAddr,
  parseDuration,
  parseOptions,
} from '../../../lib/runtime/options.js';
import { renderManagerArgs, resolveLeaderElection } from '../../../lib/constructs/manager/manager-args.js';

const env = { POD_NAMESPACE: 'kruise-system', POD_NAME: 'mgr-0' };
const parse = (argv: string[], e: NodeJS.ProcessEnv = env) => {
  const o = parseOptions(argv, e);
  if (o === 'help') throw new Error('unexpected help');
  return o;
};

describe('parseOptions', () => {
  it('defaults to upstream behaviour', () => {
    const o = parse([]);
    expect(o).toEqual(
      expect.objectContaining({
        role: 'all',
        leaderElection: true,
        leaderElectionNamespace: 'kruise-system',
        leaderElectionId: 'kruise-manager',
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        webhookPort: 9876,
        certMode: 'self-managed',
        certDir: '/tmp/kruise-webhook-certs',
        secretName: 'kruise-webhook-certs',
        serviceName: 'kruise-webhook-service',
        podName: 'mgr-0',
      }),
    );
    expect(o.metricsAddr).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(o.workers).toEqual({ sidecarset: 3, workloadspread: 3 });
  });

  it('parses every flag the constructs render (the contract round-trips)', () => {
    const args = renderManagerArgs({
      upstream: false,
      role: 'controllers',
      metricsPort: 9090,
      healthPort: 9091,
      featureGates: { PodWebhook: false },
      controllerWorkers: { sidecarset: 7 },
      certMode: 'external',
      extraArgs: [],
      leaderElection: resolveLeaderElection(undefined, 'kruise-system'),
    });
    const o = parse(args);
    expect([o.role, o.certMode, o.metricsAddr.port, o.healthAddr.port, o.workers.sidecarset]).toEqual([
      'controllers',
      'external',
      9090,
      9091,
      7,
    ]);
    expect(o.featureGates).toEqual({ PodWebhook: false });
  });

  it('reads every feature gate it accepts and refuses any other by name', () => {
    expect(parse(['--feature-gates=PodWebhook=false']).featureGates).toEqual({ PodWebhook: false });
    expect(parse(['--feature-gates=SidecarSetPatchPodMetadataDefaultsAllowed=true']).featureGates).toEqual({
      SidecarSetPatchPodMetadataDefaultsAllowed: true,
    });
    expect(parse(['--feature-gates=EnableExternalCerts=true']).certMode).toBe('external');
    expect(parse(['--feature-gates=EnableExternalCerts=false']).certMode).toBe('self-managed');
    expect(() => parse(['--feature-gates=EnableExternalCerts=true', '--cert-mode=self-managed'])).toThrow(
      /--cert-mode: "self-managed" contradicts --feature-gates=EnableExternalCerts=true/,
    );
    expect(() => parse(['--feature-gates=PodWebhook=true,ImagePullJobGate=true'])).toThrow(
      /--feature-gates: "ImagePullJobGate" is not a feature gate of this runtime, which reads only EnableExternalCerts and EnableSortSidecarContainerByName and PodWebhook and SidecarSetPatchPodMetadataDefaultsAllowed/,
    );
    expect(() => parse(['--feature-gates=pod-webhook=true'])).toThrow(
      /--feature-gates: "pod-webhook" is not a feature gate name/,
    );
  });

  it('never leader-elects webhook-only replicas', () => {
    expect(parse(['--role=webhook', '--enable-leader-election=true']).leaderElection).toBe(false);
  });

  it('reads the upstream env vars', () => {
    const o = parse([], {
      ...env,
      WEBHOOK_PORT: '9443',
      WEBHOOK_CERT_DIR: '/certs',
      SECRET_NAME: 's',
      SERVICE_NAME: 'svc',
      CERTS_RENEW_BEFORE: '48h',
    });
    expect([o.webhookPort, o.certDir, o.secretName, o.serviceName, o.certsRenewBeforeMs]).toEqual([
      9443,
      '/certs',
      's',
      'svc',
      48 * 3_600_000,
    ]);
  });

  it('returns help for --help and documents every flag', () => {
    expect(parseOptions(['--help'], env)).toBe('help');
    for (const flag of [
      '--enable-leader-election',
      '--leader-election-retry-period',
      '--sidecarset-workers',
      '--role',
      'WEBHOOK_CERT_DIR',
    ]) {
      expect(helpText()).toContain(flag);
    }
  });

  const bad: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
    [
      ['--bogus=1'],
      env,
      /^--bogus: is not a flag of this project's runtime, which refuses to start with it \(got "bogus"\)\. Fix: remove it; the runtime parses: enable-leader-election, /,
    ],
    [
      ['--configmapmirror-workers=2'],
      env,
      /^--configmapmirror-workers: is not a worker flag of this project's runtime, whose only controllers are sidecarset, workloadspread \(got "configmapmirror-workers"\)\. Fix: use one of: sidecarset, workloadspread$/,
    ],
    [['--role=leader'], env, /--role: "leader" is not a role. Fix: use all, webhook, controllers/],
    [
      ['--leader-election-lease-duration=5s'],
      env,
      /--leader-election-lease-duration: "5s" must exceed renewDeadline \(10s\), or two leaders can overlap/,
    ],
    [['--leader-election-retry-period=soon'], env, /--leader-election-retry-period: "soon" is not a duration/],
    [['--metrics-addr=8080'], env, /--metrics-addr: "8080" is not host:port/],
    [['--feature-gates=Foo'], env, /--feature-gates: "Foo" is not Gate=true\|false/],
    [['--sidecarset-workers=0'], env, /--sidecarset-workers: "0" must be a whole number from 1 to 1000/],
    [['--enable-leader-election=yes'], env, /--enable-leader-election: "yes" is not a boolean/],
    [
      ['--health-probe-addr=:9876'],
      env,
      /--health-probe-addr: collides with WEBHOOK_PORT \(got 9876\)\. Fix: give each its own port/,
    ],
    [[], { ...env, WEBHOOK_PORT: 'x' }, /WEBHOOK_PORT: "x" is not a TCP port. Fix: use a whole number from 1 to 65535/],
    [['--cert-mode=manual'], env, /--cert-mode: "manual" is not a certificate mode/],
    [['stray'], env, /Unexpected argument 'stray'|positional/i],
  ];
  it.each(bad)('rejects %j with a message naming the flag', (argv, e, message) => {
    expect(() => parseOptions(argv, e)).toThrow(OptionsError);
    expect(() => parseOptions(argv, e)).toThrow(message);
  });
});

describe('worker flags (the contract rule both rooms read)', () => {
  const render = (controllerWorkers: Record<string, number>) =>
    renderManagerArgs({
      upstream: false,
      role: 'all',
      metricsPort: 8080,
      healthPort: 8000,
      featureGates: {},
      controllerWorkers,
      certMode: 'self-managed',
      extraArgs: [],
      leaderElection: resolveLeaderElection(undefined, 'kruise-system'),
    });
  const outcome = (run: () => unknown) => {
    try {
      run();
      return 'accepted';
    } catch {
      return 'refused';
    }
  };

  it('accepts at synth exactly the controllers whose --<name>-workers the runtime parses', () => {
    const names = [...CONTROLLERS, 'configmapmirror', 'configmap-mirror', 'cloneset', 'sidecar-set', 'Side-Car'];
    const construct = names.map((n) => outcome(() => render({ [n]: 2 })));
    const runtime = names.map((n) => outcome(() => parse([`--${n}-workers=2`])));
    expect(construct).toEqual(runtime);
    expect(names.filter((_, i) => construct[i] === 'accepted')).toEqual(Object.values(RuntimeControllers));
    const args = render(Object.fromEntries(CONTROLLERS.map((c, i) => [c, i + 1])));
    expect(parse(args).workers).toEqual(Object.fromEntries(CONTROLLERS.map((c, i) => [c, i + 1])));
  });

  it('parses a hyphenated controller name once the runtime carries it', () => {
    expect(controllerNameProblems('controllerWorkers', 'configmap-mirror')).toEqual([]);
    const carried = [...CONTROLLERS, 'configmap-mirror'];
    expect(runtimeFlagProblems('f', 'configmap-mirror-workers', carried)).toEqual([]);
    const o = parseOptions(['--configmap-mirror-workers=2'], env, { controllers: carried });
    expect(o !== 'help' && o.workers).toEqual({ sidecarset: 3, workloadspread: 3, 'configmap-mirror': 2 });
    expect(() => parseOptions([], env, { controllers: ['configmap_mirror'] })).toThrow(
      /^controllers: "configmap_mirror" is not a controller name\. Fix: use the lower-case controller name/,
    );
    expect(() => parse(['--configmap-mirror-workers=2'])).toThrow(
      /whose only controllers are sidecarset, workloadspread/,
    );
  });
});

describe('parsers', () => {
  it('parses Go durations and listen addresses', () => {
    expect([
      parseDuration('d', '500ms'),
      parseDuration('d', '1.5s'),
      parseDuration('d', '2m'),
      parseDuration('d', '1h'),
    ]).toEqual([500, 1500, 120_000, 3_600_000]);
    expect(parseAddr('a', '127.0.0.1:80')).toEqual({ host: '127.0.0.1', port: 80 });
    expect(parseAddr('a', '[::1]:8443')).toEqual({ host: '::1', port: 8443 });
    expect(() => parseAddr('a', ':0')).toThrow(/a: ":0" is not host:port/);
  });
});
