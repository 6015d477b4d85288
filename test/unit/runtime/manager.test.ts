import { describe, expect, it } from '@jest/globals';
import { KubeConfig } from '@kubernetes/client-node';
import { Paths, servedRuntimeWebhooks } from '../../../lib/contract.js';
import { FakeClock, settle } from '../../../lib/runtime/clock.js';
import { Logger } from '../../../lib/runtime/log.js';
import { Manager } from '../../../lib/runtime/manager.js';
import { parseOptions, type ManagerOptions } from '../../../lib/runtime/options.js';
import { Runnables, type ManagedElector, type Runnable, type RunnableGroup } from '../../../lib/runtime/runnables.js';
import { allow, mutating } from '../../../lib/runtime/webhook/index.js';

const BUDGET = 20_000;
const RESERVE = 2_000;
const DRAIN = 5_000;

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((res) => {
    resolve = res;
  });
  return { promise, resolve };
}

/** Runnables on fakes: every call is recorded in `events`, in the order it happened. */
function setup(withElector = true) {
  const clock = new FakeClock();
  const events: string[] = [];
  const logs: string[] = [];
  const stepDown = deferred();
  const elector: ManagedElector = {
    start: async () => {
      events.push('elector:start');
    },
    stepDown: () => {
      events.push('elector:stepDown');
      return stepDown.promise;
    },
    stop: async ({ release }) => {
      events.push(`elector:stop release=${release}`);
    },
  };
  const runnables = new Runnables({
    clock,
    logger: new Logger({}, 'debug', { write: (l) => logs.push(l) }),
    elector: withElector ? elector : undefined,
    drainTimeoutMs: DRAIN,
    gracefulShutdownTimeoutMs: BUDGET,
    shutdownReserveMs: RESERVE,
  });
  const add = (group: RunnableGroup, name: string, extra: Partial<Runnable> = {}) => {
    const r: Runnable = {
      name,
      start: () => {
        events.push(`start:${name}`);
      },
      stop: (budgetMs) => {
        events.push(`stop:${name} budget=${budgetMs}`);
      },
      drain: () => {
        events.push(`drain:${name}`);
      },
      ...extra,
    };
    runnables.add(group, r);
    return r;
  };
  return { clock, events, logs, runnables, add, stepDown };
}

/** One runnable per group, as the real manager registers them. */
function addAll(s: ReturnType<typeof setup>) {
  s.add('servers', 'metrics');
  s.add('liveness', 'event-loop');
  s.add('caches', 'pods', { needLeaderElection: true });
  s.add('caches', 'sidecarsets');
  s.add('certs', 'certificates');
  s.add('webhooks', 'webhook-server');
  s.add('election', 'lease-watch');
  s.add('controllers', 'sidecarset', { needLeaderElection: true });
}

/** Every group registered, started, and elected; the events so far forgotten. */
async function leading() {
  const s = setup();
  addAll(s);
  await s.runnables.start();
  await s.runnables.startLeading();
  s.events.length = 0;
  return s;
}

describe('Runnables (the manager on fakes)', () => {
  it('starts group by group, waiting for each, and campaigns last', async () => {
    const s = setup();
    addAll(s);
    const certs = deferred();
    s.add('certs', 'slow-certs', {
      start: () =>
        certs.promise.then(() => {
          s.events.push('start:slow-certs');
        }),
    });
    const started = s.runnables.start();
    await settle();
    expect(s.events).toEqual(['start:event-loop', 'start:metrics', 'start:sidecarsets', 'start:certificates']);
    certs.resolve();
    await started;
    expect(s.events.slice(4)).toEqual([
      'start:slow-certs',
      'start:webhook-server',
      'start:lease-watch',
      'elector:start',
    ]);
  });

  it('starts leader-only runnables only once elected, caches before controllers, and only once', async () => {
    const s = setup();
    addAll(s);
    await s.runnables.start();
    expect(s.events).not.toContain('start:pods');
    expect(s.events).not.toContain('start:sidecarset');
    s.events.length = 0;
    await s.runnables.startLeading();
    await s.runnables.startLeading();
    expect(s.events).toEqual(['start:pods', 'start:sidecarset']);
    expect(s.logs.join('')).toMatch(/"msg":"controllers started".*"controllers":\["sidecarset"\]/);
  });

  it('without an elector leads at once', async () => {
    const s = setup(false);
    s.add('caches', 'sidecarsets');
    s.add('controllers', 'sidecarset', { needLeaderElection: true });
    await s.runnables.start();
    expect(s.events).toEqual(['start:sidecarsets', 'start:sidecarset']);
  });

  it('stops controllers at once, with no budget, when leadership is lost', async () => {
    const s = await leading();
    await s.runnables.stopLeading();
    expect(s.events).toEqual(['stop:sidecarset budget=0']);
  });

  it('stops in the written order: drain and step down at once, controllers then the Lease, admission for its window, then the rest', async () => {
    const s = await leading();
    const stopped = s.runnables.stop();
    await settle();
    // Everything drains and the elector steps down before anything stops.
    expect(s.events).toEqual([
      'drain:event-loop',
      'drain:metrics',
      'drain:pods',
      'drain:sidecarsets',
      'drain:certificates',
      'drain:webhook-server',
      'drain:lease-watch',
      'drain:sidecarset',
      'elector:stepDown',
    ]);
    s.events.length = 0;
    s.stepDown.resolve();
    await settle();
    // The controllers get the budget less the reserve; all stopped, so the Lease is released.
    expect(s.events).toEqual([
      `stop:lease-watch budget=${BUDGET}`,
      `stop:sidecarset budget=${BUDGET - RESERVE}`,
      'elector:stop release=true',
    ]);
    s.events.length = 0;
    await s.clock.advance(DRAIN - 1);
    expect(s.events).toEqual([]); // admission is still served during the drain window
    await s.clock.advance(1);
    await stopped;
    expect(s.events).toEqual([
      `stop:webhook-server budget=${BUDGET - DRAIN - RESERVE / 2}`,
      `stop:pods budget=${BUDGET - DRAIN}`,
      `stop:sidecarsets budget=${BUDGET - DRAIN}`,
      `stop:certificates budget=${BUDGET - DRAIN}`,
      `stop:event-loop budget=${BUDGET - DRAIN}`,
      `stop:metrics budget=${BUDGET - DRAIN}`,
    ]);
    await expect(s.runnables.stop()).resolves.toBeUndefined(); // a second SIGTERM joins the first
    expect(() => s.add('controllers', 'late')).toThrow(/runnable late: added after shutdown began/);
    await s.runnables.startLeading();
    expect(s.events).not.toContain('start:late');
  });

  it("leaves the Lease to expire when a write is still in flight at the controllers' deadline, and the rest share what is left", async () => {
    const s = setup();
    addAll(s);
    s.add('controllers', 'stuck', {
      needLeaderElection: true,
      // Like Controller.stop(timeoutMs): false once the deadline passes with a reconcile still running.
      stop: (budgetMs) =>
        new Promise<boolean>((resolve) =>
          s.clock.after(budgetMs, () => {
            s.events.push('stuck:deadline');
            resolve(false);
          }),
        ),
    });
    await s.runnables.start();
    await s.runnables.startLeading();
    const stopped = s.runnables.stop();
    s.stepDown.resolve();
    s.events.length = 0;
    await s.clock.advance(BUDGET - RESERVE - 1);
    expect(s.events).not.toContain('elector:stop release=false');
    expect(s.events.filter((e) => e.startsWith('stop:webhook-server'))).toEqual([]); // admission waits for the leader's work too
    await s.clock.advance(1);
    await stopped;
    expect(s.events).toContain('stuck:deadline');
    expect(s.events.indexOf('elector:stop release=false')).toBeGreaterThan(s.events.indexOf('stuck:deadline'));
    expect(s.events).not.toContain('elector:stop release=true');
    // Whatever stops after the deadline only gets what is left of the budget (never below 0).
    expect(s.events).toContain(`stop:webhook-server budget=${RESERVE / 2}`);
    expect(s.events).toContain(`stop:metrics budget=${RESERVE}`);
    expect(s.logs.join('')).toMatch(/leaving the Lease to expire instead of releasing it/);
  });
});

describe('Manager feature gates', () => {
  const kubeConfig = () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };
  const manager = (argv: string[]) => {
    const logs: string[] = [];
    const options = parseOptions(argv, { POD_NAMESPACE: 'kruise-system', POD_NAME: 'mgr-0' }) as ManagerOptions;
    const m = new Manager({
      options,
      kubeConfig: kubeConfig(),
      logger: new Logger({}, 'info', { write: (l) => logs.push(l) }),
      clock: new FakeClock(),
      onExit: () => undefined,
    });
    return { m, logs };
  };
  const webhook = mutating(() => allow());

  it('PodWebhook=false: serves no pod webhook, says so, and serves the SidecarSet webhooks', () => {
    const { m, logs } = manager(['--feature-gates=PodWebhook=false']);
    expect(m.registerWebhook(Paths.mutatePod, webhook)).toBe(false);
    expect(m.registerWebhook(Paths.mutateSidecarSet, webhook)).toBe(true);
    expect(logs.join('')).toMatch(
      /"msg":"feature gate off: webhook not served".*"gate":"PodWebhook=false","webhook":"mpod.kb.io","path":"\/mutate-pod"/,
    );
    // The contract's list, which the constructs and the doctor can render and check against.
    // vworkloadspread.kb.io stays: as upstream, it refuses WorkloadSpreads while the gate is off.
    expect(servedRuntimeWebhooks({ PodWebhook: false }).map((w) => w.name)).toEqual([
      'msidecarset.kb.io',
      'vsidecarset.kb.io',
      'vworkloadspread.kb.io',
    ]);
    expect(servedRuntimeWebhooks({}).map((w) => w.name)).toEqual([
      'mpod.kb.io',
      'msidecarset.kb.io',
      'vsidecarset.kb.io',
      'vpod.kb.io',
      'vpodeviction.kb.io',
      'vworkloadspread.kb.io',
    ]);
    // WorkloadSpread=false drops only the pod deletion webhook (it serves nothing else here).
    expect(servedRuntimeWebhooks({ WorkloadSpread: false }).map((w) => w.name)).toEqual([
      'mpod.kb.io',
      'msidecarset.kb.io',
      'vsidecarset.kb.io',
      'vworkloadspread.kb.io',
    ]);
  });

  it('serves the pod webhook by default and with PodWebhook=true; a controllers replica serves none', () => {
    expect(manager([]).m.registerWebhook(Paths.mutatePod, webhook)).toBe(true);
    expect(manager(['--feature-gates=PodWebhook=true']).m.registerWebhook(Paths.mutatePod, webhook)).toBe(true);
    expect(manager(['--role=controllers']).m.registerWebhook(Paths.mutateSidecarSet, webhook)).toBe(false);
  });

  it('a webhook replica never leads: no elector, no controllers; the other roles campaign and run them', () => {
    const controller = { name: 'sidecarset', reconcile: async () => undefined };
    const webhookOnly = manager(['--role=webhook']).m;
    expect([webhookOnly.elector, webhookOnly.addController(controller)]).toEqual([undefined, undefined]);
    for (const role of ['all', 'controllers']) {
      const m = manager([`--role=${role}`]).m;
      expect(m.elector).toBeDefined();
      expect(m.addController(controller)?.name).toBe('sidecarset');
    }
  });
});
