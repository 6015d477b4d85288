// The request-body reader and the handler dispatch around a request: what they tell waiters and handlers when a
// request ends, after #29's profile made both tell them only when someone can be waiting.
import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { realClock } from '../../../../lib/runtime/clock.js';
import { ClientGoneError, readBody } from '../../../../lib/runtime/webhook/body.js';
import { dispatch } from '../../../../lib/runtime/webhook/dispatch.js';
import { allow, validating, type AdmissionRequest } from '../../../../lib/runtime/webhook/index.js';
import { ByteBudget } from '../../../../lib/runtime/webhook/limiter.js';
import { quietLogger } from '../tls-fixtures.js';

const request = (headers: Record<string, string> = {}) =>
  Object.assign(new PassThrough(), { headers, complete: false }) as unknown as IncomingMessage & PassThrough;
const options = (budget: ByteBudget) => ({
  limit: 10_000,
  budget,
  budgetWaitMs: 10_000,
  deadlineMs: 10_000,
  minBytesPerSecond: 1,
  graceMs: 10_000,
  clock: realClock,
});

describe('readBody', () => {
  it('a client that leaves while its chunk waits for budget room gives up its place: nothing is granted to it later', async () => {
    const budget = new ByteBudget(100, realClock);
    expect(budget.tryTake(100)).toBe(true); // all of it held elsewhere
    const req = request();
    const read = readBody(req, options(budget)).catch((e: unknown) => e);
    req.write(Buffer.alloc(50)); // waits for room
    await new Promise((r) => setImmediate(r));
    req.emit('aborted');
    expect(await read).toBeInstanceOf(ClientGoneError);
    budget.give(100);
    expect(budget.inUse()).toBe(0);
  });

  it('a chunk that waited and got room is kept, and the whole body charged until released', async () => {
    const budget = new ByteBudget(100, realClock);
    expect(budget.tryTake(100)).toBe(true);
    const req = request();
    const read = readBody(req, options(budget));
    req.write(Buffer.from('a'.repeat(40)));
    await new Promise((r) => setImmediate(r));
    budget.give(100); // room: the waiting chunk is granted
    await new Promise((r) => setImmediate(r));
    req.end(Buffer.from('b'.repeat(10)));
    const body = await read;
    expect(body.data.toString()).toBe(`${'a'.repeat(40)}${'b'.repeat(10)}`);
    expect(budget.inUse()).toBe(50);
    body.release();
    expect(budget.inUse()).toBe(0);
  });

  it('a body read without waiting charges its bytes and gives them back once', async () => {
    const budget = new ByteBudget(1_000, realClock);
    const req = request();
    const read = readBody(req, options(budget));
    req.end(Buffer.from('{"x":1}'));
    const body = await read;
    expect(body.data.toString()).toBe('{"x":1}');
    body.release();
    body.release();
    expect(budget.inUse()).toBe(0);
  });
});

describe('dispatch', () => {
  const admission = {
    uid: 'u1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    object: {},
  } as unknown as AdmissionRequest;
  const response = () => Object.assign(new EventEmitter(), { writableFinished: false }) as unknown as ServerResponse;

  it("aborts each handler's signal once its request is answered, with the reason 'request finished'", async () => {
    const signals: AbortSignal[] = [];
    const webhook = validating((_req, ctx) => {
      signals.push(ctx.signal);
      expect(ctx.signal.aborted).toBe(false);
      return allow();
    });
    for (let i = 0; i < 2; i++) {
      const answer = await dispatch({
        path: '/validate',
        webhook,
        request: admission,
        res: response(),
        clock: realClock,
        timeoutMs: 5_000,
        logger: quietLogger(),
      });
      expect(answer).toMatchObject({ uid: 'u1', allowed: true });
    }
    expect(signals.map((s) => [s.aborted, (s.reason as Error).message])).toEqual([
      [true, 'request finished'],
      [true, 'request finished'],
    ]);
  });

  it('a handler still running when the caller goes away sees its signal aborted with that reason', async () => {
    const res = response();
    let seen: unknown;
    const webhook = validating(
      (_req, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            seen = ctx.signal.reason;
            resolve(allow());
          });
          setImmediate(() => res.emit('close'));
        }),
    );
    const answer = await dispatch({
      path: '/validate',
      webhook,
      request: admission,
      res,
      clock: realClock,
      timeoutMs: 5_000,
      logger: quietLogger(),
    });
    expect((seen as Error).message).toBe('the API server closed the connection');
    expect(answer).toMatchObject({ allowed: false });
  });
});
