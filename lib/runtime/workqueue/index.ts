export { WorkQueue, stableKey, type GetResult, type QueueOptions } from './queue.js';
export { DelayingQueue } from './delaying.js';
export { RateLimitingQueue, type RateLimitingQueueOptions } from './rate-limiting.js';
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type ControllerRateLimiterOptions,
  type RateLimiter,
} from './rate-limiter.js';
