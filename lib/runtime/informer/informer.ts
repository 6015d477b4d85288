import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { realClock, type Clock } from '../clock.js';
import type { Logger } from '../log.js';
import type { BackoffOptions } from './backoff.js';
import { HttpListWatcher } from './http-list-watcher.js';
import { InformerMetrics } from './metrics.js';
import { Reflector, type FailureKind } from './reflector.js';
import { Store, objectKey, type Delta, type IndexFunc } from './store.js';
import type { EventHandler, EventSource, ListWatcher, WatchEvent } from './types.js';

export interface InformerOptions<T extends KubernetesObject> {
  /**
   * Collection path, e.g. `/api/v1/pods` (all namespaces) or `/apis/apps.kruise.io/v1alpha1/namespaces/ns/clonesets`.
   */
  path: string;
  /** Needed unless `listWatcher` is given. */
  kubeConfig?: KubeConfig;
  labelSelector?: string;
  fieldSelector?: string;
  /** Replaces the HTTP transport (tests). */
  listWatcher?: ListWatcher<T>;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  random?: () => number;
  indexers?: Record<string, IndexFunc<T>>;
  /** Objects per list page (default 500; 0 disables paging). */
  pageSize?: number;
  /**
   * Server-side watch lifetime (default: a random 60-120s per watch). The API server ends the
   * stream then, sending a bookmark just before; on a quiet resource that bookmark is the only
   * sign of life (kube-apiserver 1.36 sends no earlier periodic bookmark), so this must stay
   * below `stallTimeoutMs` or healthy quiet watches get aborted as stalled.
   */
  watchTimeoutSeconds?: number;
  /**
   * Abort and re-watch when nothing (event, bookmark, connect) arrived for this long (default max(150s, watchTimeout +
   * 30s)).
   */
  stallTimeoutMs?: number;
  /** Bound on each list page request (default 60s). */
  listTimeoutMs?: number;
  /** `health()` fails when the API server has not been heard from for this long (default stallTimeout + 60s). */
  unhealthyAfterMs?: number;
  /**
   * How long the cache may go without proof that it is current (a live watch or a fresh list)
   * and still be answered from at once (default 10s). Past it `checkFresh()` fails, `awaitFresh()`
   * waits for the watch to come back and `checkReady()` fails once an API server is known to be up
   * (see there); a warning is logged and the staleness metric says so.
   */
  maxStalenessMs?: number;
  /**
   * How long `awaitFresh()` waits for a cache staler than `maxStalenessMs` to be proven current
   * again before it refuses (default 8s: under the webhook server's 9s handler timeout, itself
   * under the API server's 10s webhook timeout). A restarted kube-apiserver accepts pod creates
   * (and calls the webhook) seconds before it serves custom resources: it answers their lists
   * 503 "before all known HTTP paths have been installed", then 429 "storage is
   * (re)initializing"; 5-7s at load 8 on the 2-core machine (envtest).
   */
  freshWaitMs?: number;
  backoff?: BackoffOptions;
  /**
   * Keep `metadata.managedFields` in cached objects (default false: dropped on the way in, as
   * controller-runtime's `cache.TransformStripManagedFields`). Nothing here reads them, and on a
   * pod they are a large share of the object, so every cached pod costs less memory without them.
   * Writes are unaffected: an update that omits managedFields leaves the server's as they are.
   */
  keepManagedFields?: boolean;
}

/** A cache that cannot prove it is current enough to answer from (see Informer.checkFresh). */
export class StaleCacheError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StaleCacheError';
  }
}

export interface InformerHealth {
  healthy: boolean;
  message: string;
  lastActivity: number;
}

/**
 * client-go's shared index informer for one resource: a Reflector lists and watches (and never
 * gives up), this class keeps the Store equal to what it learns and tells handlers what changed.
 * After a relist handlers hear only real differences against the cache, never a replay of it.
 */
export class Informer<T extends KubernetesObject> implements EventSource<T> {
  readonly store: Store<T>;
  readonly resource: string;
  private readonly reflector: Reflector<T>;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly metrics: InformerMetrics;
  private readonly handlers = new Set<EventHandler<T>>();
  private readonly unhealthyAfterMs: number;
  private readonly maxStalenessMs: number;
  private syncWaiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  private synced = false;
  /** A watch is live and proven current (see the reflector): the cache follows the server. */
  private current = false;
  /** When the cache was last known to be current (a list, or the end of a live watch). */
  private provenAt = -Infinity;
  private staleLogged = false;
  private readonly freshWaitMs: number;
  /** Last time an API server refused this replica's list or watch (a `client` failure): it is up, and refuses us. */
  private refusedUsAt = -Infinity;
  /** How the last list or watch failed. */
  private lastFailure: FailureKind | undefined;
  /** Last time awaitFresh() gave up: an API server calling a webhook needed this cache and it stayed stale. */
  private missedAt = -Infinity;
  /** awaitFresh() callers, woken when the cache is proven current or relisted. */
  private readonly freshWaiters = new Set<() => void>();
  private cancelStaleTimer = () => {};
  private activityAt: number;
  private abort?: AbortController;
  private loop?: Promise<void>;
  private readonly keepManagedFields: boolean;

  constructor(options: InformerOptions<T>) {
    const selectors = [
      options.labelSelector && `labelSelector=${options.labelSelector}`,
      options.fieldSelector && `fieldSelector=${options.fieldSelector}`,
    ].filter(Boolean);
    this.resource = options.path + (selectors.length ? `?${selectors.join('&')}` : '');
    this.clock = options.clock ?? realClock;
    this.log = options.logger.child({ informer: this.resource });
    this.store = new Store<T>(options.indexers);
    const stallTimeoutMs =
      options.stallTimeoutMs ?? Math.max(150_000, (options.watchTimeoutSeconds ?? 0) * 1000 + 30_000);
    this.unhealthyAfterMs = options.unhealthyAfterMs ?? stallTimeoutMs + 60_000;
    this.maxStalenessMs = options.maxStalenessMs ?? 10_000;
    this.freshWaitMs = options.freshWaitMs ?? 8_000;
    this.keepManagedFields = options.keepManagedFields ?? false;
    this.activityAt = this.clock.now();
    let lw: ListWatcher<T>;
    if (options.listWatcher) lw = options.listWatcher;
    else if (options.kubeConfig) lw = new HttpListWatcher<T>({ ...options, kubeConfig: options.kubeConfig });
    else throw new Error(`informer for ${options.path}: pass kubeConfig or listWatcher`);
    this.metrics = new InformerMetrics(
      {
        resource: this.resource,
        size: () => this.store.size,
        lastActivity: () => this.activityAt,
        staleness: () => this.staleness(),
      },
      options.registry ?? new Registry(),
    );
    this.reflector = new Reflector<T>(
      lw,
      {
        replace: (items, resourceVersion) => this.replace(items, resourceVersion),
        apply: (event) => this.apply(event),
        touch: () => {
          this.activityAt = this.clock.now();
        },
        connected: () => this.markCurrent(),
        disconnected: () => this.markDisconnected(),
        failed: (kind) => {
          this.lastFailure = kind;
          if (kind === 'client') this.refusedUsAt = this.clock.now();
        },
        listed: () => this.metrics.listed(),
        restarted: (reason) => this.metrics.restarted(reason),
      },
      {
        pageSize: options.pageSize ?? 500,
        watchTimeoutSeconds: options.watchTimeoutSeconds,
        stallTimeoutMs,
        listTimeoutMs: options.listTimeoutMs ?? 60_000,
        backoff: options.backoff,
      },
      this.log,
      this.clock,
      options.random ?? Math.random,
    );
  }

  /** Starts listing and watching in the background; returns at once. */
  async start(): Promise<void> {
    if (this.loop) return;
    this.abort = new AbortController();
    this.activityAt = this.clock.now();
    this.loop = this.reflector.run(this.abort.signal);
  }

  /** Stops watching and waits for the loop to end. The cache keeps its last contents. */
  async stop(): Promise<void> {
    if (!this.abort) return;
    this.abort.abort(new Error('informer stopped'));
    await this.loop;
    this.cancelStaleTimer();
    this.metrics.close();
    for (const wake of [...this.freshWaiters]) wake();
    for (const w of this.syncWaiters.splice(0))
      w.reject(new Error(`informer for ${this.resource} was stopped before it synced`));
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.synced) return Promise.resolve();
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.abort?.signal.aborted)
      return Promise.reject(new Error(`informer for ${this.resource} was stopped before it synced`));
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.syncWaiters = this.syncWaiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const waiter = {
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (e: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      this.syncWaiters.push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers.add(handler);
    for (const obj of this.store.list()) this.call(handler, { type: 'add', obj });
    return () => this.handlers.delete(handler);
  }

  /** Last time the API server was heard from: a list, a watch accepted, an event or a bookmark. */
  lastActivity(): number {
    return this.activityAt;
  }

  /**
   * For /healthz: unhealthy when the API server has been silent past `unhealthyAfterMs` while the
   * informer runs. One that was never started (a leader-only cache on a standby or a webhook-only
   * replica) expects nothing from the API server, so it is healthy: judging its silence would make
   * the kubelet restart every replica that does not lead, every few minutes.
   */
  health(): InformerHealth {
    if (!this.loop)
      return {
        healthy: true,
        message: `${this.resource}: not started (leader-only cache)`,
        lastActivity: this.activityAt,
      };
    const silentMs = this.clock.now() - this.activityAt;
    const healthy = silentMs <= this.unhealthyAfterMs;
    const message = healthy
      ? `${this.resource}: last heard from the API server ${Math.round(silentMs / 1000)}s ago`
      : `${this.resource}: no list, watch or event for ${Math.round(silentMs / 1000)}s (bound ${Math.round(this.unhealthyAfterMs / 1000)}s)`;
    return { healthy, message, lastActivity: this.activityAt };
  }

  /**
   * How long the cache has gone without proof that it is current, in ms: 0 while a watch is live,
   * the time since the last list or since the watch ended otherwise; Infinity before the first list.
   * A watch that stalls silently counts as live until the stall watchdog ends it.
   */
  staleness(): number {
    if (!this.synced) return Infinity;
    return this.current ? 0 : Math.max(0, this.clock.now() - this.provenAt);
  }

  /**
   * Can this cache be answered from at once? Throws, naming the resource, the staleness and the
   * bound, unless the cache has synced and is no staler than `boundMs`. Admission uses
   * {@link awaitFresh}, which waits for a reconnect instead of refusing at once.
   */
  checkFresh(boundMs = this.maxStalenessMs): void {
    if (!this.synced) throw new StaleCacheError(`cache of ${this.resource} has not synced yet`);
    const staleMs = this.staleness();
    if (staleMs > boundMs) {
      throw new StaleCacheError(
        `cache of ${this.resource} not proven current for ${(staleMs / 1000).toFixed(1)}s ` +
          `(bound ${boundMs / 1000}s, --max-cache-staleness): the watch is down, reconnecting`,
      );
    }
  }

  /**
   * For admission answered from this cache, the bounded-staleness rule:
   * - synced and proven current within `maxStalenessMs` (a live watch, or one that ended or a list
   *   made at most that long ago): answer at once from the cache as it is. A watch that just broke
   *   costs nothing, as in controller-runtime (whose caches answer at any age);
   * - staler than that, or never synced: wake the reconnect, and wait up to `freshWaitMs` (or until
   *   `signal` aborts) for the cache to be proven current again, then answer from it; otherwise
   *   throw StaleCacheError (the webhook answers 503) and remember the miss for `checkReady()`.
   * A review reaches us only through a running API server, so after an outage the first reviews
   * are answered once the cache has relisted, never from a cache that may have missed a write:
   * a SidecarSet created while the watch was down past the bound is in the cache before a pod is
   * answered, and no pod create fails while the relist takes less than `freshWaitMs`.
   */
  async awaitFresh(signal?: AbortSignal): Promise<void> {
    const started = this.clock.now();
    if (!this.current) this.reflector.wake();
    if (this.freshEnough()) return;
    if (this.loop && !this.abort?.signal.aborted && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = () => {
          cancel();
          signal?.removeEventListener('abort', done);
          this.freshWaiters.delete(done);
          resolve();
        };
        const cancel = this.clock.after(this.freshWaitMs, done);
        signal?.addEventListener('abort', done, { once: true });
        this.freshWaiters.add(done);
      });
      if (this.freshEnough()) return;
    }
    // A miss says this replica is the odd one out only when it cannot reach the API servers that
    // call it; when they answer that they cannot serve yet (starting), every replica waits alike.
    if (this.lastFailure === 'unreachable') this.missedAt = this.clock.now();
    try {
      this.checkFresh();
    } catch (err) {
      const waited = this.clock.now() - started;
      throw new StaleCacheError(`${(err as Error).message}; waited ${(waited / 1000).toFixed(1)}s for the relist`);
    }
  }

  /**
   * For readiness: fails when the cache has never synced, or when it is staler than
   * `maxStalenessMs` and, since it went stale, an API server refused this replica's list or watch
   * (401, 403 or another 4xx), or called a webhook that waited for this cache in vain while this
   * replica could not connect to any (awaitFresh). Then this replica is the odd one out (RBAC,
   * credentials, a broken route from its node) and should leave the Service for replicas that can
   * answer. An API server that answers every replica alike (5xx, 429: starting, overloaded) does
   * not make one replica worse than another, so it does not fail readiness either.
   *
   * While every API server is unreachable (connections refused or timing out, no review arriving)
   * it stays ready, however stale: the kubelet cannot publish a readiness change until an API
   * server is back, so failing here only takes effect after the outage, when the caches relist
   * within a second or two, and leaves the webhook with no endpoint for the seconds the kubelet,
   * the EndpointSlice controller and kube-proxy need to put the replica back (drill 7: every
   * create in that window failed with `connection refused`). The staleness metric and the log
   * still say the cache is stale; admission from it waits for the relist (awaitFresh).
   */
  checkReady(): void {
    if (!this.synced) throw new StaleCacheError(`cache of ${this.resource} has not synced yet`);
    const staleMs = this.staleness();
    if (staleMs <= this.maxStalenessMs) return;
    const staleSince = this.clock.now() - staleMs;
    const seen =
      this.refusedUsAt > staleSince
        ? 'refused our list or watch (4xx)'
        : this.missedAt > staleSince
          ? 'called a webhook that waited for this cache in vain, unable to connect'
          : undefined;
    if (!seen) return;
    throw new StaleCacheError(
      `cache of ${this.resource} not proven current for ${(staleMs / 1000).toFixed(1)}s ` +
        `(bound ${this.maxStalenessMs / 1000}s, --max-cache-staleness) although an API server ${seen}`,
    );
  }

  private freshEnough(): boolean {
    return this.synced && this.staleness() <= this.maxStalenessMs;
  }

  /** health() as a /healthz check: throws with the reason when unhealthy. */
  checkHealth(): void {
    const h = this.health();
    if (!h.healthy) throw new Error(h.message);
  }

  private markCurrent(): void {
    this.current = true;
    this.cancelStaleTimer();
    for (const wake of [...this.freshWaiters]) wake();
    if (this.staleLogged) {
      this.staleLogged = false;
      this.log.info('cache is current again', { staleForMs: Math.round(this.clock.now() - this.provenAt) });
    }
  }

  private markDisconnected(): void {
    if (!this.current) return;
    this.current = false;
    this.provenAt = this.clock.now();
    this.armStaleTimer();
  }

  /** Logs once when the cache crosses its staleness bound without being proven current again. */
  private armStaleTimer(): void {
    this.cancelStaleTimer();
    this.cancelStaleTimer = this.clock.after(this.maxStalenessMs + 1, () => {
      if (this.current || this.staleLogged || this.staleness() <= this.maxStalenessMs) return;
      this.staleLogged = true;
      this.log.warn(
        'cache not proven current past its staleness bound; admission waits for the watch to come back, and readiness fails once an API server answers while it is not',
        { staleForMs: Math.round(this.staleness()), boundMs: this.maxStalenessMs, flag: '--max-cache-staleness' },
      );
    });
  }

  private replace(items: T[], resourceVersion: string): void {
    this.provenAt = this.clock.now();
    if (this.synced && !this.current) this.armStaleTimer();
    if (!this.keepManagedFields) items.forEach(stripManagedFields);
    const deltas = this.store.replace(items);
    this.log.debug('listed', { objects: items.length, resourceVersion, changes: deltas.length });
    this.dispatch(deltas);
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w.resolve();
    }
    for (const wake of [...this.freshWaiters]) wake();
  }

  private apply(event: WatchEvent<T>): void {
    const obj = event.object;
    const key = objectKey(obj);
    if (key === undefined) {
      this.log.warn('ignoring watch event for an object without a name', { type: event.type });
      return;
    }
    if (event.type === 'DELETED') {
      const old = this.store.delete(key);
      if (old) this.dispatch([{ type: 'delete', obj }]);
      return;
    }
    if (event.type !== 'ADDED' && event.type !== 'MODIFIED') return;
    if (!this.keepManagedFields) stripManagedFields(obj);
    const old = this.store.upsert(obj);
    if (!old) this.dispatch([{ type: 'add', obj }]);
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
      this.dispatch([{ type: 'update', oldObj: old, obj }]);
  }

  private dispatch(deltas: Array<Delta<T>>): void {
    for (const delta of deltas) for (const handler of this.handlers) this.call(handler, delta);
  }

  private call(handler: EventHandler<T>, delta: Delta<T>): void {
    try {
      if (delta.type === 'add') handler.onAdd?.(delta.obj);
      else if (delta.type === 'update') handler.onUpdate?.(delta.oldObj, delta.obj);
      else handler.onDelete?.(delta.obj);
    } catch (err) {
      this.log.error('event handler threw; the informer carries on', {
        event: delta.type,
        key: objectKey(delta.obj),
        error: err,
      });
    }
  }
}

/** Objects arrive freshly parsed and not yet frozen (the store freezes them), so this edits in place. */
function stripManagedFields(obj: KubernetesObject): void {
  if (obj?.metadata && 'managedFields' in obj.metadata) delete obj.metadata.managedFields;
}
