import { describe, expect, it } from '@jest/globals';
import { formatDuration, parseDuration } from '../../../../lib/runtime/certs/duration.js';

describe('parseDuration (Go syntax)', () => {
  it.each([
    ['720h', 720 * 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['90s', 90_000],
    ['250ms', 250],
    ['0', 0],
    ['+2m', 120_000],
    ['1h0m0s', 3_600_000],
    ['.5s', 500],
    ['1500us', 1.5],
    [' 10s ', 10_000],
  ])('%s', (text, ms) => {
    expect(parseDuration(text, 'CERTS_RENEW_BEFORE')).toBe(ms);
  });

  it.each([
    ['', /empty/],
    ['-1h', /negative/],
    ['10', /unexpected/],
    ['1d', /unexpected/],
    ['h', /unexpected/],
    ['1h 2m', /unexpected/],
    ['+', /no value/],
  ])('rejects %j naming the field', (text, why) => {
    expect(() => parseDuration(text, 'CERTS_RENEW_BEFORE')).toThrow(/^CERTS_RENEW_BEFORE: .* is not a duration/);
    expect(() => parseDuration(text, 'CERTS_RENEW_BEFORE')).toThrow(why);
  });

  it('formats like Go', () => {
    expect(formatDuration(parseDuration('720h', 'x'))).toBe('720h0m0s');
    expect(formatDuration(5_430_500)).toBe('1h30m30.5s');
  });
});
