import type { KubernetesObject } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { Client } from './client/index.js';
import { realClock, withTimeout, type Clock } from './clock.js';
import { ControllerMetrics, type ReconcileResult } from './controller-metrics.js';
import type { EventSource } from './informer/types.js';
import type { Logger } from './log.js';
import { RateLimitingQueue, type RateLimiter } from './workqueue/index.js';
import { Workers } from '../contract.js';

/** What to reconcile: one object, by name. Cluster-scoped objects have no namespace. */
export interface Request {
  namespace?: string;
  name: string;
}

export interface Result {
  /** Reconcile again after the rate limiter's backoff. */
  requeue?: boolean;
  /** Reconcile again after this long (wins over `requeue`); the failure backoff is reset. */
  requeueAfterMs?: number;
}

/** What a reconcile gets besides its Request: the stop signal, its logger and the API client. */
export interface ReconcileContext {
  /** Aborts when the controller stops; pass it to API calls so shutdown is not held up. */
  signal: AbortSignal;
  logger: Logger;
  /**
   * The API client to read and write with. Its writes are refused (they throw before anything is sent) once the
   * controller is stopping, and, in a Manager, once this replica cannot prove it still holds its Lease
   * (LeadershipLostError): a reconcile ends between two writes, never having written as a former leader.
   */
  client: Client;
}

export type Reconciler = (request: Request, context: ReconcileContext) => Promise<Result | void> | Result | void;

/** What a Controller is made of; Manager.addController supplies the logger, registry, clock, workers and client. */
export interface ControllerOptions {
  /** Names the metrics series, the queue and the `--<name>-workers` flag (contract's workersFlag). */
  name: string;
  reconcile: Reconciler;
  /** The client reconciles get (in ReconcileContext), refusing writes once the controller stops. */
  client: Client;
  /** Concurrent reconciles (default Workers.default, 3, as --<name>-workers); never two for the same object. */
  workers?: number;
  logger: Logger;
  registry?: Registry;
  clock?: Clock;
  rateLimiter?: RateLimiter;
  /** How long start() waits for watched sources to sync (default 2 min, as controller-runtime). */
  cacheSyncTimeoutMs?: number;
}

const requestKey = (r: Request) => (r.namespace ? `${r.namespace}/${r.name}` : r.name);

/**
 * controller-runtime's controller: events from watched sources become Requests on a rate-limited
 * work queue, and N workers reconcile them. An error or thrown exception requeues with backoff
 * and never ends a worker; success resets the backoff.
 */
export class Controller {
  readonly name: string;
  readonly queue: RateLimitingQueue<Request>;
  private readonly reconcile: Reconciler;
  private readonly client: Client;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly clock: Clock;
  private readonly metrics: ControllerMetrics;
  private readonly cacheSyncTimeoutMs: number;
  private readonly sources: Array<EventSource<KubernetesObject>> = [];
  private readonly unsubscribes: Array<() => void> = [];
  private readonly abort = new AbortController();
  private workerLoops: Array<Promise<void>> = [];
  private started = false;

  constructor(options: ControllerOptions) {
    const workers = options.workers ?? Workers.default;
    if (!Number.isInteger(workers) || workers < 1) {
      throw new RangeError(`controller ${options.name}: workers must be an integer >= 1 (got ${workers})`);
    }
    this.name = options.name;
    this.reconcile = options.reconcile;
    this.client = options.client.withGuard(() => this.abort.signal.throwIfAborted());
    this.workers = workers;
    this.clock = options.clock ?? realClock;
    this.log = options.logger.child({ controller: options.name });
    this.cacheSyncTimeoutMs = options.cacheSyncTimeoutMs ?? 120_000;
    const registry = options.registry ?? new Registry();
    this.queue = new RateLimitingQueue<Request>({
      name: options.name,
      keyOf: requestKey,
      registry,
      clock: this.clock,
      rateLimiter: options.rateLimiter,
    });
    this.metrics = new ControllerMetrics(options.name, registry, workers);
  }

  /**
   * Reconcile objects of `source`. By default an event enqueues the object itself; `map` turns
   * it into other requests (an owner, or every object that references it).
   */
  watch<T extends KubernetesObject>(source: EventSource<T>, map: (obj: T) => Request[] = ownRequest): void {
    const enqueue = (obj: T) => {
      let requests: Request[];
      try {
        requests = map(obj);
      } catch (err) {
        this.log.error('event mapping threw; event dropped', { error: err });
        return;
      }
      for (const r of Array.isArray(requests) ? requests : [])
        if (typeof r?.name === 'string' && r.name) this.enqueue(r);
    };
    this.sources.push(source as unknown as EventSource<KubernetesObject>);
    this.unsubscribes.push(
      source.addEventHandler({
        onAdd: enqueue,
        onUpdate: (oldObj, newObj) => {
          enqueue(oldObj);
          enqueue(newObj);
        },
        onDelete: enqueue,
      }),
    );
  }

  enqueue(request: Request): void {
    this.queue.add(request.namespace ? { namespace: request.namespace, name: request.name } : { name: request.name });
  }

  /** Waits for every watched source to sync (bounded), then starts the workers and returns. */
  async start(): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name} already started`);
    this.started = true;
    await withTimeout(
      this.clock,
      this.cacheSyncTimeoutMs,
      this.abort.signal,
      (signal) => Promise.all(this.sources.map((s) => s.waitForSync(signal))),
      () => new Error(`controller ${this.name}: caches did not sync within ${this.cacheSyncTimeoutMs}ms`),
    );
    this.log.info('starting workers', { workers: this.workers });
    this.workerLoops = Array.from({ length: this.workers }, () => this.worker());
  }

  /**
   * Stops taking new items and aborts the reconcile signal, so reconciles end at their next
   * check (between writes, never in the middle of one). Resolves true once every in-flight
   * reconcile has finished, or false when some were still running after `timeoutMs` (they are
   * abandoned: the caller is shutting down and must not wait on them).
   */
  async stop(timeoutMs = Infinity): Promise<boolean> {
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.abort.abort(new Error(`controller ${this.name} stopping`));
    this.queue.shutDown();
    const finished = Promise.all(this.workerLoops).then(() => true);
    const done = Number.isFinite(timeoutMs)
      ? await withTimeout(
          this.clock,
          Math.max(0, timeoutMs),
          undefined,
          () => finished,
          () => new Error('stop timed out'),
        ).catch(() => false)
      : await finished;
    if (done) this.log.info('all workers finished');
    else this.log.warn('reconciles still running at the stop deadline; abandoning them', { timeoutMs });
    return done;
  }

  private async worker(): Promise<void> {
    for (;;) {
      const next = await this.queue.get();
      if (next.shutdown) return;
      if (this.abort.signal.aborted) {
        this.queue.done(next.item);
        return;
      }
      await this.process(next.item);
    }
  }

  /** One reconcile with controller-runtime's result handling; never throws. */
  private async process(request: Request): Promise<void> {
    const started = this.clock.now();
    const log = this.log.child({ namespace: request.namespace, name: request.name });
    this.metrics.started();
    let outcome: ReconcileResult = 'error';
    try {
      let result: unknown;
      try {
        result = await this.reconcile(request, { signal: this.abort.signal, logger: log, client: this.client });
      } catch (err) {
        this.queue.addRateLimited(request);
        log.error('Reconciler error', { error: err, requeues: this.queue.numRequeues(request) });
        return;
      }
      const { requeue, requeueAfterMs } = (typeof result === 'object' && result !== null ? result : {}) as Result;
      if (typeof requeueAfterMs === 'number' && Number.isFinite(requeueAfterMs) && requeueAfterMs > 0) {
        this.queue.forget(request);
        this.queue.addAfter(request, requeueAfterMs);
        outcome = 'requeue_after';
      } else if (requeue === true) {
        this.queue.addRateLimited(request);
        outcome = 'requeue';
      } else {
        this.queue.forget(request);
        outcome = 'success';
      }
    } catch (err) {
      log.error('reconcile bookkeeping failed', { error: err }); // the worker loop must survive anything
    } finally {
      this.metrics.finished(outcome, (this.clock.now() - started) / 1000);
      this.queue.done(request);
    }
  }
}

function ownRequest(obj: KubernetesObject): Request[] {
  const name = obj?.metadata?.name;
  if (!name) return [];
  return [obj.metadata?.namespace ? { namespace: obj.metadata.namespace, name } : { name }];
}
