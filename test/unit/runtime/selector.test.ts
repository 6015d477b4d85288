import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  LabelSelector,
  matchesSelector,
  selectorsMayOverlap,
  validateSelector,
} from '../../../lib/runtime/selector.js';

describe('matchesSelector', () => {
  it('applies matchLabels and every operator', () => {
    const s: LabelSelector = {
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

describe('selectorsMayOverlap', () => {
  it('sees disjoint selectors', () => {
    expect(selectorsMayOverlap({ matchLabels: { app: 'a' } }, { matchLabels: { app: 'b' } })).toBe(false);
    expect(
      selectorsMayOverlap(
        { matchExpressions: [{ key: 'x', operator: 'Exists' }] },
        { matchExpressions: [{ key: 'x', operator: 'DoesNotExist' }] },
      ),
    ).toBe(false);
    expect(
      selectorsMayOverlap(
        { matchExpressions: [{ key: 'x', operator: 'In', values: ['1', '2'] }] },
        { matchLabels: { x: '3' } },
      ),
    ).toBe(false);
    expect(selectorsMayOverlap({ matchLabels: { app: 'a' } }, { matchLabels: { tier: 'b' } })).toBe(true);
    expect(selectorsMayOverlap({}, { matchLabels: { app: 'a' } })).toBe(true);
  });

  const keys = fc.constantFrom('a', 'b', 'c');
  const values = fc.constantFrom('1', '2', '3');
  const requirement = fc
    .record({
      key: keys,
      operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'),
      values: fc.uniqueArray(values, { minLength: 1, maxLength: 2 }),
    })
    .map((r) => (r.operator === 'Exists' || r.operator === 'DoesNotExist' ? { key: r.key, operator: r.operator } : r));
  const selector = fc.record({
    matchLabels: fc.dictionary(keys, values, { maxKeys: 2 }),
    matchExpressions: fc.array(requirement, { maxLength: 3 }),
  });
  const labelSet = fc.dictionary(keys, values, { maxKeys: 3 });

  it('never misses a real overlap (property)', () => {
    fc.assert(
      fc.property(selector, selector, fc.array(labelSet, { minLength: 20, maxLength: 40 }), (x, y, candidates) => {
        const both = candidates.some((l) => matchesSelector(x, l) && matchesSelector(y, l));
        return !both || selectorsMayOverlap(x, y);
      }),
      { numRuns: 2000 },
    );
  });
});
