import type { KubernetesObject } from '@kubernetes/client-node';

/** Callbacks an informer delivers; each runs synchronously and should only enqueue work. */
export interface EventHandler<T extends KubernetesObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  /** `obj` is the last state seen; after a relist it may be older than the real final state. */
  onDelete?(obj: T): void;
}

/** Something a controller can watch: an informer, or a test double. */
export interface EventSource<T extends KubernetesObject> {
  /** Registers `handler`; already cached objects are replayed as adds. Returns an unsubscribe function. */
  addEventHandler(handler: EventHandler<T>): () => void;
  /** Resolves once the first list is in the cache; rejects with the signal's reason if it aborts first. */
  waitForSync(signal?: AbortSignal): Promise<void>;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T extends KubernetesObject> {
  type: WatchEventType;
  object: T;
}

export interface ListPage<T extends KubernetesObject> {
  items: T[];
  resourceVersion: string;
  /** Token for the next page; empty on the last page. */
  continueToken: string;
}

/**
 * The two API calls an informer makes, separated from HTTP so the list/watch state machine can
 * be tested without a server. Errors carry HTTP status codes as client-node's `ApiException`.
 */
export interface ListWatcher<T extends KubernetesObject> {
  list(options: { limit?: number; continueToken?: string; signal: AbortSignal }): Promise<ListPage<T>>;
  /**
   * Streams events to `onEvent` until the server ends the stream (resolves) or it fails (rejects).
   * Calls `onConnected` once the server accepted the watch.
   */
  watch(
    options: { resourceVersion: string; timeoutSeconds: number; signal: AbortSignal },
    onEvent: (event: WatchEvent<T>) => void,
    onConnected?: () => void,
  ): Promise<void>;
}
