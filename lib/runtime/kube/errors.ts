/**
 * The one place that reads an error from the API client: its HTTP status, the common statuses by name, a refused
 * connection, the server's Retry-After, and a one-line description for logs.
 */
import { ApiException } from './client-node.js';

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

/** 404 NotFound. */
export const isNotFound = (err: unknown): boolean => httpStatus(err) === 404;

/** 409 Conflict (a stale resourceVersion) or AlreadyExists. */
export const isConflict = (err: unknown): boolean => httpStatus(err) === 409;

/** The ERROR event of a watch, carried as the Status object the server sent. */
export function watchStatusError(status: unknown): ApiException<unknown> {
  const s = (status ?? {}) as { code?: unknown; message?: unknown; reason?: unknown };
  const code = typeof s.code === 'number' ? s.code : 500;
  const message = typeof s.message === 'string' ? s.message : `watch error ${String(s.reason ?? 'unknown')}`;
  return new ApiException(code, message, status, {});
}

/** The API server's own message in an ApiException: its Status `message` (parsed when the body is JSON text). */
function statusMessage(err: ApiException<unknown>): string | undefined {
  let body: unknown = err.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return (body as string) || undefined; // not JSON: the raw body is the message
    }
  }
  const message = (body as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
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
