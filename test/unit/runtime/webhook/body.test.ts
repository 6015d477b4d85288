// The request-body reader and the handler dispatch around a request: what they tell waiters and handlers when a
// request ends, after #29's profile made both tell them only when someone can be waiting.
import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import { FakeClock, realClock } from '../../../../lib/runtime/clock.js';
import { ClientGoneError, readBody, SlowBodyError, type Body } from '../../../../lib/runtime/webhook/body.js';
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

describe('readBody: the minimum rate judges the client, not this process', () => {
  // 1,000 bytes/s from 5 s on, 10 s deadline: the server's defaults scaled down.
  const paced = (clock: FakeClock) => ({
    limit: 1_000_000,
    budget: new ByteBudget(1_000_000, clock),
    budgetWaitMs: 10_000,
    deadlineMs: 10_000,
    minBytesPerSecond: 1_000,
    graceMs: 5_000,
    clock,
  });

  /** A read whose client sent 100 bytes, then a stall of this process of `stallMs` after the first check. */
  async function stalled(stallMs: number) {
    const clock = new FakeClock();
    const req = request();
    const read = readBody(req, paced(clock)).catch((e: unknown) => e);
    req.write(Buffer.alloc(100));
    await clock.advance(250);
    clock.jump(stallMs); // the process got no CPU: the check due at 500 ms fires late
    await clock.advance(0);
    return { clock, req, read };
  }

  it('a client that sends too slowly is cut once the grace is over', async () => {
    const { clock, read } = await stalled(0);
    await clock.advance(5_500);
    const err = await read;
    expect(err).toBeInstanceOf(SlowBodyError);
    expect((err as Error).message).toMatch(
      /^request body arrived slower than 1000 bytes\/s \(100 bytes in 5\d{3}ms\)$/,
    );
  });

  it('a stall of this process (timers firing late) is not counted against the client, whose bytes were waiting', async () => {
    const { req, read } = await stalled(6_000);
    req.end(Buffer.alloc(9_900)); // what the kernel held, read once the loop turns
    const body = (await read) as Body;
    expect(body.data.length).toBe(10_000);
    body.release();
  });

  it('a slow client still gets no more than the wall-clock deadline, stall or not', async () => {
    const { clock, read } = await stalled(6_000);
    await clock.advance(4_000);
    const err = await read;
    expect(err).toBeInstanceOf(SlowBodyError);
    expect((err as Error).message).toBe('request body did not arrive within 10000ms (100 bytes received)');
  });

  it('tells the connection gate a client is behind only for time this process was running, even between checks', async () => {
    const clock = new FakeClock();
    const req = request();
    let behind = () => false;
    const read = readBody(req, { ...paced(clock), onReading: (probe) => (behind = probe) }).catch((e: unknown) => e);
    req.write(Buffer.alloc(100));
    await clock.advance(250); // checked at 250 ms; the next check is due at 500 ms
    clock.jump(2_000); // held up: the gate asks before the overdue check has run
    expect(behind()).toBe(false);
    await clock.advance(0); // the check runs, 1.75 s late
    await clock.advance(2_000); // 2.5 s of running at 100 bytes: behind 1,000 bytes/s
    expect(behind()).toBe(true);
    req.end();
    await read;
  });

  it('after a stall the rate is judged again on the time the process was running', async () => {
    const { clock, read } = await stalled(3_000); // the check due at 500 ms fired at 3,250 ms: 2.75 s not counted
    await clock.advance(4_000); // 4.25 s of running: still within the grace
    expect(clock.pending()).toBe(1);
    await clock.advance(1_000); // 5.25 s of running at 100 bytes: too slow
    const err = await read;
    expect(err).toBeInstanceOf(SlowBodyError);
    expect((err as Error).message).toMatch(/\(100 bytes in 5\d{3}ms, not counting 2750ms this process was held up\)$/);
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
