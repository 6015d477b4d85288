/**
 * Runs one handler for one request with a deadline. Whatever goes wrong inside (an exception, a
 * timeout, a malformed result, the API server hanging up) comes out as a denial carrying the
 * reason, so a bug in user code is never a crash, a hung request or a malformed response.
 */
import type { ServerResponse } from 'node:http';
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { AdmissionRequest, AdmissionResponseBody } from './admission.js';
import type { Webhook } from './handler.js';
import { errorResponse, toResponse } from './result.js';

export interface DispatchOptions {
  path: string;
  webhook: Webhook;
  request: AdmissionRequest;
  /** Its 'close' before the response is written means the caller is gone. */
  res: ServerResponse;
  clock: Clock;
  timeoutMs: number;
  logger: Logger;
}

/**
 * The reason a finished request's signal carries. One shared Error: a new one per request captured a stack trace
 * every time for a signal nobody usually listens to (bench compare profile).
 */
const REQUEST_FINISHED = new Error('request finished');

export async function dispatch(o: DispatchOptions): Promise<AdmissionResponseBody> {
  const abort = new AbortController();
  const cancelTimer = o.clock.after(o.timeoutMs, () =>
    abort.abort(new Error(`handler timed out after ${o.timeoutMs}ms`)),
  );
  const onClose = () => {
    if (!o.res.writableFinished) abort.abort(new Error('the API server closed the connection'));
  };
  o.res.once('close', onClose);
  const log = o.logger.child({ webhook: o.path, uid: o.request.uid });
  const aborted = new Promise<never>((_, reject) => {
    abort.signal.addEventListener('abort', () => reject(abort.signal.reason as Error), { once: true });
  });
  aborted.catch(() => undefined);
  try {
    const result = await Promise.race([
      Promise.resolve().then(() => o.webhook.handle(o.request, { signal: abort.signal, logger: log })),
      aborted,
    ]);
    return toResponse(o.request.uid, o.webhook.type, result);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    log.error('webhook handler failed; denying', { err: e instanceof Error ? e : message });
    return errorResponse(o.request.uid, `webhook ${o.path} failed: ${message}`);
  } finally {
    cancelTimer();
    o.res.off('close', onClose);
    // Tell a handler still working in the background that nobody is listening any more.
    if (!abort.signal.aborted) abort.abort(REQUEST_FINISHED);
  }
}
