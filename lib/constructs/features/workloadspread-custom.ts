/**
 * Internal helpers of the custom workload whitelist (not part of the public API): the synth-time
 * check of a {@link WorkloadSpreadCustomWorkload} and the whitelist value upstream reads.
 */
import { WORKLOADSPREAD_TARGETS } from '../../contract.js';
import { propError } from '../core/errors.js';
import type { WorkloadSpreadCustomWorkload, WorkloadSpreadCustomWorkloadOwner } from './workloadspread.js';

/** Checks one custom workload (or owner) prop at synth: `at` names it. */
export function checkCustomWorkload(at: string, w: WorkloadSpreadCustomWorkloadOwner, owner = false): void {
  const [group, version, extra] = String(w.apiVersion ?? '').split('/');
  if (!group || !version || extra !== undefined || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(group))
    throw propError(
      `${at}.apiVersion`,
      w.apiVersion,
      "must be a custom resource's group/version",
      "e.g. 'game.kruise.io/v1alpha1'",
    );
  if (!/^[A-Z][A-Za-z0-9]*$/.test(String(w.kind ?? '')))
    throw propError(`${at}.kind`, w.kind, 'must be a kind (UpperCamelCase)', "e.g. 'GameServerSet'");
  // Upstream decides by kind first: a Deployment of another group is refused, never whitelisted.
  if (!owner && WORKLOADSPREAD_TARGETS[w.kind])
    throw propError(
      `${at}.kind`,
      w.kind,
      'is a built-in WorkloadSpread target kind (upstream checks its group, never the whitelist)',
      'remove it, or use a WorkloadSpreadTarget factory for the built-in kind',
    );
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(String(w.plural ?? '')))
    throw propError(`${at}.plural`, w.plural, 'must be its resource name (lowercase plural)', "e.g. 'gameserversets'");
}

/** The whitelist value (JSON) upstream reads for `workloads`. */
export function customWorkloadWhitelist(workloads: readonly WorkloadSpreadCustomWorkload[]): string {
  const gvk = (w: WorkloadSpreadCustomWorkloadOwner) => {
    const [group, version] = w.apiVersion.split('/');
    return { Group: group, Version: version, Kind: w.kind };
  };
  return JSON.stringify({
    workloads: workloads.map((w) => ({
      ...gvk(w),
      ...(w.subResources?.length ? { subResources: w.subResources.map(gvk) } : {}),
      ...(w.replicasPath ? { replicasPath: w.replicasPath } : {}),
    })),
  });
}

/** What the manager reads of the custom workloads: them (owner chains, replicas), their scale, their sub-resources. */
export function customWorkloadRules(
  workloads: readonly WorkloadSpreadCustomWorkload[],
): Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }> {
  const group = (w: WorkloadSpreadCustomWorkloadOwner) => w.apiVersion.split('/')[0];
  return workloads.flatMap((w) => [
    { apiGroups: [group(w)], resources: [w.plural], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [group(w)], resources: [`${w.plural}/scale`], verbs: ['get'] },
    ...(w.subResources ?? []).map((sub) => ({
      apiGroups: [group(sub)],
      resources: [sub.plural],
      verbs: ['get', 'list', 'watch'],
    })),
  ]);
}
