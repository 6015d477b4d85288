import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import {
  BucketRateLimiter,
  DelayingQueue,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  RateLimitingQueue,
  defaultControllerRateLimiter,
} from '../../../../lib/runtime/workqueue/index.js';

describe('DelayingQueue.addAfter', () => {
  it('adds the item only once its delay has passed on the clock', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ name: 'd', clock });
    q.addAfter('a', 1000);
    expect(q.len()).toBe(0);
    expect(q.waitingLen()).toBe(1);
    await clock.advance(999);
    expect(q.len()).toBe(0);
    await clock.advance(1);
    expect(q.len()).toBe(1);
    expect(q.waitingLen()).toBe(0);
  });

  it('releases several delayed items in ready-time order', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ name: 'd', clock });
    q.addAfter('late', 300);
    q.addAfter('early', 100);
    q.addAfter('middle', 200);
    await clock.advance(300);
    const got: string[] = [];
    while (q.len() > 0) {
      const r = await q.get();
      if (!r.shutdown) got.push(r.item);
    }
    expect(got).toEqual(['early', 'middle', 'late']);
  });

  it('keeps the earlier ready time when the same item is delayed twice', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ name: 'd', clock });
    q.addAfter('a', 5000);
    q.addAfter('a', 100);
    q.addAfter('a', 9000);
    expect(q.waitingLen()).toBe(1);
    await clock.advance(100);
    expect(q.len()).toBe(1);
    await clock.advance(10_000);
    expect(q.len()).toBe(1); // the superseded 5s and 9s entries never fire
  });

  it('treats zero, negative and NaN delays as "add now"', () => {
    const q = new DelayingQueue<string>({ name: 'd', clock: new FakeClock() });
    q.addAfter('zero', 0);
    q.addAfter('negative', -5);
    q.addAfter('nan', Number.NaN);
    expect(q.len()).toBe(3);
  });

  it('dedupes a delayed item with the same item added directly', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ name: 'd', clock });
    q.add('a');
    q.addAfter('a', 50);
    await clock.advance(50);
    expect(q.len()).toBe(1);
  });

  it('drops waiting items and their timer on shutdown', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ name: 'd', clock });
    q.addAfter('a', 100);
    q.shutDown();
    expect(clock.pending()).toBe(0);
    await clock.advance(1000);
    expect(q.len()).toBe(0);
    q.addAfter('b', 10);
    expect(q.waitingLen()).toBe(0);
  });
});

describe('rate limiters', () => {
  it('per-item exponential backoff doubles from 5ms and caps at 1000s', () => {
    const rl = new ItemExponentialFailureRateLimiter(5, 1_000_000);
    const delays = Array.from({ length: 6 }, () => rl.when('a'));
    expect(delays).toEqual([5, 10, 20, 40, 80, 160]);
    for (let i = 0; i < 100; i++) rl.when('a');
    expect(rl.when('a')).toBe(1_000_000);
    expect(rl.numRequeues('a')).toBe(107);
    expect(rl.when('b')).toBe(5); // items back off independently
    rl.forget('a');
    expect(rl.numRequeues('a')).toBe(0);
    expect(rl.when('a')).toBe(5);
  });

  it('token bucket lets a burst through, then spaces retries at qps', async () => {
    const clock = new FakeClock();
    const rl = new BucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 100; i++) expect(rl.when(`k${i}`)).toBe(0);
    expect(rl.when('x')).toBeCloseTo(100);
    expect(rl.when('y')).toBeCloseTo(200);
    await clock.advance(11_000); // refills 110 tokens, but never beyond the burst of 100
    for (let i = 0; i < 100; i++) expect(rl.when(`k${i}`)).toBe(0);
    expect(rl.when('z')).toBeGreaterThan(0);
  });

  it('max-of picks the longest delay and forgets in all limiters', () => {
    const clock = new FakeClock();
    const rl = new MaxOfRateLimiter(new ItemExponentialFailureRateLimiter(5, 1000), new BucketRateLimiter(1, 1, clock));
    expect(rl.when('a')).toBe(5); // bucket has its one token
    expect(rl.when('a')).toBe(1000); // bucket: 1s wait beats 10ms backoff
    expect(rl.numRequeues('a')).toBe(2);
    rl.forget('a');
    expect(rl.numRequeues('a')).toBe(0);
  });

  it('the controller default is 5ms per-item backoff under a 10 qps / 100 burst bucket', () => {
    const rl = defaultControllerRateLimiter({ clock: new FakeClock() });
    expect([rl.when('a'), rl.when('a'), rl.when('a')]).toEqual([5, 10, 20]);
    for (let i = 0; i < 97; i++) rl.when(`other-${i}`);
    // 101st request in the same instant: the bucket (100ms) now dominates a fresh item's 5ms.
    expect(rl.when('fresh')).toBeCloseTo(100);
  });

  it('rejects nonsensical settings with a clear error', () => {
    expect(() => new BucketRateLimiter(0, 10)).toThrow(/qps > 0/);
    expect(() => new ItemExponentialFailureRateLimiter(-1, 10)).toThrow(/>= 0/);
    expect(() => new MaxOfRateLimiter()).toThrow(/at least one/);
  });
});

describe('RateLimitingQueue', () => {
  it('requeues failures with growing delays until forgotten', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({
      name: 'rl',
      clock,
      rateLimiter: new ItemExponentialFailureRateLimiter(100, 10_000),
    });
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(1);
    await clock.advance(99);
    expect(q.len()).toBe(0);
    await clock.advance(1);
    expect(q.len()).toBe(1);
    await q.get();
    q.done('a');

    q.addRateLimited('a'); // second failure: 200ms
    await clock.advance(199);
    expect(q.len()).toBe(0);
    await clock.advance(1);
    expect(q.len()).toBe(1);

    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
  });
});
