/**
 * The event recorder behaves as client-go v0.30's tools/record (the recorder upstream's
 * controllers use through controller-runtime): the event's shape, the count of a repeated event
 * (a PATCH of the stored one), the aggregate of 10 distinct messages, the spam filter of 25 per
 * object refilled every 5 minutes, the retries of a transport failure and no retry of a refusal.
 */
import { describe, expect, it } from '@jest/globals';
import { FakeClock } from '../../../../lib/runtime/clock.js';
import {
  EventBroadcaster,
  objectReference,
  type EventSink,
  type ObjectReference,
} from '../../../../lib/runtime/events/index.js';
import { Logger } from '../../../../lib/runtime/log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** An API server's event store: creates and strategic-merge patches of flat fields, by namespace/name. */
class FakeEventStore implements EventSink {
  readonly events = new Map<string, Json>();
  readonly calls: string[] = [];
  failures: unknown[] = [];
  create(namespace: string, event: Json): Promise<Json> {
    this.calls.push(`create ${namespace}/${event.metadata.name}`);
    const failure = this.failures.shift();
    if (failure) return Promise.reject(failure);
    const key = `${namespace}/${event.metadata.name}`;
    if (this.events.has(key)) return Promise.reject(Object.assign(new Error('exists'), { code: 409 }));
    const stored = structuredClone(event);
    this.events.set(key, stored);
    return Promise.resolve(stored);
  }
  patch(namespace: string, name: string, patch: Json): Promise<Json> {
    this.calls.push(`patch ${namespace}/${name}`);
    const failure = this.failures.shift();
    if (failure) return Promise.reject(failure);
    const stored = this.events.get(`${namespace}/${name}`);
    if (!stored) return Promise.reject(Object.assign(new Error('not found'), { code: 404 }));
    Object.assign(stored, patch);
    return Promise.resolve(stored);
  }
}

const ws: ObjectReference = objectReference(
  { metadata: { name: 'web', namespace: 'apps', uid: 'u-1', resourceVersion: '7' } },
  'apps.kruise.io/v1alpha1',
  'WorkloadSpread',
);

function setup() {
  const clock = new FakeClock(Date.parse('2026-11-26T10:00:00Z'));
  const store = new FakeEventStore();
  const logs: string[] = [];
  const broadcaster = new EventBroadcaster({
    sink: store,
    clock,
    logger: new Logger({}, 'debug', { write: (l) => logs.push(l) }),
    random: () => 0.5,
  });
  return { clock, store, logs, broadcaster, recorder: broadcaster.recorder('workloadspread-controller') };
}

describe('EventRecorder', () => {
  it('writes a core/v1 Event about the object, in its namespace, with the source and a unique name', async () => {
    const { store, broadcaster, recorder } = setup();
    recorder.event(ws, 'Warning', 'CreatePodFailed', "Pod apps/p-1 was expected to be created but it wasn't");
    recorder.event(ws, 'Normal', 'RecoverSchedulable', 'Subset a of WorkloadSpread apps/web is recovered');
    await broadcaster.flush();
    const events = [...store.events.values()];
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: expect.stringMatching(/^web\.[0-9a-f]+$/), namespace: 'apps' },
      involvedObject: {
        kind: 'WorkloadSpread',
        apiVersion: 'apps.kruise.io/v1alpha1',
        namespace: 'apps',
        name: 'web',
        uid: 'u-1',
        resourceVersion: '7',
      },
      reason: 'CreatePodFailed',
      message: "Pod apps/p-1 was expected to be created but it wasn't",
      firstTimestamp: '2026-11-26T10:00:00Z',
      lastTimestamp: '2026-11-26T10:00:00Z',
      count: 1,
      type: 'Warning',
      source: { component: 'workloadspread-controller' },
      reportingComponent: 'workloadspread-controller',
      reportingInstance: '',
    });
    expect(events[1].metadata.name).not.toBe(events[0].metadata.name);
  });

  it('puts an event about a cluster-scoped object in the default namespace', async () => {
    const { store, broadcaster, recorder } = setup();
    recorder.event(objectReference({ metadata: { name: 'n1' } }, 'v1', 'Node'), 'Normal', 'R', 'm');
    await broadcaster.flush();
    expect([...store.events.keys()][0]).toMatch(/^default\/n1\./);
  });

  it('counts a repeated event on the stored one (count, lastTimestamp), and re-creates it when it expired', async () => {
    const { clock, store, broadcaster, recorder } = setup();
    recorder.event(ws, 'Warning', 'DeletePodFailed', 'same');
    await broadcaster.flush();
    await clock.advance(61_000);
    recorder.event(ws, 'Warning', 'DeletePodFailed', 'same');
    await broadcaster.flush();
    expect(store.events.size).toBe(1);
    const [key, stored] = [...store.events.entries()][0]!;
    expect(stored).toMatchObject({
      count: 2,
      firstTimestamp: '2026-11-26T10:00:00Z',
      lastTimestamp: '2026-11-26T10:01:01Z',
    });
    expect(store.calls).toEqual([`create ${key}`, `patch ${key}`]);
    store.events.clear();
    recorder.event(ws, 'Warning', 'DeletePodFailed', 'same');
    await broadcaster.flush();
    expect(store.calls.slice(2)).toEqual([`patch ${key}`, `create ${key}`]);
    expect(store.events.get(key)).toMatchObject({ count: 3, firstTimestamp: '2026-11-26T10:00:00Z' });
  });

  it('combines the 10th distinct message of one reason about one object into an aggregate event', async () => {
    const { store, broadcaster, recorder } = setup();
    for (let i = 0; i < 12; i++) recorder.event(ws, 'Warning', 'CreatePodFailed', `pod ${i}`);
    await broadcaster.flush();
    const messages = [...store.events.values()].map((e) => [e.message, e.count]);
    expect(messages.slice(0, 9)).toEqual([...Array(9).keys()].map((i) => [`pod ${i}`, 1]));
    // One aggregate, counted three times, carrying the newest message.
    expect(messages.slice(9)).toEqual([['(combined from similar events): pod 11', 3]]);
  });

  it('drops events about one object past 25, and lets one more through every 5 minutes', async () => {
    const { clock, store, broadcaster, recorder, logs } = setup();
    for (let i = 0; i < 30; i++) recorder.event(ws, 'Normal', `Reason${i}`, 'm');
    await broadcaster.flush();
    expect(store.events.size).toBe(25);
    expect(logs.some((l) => l.includes('too many about one object'))).toBe(true);
    await clock.advance(300_000);
    recorder.event(ws, 'Normal', 'Later1', 'm');
    recorder.event(ws, 'Normal', 'Later2', 'm');
    await broadcaster.flush();
    expect([...store.events.values()].map((e) => e.reason).filter((r) => r.startsWith('Later'))).toEqual(['Later1']);
    // Another object has its own bucket.
    recorder.event({ ...ws, name: 'other', uid: 'u-2' }, 'Normal', 'R', 'm');
    await broadcaster.flush();
    expect(store.events.size).toBe(27);
  });

  it('retries a write that failed in transport, 10 s apart (the first wait randomized), up to 12 tries', async () => {
    const { clock, store, broadcaster, recorder, logs } = setup();
    store.failures = [new Error('ECONNREFUSED'), new Error('ECONNRESET')];
    recorder.event(ws, 'Warning', 'CreatePodFailed', 'm');
    await clock.advance(4_999);
    expect(store.calls).toHaveLength(1);
    await clock.advance(1);
    expect(store.calls).toHaveLength(2);
    await clock.advance(10_000);
    await broadcaster.flush();
    expect(store.calls).toHaveLength(3);
    expect(store.events.size).toBe(1);

    store.failures = Array.from({ length: 20 }, () => new Error('ECONNREFUSED'));
    recorder.event(ws, 'Warning', 'Other', 'm');
    await clock.advance(200_000);
    await broadcaster.flush();
    expect(store.calls).toHaveLength(3 + 12);
    expect(logs.some((l) => l.includes('retry limit exceeded'))).toBe(true);
  });

  it('does not retry an event the API server refuses, and goes on with the next', async () => {
    const { store, broadcaster, recorder, logs } = setup();
    store.failures = [Object.assign(new Error('namespace apps is being terminated'), { code: 403 })];
    recorder.event(ws, 'Warning', 'A', 'm');
    recorder.event(ws, 'Warning', 'B', 'm');
    await broadcaster.flush();
    expect(store.calls).toHaveLength(2);
    expect([...store.events.values()].map((e) => e.reason)).toEqual(['B']);
    expect(logs.some((l) => l.includes('server rejected event'))).toBe(true);
  });

  it('never blocks the caller: queued events past 1,000 are dropped, and stop() drops the rest', async () => {
    const { store, broadcaster, recorder, logs } = setup();
    for (let i = 0; i < 1_005; i++) recorder.event({ ...ws, name: `o${i}`, uid: `u${i}` }, 'Normal', 'R', 'm');
    expect(logs.filter((l) => l.includes('too many queued events')).length).toBeGreaterThanOrEqual(4);
    broadcaster.stop();
    await broadcaster.flush();
    expect(store.events.size).toBeLessThanOrEqual(1);
    recorder.event(ws, 'Normal', 'After', 'm');
    await broadcaster.flush();
    expect([...store.events.values()].some((e) => e.reason === 'After')).toBe(false);
  });
});
