import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { RateLimitingQueue, WorkQueue } from '../../../../lib/runtime/workqueue/index.js';
import { histogramCount, histogramSum, valueOf } from '../metric-values.js';

describe('workqueue metrics', () => {
  it('counts adds and tracks depth per queue name', async () => {
    const registry = new Registry();
    const q = new WorkQueue<string>({ name: 'cloneset', registry, clock: new FakeClock() });
    q.add('a');
    q.add('a'); // deduped: not an add
    q.add('b');
    expect(await valueOf(registry, 'workqueue_adds_total', { name: 'cloneset' })).toBe(2);
    expect(await valueOf(registry, 'workqueue_depth', { name: 'cloneset' })).toBe(2);
    await q.get();
    expect(await valueOf(registry, 'workqueue_depth', { name: 'cloneset' })).toBe(1);
  });

  it('observes time spent queued and time spent processing on the injected clock', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 'q', registry, clock });
    q.add('a');
    await clock.advance(2000);
    await q.get();
    await clock.advance(500);
    q.done('a');
    expect(await histogramCount(registry, 'workqueue_queue_duration_seconds', { name: 'q' })).toBe(1);
    expect(await histogramSum(registry, 'workqueue_queue_duration_seconds', { name: 'q' })).toBeCloseTo(2);
    expect(await histogramSum(registry, 'workqueue_work_duration_seconds', { name: 'q' })).toBeCloseTo(0.5);
  });

  it('reports unfinished work and the longest running processor at scrape time', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const q = new WorkQueue<string>({ name: 'q', registry, clock });
    q.add('a');
    q.add('b');
    await q.get();
    await clock.advance(3000);
    await q.get();
    await clock.advance(1000);
    expect(await valueOf(registry, 'workqueue_unfinished_work_seconds', { name: 'q' })).toBeCloseTo(5);
    expect(await valueOf(registry, 'workqueue_longest_running_processor_seconds', { name: 'q' })).toBeCloseTo(4);
    q.done('a');
    q.done('b');
    expect(await valueOf(registry, 'workqueue_unfinished_work_seconds', { name: 'q' })).toBe(0);
  });

  it('counts retries and lets several queues share one registry', async () => {
    const registry = new Registry();
    const clock = new FakeClock();
    const a = new RateLimitingQueue<string>({ name: 'a', registry, clock });
    const b = new RateLimitingQueue<string>({ name: 'b', registry, clock });
    a.addRateLimited('x');
    a.addRateLimited('y');
    b.addAfter('z', 10);
    expect(await valueOf(registry, 'workqueue_retries_total', { name: 'a' })).toBe(2);
    expect(await valueOf(registry, 'workqueue_retries_total', { name: 'b' })).toBe(1);
    const text = await registry.metrics();
    for (const family of [
      'workqueue_depth',
      'workqueue_adds_total',
      'workqueue_queue_duration_seconds',
      'workqueue_work_duration_seconds',
      'workqueue_retries_total',
      'workqueue_unfinished_work_seconds',
      'workqueue_longest_running_processor_seconds',
    ]) {
      expect(text).toContain(`# TYPE ${family} `);
    }
  });
});
