import { afterEach, describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { FakeClock, settle, type Clock } from '../../../../lib/runtime/clock.js';
import {
  LeaderElector,
  LeaseLock,
  LeadershipLostError,
  recordOf,
  resolveTimings,
  type LeaderElectorOptions,
  type StopReason,
} from '../../../../lib/runtime/leader/index.js';
import { Logger } from '../../../../lib/runtime/log.js';
import { valueOf } from '../metric-values.js';
import { FakeLeaseServer, type FakeLeaseClient } from './fake-lease-api.js';

const LEASE = 15_000;
const RENEW = 10_000;
const RETRY = 2_000;
/** How long after its last renewal a leader keeps leading: client-go's round, RETRY then RENEW. */
const WINDOW = RENEW + RETRY;
const NS = 'kruise-system';
const NAME = 'kruise-manager';

/** A view of a shared clock that is `offsetMs` off (another host's wall clock), ticking at the same rate. */
const skewed = (base: FakeClock, offsetMs: number): Clock => ({
  now: () => base.now() + offsetMs,
  after: (ms, fn) => base.after(ms, fn),
});

interface Candidate {
  elector: LeaderElector;
  client: FakeLeaseClient;
  events: string[];
  leaderSignals: AbortSignal[];
  registry: Registry;
}

const electors: LeaderElector[] = [];
afterEach(async () => {
  await Promise.all(electors.splice(0).map((e) => e.stop({ release: false })));
});

function candidate(
  server: FakeLeaseServer,
  clock: Clock,
  identity: string,
  extra: Partial<LeaderElectorOptions> = {},
): Candidate {
  const client = server.client();
  const events: string[] = [];
  const leaderSignals: AbortSignal[] = [];
  const registry = new Registry();
  const elector = new LeaderElector({
    lock: new LeaseLock(client, NS, NAME),
    identity,
    leaseDurationMs: LEASE,
    renewDeadlineMs: RENEW,
    retryPeriodMs: RETRY,
    callbacks: {
      onStartedLeading: (signal) => {
        events.push('started');
        leaderSignals.push(signal);
      },
      onStoppedLeading: (reason: StopReason) => events.push(`stopped:${reason}`),
      onNewLeader: (id) => events.push(`leader:${id}`),
    },
    logger: new Logger({}, 'error', { write: () => undefined }),
    registry,
    clock,
    random: () => 1, // worst-case jitter: retries every RETRY × 2.2
    ...extra,
  });
  electors.push(elector);
  return { elector, client, events, leaderSignals, registry };
}

/** A leads (it started first and settled), B campaigns beside it; one server, one clock. */
async function leaderAndStandby() {
  const server = new FakeLeaseServer();
  const clock = new FakeClock();
  const a = candidate(server, clock, 'a');
  a.elector.start();
  await settle();
  const b = candidate(server, clock, 'b');
  b.elector.start();
  return { server, clock, a, b };
}

const spec = (server: FakeLeaseServer) => server.current()?.spec;

/** Advances in small steps, checking after each that at most one candidate believes it leads. */
async function run(clock: FakeClock, ms: number, candidates: Candidate[], stepMs = 100): Promise<void> {
  for (let t = 0; t < ms; t += stepMs) {
    await clock.advance(Math.min(stepMs, ms - t));
    const leaders = candidates.filter((c) => c.elector.isLeader()).map((c) => c.elector.identity);
    if (leaders.length > 1) throw new Error(`split brain at +${t}ms: ${leaders.join(', ')}`);
  }
}

describe('leader election timings', () => {
  it('defaults to 15s / 10s / 2s with jitter 1.2', () => {
    expect(resolveTimings()).toEqual({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      jitterFactor: 1.2,
      requestTimeoutMs: 5_000,
    });
  });

  it('enforces LeaseDuration > RenewDeadline > 1.2 × RetryPeriod with errors naming the flags', () => {
    expect(() => resolveTimings({ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 })).toThrow(
      /leaseDurationMs \(--leader-election-lease-duration\): must exceed renewDeadline \(10s\), or two leaders can overlap \(got "10s"\)/,
    );
    expect(() => resolveTimings({ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 })).toThrow(
      /renewDeadlineMs \(--leader-election-renew-deadline\): must exceed 1.2 x retryPeriod \(2s\), or a jittered retry can miss the deadline \(got "2400ms"\)/,
    );
    expect(() => resolveTimings({ retryPeriodMs: 0 })).toThrow(
      /retryPeriodMs \(--leader-election-retry-period\): must be a positive duration \(got 0\)/,
    );
    expect(() => resolveTimings({ leaseDurationMs: Number.NaN })).toThrow(
      /leaseDurationMs \(--leader-election-lease-duration\): must be a positive duration/,
    );
    expect(() => resolveTimings({ jitterFactor: 0 })).toThrow(/jitterFactor must be a positive number \(got 0\)/);
    expect(() => resolveTimings({ leaseDurationMs: 900, renewDeadlineMs: 500, retryPeriodMs: 100 })).toThrow(
      /at least 1s/,
    );
  });

  it('rejects an empty identity or lock name', () => {
    const server = new FakeLeaseServer();
    expect(() => candidate(server, new FakeClock(), '')).toThrow(/identity/);
    expect(() => new LeaseLock(server.client(), '', NAME)).toThrow(/namespace and a name/);
  });
});

describe('LeaderElector', () => {
  it('creates the Lease when none exists and leads', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    expect(a.events).toEqual(['leader:a', 'started']);
    expect(a.elector.isLeader()).toBe(true);
    expect(spec(server)).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 });
    expect(spec(server)?.acquireTime).toBe(spec(server)?.renewTime);
    expect(String(spec(server)?.renewTime)).toMatch(/\.\d{6}Z$/); // MicroTime precision on the wire
    expect(await valueOf(a.registry, 'leader_election_master_status', { name: NAME })).toBe(1);
  });

  it('renews every RetryPeriod, keeping acquireTime and leaseTransitions', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    const acquired = spec(server)?.acquireTime;
    await clock.advance(RETRY * 5);
    expect(server.writes).toHaveLength(6);
    expect(server.writes.map((w) => w.spec?.acquireTime)).toEqual(Array(6).fill(acquired));
    expect(new Set(server.writes.map((w) => String(w.spec?.renewTime))).size).toBe(6);
    expect(spec(server)?.leaseTransitions).toBe(0);
  });

  it('a leader renews with one request (the Lease it last wrote), not a read and a write: half the event-loop turns under admission load', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    const calls = a.client.calls;
    await clock.advance(RETRY * 5);
    expect(server.writes).toHaveLength(6);
    expect(a.client.calls - calls).toBe(5);
  });

  it('an optimistic renewal that meets a Lease written by another falls back to reading it, and never overwrites a new holder', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    // Someone takes the Lease over (a human, or a standby that judged it expired on a skewed clock).
    server.put({ ...server.current()!, spec: { ...server.current()!.spec, holderIdentity: 'b' } });
    const writes = server.writes.length;
    await clock.advance(RETRY + 100);
    expect(server.writes).toHaveLength(writes); // 409 on the optimistic write, then the read says b holds it
    expect(spec(server)?.holderIdentity).toBe('b');
    await clock.advance(RENEW);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toContain('stopped:lost');
  });

  it('a standby never takes a Lease that keeps being renewed, and reports who leads', async () => {
    const { clock, a, b } = await leaderAndStandby();
    await run(clock, 120_000, [a, b]);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.events).toEqual(['leader:a']);
    expect(b.elector.observedLeader()).toBe('a');
  });

  it('after a crash (no release) a standby takes over within LeaseDuration + two jittered RetryPeriods', async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    await run(clock, 10_000, [a, b]);
    await a.elector.stop({ release: false });
    const crashedAt = clock.now();
    let tookOverAt = 0;
    for (let t = 0; t < 40_000 && !tookOverAt; t += 100) {
      await run(clock, 100, [a, b]);
      if (b.elector.isLeader()) tookOverAt = clock.now();
    }
    // A renewed at most RETRY before the crash, and B cannot have seen that record earlier, so
    // never before LEASE - RETRY. B notices the last change at its first retry after the crash
    // (≤ 4.4s), waits LEASE from then, and acts at its next retry (≤ 4.4s): the ~24s worst case.
    expect(tookOverAt - crashedAt).toBeGreaterThanOrEqual(LEASE - RETRY);
    expect(tookOverAt - crashedAt).toBeLessThanOrEqual(LEASE + 2 * RETRY * 2.2);
    expect(spec(server)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(spec(server)?.acquireTime).toBe(spec(server)?.renewTime);
  });

  it("release on graceful stop hands over at the standby's next retry", async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    await run(clock, 10_000, [a, b]);
    await a.elector.stop();
    expect(a.events).toContain('stopped:stopped');
    expect(spec(server)).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(a.leaderSignals[0].aborted).toBe(true);
    const releasedAt = clock.now();
    for (let t = 0; t < 10_000 && !b.elector.isLeader(); t += 100) await run(clock, 100, [a, b]);
    expect(clock.now() - releasedAt).toBeLessThanOrEqual(RETRY * 2.2);
    expect(spec(server)).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });
    expect(await valueOf(a.registry, 'leader_election_master_status', { name: NAME })).toBe(0);
  });

  it('wake(): a standby told of a release takes the Lease at once, not at its next retry', async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    await run(clock, 10_000, [a, b]);
    await a.elector.stop();
    expect(spec(server)).toMatchObject({ holderIdentity: '' });
    b.elector.wake(); // what the manager's watch on the Lease does when it sees the empty holder
    await settle();
    expect(b.elector.isLeader()).toBe(true);
    expect(spec(server)).toMatchObject({ holderIdentity: 'b', leaseDurationSeconds: 15, leaseTransitions: 1 });
  });

  it('wake() is only a hint: a held, unexpired Lease is never taken early, and it ends one wait only', async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    await run(clock, 3_000, [a, b]);
    const calls = b.client.calls;
    b.elector.wake();
    b.elector.wake();
    await settle();
    expect(b.elector.isLeader()).toBe(false);
    expect(b.client.calls - calls).toBeLessThanOrEqual(2); // one early read for the two wakes (the second finds no wait), no loop
    a.elector.wake(); // the leader ignores it
    await run(clock, 20_000, [a, b]);
    expect(spec(server)).toMatchObject({ holderIdentity: 'a' });
  });

  it('wake(): of several candidates woken by one release exactly one wins (409 for the rest)', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    const others = ['b', 'c', 'd'].map((id) => candidate(server, clock, id));
    for (const o of others) o.elector.start();
    await run(clock, 6_000, [a, ...others]);
    await a.elector.stop();
    for (const o of others) o.elector.wake();
    await settle(6);
    expect(others.filter((o) => o.elector.isLeader())).toHaveLength(1);
    await run(clock, 20_000, [a, ...others]);
    expect(others.filter((o) => o.elector.isLeader())).toHaveLength(1);
  });

  it("observeLease(): a standby that sees every renewal as it happens takes over a crashed leader's Lease LeaseDuration after the last one", async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    // What the manager's watch on the Lease does: every write is delivered as it happens.
    let delivered = 0;
    const deliver = () => {
      for (; delivered < server.writes.length; delivered++) b.elector.observeLease(recordOf(server.writes[delivered]));
    };
    for (let t = 0; t < 10_000; t += 100) {
      await run(clock, 100, [a, b]);
      deliver();
    }
    await a.elector.stop({ release: false });
    const lastRenewAt = Date.parse(String(spec(server)?.renewTime));
    let tookOverAt = 0;
    for (let t = 0; t < 40_000 && !tookOverAt; t += 100) {
      await run(clock, 100, [a, b]);
      deliver();
      if (b.elector.isLeader()) tookOverAt = clock.now();
    }
    // Never before the lease expired on b's clock, counted from when it saw the last renewal...
    expect(tookOverAt - lastRenewAt).toBeGreaterThanOrEqual(LEASE);
    // ...and then at once, not at its next jittered retry (up to 4.4 s later).
    expect(tookOverAt - lastRenewAt).toBeLessThanOrEqual(LEASE + 200);
    expect(spec(server)).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
  });

  it('observeLease(): a Lease that keeps being renewed is never taken, and a leader ignores what it is told', async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    let delivered = 0;
    for (let t = 0; t < 60_000; t += 100) {
      await run(clock, 100, [a, b]);
      for (; delivered < server.writes.length; delivered++) {
        const record = recordOf(server.writes[delivered]);
        b.elector.observeLease(record);
        a.elector.observeLease({ ...record, holderIdentity: '' }); // nonsense to a leader: ignored
      }
    }
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(new Set(server.writes.map((w) => w.spec?.holderIdentity))).toEqual(new Set(['a']));
  });

  it('steps down before it releases: once the release is sent, isLeader() and the gauge already say false', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await run(clock, 5_000, [a]);
    expect(a.elector.isLeader()).toBe(true);
    const seenAtRelease: Array<[boolean, number | undefined]> = [];
    const replace = a.client.replaceNamespacedLease;
    a.client.replaceNamespacedLease = async (p) => {
      // A standby may acquire the released Lease before this call returns: no overlap allowed.
      if (p.body.spec?.holderIdentity === '') {
        seenAtRelease.push([
          a.elector.isLeader(),
          await valueOf(a.registry, 'leader_election_master_status', { name: NAME }),
        ]);
      }
      return replace(p);
    };
    await a.elector.stop();
    expect(seenAtRelease).toEqual([[false, 0]]);
    expect(spec(server)).toMatchObject({ holderIdentity: '' });
    expect(a.events).toEqual(['leader:a', 'started', 'stopped:stopped']);
  });

  it('exactly one of several simultaneous candidates wins; the others get 409', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const all = ['a', 'b', 'c', 'd'].map((id) => candidate(server, clock, id));
    for (const c of all) c.elector.start(); // all GET "not found", all POST: one create wins
    await run(clock, 30_000, all);
    expect(all.filter((c) => c.elector.isLeader())).toHaveLength(1);
    await all.find((c) => c.elector.isLeader())!.elector.stop(); // released: all race to update
    await run(clock, 10_000, all);
    expect(all.filter((c) => c.elector.isLeader())).toHaveLength(1);
    expect(spec(server)?.leaseTransitions).toBe(1);
  });

  it('a leader cut off from the API server steps down after RenewDeadline; a standby takes over only afterwards', async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    await run(clock, 5_000, [a, b]);
    a.client.partitioned = true;
    const lastWrite = server.writes.length;
    await run(clock, 30_000, [a, b]); // throws on any moment with two leaders
    expect(server.writes.length).toBeGreaterThan(lastWrite);
    expect(a.events).toEqual(['leader:a', 'started', 'stopped:lost']);
    expect(a.leaderSignals[0].aborted).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(b.elector.isLeader()).toBe(true);
    expect(await valueOf(a.registry, 'leader_election_master_status', { name: NAME })).toBe(0);
  });

  it("keeps the Lease through an API outage that ends before client-go's round does (RetryPeriod + RenewDeadline), with the standby never leading meanwhile", async () => {
    // HA drill 7 (every API server restarted): the leader's last renewal 1.7 s before the outage,
    // the first API server answering again 8.5 s after that renewal. Retries at +2, +4, +6 and +8
    // are refused; the one at +10 must still be made, and succeed.
    const { server, clock, a, b } = await leaderAndStandby();
    await run(clock, RETRY * 3, [a, b]);
    // Just after a renewal of A's: the next one is a full RetryPeriod away.
    const renewedAt = () => server.current()!.spec!.renewTime;
    const before = renewedAt();
    while (renewedAt() === before) await run(clock, 10, [a, b], 10);
    a.client.partitioned = true;
    b.client.partitioned = true;
    await run(clock, 8_500, [a, b]);
    a.client.partitioned = false;
    b.client.partitioned = false;
    await run(clock, 30_000, [a, b]);
    expect(a.events).toEqual(['leader:a', 'started']);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    expect(spec(server)?.leaseTransitions).toBe(0);
  });

  it('a release from a leader that already lost the Lease does not clear the new holder', async () => {
    const { server, clock, a, b } = await leaderAndStandby();
    a.client.partitioned = true;
    await run(clock, 40_000, [a, b]);
    expect(b.elector.isLeader()).toBe(true);
    a.client.partitioned = false;
    await a.elector.stop(); // tries to release with its stale resourceVersion: 409
    expect(spec(server)?.holderIdentity).toBe('b');
  });

  it('judges expiry on its own clock: remote timestamps from a skewed host change nothing', async () => {
    for (const offset of [-3_600_000, 3_600_000]) {
      const server = new FakeLeaseServer();
      const clock = new FakeClock();
      const a = candidate(server, skewed(clock, offset), 'a'); // writes renewTimes an hour off
      a.elector.start();
      await settle();
      const b = candidate(server, clock, 'b');
      b.elector.start();
      await run(clock, 60_000, [a, b]);
      expect(b.elector.isLeader()).toBe(false); // an hour-old renewTime does not look expired to B
      await a.elector.stop({ release: false });
      await run(clock, LEASE + RETRY * 2.2 * 2, [a, b]);
      expect(b.elector.isLeader()).toBe(true); // an hour-ahead renewTime does not make B wait an hour
    }
  });

  it('a leader paused past its lead window reports false from isLeader() before its loop wakes up', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    expect(() => a.elector.checkStillLeader()).not.toThrow();
    clock.jump(WINDOW - 1); // a GC pause: time passes, no timer has run
    expect(a.elector.isLeader()).toBe(true);
    clock.jump(1);
    expect(a.elector.isLeader()).toBe(false);
    expect(() => a.elector.checkStillLeader()).toThrow(LeadershipLostError);
    expect(() => a.elector.checkHealth()).not.toThrow(); // a pause this short is not a stuck loop
    clock.jump(LEASE + 20_000);
    expect(() => a.elector.checkHealth()).toThrow(/last renewed 47s ago/);
    await clock.advance(1);
    expect(a.events).toContain('stopped:lost');
  });

  it('the gauge and the leader signal flip the moment the renew deadline passes, not at the next renew', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    expect(await valueOf(a.registry, 'leader_election_master_status', { name: NAME })).toBe(1);
    clock.jump(WINDOW); // paused (SIGSTOP, GC): no timer has run, the renew loop has not woken up
    // A scrape right after the pause already reads 0: two processes never both report leading.
    expect(await valueOf(a.registry, 'leader_election_master_status', { name: NAME })).toBe(0);
    // And with the renew loop blocked on a hung call, the leader signal still aborts at the deadline.
    const b = candidate(new FakeLeaseServer(), clock, 'b');
    b.elector.start();
    await settle();
    expect(b.leaderSignals).toHaveLength(1);
    b.client.hang = true;
    const startedAt = clock.now();
    for (let t = 0; t < WINDOW + RETRY && !b.leaderSignals[0].aborted; t += 100) await clock.advance(100);
    expect(b.leaderSignals[0].aborted).toBe(true);
    expect(clock.now() - startedAt).toBeLessThanOrEqual(WINDOW + 100);
    expect(b.events).toContain('stopped:lost');
  });

  it('a leader paused between reading and renewing the Lease does not write once its renew deadline passed', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await run(clock, 3_000, [a]);
    const read = a.client.readNamespacedLease;
    let pausedOnce = false;
    a.client.readNamespacedLease = async (p) => {
      const lease = await read(p);
      if (!pausedOnce) {
        pausedOnce = true;
        clock.jump(WINDOW); // the answer arrives after a pause past the lead window
      }
      return lease;
    };
    // Someone else writes the Lease (same holder, new resourceVersion): the optimistic renewal gets
    // 409 and the leader falls back to reading it, which is where it is paused.
    server.put(server.current()!);
    const writes = server.writes.length;
    await clock.advance(RETRY + 100);
    expect(pausedOnce).toBe(true);
    expect(server.writes).toHaveLength(writes);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events).toContain('stopped:lost');
    await clock.advance(LEASE * 2); // nor later: a process that lost leadership never writes the Lease again
    expect(server.writes).toHaveLength(writes);
  });

  it('stepDown(): a standby stops campaigning at once and never takes the Lease, even once it expires', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    const b = candidate(server, clock, 'b');
    a.elector.start();
    await settle();
    b.elector.start();
    await run(clock, 3_000, [a, b]);
    a.client.partitioned = true; // the leader dies (no release)...
    await b.elector.stepDown(); // ...while the standby is terminating
    await run(clock, LEASE * 3, [a, b]);
    expect(b.elector.isLeader()).toBe(false);
    expect(b.events).not.toContain('started');
    expect(server.writes.every((w) => w.spec?.holderIdentity !== 'b')).toBe(true);
    await b.elector.stop(); // nothing to release: it never held the Lease
    expect(server.writes.every((w) => w.spec?.holderIdentity !== 'b')).toBe(true);
  });

  it('stepDown(): a leader says false at once, aborts its leader signal, and keeps the Lease until stop() releases it', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await settle();
    const stepped = a.elector.stepDown();
    expect(a.elector.isLeader()).toBe(false);
    expect(a.leaderSignals[0].aborted).toBe(true);
    expect(await valueOf(a.registry, 'leader_election_master_status', { name: NAME })).toBe(0);
    expect(await stepped).toBe(true);
    expect(spec(server)).toMatchObject({ holderIdentity: 'a' });
    await a.elector.stop();
    expect(spec(server)).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    expect(a.events).toEqual(['leader:a', 'started', 'stopped:stopped']);
  });

  it('bounds hung API calls by the request timeout and keeps campaigning', async () => {
    const server = new FakeLeaseServer();
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.client.hang = true;
    a.elector.start();
    await clock.advance(20_000);
    expect(a.client.calls).toBeGreaterThan(1);
    a.client.hang = false;
    await clock.advance(5_000 + RETRY * 2.2 + 1); // the hung attempt times out, then one retry
    expect(a.elector.isLeader()).toBe(true);
  });

  it('keeps renewing when onStartedLeading throws or rejects', async () => {
    for (const failure of ['throw', 'reject'] as const) {
      const server = new FakeLeaseServer();
      const clock = new FakeClock();
      const a = candidate(server, clock, 'a', {
        callbacks: {
          onStartedLeading: () => {
            if (failure === 'throw') throw new Error('boom');
            return Promise.reject(new Error('boom'));
          },
          onStoppedLeading: () => undefined,
        },
      });
      a.elector.start();
      await run(clock, 30_000, [a]);
      expect(a.elector.isLeader()).toBe(true);
    }
  });

  it('takes over a Lease with missing or garbage fields instead of crashing', async () => {
    const server = new FakeLeaseServer();
    server.put({
      metadata: { name: NAME, namespace: NS },
      spec: { holderIdentity: 'ghost', renewTime: 'not a time' as never, acquireTime: 'yesterday' as never },
    });
    const clock = new FakeClock();
    const a = candidate(server, clock, 'a');
    a.elector.start();
    await run(clock, 5_000, [a]); // leaseDurationSeconds missing: expired as soon as observed
    expect(a.elector.isLeader()).toBe(true);
    expect(spec(server)).toMatchObject({ holderIdentity: 'a', leaseTransitions: 1 });
  });
});
