// How drill 7 judges readiness through an API outage: per replica, the longest run of failed
// /readyz answers, from the first failure to the next good answer (or the window's end).
import { describe, expect, it } from '@jest/globals';
import { longestReadyzFailures, type Sample } from '../../e2e/support/drill.js';

const at = (t: number, ...readyz: string[]): Sample => ({ t, readyz });

describe('longestReadyzFailures', () => {
  it('measures each replica from its first failed answer to its next good one, shortest first', () => {
    const samples = [
      at(0, 'a', 'b'),
      at(500, 'b'),
      at(1000, 'b'),
      at(1500, 'a', 'b'),
      at(2000, 'a'),
      at(2500, 'a', 'b'),
    ];
    expect(longestReadyzFailures(samples, 0, 3000, 2)).toEqual([500, 1000]);
  });

  it('runs a failure still open at the end of the window to the end', () => {
    const samples = [at(0, 'a', 'b'), at(500, 'a'), at(1000, 'a')];
    expect(longestReadyzFailures(samples, 0, 4000, 2)).toEqual([0, 3500]);
  });

  it('keeps the longest of several runs, and ignores samples outside the window', () => {
    const samples = [at(-5000, 'a'), at(0, 'a'), at(500), at(1000, 'a'), at(1500), at(2000), at(2500), at(3000, 'a')];
    expect(longestReadyzFailures(samples, 0, 3000, 1)).toEqual([1500]);
  });

  it('counts a replica never seen answering as failing for the whole window', () => {
    expect(longestReadyzFailures([at(0, 'a'), at(500, 'a')], 0, 1000, 2)).toEqual([0, 1000]);
    expect(longestReadyzFailures([at(0), at(500)], 0, 1000, 2)).toEqual([1000, 1000]);
  });
});
