/**
 * WorkloadSpread validation = upstream v1.8.3's, run in-process (tools/upstream/sidecarset-oracle
 * `wsvalidate`: pkg/webhook/workloadspread/validating validatingWorkloadSpreadFn and, on UPDATE,
 * validateWorkloadSpreadUpdate, on a fake API). Two generators: one change per field upstream's
 * validation reads (walked from its code and the core rules it reaches: ValidateNodeSelectorTerm,
 * ValidatePreferredSchedulingTerms, ValidateTolerations of k8s.io/kubernetes v1.30) applied to
 * valid WorkloadSpreads, and random WorkloadSpreads (fast-check) mixing valid and invalid values,
 * with conflicts and updates. Both sides must accept or both refuse.
 *
 * No target workload exists in these clusters, so upstream skips its patch-against-template check,
 * which this runtime does not have yet (lib/runtime/workloadspread/validate.ts).
 */
import { describe, expect, it } from '@jest/globals';
import { validateWorkloadSpread } from '../../lib/runtime/workloadspread/validate.js';
import { upstreamWorkloadSpreadValidationOracle } from './support/sidecarset-oracle.js';
import { generateWorkloadSpreadCases } from './support/workloadspread-cases.js';

describe('WorkloadSpread validation = upstream v1.8.3, in-process', () => {
  const { fieldCases, pairCases, randomCases } = generateWorkloadSpreadCases();
  const cases = [...fieldCases, ...pairCases, ...randomCases];
  const upstream = upstreamWorkloadSpreadValidationOracle(cases);

  it('judges every generated WorkloadSpread as upstream does', () => {
    const differences: string[] = [];
    let refused = 0;
    cases.forEach((c, i) => {
      const ours = validateWorkloadSpread(c.ws, {
        others: (c.wsExisting ?? []).map((o) => ({ name: o.metadata.name, targetRef: o.spec.targetRef })),
        previous: c.wsOlder,
      });
      const theirs = upstream[i].errors ?? [upstream[i].error!];
      if (theirs.length) refused++;
      if ((ours.length === 0) !== (theirs.length === 0))
        differences.push(
          `${c.label}: ${ours.length ? `we refuse ${JSON.stringify(ours.slice(0, 2))}` : 'we accept'}, upstream ${theirs.length ? `refuses ${JSON.stringify(theirs.slice(0, 2))}` : 'accepts'}`,
        );
    });
    process.stderr.write(
      `workloadspread validation: ${cases.length} generated cases (${fieldCases.length} per-field, ${pairCases.length} conflict/update, ${randomCases.length} random), upstream refused ${refused}; ${differences.length} differ\n`,
    );
    expect(refused).toBeGreaterThan(cases.length / 3);
    expect(refused).toBeLessThan(cases.length);
    expect(differences.slice(0, 20)).toEqual([]);
  });
});
