import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { CheckSet, formatReport } from '../../../../lib/runtime/health/checks.js';

describe('CheckSet', () => {
  it('runs every check and reports each failure with its reason', async () => {
    const set = new CheckSet(new FakeClock());
    set.add('certs', () => undefined);
    set.add('informers', async () => {
      throw new Error('pods cache not synced');
    });
    set.add('odd', () => {
      throw 'a string';
    });
    expect(await set.run(1_000)).toEqual([
      { name: 'certs', ok: true },
      { name: 'informers', ok: false, reason: 'pods cache not synced' },
      { name: 'odd', ok: false, reason: 'a string' },
    ]);
    expect((await set.run(1_000, (n) => n === 'certs')).map((r) => r.name)).toEqual(['certs']);
  });

  it('fails a check that does not answer in time and aborts its signal', async () => {
    const clock = new FakeClock();
    const set = new CheckSet(clock);
    let aborted: unknown;
    set.add(
      'stuck',
      (signal) =>
        new Promise(() => {
          signal.addEventListener('abort', () => {
            aborted = signal.reason;
          });
        }),
    );
    const running = set.run(800);
    await clock.advance(799);
    expect(aborted).toBeUndefined();
    await clock.advance(1);
    expect(await running).toEqual([{ name: 'stuck', ok: false, reason: 'did not answer within 800ms' }]);
    expect(aborted).toBeInstanceOf(Error);
    expect(clock.pending()).toBe(0);
  });

  it('rejects names that cannot be a path segment, and duplicates', () => {
    const set = new CheckSet();
    expect(() => set.add('Certs Ready', () => undefined)).toThrow(/lower-case/);
    expect(() => set.add('a/b', () => undefined)).toThrow(/lower-case/);
    set.add('certs', () => undefined);
    expect(() => set.add('certs', () => undefined)).toThrow(/already exists/);
  });
});

describe('formatReport', () => {
  const results = [
    { name: 'a', ok: true },
    { name: 'b', ok: false, reason: 'line one\n  line two' },
  ];

  it('says ok tersely, lists everything when verbose or failing, one line per check', () => {
    expect(formatReport('readyz', [results[0]], false)).toEqual({ ok: true, text: 'ok\n' });
    expect(formatReport('readyz', [results[0]], true).text).toBe('[+]a ok\nreadyz check passed\n');
    expect(formatReport('healthz', results, false)).toEqual({
      ok: false,
      text: '[+]a ok\n[-]b failed: line one line two\nhealthz check failed\n',
    });
  });
});
