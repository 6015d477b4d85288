/**
 * WorkloadSpread validation = upstream v1.9.1's, run in-process (tools/upstream/sidecarset-oracle
 * `wsvalidate`: pkg/webhook/workloadspread/validating validatingWorkloadSpreadFn and, on UPDATE,
 * validateWorkloadSpreadUpdate, on a fake API). Two generators: one change per field upstream's
 * validation reads (walked from its code and the core rules it reaches: ValidateNodeSelectorTerm,
 * ValidatePreferredSchedulingTerms, ValidateTolerations of k8s.io/kubernetes v1.32) applied to
 * valid WorkloadSpreads, and random WorkloadSpreads (fast-check) mixing valid and invalid values,
 * with conflicts and updates. Both sides must accept or both refuse.
 *
 * Most cases carry their target workload (support/workloadspread-cases.ts targetWorkload, on the
 * oracle's fake API and passed to this runtime as the webhook passes it), so upstream merges each
 * subset patch into the target's pod template and validates the result (core ValidatePodSpec):
 * the per-patch cases and the random ones reach it, the others do not.
 */
import { describe, expect, it } from '@jest/globals';
import { validateWorkloadSpread } from '../../lib/runtime/workloadspread/validate.js';
import { upstreamWorkloadSpreadValidationOracle } from './support/sidecarset-oracle.js';
import { generateWorkloadSpreadCases } from './support/workloadspread-cases.js';

describe('WorkloadSpread validation = upstream v1.9.1, in-process', () => {
  const { fieldCases, pairCases, randomCases, patchCases } = generateWorkloadSpreadCases();
  const cases = [...fieldCases, ...pairCases, ...patchCases, ...randomCases];
  const upstream = upstreamWorkloadSpreadValidationOracle(cases);

  it('judges every generated WorkloadSpread as upstream does', () => {
    const differences: string[] = [];
    let refused = 0;
    let patchRefused = 0;
    cases.forEach((c, i) => {
      const ours = validateWorkloadSpread(c.ws, {
        others: (c.wsExisting ?? []).map((o) => ({ name: o.metadata.name, targetRef: o.spec.targetRef })),
        previous: c.wsOlder,
        // As the webhook reads it: the target of patchCheckTarget, if it exists.
        workload: c.workloads?.find(
          (w) => w.kind === c.ws.spec?.targetRef?.kind && w.metadata.name === c.ws.spec?.targetRef?.name,
        ),
      });
      const theirs = upstream[i].errors ?? [upstream[i].error!];
      if (theirs.length) refused++;
      if (theirs.length && theirs.every((e) => e.startsWith('spec.subsets[') && /\]\.patch[.:]/.test(e)))
        patchRefused++;
      if ((ours.length === 0) !== (theirs.length === 0))
        differences.push(
          `${c.label}: ${ours.length ? `we refuse ${JSON.stringify(ours.slice(0, 2))}` : 'we accept'}, upstream ${theirs.length ? `refuses ${JSON.stringify(theirs.slice(0, 2))}` : 'accepts'}`,
        );
    });
    process.stderr.write(
      `workloadspread validation: ${cases.length} generated cases (${fieldCases.length} per-field, ${pairCases.length} conflict/update, ${patchCases.length} per-patch, ${randomCases.length} random), upstream refused ${refused} (${patchRefused} on a merged template only); ${differences.length} differ\n`,
    );
    expect(refused).toBeGreaterThan(cases.length / 3);
    expect(refused).toBeLessThan(cases.length);
    // The generators reach the merged-template validation: cases upstream refuses for it alone.
    expect(patchRefused).toBeGreaterThan(patchCases.length / 3);
    expect(differences.slice(0, 20)).toEqual([]);
  });
});
