// The README's HA table is generated from the drills' results: one row per drill, upstream / runtime
// in each cell, between markers the generator owns; a README without the markers is left as it is.
import { describe, expect, it } from '@jest/globals';
import {
  README_BEGIN,
  README_END,
  renderReadmeTable,
  withReadmeTable,
  type DrillFigures,
  type Results,
} from '../../e2e/support/drill-results.js';

const figures = (drill: string, flavour: string, o: Partial<DrillFigures> = {}): DrillFigures => ({
  drill,
  flavour,
  at: '2026-11-26T17:15:00.000Z',
  uptime: '1 1 1 → 1 1 1',
  creates: 100,
  webhookFailures: 0,
  apiFailures: 0,
  withoutSidecar: 0,
  createP99Ms: 50,
  routeAwayS: null,
  failuresAfterRouteAway: 0,
  newLeaderS: null,
  leaderChanges: 0,
  maxLeadersAtOnce: 1,
  longestRenewalGapS: 2,
  convergeS: 30,
  extra: {},
  failures: [],
  ...o,
});

const results: Results = {
  conditions: { machine: '2 cores, 24 GiB', cluster: '4 real nodes' },
  drills: {
    '2-hang/runtime': figures('2. hang', 'runtime', { webhookFailures: 1, creates: 305, routeAwayS: 18.4 }),
    '1-crash/upstream': figures('1. crash', 'upstream', { newLeaderS: 20.5 }),
    '1-crash/runtime': figures('1. crash', 'runtime', { newLeaderS: 15.5, at: '2026-11-27T01:00:00.000Z' }),
  },
};

describe('the README drills table', () => {
  it('has one row per drill in drill order, upstream / runtime per cell, and says which drill a flavour did not run', () => {
    const rows = renderReadmeTable(results)
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| drill'));
    expect(rows).toEqual([
      '| 1. crash | 0 of 100 / 0 of 100 | – / – | 20.5 s / 15.5 s | 30 s / 30 s |',
      '| 2. hang | not run / 1 of 305 | not run / 18.4 s | not run / – | not run / 30 s |',
    ]);
    expect(renderReadmeTable(results)).toContain('runs of 2026-11-26 to 2026-11-27, 4 real nodes, 2 cores, 24 GiB');
  });

  it('replaces only what is between the markers, and leaves a README without them unchanged', () => {
    const readme = `# x\n\nbefore\n${README_BEGIN}\nold table\n${README_END}\nafter\n`;
    const out = withReadmeTable(readme, results);
    expect(out.startsWith(`# x\n\nbefore\n${README_BEGIN}\n| drill`)).toBe(true);
    expect(out).not.toContain('old table');
    expect(out.endsWith(`${README_END}\nafter\n`)).toBe(true);
    expect(withReadmeTable(out, results)).toBe(out);
    expect(withReadmeTable('# no markers\n', results)).toBe('# no markers\n');
  });
});
