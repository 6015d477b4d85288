import { describe, expect, it } from '@jest/globals';
import { matchesSelector, validateSelector, type SelectorLike } from '../../../lib/contract/selector.js';

describe('matchesSelector', () => {
  it('applies matchLabels and every operator', () => {
    const s: SelectorLike = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    };
    expect(matchesSelector(s, { app: 'web', tier: 'a', team: 'x' })).toBe(true);
    expect(matchesSelector(s, { app: 'web', tier: 'c', team: 'x' })).toBe(false);
    expect(matchesSelector(s, { app: 'web', tier: 'a', team: 'x', env: 'prod' })).toBe(false);
    expect(matchesSelector(s, { app: 'web', tier: 'a' })).toBe(false);
    expect(matchesSelector(s, { app: 'web', tier: 'a', team: 'x', legacy: '' })).toBe(false);
  });

  it('matches everything with {} and nothing without a selector', () => {
    expect(matchesSelector({}, undefined)).toBe(true);
    expect(matchesSelector(undefined, { a: 'b' })).toBe(false);
  });
});

describe('validateSelector', () => {
  it('names every bad field', () => {
    expect(
      validateSelector(
        {
          matchLabels: { 'bad key!': 'x', ok: 'bad value!' },
          matchExpressions: [
            { key: 'k', operator: 'In' },
            { key: 'k', operator: 'Exists', values: ['x'] },
            { key: 'k', operator: 'Near' },
          ],
        },
        'spec.selector',
      ),
    ).toEqual([
      'spec.selector.matchLabels: is not a valid label key (got "bad key!"). Fix: use [prefix/]name, name at most 63 characters of letters, digits, "-", "_", "."',
      'spec.selector.matchLabels["ok"]: is not a valid label value (got "bad value!"). Fix: use at most 63 letters, digits, "-", "_", ".", starting and ending with a letter or digit',
      'spec.selector.matchExpressions[0].values: must not be empty for In (got undefined). Fix: list at least one value, or use Exists/DoesNotExist',
      'spec.selector.matchExpressions[1].values: must be empty for Exists (got ["x"]). Fix: remove values, or use In/NotIn',
      'spec.selector.matchExpressions[2].operator: is not a selector operator (got "Near"). Fix: use one of In, NotIn, Exists, DoesNotExist',
    ]);
    expect(validateSelector('app=web', 's')).toEqual([
      's: must be an object with matchLabels and/or matchExpressions (got "app=web"). Fix: e.g. { matchLabels: { app: "web" } }',
    ]);
    expect(validateSelector({ matchLabels: { 'example.com/app': 'web' } }, 's')).toEqual([]);
  });
});
