// Past the open-connection cap a newcomer takes the slot of an idle connection. An idle connection's
// request may already be in this turn's reads, behind the newcomer's bytes (the API server's next
// review on a kept-alive connection, or its first after a stall), and closing the connection then fails
// that admission (EOF; the API server retries no POST). So the connection is chosen and closed only
// after the poll phase, when such a request has made it busy. Fake sockets: what matters is the order
// of events within one turn.
import { describe, expect, it } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import { ConnectionGate } from '../../../../lib/runtime/webhook/limiter.js';

/** Just what the gate uses of a socket: its events, buffered bytes, resume and destroy. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  readableLength = 1;
  constructor(readonly name: string) {
    super();
  }
  resume(): this {
    return this;
  }
  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.emit('close');
    }
    return this;
  }
}

function gate(clock: FakeClock, admitted: string[], evicted: string[]): ConnectionGate {
  return new ConnectionGate({
    maxConnections: 2,
    maxOpenConnections: 2,
    maxQueued: 8,
    queueTimeoutMs: 10_000,
    silentTimeoutMs: 5_000,
    evictIdleAfterMs: 1_000,
    clock,
    admit: (s) => admitted.push((s as unknown as FakeSocket).name),
    onDropped: (reason) => evicted.push(reason),
  });
}

/** A connection that connects, completes its handshake and serves one request, then idles. */
async function keptAlive(g: ConnectionGate, name: string): Promise<FakeSocket> {
  const s = new FakeSocket(name);
  g.onConnection(s as unknown as Socket);
  s.emit('readable');
  g.handshakeDone(s as unknown as Socket);
  await g.requestStarted(s as unknown as Socket, 1_000);
  g.requestEnded(s as unknown as Socket);
  return s;
}

/** Two kept-alive connections holding both open slots, idle past the eviction threshold, `first` the longest. */
async function twoKept(g: ConnectionGate, clock: FakeClock, first: string, second: string) {
  const a = await keptAlive(g, first);
  await clock.advance(10);
  const b = await keptAlive(g, second);
  await clock.advance(2_000);
  return { a, b };
}

/** A newcomer whose first bytes arrive (past the open cap: it needs an idle connection's slot). */
function arrive(g: ConnectionGate, name: string): FakeSocket {
  const s = new FakeSocket(name);
  g.onConnection(s as unknown as Socket);
  s.emit('readable');
  return s;
}

describe('ConnectionGate eviction of idle connections', () => {
  it('does not close a kept-alive connection whose request arrived in the same turn as the newcomer', async () => {
    const clock = new FakeClock();
    const admitted: string[] = [];
    const dropped: string[] = [];
    const g = gate(clock, admitted, dropped);
    // api-server-1 is idle the longest: the first candidate.
    const { a, b } = await twoKept(g, clock, 'api-server-1', 'api-server-2');
    // One turn: a newcomer's first bytes, then the next request on the connection idle the longest.
    arrive(g, 'newcomer');
    const granted = g.requestStarted(a as unknown as Socket, 1_000);
    expect(a.destroyed).toBe(false);

    await turn(); // after the poll phase: the busy connection is spared, the other idle one goes
    expect(await granted).toBe(true);
    expect(a.destroyed).toBe(false);
    expect(b.destroyed).toBe(true);
    expect(dropped).toEqual(['evicted']);
    expect(admitted).toEqual(['api-server-1', 'api-server-2', 'newcomer']);
    g.close();
  });

  it('closes the connection idle the longest for a newcomer once the turn is over, and none while stopping', async () => {
    const clock = new FakeClock();
    const admitted: string[] = [];
    const dropped: string[] = [];
    const g = gate(clock, admitted, dropped);
    const { a, b } = await twoKept(g, clock, 'a', 'b');
    const c = arrive(g, 'newcomer');
    await turn();
    expect([a.destroyed, b.destroyed, c.destroyed]).toEqual([true, false, false]);
    expect(admitted.at(-1)).toBe('newcomer');
    g.handshakeDone(c as unknown as Socket); // the newcomer is served too: every open connection is kept-alive
    await g.requestStarted(c as unknown as Socket, 1_000);
    g.requestEnded(c as unknown as Socket);

    // Past the cap again, then stopping in the same turn: the pending eviction is dropped with the queue.
    await clock.advance(2_000);
    const d = arrive(g, 'late');
    g.close();
    await turn();
    expect([b.destroyed, c.destroyed, d.destroyed]).toEqual([true, true, true]); // closed by the stop, not evicted
    expect(dropped).toEqual(['evicted']);
  });

  it('does not close a connection that only looked idle after a stall: its first request arrived in the same turn', async () => {
    const clock = new FakeClock();
    const admitted: string[] = [];
    const dropped: string[] = [];
    const g = gate(clock, admitted, dropped);
    const fresh = arrive(g, 'api-server-new');
    g.handshakeDone(fresh as unknown as Socket);
    await clock.advance(10);
    const kept = await keptAlive(g, 'kept');
    await clock.advance(2_000); // this process stalled: the new connection's request is unread yet
    const c = arrive(g, 'newcomer');
    const granted = g.requestStarted(fresh as unknown as Socket, 1_000);
    await turn();
    expect(await granted).toBe(true);
    expect([fresh.destroyed, kept.destroyed, c.destroyed]).toEqual([false, true, false]);
    expect(admitted.at(-1)).toBe('newcomer');
    g.close();
  });
});
