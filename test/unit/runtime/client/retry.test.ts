// retryOnConflict and retryOnError on a FakeClock: how many attempts, the waits between them (client-go's
// DefaultRetry and DefaultBackoff, jitter included), which errors are retried, and abort.
import { describe, expect, it } from '@jest/globals';
import {
  DefaultBackoff,
  DefaultRetry,
  retryOnConflict,
  retryOnError,
  type RetryOptions,
} from '../../../../lib/runtime/client/index.js';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { StatusError } from '../../../../lib/runtime/kube/errors.js';

const statusError = (code: number, reason: string) =>
  new StatusError(code, reason, { kind: 'Status', code, reason, message: reason }, {});
const conflict = () => statusError(409, 'Conflict');

/**
 * Runs `retry` with a closure that fails with `errors` in turn and then resolves 'done'; advances the clock 1 ms at
 * a time and records when each attempt ran (ms after the first).
 */
async function run(
  errors: unknown[],
  retry: (fn: () => Promise<string>, options: RetryOptions) => Promise<string>,
  options: Omit<RetryOptions, 'clock'> = {},
) {
  const clock = new FakeClock();
  const start = clock.now();
  const attempts: number[] = [];
  const fn = async () => {
    attempts.push(clock.now() - start);
    const e = errors[attempts.length - 1];
    if (e) throw e;
    return 'done';
  };
  let settled = false;
  const result: Promise<{ value?: string; error?: unknown }> = retry(fn, { ...options, clock }).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  void result.then(() => (settled = true));
  for (let i = 0; i < 10_000 && !settled; i++) await clock.advance(1);
  return { ...(await result), attempts };
}

describe('retryOnConflict', () => {
  it("retries a Conflict with DefaultRetry's waits: 10 ms apart, up to 10% longer", async () => {
    const { value, attempts } = await run([conflict(), conflict(), conflict()], retryOnConflict, { random: () => 1 });
    expect(value).toBe('done');
    expect(attempts).toEqual([0, 11, 22, 33]); // 10 ms + 10% jitter (random() = 1) each
    const noJitter = await run([conflict()], retryOnConflict, { random: () => 0 });
    expect(noJitter.attempts).toEqual([0, 10]);
  });

  it('gives up after DefaultRetry.steps (5) attempts with the last Conflict', async () => {
    const errors = Array.from({ length: 6 }, conflict);
    const { error, attempts } = await run(errors, retryOnConflict, { random: () => 0 });
    expect(DefaultRetry.steps).toBe(5);
    expect(attempts).toEqual([0, 10, 20, 30, 40]);
    expect(error).toBe(errors[4]);
  });

  it('does not retry other errors, AlreadyExists (a 409 too) among them', async () => {
    for (const e of [statusError(409, 'AlreadyExists'), statusError(404, 'NotFound'), new Error('boom')]) {
      const { error, attempts } = await run([e], retryOnConflict);
      expect([error, attempts]).toEqual([e, [0]]);
    }
  });

  it("DefaultBackoff's waits grow by its factor: 10, 50, 250 ms over 4 attempts", async () => {
    const { error, attempts } = await run(Array.from({ length: 4 }, conflict), retryOnConflict, {
      backoff: DefaultBackoff,
      random: () => 0,
    });
    expect(attempts).toEqual([0, 10, 60, 310]);
    expect(error).toBeInstanceOf(StatusError);
  });

  it('a cap bounds the growing wait; an abort ends the wait with its reason', async () => {
    const capped = await run(Array.from({ length: 4 }, conflict), retryOnConflict, {
      backoff: { steps: 4, durationMs: 10, factor: 10, jitter: 0, capMs: 40 },
    });
    expect(capped.attempts).toEqual([0, 10, 50, 90]);
    const abort = new AbortController();
    abort.abort(new Error('stopping'));
    const aborted = await run([conflict()], retryOnConflict, { signal: abort.signal });
    expect(aborted.attempts).toEqual([0]);
    expect((aborted.error as Error).message).toBe('stopping');
  });
});

describe('retryOnError', () => {
  it('retries what the predicate accepts, and refuses a backoff without attempts', async () => {
    const flaky = statusError(503, 'ServiceUnavailable');
    const { value, attempts } = await run([flaky, flaky], (fn, o) => retryOnError(fn, (e) => e === flaky, o), {
      random: () => 0,
    });
    expect([value, attempts]).toEqual(['done', [0, 10, 20]]);
    await expect(
      retryOnError(
        async () => 1,
        () => true,
        { backoff: { steps: 0, durationMs: 1, factor: 1, jitter: 0 } },
      ),
    ).rejects.toThrow(RangeError);
  });
});
