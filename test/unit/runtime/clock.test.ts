// withTimeout decides a timeout after the socket poll of the turn its timer fires in: an answer
// that arrived while this process was stalled is taken, not lost to the late timer.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { once } from 'node:events';
import { request } from 'node:http';
import { Worker } from 'node:worker_threads';
import { realClock, withTimeout } from '../../../lib/runtime/clock.js';

// The server runs on a thread of its own, so it answers while this thread is stalled: 50 ms
// after each request, as an API server would that this process is waiting for.
let worker: Worker;
let port: number;
beforeAll(async () => {
  worker = new Worker(
    `const { createServer } = require('node:http');
     const { parentPort } = require('node:worker_threads');
     const server = createServer((_req, res) => setTimeout(() => res.end('ok'), 50));
     server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));`,
    { eval: true },
  );
  [port] = (await once(worker, 'message')) as [number];
});
afterAll(() => worker.terminate());

/** GET / with `signal`, resolving with the status once the response head is read. */
const get = (signal: AbortSignal) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent: false, signal }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.once('error', reject);
    req.end();
  });

const stall = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

describe('withTimeout', () => {
  it('takes an answer that arrived while the process was stalled past the timeout', async () => {
    const result = withTimeout(
      realClock,
      100,
      undefined,
      async (signal) => {
        const answer = get(signal);
        // let the request go out, then stall past the timeout; the answer arrives meanwhile
        await new Promise((r) => setTimeout(r, 20));
        // stalled in the check phase, so the next turn starts with the timer due and the answer unread
        await new Promise((r) => setImmediate(r));
        stall(400);
        return answer;
      },
      () => new Error('timed out'),
    );
    await expect(result).resolves.toBe(200);
  });

  it('still times out when no answer came', async () => {
    const result = withTimeout(
      realClock,
      50,
      undefined,
      (signal) =>
        new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
      () => new Error('timed out'),
    );
    await expect(result).rejects.toThrow('timed out');
  });
});
