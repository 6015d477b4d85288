/**
 * Kubernetes Events (core/v1), recorded as upstream's controllers record them through
 * controller-runtime's `mgr.GetEventRecorderFor(name)`: client-go v0.30 tools/record, read (not
 * copied) for its behaviour, which users' tooling (`kubectl describe`, event exporters) sees:
 *
 * - an event names its object (kind, apiVersion, namespace, name, uid, resourceVersion), lives in
 *   the object's namespace (`default` for a cluster-scoped one) and is named `<object>.<hex ns>`;
 *   `source.component` and `reportingComponent` are the recorder's name, the host is empty;
 * - the same event again (same source, object, type, reason and message) PATCHes the stored one's
 *   `count`, `lastTimestamp` and `message` instead of creating another (a PATCH answered 404, the
 *   event expired, creates it again);
 * - from the 10th distinct message with the same source, object, type and reason within 10
 *   minutes, one aggregate event "(combined from similar events): <message>" is counted instead;
 * - per source and object, a token bucket of 25 events refilled by one every 5 minutes: the
 *   rest are dropped;
 * - recording never blocks: events queue (at most 1,000, the rest dropped) and are written one
 *   at a time; a write the API server refuses is dropped, a transport failure is retried up to 12
 *   times, 10 s apart (the first wait randomized).
 */
import type { Clock } from '../clock.js';
import { sleep } from '../clock.js';
import type { Logger } from '../log.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

export type EventType = 'Normal' | 'Warning';

/** A core/v1 ObjectReference of the object an event is about. */
export interface ObjectReference {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

/** The reference of `object`, whose kind and apiVersion are given (list items carry none). */
export function objectReference(object: Json, apiVersion: string, kind: string): ObjectReference {
  const m = object?.metadata ?? {};
  return {
    kind,
    apiVersion,
    ...(m.namespace ? { namespace: String(m.namespace) } : {}),
    name: String(m.name ?? ''),
    ...(m.uid ? { uid: String(m.uid) } : {}),
    ...(m.resourceVersion ? { resourceVersion: String(m.resourceVersion) } : {}),
  };
}

/** Where events are written: the API server (see {@link kubeEventSink}) or a test's list. */
export interface EventSink {
  create(namespace: string, event: Json): Promise<Json>;
  /** A strategic merge patch of a stored event; rejects with `{ code: 404 }` when it is gone. */
  patch(namespace: string, name: string, patch: Json): Promise<Json>;
}

export interface EventBroadcasterOptions {
  sink: EventSink;
  clock: Clock;
  logger: Logger;
  /** @default 10_000 (client-go's sleep between retries of a write that failed in transport) */
  retrySleepMs?: number;
  /** @default Math.random */
  random?: () => number;
}

/** client-go tools/record's limits. */
export const EVENT_LIMITS = {
  maxQueued: 1000,
  maxTries: 12,
  lruEntries: 4096,
  aggregateMaxEvents: 10,
  aggregateIntervalMs: 600_000,
  spamBurst: 25,
  spamRefillMs: 300_000,
} as const;

/** A Map kept to its newest `max` entries (a get refreshes an entry), as golang groupcache's LRU. */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as string);
  }
}

const metaTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Recorded {
  event: Json;
  /** Set when the event updates a stored one. */
  patch?: Json;
  /** Its entry in the observed cache. */
  cacheKey: string;
}

/**
 * One per process, as controller-runtime's: one correlator (dedup, aggregation, spam filter) and
 * one write queue shared by every recorder it hands out.
 */
export class EventBroadcaster {
  private readonly aggregates = new Lru<{ messages: Set<string>; lastMs: number }>(EVENT_LIMITS.lruEntries);
  private readonly observed = new Lru<{ count: number; firstTimestamp: string; name: string }>(EVENT_LIMITS.lruEntries);
  private readonly buckets = new Lru<{ tokens: number; atMs: number }>(EVENT_LIMITS.lruEntries);
  private readonly queue: Json[] = [];
  private draining?: Promise<void>;
  private sequence = 0;
  private readonly stopped = new AbortController();

  constructor(private readonly options: EventBroadcasterOptions) {}

  /** A recorder whose events name `component` as their source (controller-runtime GetEventRecorderFor). */
  recorder(component: string): EventRecorder {
    return new EventRecorder(this, component);
  }

  /** Queues an event (never blocks; dropped, with a log line, when 1,000 are queued). */
  enqueue(event: Json): void {
    if (this.stopped.signal.aborted) return;
    if (this.queue.length >= EVENT_LIMITS.maxQueued) {
      this.options.logger.warn('event dropped: too many queued events', { reason: event.reason });
      return;
    }
    this.queue.push(event);
    this.draining ??= this.drain().finally(() => (this.draining = undefined));
  }

  /** Resolves once every event queued so far is written, dropped or given up on. */
  async flush(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** Stops writing: queued events are dropped, a retry wait ends. */
  stop(): void {
    this.stopped.abort(new Error('event broadcaster stopped'));
    this.queue.length = 0;
  }

  /** Nanoseconds for an event's name: the clock's milliseconds and a counter (no two alike). */
  uniqueNanos(ms: number): string {
    this.sequence = (this.sequence + 1) % 1_000_000;
    return (BigInt(Math.floor(ms)) * 1_000_000n + BigInt(this.sequence)).toString(16);
  }

  get clock(): Clock {
    return this.options.clock;
  }

  private async drain(): Promise<void> {
    for (let event = this.queue.shift(); event; event = this.queue.shift()) {
      const recorded = this.correlate(event);
      if (recorded) await this.write(recorded);
    }
  }

  /** client-go EventCorrelator.EventCorrelate: aggregate, then observe (count), then the spam filter. */
  private correlate(event: Json): Recorded | undefined {
    const nowMs = this.options.clock.now();
    const o = event.involvedObject;
    // client-go's keys (getSpamKey, EventAggregatorByReasonFunc, getEventKey), NUL-separated.
    const key = (...parts: unknown[]) => parts.map((p) => String(p ?? '')).join('\u0000');
    const objectKey = key(event.source.component, event.source.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion);
    const aggregateKey = key(objectKey, event.type, event.reason, event.reportingComponent, event.reportingInstance);
    let aggregate = this.aggregates.get(aggregateKey);
    if (!aggregate || nowMs - aggregate.lastMs > EVENT_LIMITS.aggregateIntervalMs)
      aggregate = { messages: new Set(), lastMs: nowMs };
    aggregate.messages.add(event.message);
    aggregate.lastMs = nowMs;
    this.aggregates.set(aggregateKey, aggregate);
    let cacheKey = key(objectKey, o.fieldPath, event.type, event.reason, event.message);
    if (aggregate.messages.size >= EVENT_LIMITS.aggregateMaxEvents) {
      // Keep the set below the threshold (Go's PopAny: any one message).
      aggregate.messages.delete(aggregate.messages.values().next().value as string);
      const at = metaTime(nowMs);
      event = {
        metadata: { name: `${o.name}.${this.uniqueNanos(nowMs)}`, namespace: event.metadata.namespace },
        involvedObject: o,
        reason: event.reason,
        message: `(combined from similar events): ${event.message}`,
        type: event.type,
        source: event.source,
        firstTimestamp: at,
        lastTimestamp: at,
        count: 1,
      };
      cacheKey = aggregateKey;
    }
    const last = this.observed.get(cacheKey);
    let patch: Json | undefined;
    if (last) {
      event = {
        ...event,
        metadata: { ...event.metadata, name: last.name },
        firstTimestamp: last.firstTimestamp,
        count: last.count + 1,
      };
      patch = { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message };
    }
    this.observed.set(cacheKey, {
      count: event.count,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata.name,
    });
    // Token bucket per source and object (golang.org/x/time/rate: starts full).
    const bucket = this.buckets.get(objectKey) ?? { tokens: EVENT_LIMITS.spamBurst, atMs: nowMs };
    bucket.tokens = Math.min(EVENT_LIMITS.spamBurst, bucket.tokens + (nowMs - bucket.atMs) / EVENT_LIMITS.spamRefillMs);
    bucket.atMs = nowMs;
    const allowed = bucket.tokens >= 1;
    if (allowed) bucket.tokens -= 1;
    this.buckets.set(objectKey, bucket);
    if (!allowed) {
      this.options.logger.debug('event dropped: too many about one object', {
        reason: event.reason,
        object: `${o.namespace ?? ''}/${o.name}`,
      });
      return undefined;
    }
    return { event, patch, cacheKey };
  }

  /** client-go recordToSink and recordEvent. */
  private async write({ event, patch, cacheKey }: Recorded): Promise<void> {
    const namespace = event.metadata.namespace;
    const signal = this.stopped.signal;
    for (let tries = 0; !signal.aborted;) {
      try {
        let stored: Json;
        try {
          stored = patch
            ? await this.options.sink.patch(namespace, event.metadata.name, patch)
            : await this.options.sink.create(namespace, event);
        } catch (e) {
          // The stored event expired: created again (it carries no resourceVersion).
          if (!patch || (e as { code?: number })?.code !== 404) throw e;
          stored = await this.options.sink.create(namespace, event);
        }
        // client-go UpdateState: the next same event patches the one the server stored.
        const entry = this.observed.get(cacheKey);
        if (entry && typeof stored?.metadata?.name === 'string') entry.name = stored.metadata.name;
        return;
      } catch (e) {
        const code = (e as { code?: number })?.code;
        if (typeof code === 'number' && code > 0) {
          // The API server answered: the event is malformed, or its namespace is going; not retried.
          this.options.logger[code === 409 || code === 403 ? 'debug' : 'warn'](
            'server rejected event (will not retry)',
            {
              reason: event.reason,
              object: `${event.involvedObject.namespace ?? ''}/${event.involvedObject.name}`,
              code,
              error: String((e as Error)?.message ?? e),
            },
          );
          return;
        }
        tries++;
        if (tries >= EVENT_LIMITS.maxTries) {
          this.options.logger.warn('unable to write event (retry limit exceeded)', { reason: event.reason });
          return;
        }
        const base = this.options.retrySleepMs ?? 10_000;
        const delay = tries === 1 ? base * (this.options.random ?? Math.random)() : base;
        try {
          await sleep(this.options.clock, delay, signal);
        } catch {
          return;
        }
      }
    }
  }
}

/** client-go's EventRecorder (Event/Eventf) for one source component. */
export class EventRecorder {
  constructor(
    private readonly broadcaster: EventBroadcaster,
    readonly component: string,
  ) {}

  /** Records an event about `ref` (never blocks, never throws). */
  event(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    const nowMs = this.broadcaster.clock.now();
    const at = metaTime(nowMs);
    this.broadcaster.enqueue({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${ref.name}.${this.broadcaster.uniqueNanos(nowMs)}`, namespace: ref.namespace || 'default' },
      involvedObject: { ...ref },
      reason,
      message,
      firstTimestamp: at,
      lastTimestamp: at,
      count: 1,
      type,
      source: { component: this.component },
      reportingComponent: this.component,
      reportingInstance: '',
    });
  }
}

/** The API server as an event sink, over the runtime's one client. */
export function kubeEventSink(client: {
  call<T>(r: { method: 'POST' | 'PATCH'; path: string; body?: unknown; contentType?: string }): Promise<T>;
}): EventSink {
  const path = (ns: string) => `/api/v1/namespaces/${encodeURIComponent(ns)}/events`;
  return {
    create: (ns, event) => client.call<Json>({ method: 'POST', path: path(ns), body: event }),
    patch: (ns, name, patch) =>
      client.call<Json>({
        method: 'PATCH',
        path: `${path(ns)}/${encodeURIComponent(name)}`,
        body: patch,
        contentType: 'application/strategic-merge-patch+json',
      }),
  };
}
