/**
 * WorkloadSpread admission checks as upstream OpenKruise v1.9.1's validating webhook
 * (pkg/webhook/workloadspread/validating): the spec rules of the contract
 * (lib/contract/workloadspread.ts, shared with the construct), the conflict with another
 * WorkloadSpread of the namespace on the same workload, and on UPDATE the immutable target.
 *
 * The check of each subset's patch merged into the target's pod template needs the workload: the
 * webhook reads it (patchCheckTarget names it) and passes it as `workload`.
 */
import { isRecord } from '../../contract.js';
import {
  apiGroupOf,
  type CustomWorkloadEntry,
  workloadSpreadConflict,
  workloadSpreadSpecProblems,
  workloadSpreadTargetChanged,
  WORKLOADSPREAD_TARGETS,
} from '../../contract/workloadspread.js';
import { mergedPodSpecProblems } from './pod-template.js';
import { strategicMergePod } from './strategic-merge.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export interface WorkloadSpreadValidationContext {
  /** The other WorkloadSpreads of the namespace (name and targetRef). */
  others?: ReadonlyArray<{ name: string; targetRef?: unknown }>;
  /** On UPDATE, the stored WorkloadSpread. */
  previous?: unknown;
  /**
   * The custom workload whitelist (kruise-configuration), read only for a target of another kind
   * than the built-in ones; throws when it cannot be read or decoded (upstream: an internal error).
   */
  customWorkloads?: () => readonly CustomWorkloadEntry[];
  /**
   * The target workload (patchCheckTarget), as read from the API server; undefined when it does not
   * exist (yet) or was not read: then, as upstream, no subset patch is checked against its template.
   */
  workload?: unknown;
}

/**
 * The target whose pod template upstream v1.9.1 checks each subset patch against: a built-in kind of its group, read
 * as that kind; a StatefulSet of any of its groups is read as an apps/v1 StatefulSet of that name (so an Advanced
 * StatefulSet is found only when an apps/v1 one shares its name). v1.8.3 never read a StatefulSet's template (its Get
 * went into a nil object). Undefined when there is none to read.
 */
export function patchCheckTarget(ws: unknown): { apiVersion: string; kind: string; name: string } | undefined {
  const spec = isRecord(ws) && isRecord(ws.spec) ? ws.spec : undefined;
  const ref = spec && isRecord(spec.targetRef) ? spec.targetRef : undefined;
  if (!ref || !ref.apiVersion || !ref.kind || !ref.name) return undefined;
  const groups = WORKLOADSPREAD_TARGETS[String(ref.kind)];
  const group = apiGroupOf(String(ref.apiVersion));
  if (!groups || group === undefined || !groups.includes(group)) return undefined;
  if (ref.kind === 'StatefulSet') return { apiVersion: 'apps/v1', kind: 'StatefulSet', name: String(ref.name) };
  return { apiVersion: String(ref.apiVersion), kind: String(ref.kind), name: String(ref.name) };
}

/** A workload's pod template as upstream's patch check reads it (CloneSet, StatefulSet: claims as volumes). */
function templateOf(kind: string, workload: Json): Json {
  const template = structuredClone(workload?.spec?.template ?? {});
  if (kind === 'CloneSet' || kind === 'StatefulSet') {
    for (const claim of workload?.spec?.volumeClaimTemplates ?? []) {
      template.spec ??= {};
      template.spec.volumes = [
        ...(template.spec.volumes ?? []),
        { name: claim?.metadata?.name, persistentVolumeClaim: { claimName: claim?.metadata?.name } },
      ];
    }
  }
  return template;
}

/**
 * Upstream's check of each subset patch against the target's pod template: the patch must merge
 * (strategic merge over a Pod) and the merged pod spec must pass core pod validation
 * (pod-template.ts). Nothing without the workload (it does not exist yet), as upstream, nor for a
 * target patchCheckTarget does not name.
 */
export function subsetPatchProblems(ws: Json, workload: Json | undefined): string[] {
  const ref = patchCheckTarget(ws);
  if (!workload || !ref) return [];
  const template = templateOf(ref.kind, workload);
  const out: string[] = [];
  (ws?.spec?.subsets ?? []).forEach((subset: Json, i: number) => {
    if (subset?.patch === undefined || subset?.patch === null) return;
    const at = `spec.subsets[${i}].patch`;
    let merged: Json;
    try {
      merged = strategicMergePod(template, subset.patch);
    } catch (e) {
      out.push(
        `${at}: Invalid value: ${JSON.stringify(JSON.stringify(subset.patch))}: failed to merge patch: ${(e as Error).message}`,
      );
      return;
    }
    out.push(...mergedPodSpecProblems(merged?.spec, at));
  });
  return out;
}

/** Every problem with a WorkloadSpread, each naming the field. */
export function validateWorkloadSpread(ws: unknown, context: WorkloadSpreadValidationContext = {}): string[] {
  if (!isRecord(ws)) return ['WorkloadSpread: must be an object'];
  const spec = ws.spec;
  const kind = isRecord(spec) && isRecord(spec.targetRef) ? String(spec.targetRef.kind ?? '') : '';
  let custom: readonly CustomWorkloadEntry[] = [];
  let unreadable: string | undefined;
  if (kind && !WORKLOADSPREAD_TARGETS[kind]) {
    try {
      custom = context.customWorkloads?.() ?? [];
    } catch (e) {
      unreadable = String((e as Error)?.message ?? e);
    }
  }
  const errors = workloadSpreadSpecProblems(spec, custom)
    .filter(([field]) => unreadable === undefined || field !== 'spec.targetRef')
    .map(([field, message]) => `${field}: ${message}`);
  if (unreadable !== undefined) errors.unshift(`spec.targetRef: Internal error: ${unreadable}`);
  const name = isRecord(ws.metadata) && typeof ws.metadata.name === 'string' ? ws.metadata.name : '';
  const targetRef = isRecord(spec) ? spec.targetRef : undefined;
  const other = workloadSpreadConflict({ name, targetRef }, context.others ?? []);
  if (other)
    errors.push(
      `spec.targetRef: WorkloadSpread ${JSON.stringify(other)} already spreads this workload; one workload has at most one WorkloadSpread`,
    );
  const previous = context.previous;
  if (isRecord(previous) && isRecord(previous.spec) && workloadSpreadTargetChanged(targetRef, previous.spec.targetRef))
    errors.push('spec.targetRef: cannot be changed (upstream refuses it); create another WorkloadSpread');
  errors.push(...subsetPatchProblems(ws, context.workload));
  return errors;
}
