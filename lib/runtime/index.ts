/** The kruise-ha runtime: a controller-runtime-style manager in TypeScript. */
export * from './clock.js';
export * from './controller.js';
export * from './log.js';
export * from './manager.js';
export * from './metrics.js';
export * from './options.js';
export { matchesSelector, validateSelector, type SelectorLike } from '../contract/selector.js';
export * as certs from './certs/index.js';
export * as health from './health/index.js';
export * as informer from './informer/index.js';
export * as leader from './leader/index.js';
export * as sidecarset from './sidecarset/index.js';
export * as webhook from './webhook/index.js';
export * as workqueue from './workqueue/index.js';
