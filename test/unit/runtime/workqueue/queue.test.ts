import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { FakeClock, settle } from '../../../../lib/runtime/clock.js';
import { WorkQueue, stableKey } from '../../../../lib/runtime/workqueue/index.js';

const newQueue = (clock = new FakeClock(), registry = new Registry()) =>
  new WorkQueue<string>({ name: 'test', clock, registry });

/** Resolves to the item, or to 'pending' if get() is still waiting after every continuation ran. */
async function poll<T>(p: Promise<T>): Promise<T | 'pending'> {
  return Promise.race([p, settle().then(() => 'pending' as const)]);
}

describe('WorkQueue', () => {
  it('hands out items in the order they were added', async () => {
    const q = newQueue();
    q.add('a');
    q.add('b');
    q.add('c');
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await q.get();
      if (!r.shutdown) got.push(r.item);
    }
    expect(got).toEqual(['a', 'b', 'c']);
  });

  it('dedupes an item added twice before it is picked up', async () => {
    const q = newQueue();
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(1);
    const first = await q.get();
    expect(first).toEqual({ shutdown: false, item: 'a' });
    q.done('a');
    expect(q.len()).toBe(0);
    expect(await poll(q.get())).toBe('pending');
  });

  it('never hands an item to a second worker while the first is processing it', async () => {
    const q = newQueue();
    q.add('a');
    await q.get();
    q.add('a'); // re-added while processing: dirty, not queued
    expect(q.len()).toBe(0);
    const second = q.get();
    expect(await poll(second)).toBe('pending');

    q.done('a'); // only now does it go back on the queue
    expect(await poll(second)).toEqual({ shutdown: false, item: 'a' });
  });

  it('processes a dirty item once even if it was re-added several times while processing', async () => {
    const q = newQueue();
    q.add('a');
    await q.get();
    q.add('a');
    q.add('a');
    q.done('a');
    expect(q.len()).toBe(1);
    await q.get();
    q.done('a');
    expect(q.len()).toBe(0);
  });

  it('wakes a waiting get() when an item arrives', async () => {
    const q = newQueue();
    const pending = q.get();
    expect(await poll(pending)).toBe('pending');
    q.add('x');
    expect(await pending).toEqual({ shutdown: false, item: 'x' });
  });

  it('ignores done() for items that are not being processed', async () => {
    const q = newQueue();
    q.done('never-added');
    q.add('a');
    q.done('a'); // queued but not picked up: still queued afterwards
    expect(q.len()).toBe(1);
    expect(await q.get()).toEqual({ shutdown: false, item: 'a' });
  });

  it('keys object items by value, whatever the property order', async () => {
    const q = new WorkQueue<{ namespace?: string; name: string }>({ name: 'objects', clock: new FakeClock() });
    q.add({ namespace: 'ns', name: 'a' });
    q.add({ name: 'a', namespace: 'ns' });
    q.add({ name: 'a' });
    expect(q.len()).toBe(2);
  });

  describe('shutdown', () => {
    it('rejects new adds but still hands out queued items, then reports shutdown', async () => {
      const q = newQueue();
      q.add('a');
      q.shutDown();
      q.add('b');
      expect(q.shuttingDown()).toBe(true);
      expect(await q.get()).toEqual({ shutdown: false, item: 'a' });
      expect(await q.get()).toEqual({ shutdown: true });
    });

    it('releases every worker blocked in get()', async () => {
      const q = newQueue();
      const waiting = [q.get(), q.get(), q.get()];
      q.shutDown();
      expect(await Promise.all(waiting)).toEqual([{ shutdown: true }, { shutdown: true }, { shutdown: true }]);
    });

    it('shutDownWithDrain waits until in-flight items are done', async () => {
      const q = newQueue();
      q.add('a');
      q.add('b');
      await q.get();
      await q.get();
      let drained = false;
      const drain = q.shutDownWithDrain().then(() => {
        drained = true;
      });
      await settle();
      expect(drained).toBe(false);
      q.done('a');
      await settle();
      expect(drained).toBe(false);
      q.done('b');
      await drain;
      expect(drained).toBe(true);
    });

    it('shutDownWithDrain returns at once when nothing is in flight', async () => {
      const q = newQueue();
      await q.shutDownWithDrain();
      expect(await q.get()).toEqual({ shutdown: true });
    });

    it('a plain shutDown() ends a drain that is still waiting', async () => {
      const q = newQueue();
      q.add('a');
      await q.get();
      const drain = q.shutDownWithDrain();
      q.shutDown();
      await expect(drain).resolves.toBeUndefined();
    });

    it('requeues a dirty item on done() during drain so queued work is not lost', async () => {
      const q = newQueue();
      q.add('a');
      await q.get();
      q.add('a');
      const drain = q.shutDownWithDrain();
      q.done('a');
      await drain;
      expect(await q.get()).toEqual({ shutdown: false, item: 'a' });
    });
  });

  it('model check: random add/get/done sequences keep dedupe and per-key exclusivity', async () => {
    type Op = { kind: 'add'; key: string } | { kind: 'get' } | { kind: 'done'; index: number };
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), key: fc.constantFrom('a', 'b', 'c', 'd') }),
      fc.record({ kind: fc.constant('get' as const) }),
      fc.record({ kind: fc.constant('done' as const), index: fc.nat(5) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops: Op[]) => {
        const q = newQueue();
        const inFlight: string[] = [];
        const wanted = new Set<string>(); // added since it was last handed out
        for (const o of ops) {
          if (o.kind === 'add') {
            q.add(o.key);
            wanted.add(o.key);
          } else if (o.kind === 'get') {
            if (q.len() === 0) {
              // Nothing to hand out: then every wanted key must be waiting for its done().
              for (const k of wanted) expect(inFlight).toContain(k);
              continue;
            }
            const r = await q.get();
            if (r.shutdown) throw new Error('unexpected shutdown');
            expect(inFlight).not.toContain(r.item);
            expect(wanted.has(r.item)).toBe(true);
            wanted.delete(r.item);
            inFlight.push(r.item);
          } else if (inFlight.length > 0) {
            const [key] = inFlight.splice(o.index % inFlight.length, 1);
            q.done(key);
          }
        }
        // Everything wanted is delivered once the in-flight items are done.
        for (const k of inFlight.splice(0)) q.done(k);
        const delivered = new Set<string>();
        while (q.len() > 0) {
          const r = await q.get();
          if (r.shutdown) break;
          delivered.add(r.item);
          q.done(r.item);
        }
        expect([...delivered].sort()).toEqual([...wanted].sort());
      }),
      { numRuns: 200 },
    );
  });
});

describe('stableKey', () => {
  it('is independent of property order and nesting order', () => {
    expect(stableKey({ a: 1, b: { c: 2, d: 3 } })).toBe(stableKey({ b: { d: 3, c: 2 }, a: 1 }));
    expect(stableKey('plain')).toBe('plain');
  });

  it('never throws on values JSON cannot encode', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(typeof stableKey(cyclic)).toBe('string');
    expect(stableKey(10n)).toBe('10');
    expect(typeof stableKey(undefined)).toBe('string');
  });
});
