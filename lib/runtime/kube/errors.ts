/**
 * The one place that reads an error from the API client: its HTTP status and Status reason, the common statuses by
 * name, a refused connection, the server's Retry-After, and a one-line description for logs.
 */
import type { V1Status } from '@kubernetes/client-node';
import { ApiException } from './client-node.js';

/**
 * The reasons a Kubernetes `Status` gives for a failure (apimachinery's `metav1.StatusReason`), by name.
 * {@link StatusError.reason} holds one of them, or whatever newer reason the server sent.
 */
export const StatusReasons = {
  Unauthorized: 'Unauthorized',
  Forbidden: 'Forbidden',
  NotFound: 'NotFound',
  AlreadyExists: 'AlreadyExists',
  Conflict: 'Conflict',
  Gone: 'Gone',
  Invalid: 'Invalid',
  ServerTimeout: 'ServerTimeout',
  StoreReadError: 'StorageReadError',
  Timeout: 'Timeout',
  TooManyRequests: 'TooManyRequests',
  BadRequest: 'BadRequest',
  MethodNotAllowed: 'MethodNotAllowed',
  NotAcceptable: 'NotAcceptable',
  RequestEntityTooLarge: 'RequestEntityTooLarge',
  UnsupportedMediaType: 'UnsupportedMediaType',
  InternalError: 'InternalError',
  Expired: 'Expired',
  ServiceUnavailable: 'ServiceUnavailable',
} as const;
/** One of {@link StatusReasons}. */
export type StatusReason = (typeof StatusReasons)[keyof typeof StatusReasons];
const knownReasons = new Set<string>(Object.values(StatusReasons));

/**
 * A non-2xx answer of the API server (client-go's `StatusError`): the HTTP status as `code`, the `Status` it sent
 * and that Status's `reason`. An ApiException, so code that reads client-node's errors reads it too.
 */
export class StatusError extends ApiException<unknown> {
  /** The Status the server answered with; undefined when the body was not one (a proxy's HTML page, say). */
  readonly status?: V1Status;
  /** The Status's `reason` (see {@link StatusReasons}); '' when it gave none. */
  readonly reason: string;

  constructor(code: number, message: string, body: unknown, headers: Record<string, string>) {
    super(code, message, body, headers);
    this.name = 'StatusError';
    this.status = asStatus(body);
    this.reason = typeof this.status?.reason === 'string' ? this.status.reason : '';
  }
}

/** `body` as a Status object (parsed when it is JSON text), or undefined. */
function asStatus(body: unknown): V1Status | undefined {
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as V1Status) : undefined;
}

/** HTTP status of a client-node error (ApiException, or a watch's `statusCode`), if it has one. */
export function httpStatus(err: unknown): number | undefined {
  if (err instanceof ApiException) return err.code;
  const code = err as { code?: unknown; statusCode?: unknown } | null | undefined;
  if (typeof code?.statusCode === 'number') return code.statusCode;
  if (typeof code?.code === 'number') return code.code;
  return undefined;
}

/** 410 Gone/Expired: the resourceVersion we hold is no longer served; only a relist helps. */
export const isGone = (err: unknown): boolean => httpStatus(err) === 410;

/**
 * The connection was refused (ECONNREFUSED): nothing listens at the address the connect reached.
 * Behind the `kubernetes` Service each new connection picks a backend, so with one of three API
 * servers back a refused connect says only that this backend is still down. Checked on the error,
 * its cause and the per-address errors of a multi-address connect (an AggregateError).
 */
export function isConnectionRefused(err: unknown, depth = 0): boolean {
  if (depth > 3 || typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (e.code === 'ECONNREFUSED') return true;
  if (isConnectionRefused(e.cause, depth + 1)) return true;
  return Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => isConnectionRefused(x, depth + 1));
}

/** The server's Retry-After (429/503) in ms, capped at a minute; 0 when absent or unreadable. */
export function retryAfter(err: unknown): number {
  if (!(err instanceof ApiException)) return 0;
  const header = Object.entries(err.headers ?? {}).find(([k]) => k.toLowerCase() === 'retry-after')?.[1];
  const seconds = Number(header);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 60) * 1000 : 0;
}

/** The `reason` of the Status an API error carries (see {@link StatusReasons}); undefined when it has none. */
export function reasonOf(err: unknown): string | undefined {
  if (err instanceof StatusError) return err.reason || undefined;
  const reason = err instanceof ApiException ? asStatus(err.body)?.reason : undefined;
  return typeof reason === 'string' && reason ? reason : undefined;
}

/**
 * apimachinery's rule for its `IsXxx` helpers: the Status says `reason`, or it says no reason the helpers know and
 * the HTTP status is `code` (omitted where a code alone does not tell, as 409 for AlreadyExists).
 */
function hasReason(err: unknown, reason: StatusReason, code?: number): boolean {
  const found = reasonOf(err);
  if (found === reason) return true;
  return code !== undefined && (found === undefined || !knownReasons.has(found)) && httpStatus(err) === code;
}

/** NotFound (404): the object, or its namespace, does not exist. */
export const isNotFound = (err: unknown): boolean => hasReason(err, StatusReasons.NotFound, 404);

/**
 * controller-runtime's `client.IgnoreNotFound` for promises: undefined for a NotFound, the error rethrown otherwise.
 * `const cm = await client.get(Kinds.ConfigMap, name, { namespace }).catch(ignoreNotFound);`
 */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

/**
 * Conflict (409): a write named a resourceVersion that is no longer current (someone wrote in between). Not
 * AlreadyExists, which is a 409 too: see {@link isAlreadyExists}.
 */
export const isConflict = (err: unknown): boolean => hasReason(err, StatusReasons.Conflict, 409);

/** AlreadyExists (409): a create of a name that is taken. */
export const isAlreadyExists = (err: unknown): boolean => hasReason(err, StatusReasons.AlreadyExists);

/** Invalid (422): the object failed validation. */
export const isInvalid = (err: unknown): boolean => hasReason(err, StatusReasons.Invalid, 422);

/** Forbidden (403): RBAC (or an admission webhook) refused the request. */
export const isForbidden = (err: unknown): boolean => hasReason(err, StatusReasons.Forbidden, 403);

/** Unauthorized (401): the credentials were not accepted. */
export const isUnauthorized = (err: unknown): boolean => hasReason(err, StatusReasons.Unauthorized, 401);

/** TooManyRequests (429): throttled; {@link retryAfter} says how long the server asks to wait. */
export const isTooManyRequests = (err: unknown): boolean => hasReason(err, StatusReasons.TooManyRequests, 429);

/** The ERROR event of a watch, carried as the Status object the server sent. */
export function watchStatusError(status: unknown): StatusError {
  const s = (status ?? {}) as { code?: unknown; message?: unknown; reason?: unknown };
  const code = typeof s.code === 'number' ? s.code : 500;
  const message = typeof s.message === 'string' ? s.message : `watch error ${String(s.reason ?? 'unknown')}`;
  return new StatusError(code, message, status, {});
}

/** The API server's own message in an ApiException: its Status `message` (parsed when the body is JSON text). */
function statusMessage(err: ApiException<unknown>): string | undefined {
  const status = asStatus(err.body);
  if (!status) return typeof err.body === 'string' ? err.body || undefined : undefined; // not JSON: the raw body
  return typeof status.message === 'string' ? status.message : undefined;
}

/**
 * One line for logs. ApiException's own message carries the full body and response headers;
 * the Status message and code are what a reader needs.
 */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const message = statusMessage(err);
    return `HTTP ${err.code}${message ? `: ${message}` : ''}`;
  }
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}

/** `err` as an Error saying what failed (`doing`) and the API server's reason; the original is its cause. */
export function failedError(err: unknown, doing: string): Error {
  if (err instanceof ApiException) {
    const message = statusMessage(err);
    return new Error(`${doing} failed with HTTP ${err.code}${message ? `: ${message}` : ''}`, { cause: err });
  }
  return new Error(`${doing} failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
}
