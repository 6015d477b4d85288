import { ApiException } from '../kube/client-node.js';

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

/** The watch was aborted by us because nothing (not even a bookmark) arrived in time. */
export class StalledWatchError extends Error {
  constructor(silentForMs: number) {
    super(`watch delivered no event or bookmark for ${silentForMs}ms; assuming the stream is dead`);
    this.name = 'StalledWatchError';
  }
}

/** A timed-out request (list), distinguished from API errors in logs. */
export class RequestTimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not complete within ${ms}ms`);
    this.name = 'RequestTimeoutError';
  }
}

/** The ERROR event of a watch, carried as the Status object the server sent. */
export function watchStatusError(status: unknown): ApiException<unknown> {
  const s = (status ?? {}) as { code?: unknown; message?: unknown; reason?: unknown };
  const code = typeof s.code === 'number' ? s.code : 500;
  const message = typeof s.message === 'string' ? s.message : `watch error ${String(s.reason ?? 'unknown')}`;
  return new ApiException(code, message, status, {});
}

/**
 * One line for logs. ApiException's own message carries the full body and response headers;
 * the Status message and code are what a reader needs.
 */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const message = (err.body as { message?: unknown } | undefined)?.message;
    return `HTTP ${err.code}${typeof message === 'string' ? `: ${message}` : ''}`;
  }
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
  }
  return String(err);
}
