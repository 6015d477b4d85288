/**
 * Turns what a handler returned into an AdmissionResponse. Handlers are user code: anything
 * malformed they return becomes a denial that says what was wrong, never a malformed response
 * the API server would count as a webhook failure.
 */
import type { AdmissionResponseBody } from './admission.js';
import { describeValue } from './admission.js';
import { boundMessage } from './fields.js';
import type { Webhook } from './handler.js';
import { encodePatch, validatePatch, type JsonPatchOperation } from './jsonpatch.js';

export class InvalidResultError extends Error {}

export function toResponse(uid: string, type: Webhook['type'], result: unknown): AdmissionResponseBody {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    throw new InvalidResultError(`handler returned ${describeValue(result)} instead of a result object`);
  }
  const r = result as Record<string, unknown>;
  const warnings = checkWarnings(r.warnings);
  if (r.allowed === false) {
    const message = boundMessage(
      typeof r.message === 'string' && r.message !== '' ? r.message : 'denied by admission webhook',
    );
    const code =
      Number.isInteger(r.code) && (r.code as number) >= 400 && (r.code as number) <= 599 ? (r.code as number) : 403;
    const reason = typeof r.reason === 'string' ? r.reason : undefined;
    return { uid, allowed: false, status: { code, message, ...(reason ? { reason } : {}) }, ...warnings };
  }
  if (r.allowed !== true)
    throw new InvalidResultError(`handler result.allowed must be true or false, got ${describeValue(r.allowed)}`);
  if (r.patches === undefined) return { uid, allowed: true, ...warnings };
  if (type === 'validating') throw new InvalidResultError('a validating webhook cannot return patches');
  const invalid = validatePatch(r.patches);
  if (invalid) throw new InvalidResultError(`handler returned an invalid JSON patch: ${invalid}`);
  const patches = r.patches as JsonPatchOperation[];
  if (patches.length === 0) return { uid, allowed: true, ...warnings };
  return { uid, allowed: true, patchType: 'JSONPatch', patch: encodePatch(patches), ...warnings };
}

/** A handler failure (exception, timeout, bad result) as a denial, as controller-runtime's `Errored`. */
export function errorResponse(uid: string, message: string): AdmissionResponseBody {
  return { uid, allowed: false, status: { code: 500, reason: 'InternalError', message: boundMessage(message) } };
}

function checkWarnings(warnings: unknown): { warnings?: string[] } {
  if (warnings === undefined) return {};
  if (!Array.isArray(warnings) || warnings.some((w) => typeof w !== 'string')) {
    throw new InvalidResultError('handler result.warnings must be an array of strings');
  }
  return warnings.length > 0 ? { warnings: warnings as string[] } : {};
}
