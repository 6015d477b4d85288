// Bounded concurrency of the webhook server: a connection cap with a FIFO queue of bare sockets,
// and a budget of request-body bytes in flight. A flood waits (latency); it does not pile up
// TLS sessions or bodies (memory). Real loopback TLS; waits are bounded, never speed claims.
import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent } from 'node:https';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { FakeClock, settle } from '../../../../lib/runtime/clock.js';
import { ByteBudget, BudgetTimeoutError } from '../../../../lib/runtime/webhook/limiter.js';
import { allow, validating, WebhookServer } from '../../../../lib/runtime/webhook/index.js';
import { httpsRequest, makePki, quietLogger, review, tempDir, writePki } from '../tls-fixtures.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('ByteBudget', () => {
  it('grants any waiter whose bytes fit, never holding small ones behind a large one, and times a waiter out', async () => {
    const clock = new FakeClock();
    const budget = new ByteBudget(100, clock);
    const first = await budget.acquire(60, 1_000);
    const order: string[] = [];
    const second = budget.acquire(60, 1_000).then((release) => {
      order.push('second');
      return release;
    });
    const third = budget.acquire(10, 1_000).then((release) => {
      order.push('third');
      return release;
    }); // fits now: not held behind the 60 bytes waiting before it
    await settle();
    expect(order).toEqual(['third']);
    const fourth = budget.take(20, 1_000).then(() => order.push('fourth')); // 90 + 20 > 100: waits
    await settle();
    (await third)(); // 80 in use: the fourth fits, the second does not yet
    await settle();
    expect(order).toEqual(['third', 'fourth']);
    await fourth;
    budget.give(20);
    first();
    (await second)();
    expect(order).toEqual(['third', 'fourth', 'second']);
    const hog = await budget.acquire(1_000, 1_000); // larger than the budget: takes all of it
    expect(budget.tryTake(1)).toBe(false);
    const late = budget.acquire(1, 500).catch((e: unknown) => e);
    await clock.advance(500);
    expect(await late).toBeInstanceOf(BudgetTimeoutError);
    hog();
    expect(budget.inUse()).toBe(0);
  });
});

describe('WebhookServer under a connection flood', () => {
  it('serves at most maxConnections at once, queues the rest as bare sockets, and closes what exceeds the queue', async () => {
    const dir = tempDir();
    cleanups.push(dir.remove);
    const pki = await makePki('limits');
    await writePki(dir.path, pki);
    const registry = new Registry();
    const server = new WebhookServer({
      certDir: dir.path,
      logger: quietLogger(),
      registry,
      port: 0,
      host: '127.0.0.1',
      maxConnections: 2,
      maxOpenConnections: 2,
      maxQueuedConnections: 2,
      evictIdleAfterMs: 60_000, // no eviction here: the test below covers it
    });
    server.register(
      '/v',
      validating(() => allow()),
    );
    await server.start();
    cleanups.push(() => server.stop());
    const agents = [new Agent({ keepAlive: true, maxSockets: 1 }), new Agent({ keepAlive: true, maxSockets: 1 })];
    cleanups.push(() => agents.forEach((a) => a.destroy()));
    // Two kept-alive connections hold both slots.
    for (const agent of agents)
      expect(
        (
          await httpsRequest({
            port: server.port(),
            ca: pki.ca.certPem,
            path: '/v',
            body: JSON.stringify(review()),
            agent,
          })
        ).status,
      ).toBe(200);
    // A third waits in the queue: its request is answered only once a slot frees up.
    let third: number | undefined;
    const waiting = httpsRequest({
      port: server.port(),
      ca: pki.ca.certPem,
      path: '/v',
      body: JSON.stringify(review()),
    }).then((r) => {
      third = r.status;
    });
    // The second queued socket (it has sent its first bytes, as a TLS client's ClientHello): fills the queue.
    const raw = connect(server.port(), '127.0.0.1', () => raw.write('\x16'));
    cleanups.push(() => raw.destroy());
    await sleep(300);
    expect(third).toBeUndefined();
    // A fifth is over the queue: closed at once, unserved.
    const refused = await new Promise<string>((resolve) => {
      const s = connect(server.port(), '127.0.0.1', () => s.write('\x16'));
      s.on('close', () => resolve('closed'));
      s.on('error', () => undefined);
      setTimeout(() => {
        s.destroy();
        resolve('still open');
      }, 5_000);
    });
    expect(refused).toBe('closed');
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/webhook_connections\{state="idle"\} 2/); // open, between requests
    expect(metrics).toMatch(/webhook_connections_dropped_total\{reason="queue-full"\} 1/);
    raw.destroy(); // the queue is served newest first: leave the request as its only entry
    agents[0].destroy(); // a slot frees up: the queued request is served
    await waiting;
    expect(third).toBe(200);
  }, 30_000);
});
