import { afterEach, describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { FakeClock, settle } from '../../../../lib/runtime/clock.js';
import { Backoff, Informer, StaleCacheError, type InformerOptions } from '../../../../lib/runtime/informer/index.js';
import { Logger } from '../../../../lib/runtime/log.js';
import { valueOf } from '../metric-values.js';
import { FakeApi, apiError, type Obj } from './fake-api.js';

const STALL_MS = 150_000;
const running: Array<Informer<Obj>> = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((i) => i.stop()));
});

function setup(options: Partial<InformerOptions<Obj>> = {}) {
  const api = new FakeApi();
  const clock = new FakeClock();
  const logs: string[] = [];
  const registry = new Registry();
  const informer = new Informer<Obj>({
    path: '/api/v1/configmaps',
    listWatcher: api,
    logger: new Logger({}, 'debug', { write: (l) => logs.push(l) }),
    registry,
    clock,
    random: () => 0.5, // backoff delays exactly on the exponential steps
    watchTimeoutSeconds: 300,
    stallTimeoutMs: STALL_MS,
    ...options,
  });
  running.push(informer);
  const events: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => events.push(`add ${o.metadata?.name} ${JSON.stringify(o.data ?? {})}`),
    onUpdate: (old, o) =>
      events.push(`update ${o.metadata?.name} ${JSON.stringify(old.data ?? {})}->${JSON.stringify(o.data ?? {})}`),
    onDelete: (o) => events.push(`delete ${o.metadata?.name}`),
  });
  return { api, clock, informer, events, logs, registry };
}

/** Waits for the initial list, then lets the run loop open its first watch. */
async function synced(informer: Informer<Obj>): Promise<void> {
  await informer.waitForSync();
  await settle();
}

/** The watch dies and the history it would resume from is gone, as when the API server restarts. */
function outage(api: FakeApi): void {
  api.stallWatches();
  api.create(`during-outage-${api.listCalls.length}`);
  api.compact();
  api.breakWatches(new Error('ECONNREFUSED'));
}

/** The FakeClock an informer was built with (setup() makes one per informer). */
const clockOf = (informer: Informer<Obj>) => (informer as unknown as { clock: FakeClock }).clock;

const cached = (informer: Informer<Obj>) =>
  Object.fromEntries(informer.store.list().map((o) => [o.metadata?.name, o.data ?? {}]));

describe('Informer', () => {
  it('lists into the cache, reports sync, then follows watch events', async () => {
    const { api, informer, events } = setup();
    api.create('a', { v: '1' });
    api.create('b');
    await informer.start();
    await synced(informer);
    expect(informer.hasSynced()).toBe(true);
    expect(events).toEqual(['add a {"v":"1"}', 'add b {}']);

    api.update('a', { v: '2' });
    api.remove('b');
    api.create('c');
    await settle();
    expect(events.slice(2)).toEqual(['update a {"v":"1"}->{"v":"2"}', 'delete b', 'add c {}']);
    expect(cached(informer)).toEqual({ a: { v: '2' }, c: {} });
    expect(api.watchCalls[0]).toEqual({ resourceVersion: '102', timeoutSeconds: 300 });
  });

  it('caches objects without managedFields, from lists and from watch events, unless asked to keep them', async () => {
    const managed = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {} } }];
    for (const keepManagedFields of [false, true]) {
      const { api, informer } = setup({ keepManagedFields });
      api.create('listed').metadata!.managedFields = managed;
      await informer.start();
      await synced(informer);
      const watched = api.create('watched');
      watched.metadata!.managedFields = managed;
      api.update('watched', { v: '2' }); // the MODIFIED event carries the managedFields set above
      await settle();
      const fields = informer.store.list().map((o) => [o.metadata?.name, o.metadata?.managedFields]);
      expect(fields).toEqual([
        ['listed', keepManagedFields ? managed : undefined],
        ['watched', keepManagedFields ? managed : undefined],
      ]);
      expect(informer.store.getByName('watched', 'ns')?.data).toEqual({ v: '2' });
      await informer.stop();
    }
  });

  it('replays the cache to a handler registered late', async () => {
    const { api, informer } = setup();
    api.create('a');
    await informer.start();
    await synced(informer);
    const late: string[] = [];
    informer.addEventHandler({ onAdd: (o) => late.push(String(o.metadata?.name)) });
    expect(late).toEqual(['a']);
  });

  it('resumes from the last resourceVersion after a broken watch, without relisting', async () => {
    const { api, clock, informer, events } = setup();
    await informer.start();
    await synced(informer);
    api.create('a');
    await settle();
    api.breakWatches();
    api.create('b'); // happens while we are disconnected
    await clock.advance(1200); // first backoff step: 800ms × [0.5, 1.5)
    expect(api.watchCalls.map((w) => w.resourceVersion)).toEqual(['100', '101']);
    expect(events).toEqual(['add a {}', 'add b {}']);
    expect(api.listCalls).toHaveLength(1);
  });

  it('relists on 410 Gone and delivers exactly the differences against the cache', async () => {
    const { api, clock, informer, events, registry } = setup();
    api.create('unchanged', { v: '1' });
    api.create('modified', { v: '1' });
    api.create('deleted');
    api.create('recreated', { gen: '1' });
    await informer.start();
    await synced(informer);
    events.length = 0;

    api.stallWatches(); // nothing reaches us from here on...
    api.update('modified', { v: '2' });
    api.remove('deleted');
    api.remove('recreated');
    api.create('recreated', { gen: '2' }); // same name, new uid
    api.create('added');
    api.compact(); // ...and the history we missed is gone
    api.breakWatches();
    await clock.advance(800); // backoff, then a re-watch that gets 410
    await clock.advance(1600); // a 410 without progress backs off too, then relists

    expect(api.listCalls).toHaveLength(2);
    expect(events.sort()).toEqual([
      'add added {}',
      'add recreated {"gen":"2"}',
      'delete deleted',
      'delete recreated',
      'update modified {"v":"1"}->{"v":"2"}',
    ]);
    expect(cached(informer)).toEqual({
      unchanged: { v: '1' },
      modified: { v: '2' },
      recreated: { gen: '2' },
      added: {},
    });
    expect(await valueOf(registry, 'informer_watch_restarts_total', { reason: 'gone' })).toBe(1);
  });

  it('relists at once when a working watch gets a 410 ERROR event', async () => {
    const { api, informer } = setup();
    await informer.start();
    await synced(informer);
    api.create('a');
    await settle();
    api.sendError(410);
    await settle();
    expect(api.listCalls).toHaveLength(2);
  });

  it('relists at once on a 410 that follows a failed watch (an outage): no second backoff before the relist', async () => {
    const { api, clock, informer } = setup();
    await informer.start();
    await synced(informer);
    outage(api); // the API server restarts: its watch cache no longer knows our resourceVersion
    await clock.advance(800); // one backoff step, then a re-watch that gets 410...
    expect(api.listCalls).toHaveLength(2); // ...and the relist right after it, not another step later
    expect(api.watchCalls.map((w) => w.resourceVersion)).toEqual(['100', '100', '101']); // watching again from the relist
  });

  it('resets the backoff after a watch that held, so a second outage starts from the first step', async () => {
    const { api, clock, informer } = setup();
    await informer.start();
    await synced(informer);
    // First outage: the watch breaks and every list fails for a while; the backoff climbs to its cap.
    outage(api);
    for (let i = 0; i < 8; i++) api.listFailures.push(new Error('ECONNREFUSED'));
    await clock.advance(60_000);
    expect(api.listCalls.length).toBe(10);
    const watches = api.watchCalls.length;
    await clock.advance(30_000); // recovered: a quiet watch holds (no events at all)
    expect(api.watchCalls).toHaveLength(watches);
    // Second outage: the first retry comes after the first step (800ms), not the cap.
    api.breakWatches(new Error('ECONNREFUSED'));
    await clock.advance(799);
    expect(api.watchCalls).toHaveLength(watches);
    await clock.advance(1);
    expect(api.watchCalls).toHaveLength(watches + 1);
  });

  it("caps every reconnect delay, jitter included (client-go's 30s x 1.5 = 45s kept caches stale for a minute)", async () => {
    const clock = new FakeClock();
    const worst = new Backoff({ initialMs: 800, maxMs: 30_000 }, clock, () => 0.999);
    const delays = Array.from({ length: 12 }, () => worst.next());
    expect(Math.max(...delays)).toBeLessThanOrEqual(30_000);
    // The informer's default cap: after any number of failures the next attempt is at most 5s away.
    const { api, informer } = setup({ random: () => 0.999 });
    for (let i = 0; i < 30; i++) api.listFailures.push(new Error('ECONNREFUSED'));
    const times: number[] = [];
    const list = api.list.bind(api);
    api.list = (o) => {
      times.push(clockOf(informer).now());
      return list(o);
    };
    await informer.start();
    await clockOf(informer).advance(120_000);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(gaps.length).toBeGreaterThan(20);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(5_000);
  });

  it('tells the truth about staleness: fresh while watching, stale past the bound once the watch is down, fresh again after the relist', async () => {
    const { api, clock, informer, logs, registry } = setup({
      maxStalenessMs: 10_000,
      backoff: { initialMs: 800, maxMs: 5_000 },
    });
    expect(() => informer.checkFresh()).toThrow(/has not synced yet/);
    await informer.start();
    await synced(informer);
    expect(informer.staleness()).toBe(0);
    expect(() => informer.checkFresh()).not.toThrow();
    outage(api);
    for (let i = 0; i < 20; i++) api.listFailures.push(new Error('ECONNREFUSED'));
    await clock.advance(10_000);
    expect(() => informer.checkFresh()).not.toThrow(); // within the bound
    await clock.advance(1);
    expect(() => informer.checkFresh()).toThrow(StaleCacheError);
    expect(() => informer.checkFresh()).toThrow(/not proven current for 10.0s \(bound 10s, --max-cache-staleness\)/);
    expect(
      await valueOf(registry, 'informer_cache_staleness_seconds', { resource: '/api/v1/configmaps' }),
    ).toBeGreaterThan(10);
    expect(logs.filter((l) => l.includes('cache not proven current past its staleness bound'))).toHaveLength(1);
    api.listFailures.length = 0; // the API server answers again
    await clock.advance(5_000); // within one capped backoff step
    expect(informer.staleness()).toBe(0);
    expect(() => informer.checkFresh()).not.toThrow();
    expect(logs.some((l) => l.includes('cache is current again'))).toBe(true);
  });

  it('a watch resumed from an old resourceVersion proves the cache current only by an event, a bookmark or holding a moment', async () => {
    const { api, clock, informer } = setup({ maxStalenessMs: 1_000 });
    await informer.start();
    await synced(informer);
    api.breakWatches(new Error('socket hang up'));
    await clock.advance(800); // re-watch from the last resourceVersion: connected, nothing said yet
    expect(informer.staleness()).toBeGreaterThan(0);
    api.sendBookmark();
    expect(informer.staleness()).toBe(0);
  });

  it('a server that answers every watch with 410 cannot drive it into a list storm', async () => {
    const { api, clock, informer } = setup();
    api.watch = (_o, onEvent) => {
      try {
        onEvent({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } as Obj });
        return Promise.resolve();
      } catch (e) {
        return Promise.reject(e);
      }
    };
    await informer.start();
    await clock.advance(10_000);
    // Backoff 0.8, 1.6, 3.2, 6.4s: about five lists in ten seconds, not thousands.
    expect(api.listCalls.length).toBeGreaterThanOrEqual(3);
    expect(api.listCalls.length).toBeLessThanOrEqual(6);
  });

  it('backs off exponentially while the API server is unreachable, then recovers', async () => {
    const { api, clock, informer } = setup();
    api.listFailures.push(new Error('ECONNREFUSED'), new Error('ECONNREFUSED'), new Error('ECONNREFUSED'));
    await informer.start();
    await settle();
    expect(api.listCalls).toHaveLength(1);
    await clock.advance(799);
    expect(api.listCalls).toHaveLength(1);
    await clock.advance(1); // 800ms
    expect(api.listCalls).toHaveLength(2);
    await clock.advance(1599);
    expect(api.listCalls).toHaveLength(2);
    await clock.advance(1); // +1600ms
    expect(api.listCalls).toHaveLength(3);
    await clock.advance(3200); // +3200ms: the fourth list succeeds
    expect(api.listCalls).toHaveLength(4);
    expect(informer.hasSynced()).toBe(true);
  });

  it("keeps retrying errors other than 410 forever (client-node's informer stops on them)", async () => {
    const { api, clock, informer } = setup({ backoff: { maxMs: 1000, initialMs: 100 } });
    for (let i = 0; i < 50; i++) api.listFailures.push(apiError(i % 2 ? 500 : 403));
    await informer.start();
    await clock.advance(60_000);
    expect(api.listCalls.length).toBeGreaterThan(50);
    expect(informer.hasSynced()).toBe(true);
  });

  it("waits at least as long as the server's Retry-After asks", async () => {
    const { api, clock, informer } = setup();
    api.listFailures.push(new ApiException(429, 'storage is (re)initializing', { code: 429 }, { 'Retry-After': '5' }));
    await informer.start();
    await clock.advance(4999);
    expect(api.listCalls).toHaveLength(1); // the 800ms backoff alone would have retried by now
    await clock.advance(1);
    expect(api.listCalls).toHaveLength(2);
  });

  it('aborts a silently stalled watch and re-watches from the last resourceVersion', async () => {
    const { api, clock, informer, events, registry } = setup();
    await informer.start();
    await synced(informer);
    api.stallWatches();
    api.create('missed-while-stalled');
    await clock.advance(STALL_MS - 1);
    expect(api.watchCalls).toHaveLength(1);
    await clock.advance(1);
    await clock.advance(1200); // backoff before re-watching
    expect(api.watchCalls).toHaveLength(2);
    expect(api.watchCalls[1].resourceVersion).toBe('100');
    expect(events).toEqual(['add missed-while-stalled {}']);
    expect(await valueOf(registry, 'informer_watch_restarts_total', { reason: 'stalled' })).toBe(1);
  });

  it('survives long quiet periods as long as bookmarks arrive, and watches from the bookmark', async () => {
    const { api, clock, informer } = setup();
    await informer.start();
    await synced(informer);
    api.create('a');
    api.compact();
    for (let minute = 0; minute < 10; minute++) {
      await clock.advance(60_000);
      api.sendBookmark();
    }
    expect(api.watchCalls).toHaveLength(1); // no abort after 30s, nor after 10 minutes
    api.closeWatches(); // the server rotates the stream at timeoutSeconds
    await settle();
    expect(api.watchCalls).toHaveLength(2);
    expect(api.watchCalls[1].resourceVersion).toBe('101');
    expect(api.listCalls).toHaveLength(1);
  });

  it('does not spin when the server closes every watch at once without events', async () => {
    const { api, clock, informer } = setup();
    await informer.start();
    await synced(informer);
    for (let i = 0; i < 5; i++) {
      api.closeWatches();
      await settle();
    }
    expect(api.watchCalls.length).toBeLessThanOrEqual(2);
    await clock.advance(1200);
    expect(api.watchCalls.length).toBeGreaterThan(1);
  });

  it('falls back to one unpaged list when a continue token expires mid-list', async () => {
    const { api, informer } = setup({ pageSize: 2 });
    for (const n of ['a', 'b', 'c', 'd', 'e']) api.create(n);
    const list = api.list.bind(api);
    let pages = 0;
    api.list = async (o) => {
      if (o.continueToken && pages++ === 0) throw apiError(410, 'continue token expired');
      return list(o);
    };
    await informer.start();
    await synced(informer);
    expect(pages).toBe(1); // the second page was asked for, with the first page's token, and failed
    expect(api.listCalls.map((c) => [c.limit, c.continueToken])).toEqual([
      [2, ''],
      [undefined, ''],
    ]);
    expect(Object.keys(cached(informer)).sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('abandons a list that never answers and tries again', async () => {
    const { api, clock, informer } = setup({ listTimeoutMs: 10_000 });
    api.hangLists = true;
    await informer.start();
    await clock.advance(10_000);
    api.hangLists = false;
    await clock.advance(1200);
    expect(api.listCalls).toHaveLength(2);
    expect(informer.hasSynced()).toBe(true);
  });

  it('ignores nameless objects and keeps going when a handler throws', async () => {
    const { api, informer, logs } = setup();
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    await informer.start();
    await synced(informer);
    api.sendRaw({ type: 'ADDED', object: { metadata: {} } });
    api.create('after');
    await settle();
    expect(cached(informer)).toEqual({ after: {} });
    expect(logs.some((l) => l.includes('handler bug'))).toBe(true);
  });

  it('turns unhealthy when the API server stays silent past the bound, and recovers', async () => {
    const { api, clock, informer } = setup({ unhealthyAfterMs: 200_000, backoff: { initialMs: 1000, maxMs: 30_000 } });
    await informer.start();
    await synced(informer);
    expect(informer.health().healthy).toBe(true);
    for (let i = 0; i < 100; i++) api.watchFailures.push(new Error('ECONNREFUSED'));
    api.breakWatches();
    await clock.advance(200_001);
    expect(informer.health().healthy).toBe(false);
    expect(informer.health().message).toMatch(/no list, watch or event/);
    expect(() => informer.checkHealth()).toThrow(/no list, watch or event for 200s/);
    api.watchFailures.length = 0;
    await clock.advance(60_000);
    expect(informer.health().healthy).toBe(true);
  });

  it('is healthy while never started (a leader-only cache on a replica that does not lead), and judged once started', async () => {
    // Found on real kubelets: a webhook-only replica's unstarted pods cache failed /healthz after
    // unhealthyAfterMs, so the kubelet restarted every webhook replica at the same moment.
    const { api, clock, informer } = setup({ unhealthyAfterMs: 200_000, backoff: { initialMs: 1000, maxMs: 30_000 } });
    await clock.advance(600_000);
    expect(informer.health()).toMatchObject({ healthy: true, message: expect.stringMatching(/not started/) });
    expect(() => informer.checkHealth()).not.toThrow();
    expect(api.listCalls).toHaveLength(0);
    await informer.start();
    await synced(informer);
    for (let i = 0; i < 100; i++) api.watchFailures.push(new Error('ECONNREFUSED'));
    api.breakWatches();
    await clock.advance(200_001);
    expect(informer.health().healthy).toBe(false);
  });

  it('stop() ends the watch, and a pending waitForSync rejects', async () => {
    const { api, informer } = setup();
    api.hangLists = true;
    await informer.start();
    const sync = informer.waitForSync();
    await informer.stop();
    await expect(sync).rejects.toThrow(/stopped before it synced/);
    await expect(informer.waitForSync()).rejects.toThrow(/stopped before it synced/);
    expect(api.openWatches).toBe(0);
  });

  it('waitForSync honours its abort signal', async () => {
    const { api, informer } = setup();
    api.hangLists = true;
    await informer.start();
    const abort = new AbortController();
    const sync = informer.waitForSync(abort.signal);
    abort.abort(new Error('gave up'));
    await expect(sync).rejects.toThrow('gave up');
  });

  it('by default has the server rotate watches every 60-120s, well inside the stall bound', async () => {
    for (const random of [0, 0.99]) {
      const { api, clock, informer, registry } = setup({
        watchTimeoutSeconds: undefined,
        stallTimeoutMs: undefined,
        random: () => random,
      });
      await informer.start();
      await synced(informer);
      const timeout = api.watchCalls[0].timeoutSeconds;
      expect(timeout).toBeGreaterThanOrEqual(60);
      expect(timeout).toBeLessThan(120);
      // A quiet resource: the only sign of life is the bookmark just before the deadline.
      await clock.advance(timeout * 1000 - 2000);
      api.sendBookmark();
      await clock.advance(2000);
      api.closeWatches();
      await settle();
      expect(api.watchCalls).toHaveLength(2);
      expect(await valueOf(registry, 'informer_watch_restarts_total', { reason: 'stalled' })).toBeUndefined();
    }
  });

  it('stretches the default stall bound beyond a long configured watch timeout', async () => {
    const { api, clock, informer, registry } = setup({ watchTimeoutSeconds: 600, stallTimeoutMs: undefined });
    await informer.start();
    await synced(informer);
    await clock.advance(600_000); // a quiet 10-minute watch is not a stalled one
    expect(api.watchCalls).toHaveLength(1);
    expect(await valueOf(registry, 'informer_watch_restarts_total', { reason: 'stalled' })).toBeUndefined();
    await clock.advance(30_000);
    expect(await valueOf(registry, 'informer_watch_restarts_total', { reason: 'stalled' })).toBe(1);
  });

  it('exports cache size and last activity', async () => {
    const { api, informer, registry, clock } = setup();
    api.create('a');
    await informer.start();
    await synced(informer);
    expect(await valueOf(registry, 'informer_cache_objects', { resource: '/api/v1/configmaps' })).toBe(1);
    expect(await valueOf(registry, 'informer_last_activity_timestamp_seconds', {})).toBe(clock.now() / 1000);
    expect(await valueOf(registry, 'informer_lists_total', {})).toBe(1);
  });
});

/** What Node's http client throws when nothing listens at the address (an API server down, its host up). */
const refused = () => Object.assign(new Error('connect ECONNREFUSED 10.96.0.1:443'), { code: 'ECONNREFUSED' });
/** A connect that timed out: nothing says whether an API server is up. */
const timedOut = () => Object.assign(new Error('connect ETIMEDOUT 10.96.0.1:443'), { code: 'ETIMEDOUT' });

describe('Informer after an API outage (drill 7: every API server restarted)', () => {
  it('retries a refused connect at once, then within 1s: behind a Service with 2 of 3 API servers down, it does not back off to 5s', async () => {
    const { api, clock, informer } = setup();
    await informer.start();
    await synced(informer);
    const times: number[] = [];
    const watch = api.watch.bind(api);
    api.watch = (o, onEvent, onConnected) => {
      times.push(clock.now());
      return watch(o, onEvent, onConnected);
    };
    for (let i = 0; i < 6; i++) api.watchFailures.push(refused());
    const t0 = clock.now();
    api.breakWatches(refused());
    await settle();
    await clock.advance(3_000);
    // At once, then 100, 200, 400, 800ms (jitter at its midpoint), then capped at 1s; the ordinary
    // backoff would have waited 800, 1600, 3200ms.
    expect(times.map((t) => t - t0)).toEqual([0, 100, 300, 700, 1500, 2500]);
    await clock.advance(1_000);
    expect(times).toHaveLength(7); // the seventh connects
    api.sendBookmark(); // resumed from its resourceVersion: current once the server says something
    expect(informer.staleness()).toBe(0);
  });

  it('answers admission at once within the staleness bound, even with the watch down', async () => {
    const { api, clock, informer } = setup({ maxStalenessMs: 10_000 });
    await informer.start();
    await synced(informer);
    api.watchFailures.push(...Array.from({ length: 20 }, timedOut));
    api.breakWatches(timedOut());
    await clock.advance(9_000);
    expect(informer.staleness()).toBe(9_000);
    let answered = false;
    void informer.awaitFresh().then(() => (answered = true));
    await settle();
    expect(answered).toBe(true);
  });

  it('past the bound, admission waits for the relist (woken at once) and then sees what was written meanwhile; readiness held through the outage', async () => {
    const { api, clock, informer } = setup({ maxStalenessMs: 10_000 });
    await informer.start();
    await synced(informer);
    for (let i = 0; i < 40; i++) api.listFailures.push(timedOut());
    outage(api); // the watch breaks, a SidecarSet is written meanwhile, its history compacted: relist
    await clock.advance(20_000);
    expect(() => informer.checkFresh()).toThrow(StaleCacheError);
    // Every attempt failed to connect: no API server reachable, so readiness does not fail.
    expect(() => informer.checkReady()).not.toThrow();
    // An API server is back and calls the webhook: the review waits, the reconnect is woken out of
    // its backoff pause (up to 5s) and the answer comes from the relisted cache.
    api.listFailures.length = 0;
    let answeredAt = 0;
    const waited = informer.awaitFresh().then(() => (answeredAt = clock.now()));
    const asked = clock.now();
    await clock.advance(200);
    await waited;
    expect(answeredAt - asked).toBeLessThanOrEqual(200);
    expect(Object.keys(cached(informer))).toContain('during-outage-1');
    expect(informer.staleness()).toBe(0);
  });

  it('refuses after waiting in vain, and only then fails readiness; a stream of waiting reviews does not make it retry faster than every 200ms', async () => {
    const { api, clock, informer } = setup({ maxStalenessMs: 10_000, freshWaitMs: 5_000 });
    await informer.start();
    await synced(informer);
    api.watchFailures.push(...Array.from({ length: 500 }, timedOut));
    api.breakWatches(timedOut());
    await clock.advance(11_000);
    expect(() => informer.checkReady()).not.toThrow();
    const calls = api.watchCalls.length;
    const outcome = informer.awaitFresh().then(
      () => 'answered',
      (e: unknown) => String(e),
    );
    for (let t = 0; t < 5_000; t += 10) {
      void informer.awaitFresh().catch(() => undefined); // the stream of reviews, every 10ms
      await clock.advance(10);
    }
    expect(await outcome).toMatch(
      /StaleCacheError: cache of \/api\/v1\/configmaps not proven current for 16.0s .*; waited 5.0s for the relist$/,
    );
    expect(api.watchCalls.length - calls).toBeLessThanOrEqual(5_000 / 200 + 1);
    expect(api.watchCalls.length - calls).toBeGreaterThanOrEqual(10); // woken: far more than the 5s backoff allows
    expect(() => informer.checkReady()).toThrow(
      /although an API server called a webhook that waited for this cache in vain, unable to connect/,
    );
  });

  it('fails readiness past the bound when an API server answers its list with an error (RBAC, a sick server)', async () => {
    const { api, clock, informer } = setup({ maxStalenessMs: 10_000 });
    await informer.start();
    await synced(informer);
    for (let i = 0; i < 40; i++) api.listFailures.push(apiError(403, 'forbidden'));
    outage(api);
    await clock.advance(9_000);
    expect(() => informer.checkReady()).not.toThrow(); // within the bound
    await clock.advance(2_000);
    expect(() => informer.checkReady()).toThrow(/although an API server refused our list or watch \(4xx\)/);
    api.listFailures.length = 0;
    await clock.advance(5_000);
    expect(() => informer.checkReady()).not.toThrow();
  });

  it("a restarting API server's 503 (paths not installed yet, Retry-After 5s) neither fails readiness nor holds back a woken relist; a 429's Retry-After is kept", async () => {
    const notInstalled = () =>
      new ApiException(
        503,
        'the request has been made before all known HTTP paths have been installed, please try again',
        { code: 503 },
        { 'Retry-After': '5' },
      );
    const { api, clock, informer } = setup({ maxStalenessMs: 10_000 });
    await informer.start();
    await synced(informer);
    for (let i = 0; i < 10; i++) api.listFailures.push(notInstalled());
    outage(api);
    await clock.advance(20_000);
    expect(() => informer.checkFresh()).toThrow(StaleCacheError);
    expect(() => informer.checkReady()).not.toThrow(); // every replica gets the same answer
    // The paths are installed; the storage is still initializing once (429, Retry-After 3s).
    api.listFailures.length = 0;
    api.listFailures.push(new ApiException(429, 'storage is (re)initializing', { code: 429 }, { 'Retry-After': '3' }));
    const lists = api.listCalls.length;
    let answeredAt = 0;
    const asked = clock.now();
    void informer.awaitFresh().then(() => (answeredAt = clock.now()));
    await clock.advance(200);
    expect(api.listCalls.length).toBe(lists + 1); // woken within 200ms, not after the 5s the 503 asked for
    for (let t = 0; t < 2_700; t += 100) {
      void informer.awaitFresh().catch(() => undefined); // more reviews: the 429's Retry-After holds
      await clock.advance(100);
    }
    expect(api.listCalls.length).toBe(lists + 1);
    await clock.advance(200);
    expect(api.listCalls.length).toBe(lists + 2);
    expect(answeredAt - asked).toBeGreaterThanOrEqual(3_000);
    expect(answeredAt - asked).toBeLessThanOrEqual(3_300);
    expect(() => informer.checkReady()).not.toThrow();
  });
});
