import type { KubernetesObject } from '@kubernetes/client-node';
import { raceAbort, sleep, withTimeout, type Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { RequestTimeoutError, StalledWatchError, describeError, httpStatus, isGone, retryAfter, watchStatusError } from './errors.js';
import type { RestartReason } from './metrics.js';
import type { ListWatcher, WatchEvent } from './types.js';

/** Where the reflector delivers what it learns; the informer applies it to its cache. */
export interface ReflectorSink<T extends KubernetesObject> {
  /** A complete, consistent list: the cache must become exactly this. */
  replace(items: T[], resourceVersion: string): void;
  /** An ADDED, MODIFIED or DELETED event (bookmarks and errors are handled here). */
  apply(event: WatchEvent<T>): void;
  /** The API server was heard from. */
  touch(): void;
  listed(): void;
  restarted(reason: RestartReason): void;
}

export interface ReflectorTimings {
  pageSize: number;
  /** Fixed server-side watch timeout, or undefined for a random 60-120s per watch. */
  watchTimeoutSeconds?: number;
  stallTimeoutMs: number;
  listTimeoutMs: number;
  backoff?: BackoffOptions;
}

/**
 * client-go's Reflector: list, then watch from the list's resourceVersion, forever. Any error
 * re-watches from the last resourceVersion seen after a jittered backoff (at least the server's
 * Retry-After); 410 Gone relists; a watch silent past stallTimeoutMs is aborted.
 */
export class Reflector<T extends KubernetesObject> {
  private readonly backoff: Backoff;
  private resourceVersion: string | undefined;

  constructor(
    private readonly lw: ListWatcher<T>,
    private readonly sink: ReflectorSink<T>,
    private readonly t: ReflectorTimings,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {
    this.backoff = new Backoff(t.backoff ?? {}, clock, random);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const watch = { events: 0, lastedMs: 0 };
      let retryAfterMs = 0;
      try {
        if (this.resourceVersion === undefined) this.resourceVersion = await this.listAll(signal);
        await this.watchOnce(this.resourceVersion, signal, watch);
        this.sink.restarted('closed');
        // A server that closes streams at once, with nothing to say, must not make us spin.
        if (watch.events > 0 || watch.lastedMs >= 1000) continue;
        this.log.debug('watch closed immediately without events');
      } catch (err) {
        if (signal.aborted) break;
        const reason: RestartReason = isGone(err) ? 'gone' : err instanceof StalledWatchError ? 'stalled' : 'error';
        this.sink.restarted(reason);
        if (reason === 'gone') {
          this.resourceVersion = undefined;
          this.log.info('resourceVersion expired (410); relisting', { error: describeError(err) });
          // Relist at once after a watch that worked; a 410 straight after a list backs off,
          // so a server that keeps answering 410 cannot drive us into a list storm.
          if (watch.events > 0) continue;
        } else if (reason === 'stalled') {
          this.log.warn('watch stalled; re-watching', { error: describeError(err), resourceVersion: this.resourceVersion });
        } else {
          this.log.warn('list/watch failed; retrying with backoff', { error: describeError(err), status: httpStatus(err) });
        }
        retryAfterMs = retryAfter(err);
      }
      await sleep(this.clock, Math.max(this.backoff.next(), retryAfterMs), signal).catch(() => undefined);
    }
  }

  /** Lists every page and hands the result to the sink; returns the list's resourceVersion. */
  private async listAll(signal: AbortSignal): Promise<string> {
    let pageSize = this.t.pageSize;
    const items: T[] = [];
    let continueToken = '';
    let resourceVersion: string;
    for (;;) {
      let page;
      try {
        page = await withTimeout(this.clock, this.t.listTimeoutMs, signal, (s) =>
          this.lw.list({ limit: pageSize > 0 ? pageSize : undefined, continueToken, signal: s }),
        () => new RequestTimeoutError('list', this.t.listTimeoutMs));
      } catch (err) {
        // The continue token expired mid-list: start over with a single unpaged list.
        if (!isGone(err) || !continueToken) throw err;
        items.length = 0;
        continueToken = '';
        pageSize = 0;
        continue;
      }
      items.push(...page.items);
      resourceVersion = page.resourceVersion;
      this.sink.touch();
      if (!page.continueToken) break;
      continueToken = page.continueToken;
    }
    this.sink.listed();
    this.sink.replace(items, resourceVersion);
    return resourceVersion;
  }

  /** One watch from `resourceVersion` until the server closes it; `stats` is filled in even when it fails. */
  private async watchOnce(resourceVersion: string, outer: AbortSignal, stats: { events: number; lastedMs: number }): Promise<void> {
    const started = this.clock.now();
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort(outer.reason);
    outer.addEventListener('abort', onOuterAbort, { once: true });
    let cancelWatchdog = () => {};
    const armWatchdog = () => {
      cancelWatchdog();
      cancelWatchdog = this.clock.after(this.t.stallTimeoutMs, () => abort.abort(new StalledWatchError(this.t.stallTimeoutMs)));
    };
    const timeoutSeconds = this.t.watchTimeoutSeconds ?? Math.floor(60 * (1 + this.random()));
    armWatchdog();
    try {
      await raceAbort(this.lw.watch({ resourceVersion, timeoutSeconds, signal: abort.signal }, (event) => {
        armWatchdog();
        this.sink.touch();
        this.handle(event);
        stats.events++; // after handle: an ERROR event is a failure, not progress
      }, () => {
        armWatchdog();
        this.sink.touch();
      }), abort.signal);
    } catch (err) {
      throw abort.signal.aborted ? abort.signal.reason : err;
    } finally {
      stats.lastedMs = this.clock.now() - started;
      cancelWatchdog();
      outer.removeEventListener('abort', onOuterAbort);
      if (stats.events > 0) this.backoff.reset();
    }
  }

  private handle(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') throw watchStatusError(event.object);
    if (event.type !== 'BOOKMARK') this.sink.apply(event);
    const rv = event.object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }
}
