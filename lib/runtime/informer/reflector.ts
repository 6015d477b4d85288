import type { KubernetesObject } from '@kubernetes/client-node';
import { raceAbort, sleep, withTimeout, type Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import {
  RequestTimeoutError,
  StalledWatchError,
  describeError,
  httpStatus,
  isGone,
  retryAfter,
  watchStatusError,
} from './errors.js';
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
  /** A watch was accepted: from here on the cache follows the server until disconnected(). */
  connected(): void;
  /** The watch ended (any reason): the cache is as fresh as this moment, and ages from here. */
  disconnected(): void;
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
 * Cap of the reconnect backoff, jitter included. client-go's 30s (45s with jitter) kept caches
 * stale for up to a minute after the API server was back; a reconnect every 5s at worst costs the
 * server little (a failed connect or a 410) and bounds how long a cache lags a recovered server.
 */
const DEFAULT_MAX_BACKOFF_MS = 5_000;

/** A watch resumed from an older resourceVersion that held this long without an error is current. */
const RESUME_PROOF_MS = 1_000;

/**
 * client-go's Reflector: list, then watch from the list's resourceVersion, forever. Any error
 * re-watches from the last resourceVersion seen after a jittered backoff (at least the server's
 * Retry-After); 410 Gone relists; a watch silent past stallTimeoutMs is aborted.
 */
export class Reflector<T extends KubernetesObject> {
  /** Between attempts after errors; reset by a successful list and by a watch that worked. */
  private readonly backoff: Backoff;
  /** Between relists when a watch straight after a list gets 410 again. */
  private readonly goneBackoff: Backoff;
  private resourceVersion: string | undefined;

  constructor(
    private readonly lw: ListWatcher<T>,
    private readonly sink: ReflectorSink<T>,
    private readonly t: ReflectorTimings,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {
    this.backoff = new Backoff({ maxMs: DEFAULT_MAX_BACKOFF_MS, ...t.backoff }, clock, random);
    this.goneBackoff = new Backoff({ maxMs: DEFAULT_MAX_BACKOFF_MS, ...t.backoff }, clock, random);
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const watch = { events: 0, lastedMs: 0 };
      let retryAfterMs = 0;
      let listedNow = false;
      try {
        if (this.resourceVersion === undefined) {
          this.resourceVersion = await this.listAll(signal);
          listedNow = true;
          // The API server answers again: the next failure is a new one, starting from the first step.
          this.backoff.reset();
        }
        await this.watchOnce(this.resourceVersion, signal, watch, listedNow);
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
          // Only a relist helps, so relist at once: after a watch that worked, a failed watch or an
          // outage, any wait here is pure staleness. Only a 410 that cut short the very watch that
          // followed a fresh list backs off (on its own schedule), so a server that keeps
          // answering 410 cannot cause a list storm.
          if (!listedNow || watch.events > 0) continue;
          await sleep(this.clock, this.goneBackoff.next(), signal).catch(() => undefined);
          continue;
        } else if (reason === 'stalled') {
          this.log.warn('watch stalled; re-watching', {
            error: describeError(err),
            resourceVersion: this.resourceVersion,
          });
        } else {
          this.log.warn('list/watch failed; retrying with backoff', {
            error: describeError(err),
            status: httpStatus(err),
          });
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
        page = await withTimeout(
          this.clock,
          this.t.listTimeoutMs,
          signal,
          (s) => this.lw.list({ limit: pageSize > 0 ? pageSize : undefined, continueToken, signal: s }),
          () => new RequestTimeoutError('list', this.t.listTimeoutMs),
        );
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
  private async watchOnce(
    resourceVersion: string,
    outer: AbortSignal,
    stats: { events: number; lastedMs: number },
    fromFreshList: boolean,
  ): Promise<void> {
    const started = this.clock.now();
    const abort = new AbortController();
    const onOuterAbort = () => abort.abort(outer.reason);
    outer.addEventListener('abort', onOuterAbort, { once: true });
    let cancelWatchdog = () => {};
    const armWatchdog = () => {
      cancelWatchdog();
      cancelWatchdog = this.clock.after(this.t.stallTimeoutMs, () =>
        abort.abort(new StalledWatchError(this.t.stallTimeoutMs)),
      );
    };
    const timeoutSeconds = this.t.watchTimeoutSeconds ?? Math.floor(60 * (1 + this.random()));
    armWatchdog();
    // When is the cache current again? At once when this watch starts from the list just made.
    // Resuming from an older resourceVersion, the server first replays what we missed (or says
    // 410): the cache counts as current after the first event or bookmark, or once the watch has
    // held for a moment without an error.
    let connected = false;
    let cancelProof = () => {};
    const proven = () => {
      cancelProof();
      if (!connected) {
        connected = true;
        this.sink.connected();
      }
    };
    try {
      await raceAbort(
        this.lw.watch(
          { resourceVersion, timeoutSeconds, signal: abort.signal },
          (event) => {
            armWatchdog();
            this.sink.touch();
            this.handle(event);
            stats.events++; // after handle: an ERROR event is a failure, not progress
            proven();
          },
          () => {
            armWatchdog();
            this.sink.touch();
            if (fromFreshList) proven();
            else cancelProof = this.clock.after(RESUME_PROOF_MS, proven);
          },
        ),
        abort.signal,
      );
    } catch (err) {
      throw abort.signal.aborted ? abort.signal.reason : err;
    } finally {
      stats.lastedMs = this.clock.now() - started;
      cancelWatchdog();
      outer.removeEventListener('abort', onOuterAbort);
      cancelProof();
      if (connected) this.sink.disconnected();
      // A watch that delivered events or held for a while worked: whatever ended it is a new
      // failure, so the next outage starts from the first step, not where the last one left off.
      if (stats.events > 0 || stats.lastedMs >= 1000) {
        this.backoff.reset();
        this.goneBackoff.reset();
      }
    }
  }

  private handle(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') throw watchStatusError(event.object);
    if (event.type !== 'BOOKMARK') this.sink.apply(event);
    const rv = event.object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }
}
