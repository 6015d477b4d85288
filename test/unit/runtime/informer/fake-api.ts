// An in-memory API server for one resource, with the semantics an informer depends on:
// monotonically increasing resourceVersions, watches that replay history from a given
// resourceVersion, 410 for versions older than the compacted history, paged lists, and hooks
// for the failures real servers show (errors, silent stalls, closed streams).
import { ApiException, type KubernetesObject } from '@kubernetes/client-node';
import type { ListPage, ListWatcher, WatchEvent } from '../../../../lib/runtime/informer/index.js';

export interface Obj extends KubernetesObject {
  data?: Record<string, string>;
}

interface ActiveWatch {
  onEvent: (e: WatchEvent<Obj>) => void;
  resolve: () => void;
  reject: (e: unknown) => void;
  /** Events stop flowing (a dead TCP peer): the stream stays open but says nothing. */
  stalled: boolean;
}

export class FakeApi implements ListWatcher<Obj> {
  private rv = 100;
  private uidSeq = 0;
  private readonly objects = new Map<string, Obj>();
  private history: Array<{ rv: number; event: WatchEvent<Obj> }> = [];
  private compactedBefore = 0;
  private readonly watches = new Set<ActiveWatch>();
  /** Errors the next list calls throw, in order. */
  readonly listFailures: unknown[] = [];
  /** Errors the next watch calls throw, in order. */
  readonly watchFailures: unknown[] = [];
  /** When set, list() never answers (and ignores its signal, like a broken transport). */
  hangLists = false;
  readonly listCalls: Array<{ limit?: number; continueToken?: string }> = [];
  readonly watchCalls: Array<{ resourceVersion: string; timeoutSeconds: number }> = [];

  // --- server-side changes -------------------------------------------------------------

  create(name: string, data: Record<string, string> = {}, namespace = 'ns'): Obj {
    const obj: Obj = {
      metadata: { name, namespace, uid: `uid-${++this.uidSeq}`, resourceVersion: String(++this.rv) },
      data,
    };
    this.objects.set(`${namespace}/${name}`, obj);
    this.emit({ type: 'ADDED', object: obj });
    return obj;
  }

  update(name: string, data: Record<string, string>, namespace = 'ns'): Obj {
    const old = this.objects.get(`${namespace}/${name}`);
    if (!old) throw new Error(`no ${namespace}/${name}`);
    const obj: Obj = { metadata: { ...old.metadata, resourceVersion: String(++this.rv) }, data };
    this.objects.set(`${namespace}/${name}`, obj);
    this.emit({ type: 'MODIFIED', object: obj });
    return obj;
  }

  remove(name: string, namespace = 'ns'): void {
    const old = this.objects.get(`${namespace}/${name}`);
    if (!old) throw new Error(`no ${namespace}/${name}`);
    this.objects.delete(`${namespace}/${name}`);
    this.emit({
      type: 'DELETED',
      object: { ...old, metadata: { ...old.metadata, resourceVersion: String(++this.rv) } },
    });
  }

  /** Forgets history: watches from older versions get 410, as after etcd compaction. */
  compact(): void {
    this.compactedBefore = this.rv;
    this.history = [];
  }

  // --- connection-level behaviour ------------------------------------------------------

  get openWatches(): number {
    return this.watches.size;
  }

  /** Stops delivering to open watches without closing them (dead peer behind a load balancer). */
  stallWatches(): void {
    for (const w of this.watches) w.stalled = true;
  }

  /** Server ends every open watch normally (timeoutSeconds reached). */
  closeWatches(): void {
    for (const w of [...this.watches]) this.end(w).resolve();
  }

  /** Open watches fail (connection reset). */
  breakWatches(error: unknown = new Error('socket hang up')): void {
    for (const w of [...this.watches]) this.end(w).reject(error);
  }

  /** Sends a watch ERROR event with this Status code to every open watch. */
  sendError(code: number, reason = 'Expired'): void {
    for (const w of [...this.watches]) {
      if (w.stalled) continue;
      try {
        w.onEvent({ type: 'ERROR', object: { kind: 'Status', code, reason, message: `fake ${reason}` } as Obj });
      } catch (e) {
        this.end(w).reject(e);
      }
    }
  }

  sendBookmark(): void {
    this.deliver({ type: 'BOOKMARK', object: { metadata: { resourceVersion: String(this.rv) } } });
  }

  /** Sends a raw event as-is (malformed input tests). */
  sendRaw(event: WatchEvent<Obj>): void {
    this.deliver(event);
  }

  // --- ListWatcher ------------------------------------------------------------------------

  async list(options: { limit?: number; continueToken?: string; signal: AbortSignal }): Promise<ListPage<Obj>> {
    this.listCalls.push({ limit: options.limit, continueToken: options.continueToken });
    if (this.hangLists) return new Promise<never>(() => undefined);
    if (this.listFailures.length > 0) throw this.listFailures.shift();
    const all = [...this.objects.values()].sort((a, b) =>
      String(a.metadata?.name).localeCompare(String(b.metadata?.name)),
    );
    const start = options.continueToken ? Number(options.continueToken) : 0;
    const end = options.limit ? start + options.limit : all.length;
    return {
      items: all.slice(start, end).map((o) => structuredClone(o)),
      resourceVersion: String(this.rv),
      continueToken: end < all.length ? String(end) : '',
    };
  }

  watch(
    options: { resourceVersion: string; timeoutSeconds: number; signal: AbortSignal },
    onEvent: (event: WatchEvent<Obj>) => void,
    onConnected?: () => void,
  ): Promise<void> {
    this.watchCalls.push({ resourceVersion: options.resourceVersion, timeoutSeconds: options.timeoutSeconds });
    if (this.watchFailures.length > 0) return Promise.reject(this.watchFailures.shift());
    return new Promise<void>((resolve, reject) => {
      const w: ActiveWatch = { onEvent, resolve, reject, stalled: false };
      this.watches.add(w);
      options.signal.addEventListener('abort', () => this.end(w).reject(options.signal.reason), { once: true });
      onConnected?.();
      const from = Number(options.resourceVersion);
      try {
        if (from < this.compactedBefore) {
          onEvent({
            type: 'ERROR',
            object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } as Obj,
          });
        }
        for (const h of this.history) if (h.rv > from) onEvent(structuredClone(h.event));
      } catch (e) {
        this.end(w).reject(e);
      }
    });
  }

  private emit(event: WatchEvent<Obj>): void {
    this.history.push({ rv: this.rv, event });
    this.deliver(event);
  }

  private deliver(event: WatchEvent<Obj>): void {
    for (const w of [...this.watches]) {
      if (w.stalled) continue;
      try {
        w.onEvent(structuredClone(event));
      } catch (e) {
        this.end(w).reject(e);
      }
    }
  }

  private end(w: ActiveWatch): ActiveWatch {
    this.watches.delete(w);
    return w;
  }
}

export const apiError = (code: number, message = `HTTP ${code}`) =>
  new ApiException(code, message, { code, message }, {});
