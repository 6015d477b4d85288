/**
 * What a webhook handler is: a function from a typed AdmissionRequest to a decision. Mutating
 * handlers may return JSON Patch operations; validating handlers cannot (the types say so and
 * the server checks again at run time).
 */
import type { Logger } from '../log.js';
import type { AdmissionRequest } from './admission.js';
import type { JsonPatchOperation } from './jsonpatch.js';

export interface AdmissionContext {
  /** Aborted when the request times out or the API server hangs up: stop work, nobody listens. */
  signal: AbortSignal;
  logger: Logger;
}

export interface Allowed {
  allowed: true;
  warnings?: string[];
}
export interface Denied {
  allowed: false;
  message: string;
  code?: number;
  reason?: string;
  warnings?: string[];
}
export interface Patched {
  allowed: true;
  patches: JsonPatchOperation[];
  warnings?: string[];
}

export type ValidationResult = Allowed | Denied;
export type MutationResult = Allowed | Denied | Patched;

/** A value, or a promise of it. */
export type Awaitable<T> = T | Promise<T>;

export interface MutatingWebhook {
  type: 'mutating';
  handle(request: AdmissionRequest, ctx: AdmissionContext): Awaitable<MutationResult>;
}

export interface ValidatingWebhook {
  type: 'validating';
  handle(request: AdmissionRequest, ctx: AdmissionContext): Awaitable<ValidationResult>;
}

export type Webhook = MutatingWebhook | ValidatingWebhook;

export const mutating = (handle: MutatingWebhook['handle']): MutatingWebhook => ({ type: 'mutating', handle });
export const validating = (handle: ValidatingWebhook['handle']): ValidatingWebhook => ({ type: 'validating', handle });

export const allow = (warnings?: string[]): Allowed => ({ allowed: true, ...(warnings ? { warnings } : {}) });
/** 403 Forbidden unless told otherwise, like controller-runtime's `Denied`. */
export const deny = (message: string, code = 403): Denied => ({ allowed: false, message, code });
export const patch = (patches: JsonPatchOperation[], warnings?: string[]): Patched => ({
  allowed: true,
  patches,
  ...(warnings ? { warnings } : {}),
});

/** Namespaces a pod webhook must never touch, so the cluster (and this manager) can always start pods. */
const KUBE_SYSTEM = 'kube-system';

/**
 * Allows, without a patch, every request in `namespaces`. The webhook configuration already
 * excludes them with a namespaceSelector; this is defence in depth for a configuration that was
 * edited, rendered by an older chart or installed into an unlabelled namespace (a known upstream
 * deadlock: the manager's own pods were intercepted by the webhook they were meant to serve).
 */
function exemptNamespaces<W extends Webhook>(webhook: W, namespaces: Iterable<string>): W {
  const exempt = new Set(namespaces);
  const handle = (request: AdmissionRequest, ctx: AdmissionContext) =>
    request.namespace !== undefined && exempt.has(request.namespace) ? allow() : webhook.handle(request, ctx);
  return { ...webhook, handle } as W;
}

/** {@link exemptNamespaces} for `kube-system` and the manager's own namespace. */
export function exemptSystemNamespaces<W extends Webhook>(webhook: W, managerNamespace: string): W {
  return exemptNamespaces(webhook, [KUBE_SYSTEM, managerNamespace]);
}
