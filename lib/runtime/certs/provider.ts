/**
 * The loop both certificate modes share: sync, sleep until the next check (or back off after a
 * failure), repeat until stopped; plus the readiness state the health checks read.
 *
 * Readiness means "a verified certificate is in the cert dir and has not expired". A later sync
 * failure (API server down, Secret broken by hand) is logged and retried but does not flip
 * readiness while the certificate being served is still good: failing every replica's readiness
 * at once would empty the Service and stop all admission cluster-wide.
 */
import { realClock, sleep, type Clock } from '../clock.js';
import type { Logger } from '../log.js';

export interface CertificateProvider {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A verified, unexpired certificate is in the cert dir (and was handed to the server). */
  ready(): boolean;
  /** Why `ready()` is false, in one sentence; undefined when ready. */
  notReadyReason(): string | undefined;
  /** When the installed serving certificate expires (epoch ms); undefined before the first install. */
  expiresAt(): number | undefined;
  /** The CA bundle the serving certificate chains to (for the readiness self-check). */
  caPem(): string | undefined;
  /** Resolves once ready; rejects if `signal` aborts first. */
  waitReady(signal?: AbortSignal): Promise<void>;
}

export interface ProviderLoopOptions {
  logger: Logger;
  clock?: Clock;
  /** Re-check at least this often even when nothing is due (another replica may have rotated). */
  resyncIntervalMs?: number;
  /** Called after new files land in the cert dir, typically `() => webhookServer.reloadCertificates()`. */
  onCertificatesWritten?: () => unknown;
}

export interface SyncResult {
  nextCheckAt: number;
}

export interface Installed {
  caPem: string;
  notAfter: number;
}

const BACKOFF_INITIAL_MS = 1_000;
const BACKOFF_MAX_MS = 30_000;

export abstract class ProviderLoop implements CertificateProvider {
  protected readonly clock: Clock;
  protected readonly log: Logger;
  private installed?: Installed;
  private lastError?: string;
  private stopSignal?: AbortController;
  private wake?: AbortController;
  private loop?: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(private readonly loopOpts: ProviderLoopOptions) {
    this.clock = loopOpts.clock ?? realClock;
    this.log = loopOpts.logger;
  }

  /** One pass: make the cert dir right, or throw saying why it cannot be. */
  protected abstract sync(): Promise<SyncResult>;

  async start(): Promise<void> {
    if (this.loop) return;
    this.stopSignal = new AbortController();
    this.loop = this.run(this.stopSignal.signal);
  }

  async stop(): Promise<void> {
    this.stopSignal?.abort(new Error('certificate provider stopped'));
    await this.loop;
    this.loop = undefined;
  }

  /** Cuts the current wait short (for example when the Secret was seen to change). */
  syncSoon(): void {
    this.wake?.abort();
  }

  ready(): boolean {
    return this.installed !== undefined && this.clock.now() < this.installed.notAfter;
  }

  expiresAt(): number | undefined {
    return this.installed?.notAfter;
  }

  notReadyReason(): string | undefined {
    if (this.ready()) return undefined;
    if (this.installed) return `the serving certificate expired at ${new Date(this.installed.notAfter).toISOString()}`;
    return this.lastError ?? 'certificates have not been set up yet';
  }

  caPem(): string | undefined {
    return this.installed?.caPem;
  }

  /** The last sync error, even while ready (for diagnostics). */
  lastSyncError(): string | undefined {
    return this.lastError;
  }

  waitReady(signal?: AbortSignal): Promise<void> {
    if (this.ready()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const done = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== done);
        reject(signal?.reason);
      };
      this.waiters.push(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** True once stop() was called: a sync still running must not touch anything. */
  protected stopped(): boolean {
    return this.stopSignal?.signal.aborted ?? true;
  }

  /** Records a verified certificate in the cert dir and tells the server to load it. */
  protected async install(installed: Installed, filesChanged: boolean): Promise<void> {
    if (filesChanged) await this.loopOpts.onCertificatesWritten?.();
    this.installed = installed;
    if (this.ready()) for (const w of this.waiters.splice(0)) w();
  }

  private async run(stop: AbortSignal): Promise<void> {
    let failures = 0;
    const stopped = rejectOnAbort(stop);
    stopped.catch(() => undefined);
    while (!stop.aborted) {
      let delay: number;
      try {
        // A sync stuck on an unresponsive API server must not hold stop() hostage.
        const { nextCheckAt } = await Promise.race([this.sync(), stopped]);
        failures = 0;
        this.lastError = undefined;
        const resync = this.loopOpts.resyncIntervalMs ?? 10 * 60_000;
        delay = Math.min(Math.max(nextCheckAt - this.clock.now(), 0), resync);
      } catch (e) {
        if (stop.aborted) break;
        failures++;
        this.lastError = (e as Error).message;
        delay = Math.min(BACKOFF_INITIAL_MS * 2 ** (failures - 1), BACKOFF_MAX_MS);
        this.log.warn('certificate sync failed; retrying', { err: e as Error, retryInMs: delay, ready: this.ready() });
      }
      this.wake = new AbortController();
      const wakeOrStop = AbortSignal.any([stop, this.wake.signal]);
      await sleep(this.clock, delay, wakeOrStop).catch(() => undefined);
    }
  }
}

function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}
