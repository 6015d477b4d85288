export { Informer, StaleCacheError, type InformerHealth, type InformerOptions } from './informer.js';
export { HttpListWatcher, type HttpListWatcherOptions } from './http-list-watcher.js';
export { Store, NAMESPACE_INDEX, objectKey, type Delta, type IndexFunc } from './store.js';
export { Backoff, type BackoffOptions } from './backoff.js';
export { StalledWatchError } from './errors.js';
export { httpStatus, isGone } from '../kube/errors.js';
export { resourcePath, type ResourceRef } from './path.js';
export type { EventHandler, EventSource, ListPage, ListWatcher, WatchEvent, WatchEventType } from './types.js';
