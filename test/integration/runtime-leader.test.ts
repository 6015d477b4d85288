// Leader election on a real Lease: three candidates, exactly one leader; a released Lease is
// taken at the next retry; a crashed leader's Lease only after it expires; leaseTransitions
// counted by the API server's copy. Timings are shortened (6s / 4s / 1s) to keep the run short;
// the bounds below follow from them plus generous slack for a loaded machine.
import { afterEach, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api, KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { coordinationV1, kubeClient } from '../../lib/runtime/kube/index.js';
import { LeaderElector, LeaseLock } from '../../lib/runtime/leader/index.js';
import { Logger } from '../../lib/runtime/log.js';
import { envtest } from '../envtest/state.js';

const LEASE_MS = 6_000;
const RENEW_MS = 4_000;
const RETRY_MS = 1_000;
const JITTERED_RETRY_MS = RETRY_MS * 2.2;
const SLACK_MS = 3_000; // API latency and event-loop delays on a busy CI machine
const NS = 'default';

const state = envtest();
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(state.kubeconfigPath);
const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
const logger = new Logger({ test: 'runtime-leader' }, 'warn');
const electors: LeaderElector[] = [];

afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop()));
});

function elect(leaseName: string, identity: string) {
  const stopped: string[] = [];
  const elector = new LeaderElector({
    lock: new LeaseLock(coordinationV1(kubeClient(kubeConfig)), NS, leaseName),
    identity,
    leaseDurationMs: LEASE_MS,
    renewDeadlineMs: RENEW_MS,
    retryPeriodMs: RETRY_MS,
    callbacks: { onStartedLeading: () => undefined, onStoppedLeading: (reason) => stopped.push(reason) },
    logger,
  });
  electors.push(elector);
  elector.start();
  return { elector, stopped };
}

const readLease = (name: string): Promise<V1Lease> => coordination.readNamespacedLease({ name, namespace: NS });

/** Polls every 50ms; returns the leaders seen once exactly one leads, failing on a moment with two. */
async function waitForSingleLeader(all: LeaderElector[], timeoutMs: number): Promise<LeaderElector> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const leaders = all.filter((e) => e.isLeader());
    if (leaders.length > 1) throw new Error(`two leaders at once: ${leaders.map((l) => l.identity).join(', ')}`);
    if (leaders.length === 1) return leaders[0];
    if (Date.now() > deadline) throw new Error(`no leader within ${timeoutMs}ms`);
    await sleep(50);
  }
}

describe('LeaderElector on a real API server', () => {
  it('three candidates: exactly one leads, and the Lease says so', async () => {
    const lease = `le-three-${randomBytes(3).toString('hex')}`;
    const all = ['a', 'b', 'c'].map((id) => elect(lease, `${id}-${lease}`).elector);
    const leader = await waitForSingleLeader(all, 30_000);
    for (let i = 0; i < 40; i++) {
      // 4s: several renewals, never a second leader
      expect(await waitForSingleLeader(all, 30_000)).toBe(leader);
      await sleep(100);
    }
    const spec = (await readLease(lease)).spec;
    expect(spec?.holderIdentity).toBe(leader.identity);
    expect(spec?.leaseDurationSeconds).toBe(LEASE_MS / 1000);
    expect(spec?.leaseTransitions).toBe(0);
    expect(spec?.renewTime).toBeTruthy(); // the server accepted our MicroTime format
  }, 60_000);

  it('a graceful stop releases the Lease (empty holder, 1s) without waiting for expiry', async () => {
    const lease = `le-release-${randomBytes(3).toString('hex')}`;
    const { elector, stopped } = elect(lease, 'solo');
    await waitForSingleLeader([elector], 30_000);
    await elector.stop();
    expect(stopped).toEqual(['stopped']);
    const spec = (await readLease(lease)).spec;
    expect(spec?.holderIdentity ?? '').toBe('');
    expect(spec?.leaseDurationSeconds).toBe(1);
  }, 60_000);

  it('after release another candidate leads at its next retry; after a crash only once the Lease expires', async () => {
    const lease = `le-handover-${randomBytes(3).toString('hex')}`;
    const candidates = ['a', 'b', 'c'].map((id) => elect(lease, `${id}-${lease}`));
    const all = candidates.map((c) => c.elector);
    const first = await waitForSingleLeader(all, 30_000);

    // Graceful handover: far sooner than the 6s lease would take to expire.
    await first.stop();
    const releasedAt = Date.now();
    const rest = all.filter((e) => e !== first);
    const second = await waitForSingleLeader(rest, 30_000);
    const handoverMs = Date.now() - releasedAt;
    expect(handoverMs).toBeLessThan(LEASE_MS - RETRY_MS); // without the release it could not be this quick
    expect(handoverMs).toBeLessThanOrEqual(JITTERED_RETRY_MS + SLACK_MS);
    expect((await readLease(lease)).spec).toMatchObject({ holderIdentity: second.identity, leaseTransitions: 1 });

    // Crash: the leader stops renewing and does not release.
    await second.stop({ release: false });
    const crashedAt = Date.now();
    const remaining = rest.filter((e) => e !== second);
    const third = await waitForSingleLeader(remaining, 60_000);
    const takeoverMs = Date.now() - crashedAt;
    expect(takeoverMs).toBeGreaterThanOrEqual(LEASE_MS - RETRY_MS); // it had to wait the lease out
    expect(takeoverMs).toBeLessThanOrEqual(LEASE_MS + 2 * JITTERED_RETRY_MS + SLACK_MS);
    expect((await readLease(lease)).spec).toMatchObject({ holderIdentity: third.identity, leaseTransitions: 2 });
  }, 120_000);
});
