import { afterEach, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { Client } from '../../../lib/runtime/client/index.js';
import { FakeClock, settle } from '../../../lib/runtime/clock.js';
import { Controller, type ControllerOptions, type Reconciler, type Request } from '../../../lib/runtime/controller.js';
import type { EventHandler, EventSource } from '../../../lib/runtime/informer/index.js';
import { Logger } from '../../../lib/runtime/log.js';
import { ItemExponentialFailureRateLimiter } from '../../../lib/runtime/workqueue/index.js';
import { localKubeConfig } from './kube/local-kubeconfig.js';
import { histogramCount, valueOf } from './metric-values.js';

const controllers: Controller[] = [];
afterEach(async () => {
  await Promise.all(controllers.splice(0).map((c) => c.stop()));
});

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

function setup(reconcile: Reconciler, options: Partial<ControllerOptions> = {}) {
  const clock = new FakeClock();
  const registry = new Registry();
  const logs: string[] = [];
  const controller = new Controller({
    name: 'sidecarset',
    reconcile,
    // Never called: these reconcilers do not use the API (nothing listens at port 1).
    client: new Client(localKubeConfig('http://127.0.0.1:1')),
    logger: new Logger({}, 'debug', { write: (l) => logs.push(l) }),
    registry,
    clock,
    rateLimiter: new ItemExponentialFailureRateLimiter(1000, 60_000),
    ...options,
  });
  controllers.push(controller);
  return { controller, clock, registry, logs };
}

const total = (registry: Registry, result: string) =>
  valueOf(registry, 'controller_runtime_reconcile_total', { controller: 'sidecarset', result });

class FakeSource implements EventSource<KubernetesObject> {
  handlers: Array<EventHandler<KubernetesObject>> = [];
  private synced = deferred();
  addEventHandler(h: EventHandler<KubernetesObject>) {
    this.handlers.push(h);
    return () => {
      this.handlers = this.handlers.filter((x) => x !== h);
    };
  }
  waitForSync(signal?: AbortSignal) {
    return new Promise<void>((resolve, reject) => {
      this.synced.promise.then(resolve);
      signal?.addEventListener('abort', () => reject(signal.reason));
    });
  }
  sync() {
    this.synced.resolve();
  }
}

const obj = (name: string, namespace?: string): KubernetesObject => ({ metadata: { name, namespace } });

describe('Controller', () => {
  it('reconciles each queued object once, deduping repeated events', async () => {
    const seen: Request[] = [];
    const { controller } = setup((req) => {
      seen.push(req);
    });
    controller.enqueue({ namespace: 'ns', name: 'a' });
    controller.enqueue({ name: 'a', namespace: 'ns' });
    controller.enqueue({ name: 'cluster-scoped' });
    await controller.start();
    await settle();
    expect(seen).toEqual([{ namespace: 'ns', name: 'a' }, { name: 'cluster-scoped' }]);
  });

  it('runs up to `workers` reconciles at once, but never two for the same object', async () => {
    const running = new Set<string>();
    let peak = 0;
    let overlapSameKey = false;
    const gates: Array<() => void> = [];
    const { controller, registry } = setup(
      async (req) => {
        if (running.has(req.name)) overlapSameKey = true;
        running.add(req.name);
        peak = Math.max(peak, running.size);
        await new Promise<void>((r) => gates.push(r));
        running.delete(req.name);
      },
      { workers: 3 },
    );
    await controller.start();
    for (const n of ['a', 'b', 'c', 'd', 'e']) controller.enqueue({ name: n });
    await settle();
    expect(running.size).toBe(3);
    expect(await valueOf(registry, 'controller_runtime_active_workers', { controller: 'sidecarset' })).toBe(3);
    controller.enqueue({ name: 'a' }); // 'a' is being reconciled: must wait
    for (let i = 0; i < 20; i++) {
      gates.splice(0).forEach((open) => open());
      await settle();
    }
    expect(peak).toBe(3);
    expect(overlapSameKey).toBe(false);
    expect(await valueOf(registry, 'controller_runtime_max_concurrent_reconciles', { controller: 'sidecarset' })).toBe(
      3,
    );
  });

  it('requeues errors with per-object backoff and forgets the backoff after a success', async () => {
    let failuresLeft = 2;
    const attempts: number[] = [];
    const { controller, clock, registry } = setup(async () => {
      attempts.push(clock.now());
      if (failuresLeft-- > 0) throw new Error('API conflict');
    });
    const t0 = clock.now();
    controller.enqueue({ namespace: 'ns', name: 'a' });
    await controller.start();
    await settle();
    await clock.advance(999);
    expect(attempts).toHaveLength(1);
    await clock.advance(1); // 1s backoff
    expect(attempts).toHaveLength(2);
    await clock.advance(2000); // 2s backoff
    expect(attempts.map((t) => t - t0)).toEqual([0, 1000, 3000]);
    expect(controller.queue.numRequeues({ namespace: 'ns', name: 'a' })).toBe(0);
    expect(await total(registry, 'error')).toBe(2);
    expect(await total(registry, 'success')).toBe(1);
    expect(await valueOf(registry, 'controller_runtime_reconcile_errors_total', { controller: 'sidecarset' })).toBe(2);
  });

  it('survives synchronous throws and non-Error rejections without losing a worker', async () => {
    const done: string[] = [];
    const { controller, logs } = setup((req) => {
      if (req.name === 'sync-throw') throw new TypeError('cannot read properties of undefined');
      if (req.name === 'reject-string') return Promise.reject('just a string');
      done.push(req.name);
      return undefined;
    });
    await controller.start();
    controller.enqueue({ name: 'sync-throw' });
    controller.enqueue({ name: 'reject-string' });
    controller.enqueue({ name: 'fine' });
    await settle();
    expect(done).toEqual(['fine']);
    controller.enqueue({ name: 'fine-again' });
    await settle();
    expect(done).toEqual(['fine', 'fine-again']);
    expect(logs.filter((l) => l.includes('Reconciler error'))).toHaveLength(2);
  });

  it('requeueAfterMs reconciles again after that delay', async () => {
    const attempts: number[] = [];
    const { controller, clock, registry } = setup(() => {
      attempts.push(clock.now());
      return attempts.length === 1 ? { requeueAfterMs: 30_000 } : {};
    });
    await controller.start();
    controller.enqueue({ name: 'a' });
    await settle();
    await clock.advance(29_999);
    expect(attempts).toHaveLength(1);
    await clock.advance(1);
    expect(attempts).toHaveLength(2);
    expect(await total(registry, 'requeue_after')).toBe(1);
  });

  it('requeue: true goes through the rate limiter', async () => {
    let calls = 0;
    const { controller, clock, registry } = setup(() => (++calls < 3 ? { requeue: true } : undefined));
    await controller.start();
    controller.enqueue({ name: 'a' });
    await settle();
    await clock.advance(1000);
    await clock.advance(2000);
    expect(calls).toBe(3);
    expect(await total(registry, 'requeue')).toBe(2);
  });

  it('treats nonsense results as success instead of crashing or spinning', async () => {
    const results: unknown[] = [
      42,
      'yes',
      null,
      { requeueAfterMs: Number.NaN },
      { requeueAfterMs: -5 },
      { requeue: 'true' },
    ];
    let i = 0;
    const { controller, registry, clock } = setup(() => results[i++] as never);
    await controller.start();
    for (let n = 0; n < results.length; n++) controller.enqueue({ name: `o${n}` });
    await settle();
    await clock.advance(120_000);
    expect(i).toBe(results.length);
    expect(await total(registry, 'success')).toBe(results.length);
  });

  it('stop() waits for in-flight reconciles, aborts their signal, and starts nothing new', async () => {
    const gate = deferred();
    const started: string[] = [];
    let sawAbort = false;
    const { controller } = setup(async (req, ctx) => {
      started.push(req.name);
      await gate.promise;
      sawAbort = ctx.signal.aborted;
    });
    await controller.start();
    controller.enqueue({ name: 'in-flight' });
    await settle();
    controller.enqueue({ name: 'queued' });
    let stopped = false;
    const stopping = controller.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    gate.resolve();
    await stopping;
    expect(sawAbort).toBe(true);
    expect(started).toEqual(['in-flight']);
    controller.enqueue({ name: 'after-stop' });
    await settle();
    expect(started).toEqual(['in-flight']);
  });

  it('stop(timeout) is bounded: a reconcile that never returns is abandoned at the deadline, and stop says so', async () => {
    const { controller, clock, logs } = setup(() => new Promise<void>(() => undefined)); // a write that hangs
    await controller.start();
    controller.enqueue({ name: 'stuck' });
    await settle();
    let result: boolean | undefined;
    const stopping = controller.stop(5_000).then((r) => {
      result = r;
    });
    await clock.advance(4_900);
    expect(result).toBeUndefined();
    await clock.advance(100);
    await stopping;
    expect(result).toBe(false);
    expect(logs.some((l) => l.includes('reconciles still running at the stop deadline'))).toBe(true);
    controllers.splice(controllers.indexOf(controller), 1); // its worker never ends: nothing to wait for after the test
  });

  it('stop(timeout) resolves true at once when the reconciles end between writes on the aborted signal', async () => {
    const writes: number[] = [];
    const { controller, clock } = setup(async (_req, ctx) => {
      for (let i = 0; i < 1000; i++) {
        if (ctx.signal.aborted) return; // the check a reconciler makes before each write
        writes.push(i);
        await new Promise<void>((r) => clock.after(10, r));
      }
    });
    await controller.start();
    controller.enqueue({ name: 'long' });
    await clock.advance(50);
    const stopping = controller.stop(5_000);
    const before = writes.length;
    await clock.advance(20);
    expect(await stopping).toBe(true);
    expect(writes.length - before).toBeLessThanOrEqual(1);
  });

  it('watches sources: waits for sync, maps events (both sides of an update), and shrugs off mapping bugs', async () => {
    const seen: string[] = [];
    const source = new FakeSource();
    const { controller, logs } = setup((req) => {
      seen.push(`${req.namespace}/${req.name}`);
    });
    controller.watch(source, (o) => {
      if (o.metadata?.name === 'bad') throw new Error('mapper bug');
      return [{ namespace: o.metadata?.namespace, name: `owner-of-${o.metadata?.name}` }];
    });
    let started = false;
    const starting = controller.start().then(() => {
      started = true;
    });
    source.handlers[0].onAdd?.(obj('x', 'ns'));
    source.handlers[0].onAdd?.(obj('bad', 'ns'));
    await settle();
    expect(started).toBe(false);
    expect(seen).toEqual([]);
    source.sync();
    await starting;
    source.handlers[0].onUpdate?.(obj('old', 'ns'), obj('new', 'ns'));
    await settle();
    expect(seen.sort()).toEqual(['ns/owner-of-new', 'ns/owner-of-old', 'ns/owner-of-x']);
    expect(logs.some((l) => l.includes('mapper bug'))).toBe(true);
  });

  it('by default enqueues the object itself, and unsubscribes on stop', async () => {
    const seen: string[] = [];
    const source = new FakeSource();
    source.sync();
    const { controller } = setup((req) => {
      seen.push(req.name);
    });
    controller.watch(source);
    await controller.start();
    source.handlers[0].onDelete?.(obj('gone', 'ns'));
    source.handlers[0].onAdd?.({ metadata: {} });
    await settle();
    expect(seen).toEqual(['gone']);
    await controller.stop();
    expect(source.handlers).toHaveLength(0);
  });

  it('start() fails when caches do not sync in time', async () => {
    const { controller, clock } = setup(() => undefined, { cacheSyncTimeoutMs: 5000 });
    controller.watch(new FakeSource());
    const starting = controller.start();
    const outcome = starting.then(
      () => 'started',
      (e: Error) => e.message,
    );
    await clock.advance(5000);
    expect(await outcome).toMatch(/caches did not sync within 5000ms/);
  });

  it('records reconcile time on the injected clock', async () => {
    const { controller, clock, registry } = setup(async () => {
      await new Promise<void>((r) => clock.after(250, r));
    });
    await controller.start();
    controller.enqueue({ name: 'a' });
    await settle();
    await clock.advance(250);
    expect(
      await histogramCount(registry, 'controller_runtime_reconcile_time_seconds', { controller: 'sidecarset' }),
    ).toBe(1);
    expect(
      await valueOf(
        registry,
        'controller_runtime_reconcile_time_seconds',
        { controller: 'sidecarset', le: '0.25' },
        'controller_runtime_reconcile_time_seconds_bucket',
      ),
    ).toBe(1);
    expect(
      await valueOf(
        registry,
        'controller_runtime_reconcile_time_seconds',
        { controller: 'sidecarset', le: '0.2' },
        'controller_runtime_reconcile_time_seconds_bucket',
      ),
    ).toBe(0);
  });

  it('rejects a worker count that is not a positive integer', () => {
    expect(() => setup(() => undefined, { workers: 0 })).toThrow(/workers must be an integer >= 1/);
    expect(() => setup(() => undefined, { workers: 1.5 })).toThrow(/workers/);
  });
});
