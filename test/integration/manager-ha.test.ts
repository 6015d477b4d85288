// Leader election between real manager processes (lib/runtime/main.ts run as children, as pods
// would run them) on the envtest API server: exactly one leads; a SIGTERMed leader releases the
// Lease and a standby takes it at once (it watches the Lease), by its next retry at the latest; a SIGKILLed leader's
// Lease is taken only once
// it expired; leaseTransitions counts every change of holder. Then the split roles: webhook-only
// replicas never take the Lease, a controllers-only replica serves no webhook port.
//
// Timings are shortened to 4s / 3s / 1s (lease / renew deadline / retry). Every bound below is
// derived from them plus slack for a loaded 2-core CI machine; none is a speed claim. Handover
// times come from the Lease records themselves (renewTime/acquireTime, written by processes on
// this same host) as recorded by a watch, which sees every write, including the short-lived
// "released" record that polling could miss.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Names } from '../../lib/contract.js';
import { envtest } from '../envtest/state.js';
import {
  exitOf,
  identityOf,
  LeaseHistory,
  logLines,
  presentedCertificate,
  scrape,
  until,
  type LeaseRecord,
} from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import { installRuntime, kubeConfig, uninstallWebhooks } from './support/runtime-cluster.js';

const LEASE_MS = 4_000;
const RENEW_MS = 3_000;
const RETRY_MS = 1_000;
/** Candidates wait RetryPeriod × [1, 2.2) between attempts (jitter factor 1.2). */
const JITTERED_RETRY_MS = RETRY_MS * 2.2;
/** API latency and event-loop delays on a busy CI machine; generous on purpose. */
const SLACK_MS = 1_500;
/** Clock offset between processes on one host (each anchors its monotonic clock at start). */
const CLOCK_TOLERANCE_MS = 100;
const TIMING_ARGS = [
  `--leader-election-lease-duration=${LEASE_MS / 1000}s`,
  `--leader-election-renew-deadline=${RENEW_MS / 1000}s`,
  `--leader-election-retry-period=${RETRY_MS / 1000}s`,
];

const kc = kubeConfig();
const ns = `ha-${randomBytes(3).toString('hex')}`;
const processes: ManagerProcess[] = [];
let history: LeaseHistory;

async function startManager(name: string, args: string[] = []): Promise<ManagerProcess> {
  const m = await ManagerProcess.start({
    name,
    kubeconfigPath: envtest().kubeconfigPath,
    namespace: ns,
    args: [...TIMING_ARGS, ...args],
  });
  processes.push(m);
  return m;
}

const alive = (m: ManagerProcess) => m.child.exitCode === null && m.child.signalCode === null;

/** Which of `ms` report `leader_election_master_status 1` right now (scraped in parallel). */
async function gaugeLeaders(ms: ManagerProcess[]): Promise<ManagerProcess[]> {
  const running = ms.filter(alive);
  const flags = await Promise.all(running.map((m) => m.leading()));
  return running.filter((_, i) => flags[i]);
}

/**
 * Scrapes every replica's gauge every 100ms for the whole test. Scrapes of different processes
 * are never one instant, so a sample straddling a handover could show the outgoing and the
 * incoming leader both at 1; a real split brain persists (a leader keeps leading for at least
 * RenewDeadline), so two leaders count as a violation only when an immediate re-sample agrees.
 */
class LeaderSampler {
  readonly violations: string[] = [];
  samples = 0;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(private readonly ms: () => ManagerProcess[]) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (this.running) {
      const leaders = await gaugeLeaders(this.ms());
      this.samples++;
      if (leaders.length > 1) {
        const again = await gaugeLeaders(leaders);
        if (again.length > 1)
          this.violations.push(
            `${new Date().toISOString()}: ${again.map((m) => m.name).join(' and ')} both report leading`,
          );
      }
      await sleep(100);
    }
  }

  stop(): Promise<void> {
    this.running = false;
    return this.loop;
  }
}

/** The single gauge leader, once it is also the Lease holder. */
async function settledLeader(candidates: ManagerProcess[], timeoutMs: number): Promise<ManagerProcess> {
  return until(
    'exactly one replica to lead, by its gauge and by the Lease',
    async () => {
      const leaders = await gaugeLeaders(candidates);
      const holder = history.latest()?.holder;
      return leaders.length === 1 && holder && holder === identityOf(leaders[0]) ? leaders[0] : undefined;
    },
    timeoutMs,
    100,
  );
}

const lastIndexWhere = (records: LeaseRecord[], pred: (r: LeaseRecord) => boolean) => records.findLastIndex(pred);

beforeAll(async () => {
  await installRuntime(kc, ns);
  history = new LeaseHistory(kc, ns, Names.leaderElectionId);
  await history.start();
}, 90_000);

afterAll(async () => {
  await Promise.all(processes.map((m) => m.stop()));
  await history?.stop();
  await uninstallWebhooks(kc);
}, 60_000);

describe('leader election between manager processes', () => {
  let all: ManagerProcess[];
  let sampler: LeaderSampler;
  let first: ManagerProcess;
  let second: ManagerProcess;
  let third: ManagerProcess;

  beforeAll(async () => {
    all = await Promise.all(['ha-a', 'ha-b', 'ha-c'].map((name) => startManager(name)));
    sampler = new LeaderSampler(() => all);
    await Promise.all(all.map((m) => m.waitReady()));
  }, 90_000);

  afterAll(async () => {
    await sampler?.stop();
  });

  it('three replicas: exactly one leads, and its gauge and the Lease holder agree on every sample', async () => {
    first = await settledLeader(all, 30_000);
    for (let i = 0; i < 10; i++) {
      const leaders = await gaugeLeaders(all);
      expect(leaders.map((m) => m.name)).toEqual([first.name]);
      expect(history.latest()?.holder).toBe(identityOf(first));
      await sleep(200);
    }
    // A fresh Lease: created by the winner (transitions 0) and only ever renewed by it since.
    expect(new Set(history.records.map((r) => r.holder))).toEqual(new Set([identityOf(first)]));
    expect(history.records.map((r) => r.leaseTransitions)).toEqual(history.records.map(() => 0));
    expect(history.latest()?.leaseDurationSeconds).toBe(LEASE_MS / 1000);
    // Standbys say so, and renew nothing.
    for (const m of all.filter((x) => x !== first))
      expect(logLines(m).some((l) => l.msg === 'acquired the lease; now leading')).toBe(false);
  }, 60_000);

  it('SIGTERM: the leader releases the Lease, exits 0, and a standby leads by its next retry at the latest, before the lease could have expired', async () => {
    const oldId = identityOf(first)!;
    const mark = history.records.length;
    first.signal('SIGTERM');
    expect(await exitOf(first)).toEqual({ code: 0, signal: null });
    const standbys = all.filter((m) => m !== first);
    second = await settledLeader(standbys, LEASE_MS + 2 * JITTERED_RETRY_MS + 10_000);

    const records = history.records;
    const release = records.findIndex((r, i) => i >= mark && r.holder === '');
    expect(release).toBeGreaterThanOrEqual(0);
    // The release is the outgoing leader's last write, the new holder's acquisition the next one.
    const lastRenew = lastIndexWhere(records, (r) => r.holder === oldId);
    expect(lastRenew).toBe(release - 1);
    expect(records[release]).toMatchObject({
      leaseDurationSeconds: 1,
      leaseTransitions: records[lastRenew].leaseTransitions,
    });
    const taken = records[release + 1];
    expect(taken.holder).toBe(identityOf(second));
    expect(taken.leaseTransitions).toBe(records[release].leaseTransitions + 1);

    // At the standby's next (jittered) retry after the release...
    expect(taken.acquireTime - records[release].renewTime).toBeLessThanOrEqual(JITTERED_RETRY_MS + SLACK_MS);
    // ...and so before the outgoing leader's last renewal could have expired: the release worked.
    expect(taken.acquireTime).toBeLessThan(records[lastRenew].renewTime + LEASE_MS);
    expect(first.logs()).toMatch(/"msg":"released the lease"/);
    process.stderr.write(
      `graceful handover: release → new leader ${taken.acquireTime - records[release].renewTime}ms, ` +
        `last renewal → new leader ${taken.acquireTime - records[lastRenew].renewTime}ms (lease ${LEASE_MS}ms)\n`,
    );
  }, 60_000);

  it("SIGKILL: a standby leads only once the dead leader's lease expired, within lease + jittered retries", async () => {
    const oldId = identityOf(second)!;
    const [survivor] = all.filter((m) => m !== first && m !== second);
    third = survivor;
    await sleep(2 * RETRY_MS); // a couple of renewals as leader first
    second.signal('SIGKILL');
    expect(await exitOf(second)).toEqual({ code: null, signal: 'SIGKILL' });
    await settledLeader([survivor], LEASE_MS + 2 * JITTERED_RETRY_MS + 10_000);

    const records = history.records;
    const lastRenew = lastIndexWhere(records, (r) => r.holder === oldId);
    const taken = records[lastRenew + 1];
    // Nobody wrote between the dead leader's last renewal and the takeover.
    expect(taken.holder).toBe(identityOf(survivor));
    expect(taken.leaseTransitions).toBe(records[lastRenew].leaseTransitions + 1);
    const waited = taken.acquireTime - records[lastRenew].renewTime;
    // Not before the lease expired (judged on the standby's own clock from when it saw the renewal)...
    expect(waited).toBeGreaterThanOrEqual(LEASE_MS - CLOCK_TOLERANCE_MS);
    // ...and then promptly: seeing the last renewal late by up to one jittered retry, plus the next retry.
    expect(waited).toBeLessThanOrEqual(LEASE_MS + 2 * JITTERED_RETRY_MS + SLACK_MS);
    expect(second.logs()).not.toMatch(/"msg":"released the lease"/);
    process.stderr.write(
      `crash takeover: last renewal → new leader ${waited}ms (lease ${LEASE_MS}ms, bound ${LEASE_MS + 2 * JITTERED_RETRY_MS + SLACK_MS}ms)\n`,
    );
  }, 60_000);

  it('counted every change of holder in leaseTransitions, and never showed two leaders', async () => {
    // Holders in order, collapsing renewals: A, released, B, C; transitions 0, 0, 1, 2.
    const changes = history.records.filter((r, i, rs) => i === 0 || r.holder !== rs[i - 1].holder);
    expect(changes.map((r) => r.holder)).toEqual([identityOf(first), '', identityOf(second), identityOf(third)]);
    expect(changes.map((r) => r.leaseTransitions)).toEqual([0, 0, 1, 2]);
    // Transitions never move within one holder's tenure.
    for (let i = 1; i < history.records.length; i++) {
      const [prev, cur] = [history.records[i - 1], history.records[i]];
      if (cur.holder === prev.holder) expect(cur.leaseTransitions).toBe(prev.leaseTransitions);
    }
    await sampler.stop();
    expect(sampler.samples).toBeGreaterThan(20);
    expect(sampler.violations).toEqual([]);
  }, 30_000);

  afterAll(async () => {
    // Hand the Lease back (graceful stop releases it) for the role tests below.
    await Promise.all(all.filter(alive).map((m) => m.stop()));
  }, 30_000);
});

describe('split roles', () => {
  let hooks: ManagerProcess[];
  let ctl: ManagerProcess;

  beforeAll(async () => {
    await until('the Lease to be free', () => history.latest()?.holder === '', 30_000);
    // Webhook-only replicas first, so the Lease sits free for their whole start-up.
    hooks = await Promise.all(['hook-a', 'hook-b'].map((name) => startManager(name, ['--role=webhook'])));
    await Promise.all(hooks.map((m) => m.waitReady()));
    ctl = await startManager('ctl-a', ['--role=controllers']);
    await ctl.waitReady();
  }, 90_000);

  it('--role=controllers leads and serves no webhook port; --role=webhook replicas serve admission without an elector', async () => {
    const mark = history.records.length;
    await settledLeader([ctl, ...hooks], LEASE_MS + 2 * JITTERED_RETRY_MS + 10_000);
    expect(history.latest()?.holder).toBe(identityOf(ctl));
    expect(history.since(mark).every((r) => r.holder === identityOf(ctl))).toBe(true);

    // The controllers replica: nothing listens on the webhook port it was given; readiness has no webhook or
    // certificate check.
    const refused = await new Promise<string>((resolve) => {
      const socket = connect(ctl.ports.webhook, '127.0.0.1', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    expect(refused).toBe('ECONNREFUSED');
    const ctlReady = (await ctl.get('/readyz?verbose')).body;
    expect(ctlReady).toMatch(/readyz check passed/);
    expect(ctlReady).not.toMatch(/webhook|certificates/);

    for (const m of hooks) {
      // No elector at all: no gauge series, no identity, and the webhook serves TLS.
      expect(await scrape(m)).not.toMatch(/^leader_election_master_status/m);
      const started = logLines(m).find((l) => l.msg === 'manager started');
      expect(started).toMatchObject({ role: 'webhook', leaderElection: false });
      expect(started?.identity).toBeUndefined();
      expect((await m.get('/readyz?verbose')).body).toMatch(/\[\+\]webhook ok/);
      expect((await presentedCertificate(m.ports.webhook)).subjectAltName).toContain(
        `${Names.webhookService}.${ns}.svc`,
      );
    }
  }, 60_000);

  it('webhook-only replicas leave a released Lease alone', async () => {
    ctl.signal('SIGTERM');
    expect(await exitOf(ctl)).toEqual({ code: 0, signal: null });
    await until('the Lease to be released', () => history.latest()?.holder === '', 10_000);
    const mark = history.records.length;
    // Longer than any candidate would wait to take a free (or expired) Lease.
    await sleep(LEASE_MS + 2 * JITTERED_RETRY_MS + SLACK_MS);
    expect(hooks.every(alive)).toBe(true);
    expect(history.since(mark)).toEqual([]);
    expect(history.latest()?.holder).toBe('');
    for (const m of hooks) expect(m.logs()).not.toMatch(/acquired the lease|"component":"leader"/);
  }, 60_000);
});

describe('standbys watch the Lease', () => {
  // Retries far apart (a candidate waits 30 to 66 s between attempts), so a standby that takes a
  // released Lease within a few seconds can only have learned of the release from its watch.
  const SLOW_RETRY_MS = 30_000;
  const SLOW = [
    '--leader-election-lease-duration=90s',
    '--leader-election-renew-deadline=60s',
    `--leader-election-retry-period=${SLOW_RETRY_MS / 1000}s`,
  ];

  it('a standby takes a released Lease at once, not at its next retry, through an ordinary optimistic write', async () => {
    await until('the Lease to be free', () => history.latest()?.holder === '', 30_000);
    const start = async (name: string) => {
      const m = await ManagerProcess.start({
        name,
        kubeconfigPath: envtest().kubeconfigPath,
        namespace: ns,
        args: SLOW,
      });
      processes.push(m);
      await m.waitReady();
      return m;
    };
    const leader = await start('watch-a');
    await settledLeader([leader], 30_000);
    const standby = await start('watch-b');
    // The standby has made its first attempt (it saw the holder) and is now in its long wait.
    await until(
      'the standby to observe the leader',
      () => logLines(standby).some((l) => l.msg === 'new leader observed' && l.leader === identityOf(leader)),
      30_000,
    );
    const mark = history.records.length;
    leader.signal('SIGTERM');
    expect(await exitOf(leader)).toEqual({ code: 0, signal: null });
    await settledLeader([standby], SLOW_RETRY_MS);

    const records = history.since(mark);
    const release = records.findIndex((r) => r.holder === '');
    expect(release).toBeGreaterThanOrEqual(0);
    const taken = records[release + 1];
    expect(taken).toMatchObject({
      holder: identityOf(standby),
      leaseTransitions: records[release].leaseTransitions + 1,
    });
    // Well inside the standby's shortest possible retry wait: the release woke it.
    expect(taken.acquireTime - records[release].renewTime).toBeLessThan(SLOW_RETRY_MS / 2);
    process.stderr.write(
      `watched handover: release → new leader ${taken.acquireTime - records[release].renewTime}ms (retry period ${SLOW_RETRY_MS}ms)\n`,
    );
    await standby.stop();
  }, 120_000);
});
