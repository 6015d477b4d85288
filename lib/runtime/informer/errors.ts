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
