// The pure side of `npm run bench -- cluster-compare` (bench/cluster-compare-report.ts): a step's figures from its
// create outcomes and manager CPU samples, failures grouped by kind, the cgroup CPU reading, the side-by-side table.
import { describe, expect, it } from '@jest/globals';
import {
  cgroupCpuSeconds,
  cpuAccountingFile,
  failureKind,
  failuresByKind,
  managerCpu,
  sideBySide,
  stepFigures,
  type ManagerSample,
  type StepInput,
} from '../../../bench/cluster-compare-report.js';
import type { CreateOutcome } from '../../e2e/support/load.js';

const ok = (seq: number, ms: number, injected = true): CreateOutcome => ({
  seq,
  at: seq * 100,
  ms,
  ok: true,
  status: 201,
  injected,
});
const refused = (seq: number, message: string, status?: number): CreateOutcome => ({
  seq,
  at: seq * 100,
  ms: 10_000,
  ok: false,
  ...(status === undefined ? {} : { status }),
  failure: status === undefined ? 'api' : 'webhook',
  message,
});
const manager = (pod: string, cpuSeconds: number, over: Partial<ManagerSample> = {}): ManagerSample => ({
  pod,
  pid: 100,
  restarts: 0,
  cpuSeconds,
  cpuSource: 'cgroup',
  rssBytes: 50e6,
  ...over,
});

const step = (over: Partial<StepInput> = {}): StepInput => ({
  step: '10/s',
  mode: 'rate',
  offeredPerSecond: 10,
  wallSeconds: 20,
  outcomes: [...Array.from({ length: 198 }, (_, i) => ok(i, i < 100 ? 10 : 20)), ok(198, 500, false), ok(199, 900)],
  managersBefore: [manager('a', 10), manager('b', 3)],
  managersAfter: [manager('a', 10.6), manager('b', 3.2)],
  loadBefore: [1.234, 1, 1],
  loadAfter: [2.5, 1.2, 1],
  podsLeft: 150,
  generator: { loopDelayP99Ms: 0.4, loopDelayMaxMs: 3, cpuShare: 0.05 },
  ...over,
});

describe('stepFigures', () => {
  it('gives latency, created per second, pods without the sidecar and CPU per 1,000 created pods', () => {
    const f = stepFigures(step());
    expect(f).toMatchObject({
      step: '10/s',
      sent: 200,
      created: 200,
      webhookFailures: 0,
      apiFailures: 0,
      withoutSidecar: 1,
      p50Ms: 20,
      p99Ms: 500,
      maxMs: 900,
      answeredPerSecond: 10,
      deletedByReplicaSetController: 50,
      managerCpuSeconds: 0.8,
      // 0.8 s over 200 pods
      managerCpuSecondsPer1000Creates: 4,
      managerCpuByPod: { a: 0.6, b: 0.2 },
      managerRssMBAfter: { a: 50, b: 50 },
      managersRestarted: [],
      loadAverageBefore: [1.23, 1, 1],
      loadAverageAfter: [2.5, 1.2, 1],
      failuresByKind: {},
    });
  });

  it('has no CPU per 1,000 when nothing was created', () => {
    const f = stepFigures(step({ outcomes: [refused(0, 'connect: connection refused')], podsLeft: 0 }));
    expect(f.created).toBe(0);
    expect(f.managerCpuSecondsPer1000Creates).toBeNull();
    expect(f.answeredPerSecond).toBe(0);
  });
});

describe('managerCpu', () => {
  it('leaves out a container that restarted or changed process, and names it', () => {
    const r = managerCpu(
      [manager('a', 10), manager('b', 5), manager('c', 1)],
      [manager('a', 11), manager('b', 0.5, { restarts: 1, pid: 200 }), manager('d', 2)],
    );
    expect(r).toEqual({ total: 1, byPod: { a: 1, b: null, d: null }, restarted: ['b', 'd', 'c'] });
  });

  it('is null when no container can be compared', () => {
    expect(managerCpu([], [manager('a', 1)]).total).toBeNull();
  });
});

describe('failures by kind', () => {
  const webhook = (addr: string) =>
    `Internal error occurred: failed calling webhook "mpod.kb.io": failed to call webhook: Post "https://kruise-webhook-service.kruise-system.svc:443/mutate-pod?timeout=10s": dial tcp ${addr}: connect: connection refused`;

  it('groups causes that differ only in addresses, most frequent first, with one example each', () => {
    const outcomes = [
      refused(0, webhook('10.0.0.3:9876'), 500),
      refused(1, 'client timeout'),
      refused(2, webhook('10.0.0.4:9876'), 500),
      ok(3, 5),
    ];
    const kinds = failuresByKind(outcomes);
    expect(Object.keys(kinds)).toEqual(['webhook HTTP 500: connection refused', 'api no answer: client timeout']);
    expect(kinds['webhook HTTP 500: connection refused']).toEqual({ count: 2, example: webhook('10.0.0.3:9876') });
  });

  it('blanks addresses and durations in the cause', () => {
    expect(failureKind({ failure: 'api', message: 'connect ECONNREFUSED 10.0.0.1:6443' })).toBe(
      'api no answer: connect ECONNREFUSED <addr>',
    );
    expect(failureKind({ failure: 'webhook', status: 500, message: 'x: context deadline exceeded after 10.5s' })).toBe(
      'webhook HTTP 500: context deadline exceeded after <t>',
    );
    expect(failureKind({ failure: 'api', status: 503 })).toBe('api HTTP 503: (no message)');
  });
});

describe('cgroup CPU', () => {
  it('reads cgroup v1 cpuacct (nanoseconds) where the process has that hierarchy', () => {
    const text =
      '9:name=systemd:/\n4:memory:/kha/node-1/kubepods/pod1/abc\n2:cpuacct:/kha/node-1/kubepods/pod1/abc\n1:cpu:/kha\n0::/\n';
    expect(cpuAccountingFile(text)).toEqual({
      file: '/sys/fs/cgroup/cpuacct/kha/node-1/kubepods/pod1/abc/cpuacct.usage',
      v: 1,
    });
    expect(cpuAccountingFile('3:cpu,cpuacct:/a/b\n', '/cg')).toEqual({
      file: '/cg/cpu,cpuacct/a/b/cpuacct.usage',
      v: 1,
    });
    expect(cgroupCpuSeconds('1500000000\n', 1)).toBe(1.5);
  });

  it('reads cgroup v2 cpu.stat (microseconds) on a unified-only host', () => {
    expect(cpuAccountingFile('0::/kubepods/pod1/abc\n')).toEqual({
      file: '/sys/fs/cgroup/kubepods/pod1/abc/cpu.stat',
      v: 2,
    });
    expect(cgroupCpuSeconds('usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\n', 2)).toBe(2.5);
  });

  it('gives nothing for a path outside the reader’s cgroup namespace or no CPU hierarchy', () => {
    expect(cpuAccountingFile('2:cpuacct:/../other\n')).toBeUndefined();
    expect(cpuAccountingFile('4:memory:/a\n')).toBeUndefined();
  });
});

describe('sideBySide', () => {
  it('puts both flavours on one row per step, a dash where a flavour has no such step', () => {
    const up = [stepFigures(step()), stepFigures(step({ step: 'saturation (16 in flight)', mode: 'closed' }))];
    const rt = [stepFigures(step({ outcomes: [ok(0, 7), refused(1, 'x: EOF', 500)], podsLeft: 1 }))];
    const lines = sideBySide({ upstream: up, runtime: rt });
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^step\s+upstream: p50\/p99\/max ms .*runtime: p50\/p99\/max ms/);
    // p50/p99/max, created/s, failed, without sidecar, CPU s per 1,000, load before→after
    const upstream = ['20/500/900', '10', '0', '1', '4', '1.23→2.5'];
    // a failed create's time counts in the latency too (support/load.ts summarize)
    const runtime = ['10000/10000/10000', '0.1', '1 (w1 a0)', '0', '800', '1.23→2.5'];
    expect(lines[1].split(/\s{2,}/)).toEqual(['10/s', ...upstream, ...runtime]);
    expect(lines[2].split(/\s{2,}/)).toEqual(['saturation (16 in flight)', ...upstream, ...runtime.map(() => '-')]);
  });
});
