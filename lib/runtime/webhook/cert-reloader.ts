/**
 * Keeps the serving certificate current without a restart, like controller-runtime's
 * certwatcher: the cert dir is watched (inotify catches both our temp+rename writes and the
 * kubelet's `..data` symlink swap for mounted Secrets), polled as a fallback (watches are lost on
 * some filesystems), and reloaded on demand when the cert manager says it wrote new files.
 *
 * A pair that does not load (half-written, key not matching the cert) never replaces a working
 * one: the previous certificate keeps serving and the next event or poll tries again.
 */
import { readFile } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';
import { createSecureContext } from 'node:tls';
import { realClock, type Clock } from '../clock.js';
import type { Logger } from '../log.js';

export interface TlsMaterial {
  cert: string;
  key: string;
}

export interface CertReloaderOptions {
  certFile: string;
  keyFile: string;
  logger: Logger;
  onChange: (material: TlsMaterial) => void;
  clock?: Clock;
  /** Fallback poll for filesystems without change events. */
  pollIntervalMs?: number;
  /** Off for filesystems where inotify is missing or unreliable (network mounts): poll only. */
  watch?: boolean;
}

const DEBOUNCE_MS = 50; // a write is two renames; load once both landed

export class CertReloader {
  private material?: TlsMaterial;
  private watcher?: FSWatcher;
  private cancelPoll?: () => void;
  private cancelDebounce?: () => void;
  private loading: Promise<boolean> = Promise.resolve(false);
  private running = false;
  private readonly clock: Clock;

  constructor(private readonly opts: CertReloaderOptions) {
    this.clock = opts.clock ?? realClock;
  }

  current(): TlsMaterial | undefined {
    return this.material;
  }

  /** Reads and checks the pair; throws with the file names when it cannot serve. */
  async load(): Promise<TlsMaterial> {
    const { certFile, keyFile } = this.opts;
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8')]);
    } catch (e) {
      throw new Error(`cannot read serving certificate ${certFile} / key ${keyFile}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    try {
      createSecureContext({ cert, key }); // throws on bad PEM or a key that does not match the cert
    } catch (e) {
      throw new Error(
        `serving certificate ${certFile} and key ${keyFile} do not form a usable pair: ${(e as Error).message}`,
        { cause: e },
      );
    }
    return { cert, key };
  }

  /** First load, before the server exists: throws instead of keeping a previous pair. */
  async init(): Promise<TlsMaterial> {
    this.material = await this.load();
    return this.material;
  }

  /** Loads the files and reports a change; resolves true when a new pair took effect. Serialised. */
  reload(): Promise<boolean> {
    this.loading = this.loading.then(
      () => this.reloadNow(),
      () => this.reloadNow(),
    );
    return this.loading;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedulePoll();
    if (this.opts.watch === false) return;
    const dir = dirname(this.opts.certFile);
    try {
      this.watcher = watch(dir, () => this.scheduleReload());
      this.watcher.on('error', (err) => {
        this.opts.logger.warn('certificate directory watch failed; polling only', { dir, err });
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch (err) {
      this.opts.logger.warn('cannot watch certificate directory; polling only', { dir, err: err as Error });
    }
  }

  stop(): void {
    this.running = false;
    this.watcher?.close();
    this.watcher = undefined;
    this.cancelPoll?.();
    this.cancelDebounce?.();
  }

  private async reloadNow(): Promise<boolean> {
    let next: TlsMaterial;
    try {
      next = await this.load();
    } catch (err) {
      this.opts.logger.warn('keeping the current serving certificate', { err: err as Error });
      return false;
    }
    if (this.material && this.material.cert === next.cert && this.material.key === next.key) return false;
    this.material = next;
    this.opts.onChange(next);
    this.opts.logger.info('serving certificate loaded', { certFile: this.opts.certFile });
    return true;
  }

  private scheduleReload(): void {
    if (!this.running) return;
    this.cancelDebounce?.();
    this.cancelDebounce = this.clock.after(DEBOUNCE_MS, () => void this.reload());
  }

  private schedulePoll(): void {
    if (!this.running) return;
    this.cancelPoll = this.clock.after(this.opts.pollIntervalMs ?? 10_000, () => {
      void this.reload().finally(() => this.schedulePoll());
    });
  }
}
