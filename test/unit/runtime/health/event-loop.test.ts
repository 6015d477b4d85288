import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { EventLoopStallDetector } from '../../../../lib/runtime/health/event-loop.js';

function detector() {
  const clock = new FakeClock();
  const d = new EventLoopStallDetector({ clock, intervalMs: 1_000, maxLagMs: 5_000, windowMs: 30_000 });
  d.start();
  return { clock, d };
}

describe('EventLoopStallDetector', () => {
  it('passes while the probe timer fires on time', async () => {
    const { clock, d } = detector();
    await clock.advance(60_000);
    expect(() => d.check()).not.toThrow();
  });

  it('fails while the probe timer is overdue past the bound (the loop is blocked right now)', async () => {
    const { clock, d } = detector();
    clock.jump(5_999); // time passes, no timer can run: a blocked loop
    expect(() => d.check()).not.toThrow(); // 4999ms overdue: under the bound
    clock.jump(2);
    expect(() => d.check()).toThrow(/probe timer is 5001ms overdue \(bound 5000ms\)/);
  });

  it('remembers a stall for the window, then recovers', async () => {
    const { clock, d } = detector();
    clock.jump(7_000);
    await clock.advance(0); // the late timer finally fires
    expect(() => d.check()).toThrow('event loop was blocked 0s ago: the probe timer fired 6000ms late (bound 5000ms)');
    await clock.advance(30_000);
    expect(() => d.check()).toThrow(/blocked 30s ago: the probe timer fired 6000ms late/);
    await clock.advance(1_000);
    expect(() => d.check()).not.toThrow();
  });

  it('does not count lag under the bound', async () => {
    const { clock, d } = detector();
    clock.jump(5_900); // fires 4900ms late
    await clock.advance(0);
    expect(() => d.check()).not.toThrow();
  });

  it('stops its timer', () => {
    const { clock, d } = detector();
    d.stop();
    expect(clock.pending()).toBe(0);
    clock.jump(60_000);
    expect(() => d.check()).not.toThrow();
  });
});
