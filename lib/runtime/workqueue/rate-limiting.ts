import { DelayingQueue } from './delaying.js';
import type { QueueOptions } from './queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.js';

export interface RateLimitingQueueOptions<T> extends QueueOptions<T> {
  /** Default: controller-runtime's max(5ms→1000s per item, 10 qps / 100 burst). */
  rateLimiter?: RateLimiter;
}

/** The queue controllers use: failed items come back after the rate limiter's delay. */
export class RateLimitingQueue<T> extends DelayingQueue<T> {
  private readonly rateLimiter: RateLimiter;

  constructor(options: RateLimitingQueueOptions<T>) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter({ clock: this.clock });
  }

  /** Adds the item once the rate limiter allows it (one more failure for its backoff). */
  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(this.keyOf(item)));
  }

  /** Resets the item's backoff; call it when the item was processed successfully. */
  forget(item: T): void {
    this.rateLimiter.forget(this.keyOf(item));
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(this.keyOf(item));
  }
}
