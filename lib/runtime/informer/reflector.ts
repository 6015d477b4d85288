import type { KubernetesObject } from '@kubernetes/client-node';
import { raceAbort, withTimeout, type Clock } from '../clock.js';
import type { Logger } from '../log.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import {
  describeError,
  httpStatus,
  isConnectionRefused,
  isGone,
  retryAfter,
  watchStatusError,
} from '../kube/errors.js';
import { RequestTimeoutError, StalledWatchError } from './errors.js';
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
  /** A list or watch failed (410 aside, which relists at once); see {@link FailureKind}. */
  failed(kind: FailureKind): void;
  listed(): void;
  restarted(reason: RestartReason): void;
}

/**
 * Whose failure it was. `unreachable`: no API server answered (refused, reset, timed out, stalled).
 * `server`: one answered that it cannot serve now (5xx, 429, 408: starting, storage initializing,
 * overloaded), as it would answer any replica. `client`: one answered that it will not serve this
 * replica (another 4xx: credentials, RBAC, the request itself), so other replicas may well do better.
 */
export type FailureKind = 'unreachable' | 'server' | 'client';

export function failureKind(err: unknown): FailureKind {
  const status = isConnectionRefused(err) ? undefined : httpStatus(err);
  if (status === undefined || status < 400) return 'unreachable';
  return status >= 500 || status === 429 || status === 408 ? 'server' : 'client';
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
 * Refused connects (ECONNREFUSED) are retried at once, then after jittered delays of 100 ms
 * doubling up to this cap, on their own schedule, apart from the backoff of other errors.
 * A refused connect costs an API server nothing (the kernel of a host whose API server is down
 * answers it), and behind the `kubernetes` Service every new connection picks a backend at random:
 * with one of three API servers back, each retry reaches it with odds 1 in 3. On the ordinary
 * backoff (growing to 5 s) drill 7 saw caches relist ~11 s after the first API server was back,
 * while two of three connects were refused; client-go backs off the same way (800 ms doubling to
 * 30 s) and upstream's webhooks do not notice because they answer from a cache of any age.
 * Cost during a full outage: about one refused connect per second per informer.
 */
const REFUSED_BACKOFF = { initialMs: 100, maxMs: 1_000 } as const;

/**
 * wake() never starts an attempt sooner than this after the previous one began, so a stream of
 * admissions waiting on a cache (each calls wake()) cannot turn failing reconnects into a busy loop.
 */
const MIN_WAKE_GAP_MS = 200;

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
  /** For refused connects: see REFUSED_BACKOFF. */
  private readonly refusedBackoff: Backoff;
  /** Refused connects since the last list or working watch; the first is retried at once. */
  private refusedInARow = 0;
  private resourceVersion: string | undefined;
  /** When the current attempt (list or watch) began. */
  private attemptAt = -Infinity;
  /** No attempt before this (a 429's Retry-After), whatever wake() says. */
  private notBefore = -Infinity;
  /** Ends the current reconnect pause early (see wake()); undefined while not pausing. */
  private wakeUp?: () => void;

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
    this.refusedBackoff = new Backoff(REFUSED_BACKOFF, clock, random);
  }

  /**
   * Someone needs this cache current now (an admission waiting on it): end a reconnect pause
   * early. Never before MIN_WAKE_GAP_MS after the last attempt began, nor before the Retry-After of
   * a 429 (load shedding: an early retry adds to the overload). A 503's Retry-After is a start-up
   * hint (kube-apiserver answers "before all known HTTP paths have been installed" with 5 s
   * whatever the state), and one attempt per 200 ms while a review waits costs it little.
   * No effect while an attempt is under way or the watch is live.
   */
  wake(): void {
    this.wakeUp?.();
  }

  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      const watch = { events: 0, lastedMs: 0 };
      let retryAfterMs = 0;
      let listedNow = false;
      let delayMs: number | undefined;
      this.attemptAt = this.clock.now();
      try {
        if (this.resourceVersion === undefined) {
          this.resourceVersion = await this.listAll(signal);
          listedNow = true;
          // The API server answers again: the next failure is a new one, starting from the first step
          // (not the 410 backoff: a list that is followed by 410 at once is what that one paces).
          this.resetBackoffs(false);
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
        const refused = isConnectionRefused(err);
        if (reason !== 'gone') this.sink.failed(failureKind(err));
        if (reason === 'gone') {
          this.resourceVersion = undefined;
          this.log.info('resourceVersion expired (410); relisting', { error: describeError(err) });
          // Only a relist helps, so relist at once: after a watch that worked, a failed watch or an
          // outage, any wait here is pure staleness. Only a 410 that cut short the very watch that
          // followed a fresh list backs off (on its own schedule), so a server that keeps
          // answering 410 cannot cause a list storm.
          if (!listedNow || watch.events > 0) continue;
          await this.pause(this.goneBackoff.next(), signal);
          continue;
        } else if (refused) {
          delayMs = this.refusedInARow++ === 0 ? 0 : this.refusedBackoff.next();
          // Warned once per run of refusals: during an outage they repeat about once a second.
          const fields = { error: describeError(err), refusedInARow: this.refusedInARow };
          if (this.refusedInARow === 1) this.log.warn('API server connection refused; retrying at once', fields);
          else this.log.debug('API server connection refused again; retrying', fields);
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
        this.notBefore = httpStatus(err) === 429 ? this.clock.now() + retryAfterMs : -Infinity;
      }
      await this.pause(Math.max(delayMs ?? this.backoff.next(), retryAfterMs), signal);
    }
  }

  private resetBackoffs(gone = true): void {
    this.backoff.reset();
    if (gone) this.goneBackoff.reset();
    this.refusedBackoff.reset();
    this.refusedInARow = 0;
  }

  /** Waits `ms`, less if wake() is called (see there); resolves (never rejects) when `signal` aborts. */
  private pause(ms: number, signal: AbortSignal): Promise<void> {
    if (ms <= 0 || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let cancel = () => {};
      const done = () => {
        cancel();
        signal.removeEventListener('abort', done);
        this.wakeUp = undefined;
        resolve();
      };
      cancel = this.clock.after(ms, done);
      signal.addEventListener('abort', done, { once: true });
      const endsAt = this.clock.now() + ms;
      this.wakeUp = () => {
        this.wakeUp = undefined; // one early end per pause
        const at = Math.max(this.attemptAt + MIN_WAKE_GAP_MS, this.notBefore);
        if (at >= endsAt) return;
        if (at <= this.clock.now()) return done();
        cancel();
        cancel = this.clock.after(at - this.clock.now(), done);
      };
    });
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
      if (stats.events > 0 || stats.lastedMs >= 1000) this.resetBackoffs();
    }
  }

  private handle(event: WatchEvent<T>): void {
    if (event.type === 'ERROR') throw watchStatusError(event.object);
    if (event.type !== 'BOOKMARK') this.sink.apply(event);
    const rv = event.object?.metadata?.resourceVersion;
    if (rv) this.resourceVersion = rv;
  }
}
