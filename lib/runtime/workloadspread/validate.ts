/**
 * WorkloadSpread admission checks as upstream OpenKruise v1.8.3's validating webhook
 * (pkg/webhook/workloadspread/validating): the spec rules of the contract
 * (lib/contract/workloadspread.ts, shared with the construct), the conflict with another
 * WorkloadSpread of the namespace on the same workload, and on UPDATE the immutable target.
 *
 * The check of each subset's patch merged into the target's pod template needs the workload: the
 * webhook adds it (webhooks.ts subsetPatchProblems).
 */
import { isRecord } from '../../contract.js';
import {
  type CustomWorkloadEntry,
  workloadSpreadConflict,
  workloadSpreadSpecProblems,
  workloadSpreadTargetChanged,
  WORKLOADSPREAD_TARGETS,
} from '../../contract/workloadspread.js';

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
  return errors;
}
