// In-memory stand-ins with the API server's semantics for the cert managers' unit tests.
import { setImmediate as yieldTurn } from 'node:timers/promises';
import type { CaBundleTarget, InjectOutcome } from '../../../../lib/runtime/certs/ca-bundle.js';
import { ConflictError, type SecretSnapshot, type SecretStore } from '../../../../lib/runtime/certs/secret-store.js';

/** A Secret with resourceVersion preconditions; every call yields first, so concurrent callers interleave. */
export class MemorySecretStore implements SecretStore {
  readonly ref = 'Secret ns/certs';
  private current?: SecretSnapshot;
  private rv = 0;
  readonly calls = { get: 0, create: 0, update: 0, conflicts: 0 };
  /** Set to make every call hang (an unresponsive API server). */
  hang = false;

  constructor(initial?: Record<string, string>) {
    if (initial) this.current = { resourceVersion: String(++this.rv), data: { ...initial } };
  }

  snapshot(): SecretSnapshot | undefined {
    return this.current && { ...this.current, data: { ...this.current.data } };
  }

  async get(): Promise<SecretSnapshot | undefined> {
    await this.turn();
    this.calls.get++;
    return this.snapshot();
  }

  async create(data: Record<string, string>): Promise<SecretSnapshot> {
    await this.turn();
    if (this.current) {
      this.calls.conflicts++;
      throw new ConflictError('already exists');
    }
    this.calls.create++;
    this.current = { resourceVersion: String(++this.rv), data: { ...data } };
    return this.snapshot()!;
  }

  async update(resourceVersion: string, data: Record<string, string>): Promise<SecretSnapshot> {
    await this.turn();
    if (!this.current || this.current.resourceVersion !== resourceVersion) {
      this.calls.conflicts++;
      throw new ConflictError(`stale resourceVersion ${resourceVersion}`);
    }
    this.calls.update++;
    this.current = { resourceVersion: String(++this.rv), data: { ...data } };
    return this.snapshot()!;
  }

  /** Writes as someone else would (cert-manager, another replica, a human). */
  put(data: Record<string, string>): void {
    this.current = { resourceVersion: String(++this.rv), data: { ...data } };
  }

  private async turn(): Promise<void> {
    await yieldTurn();
    if (this.hang) await new Promise(() => undefined);
  }
}

export class RecordingTarget implements CaBundleTarget {
  readonly injected: Array<{ bundle: string; overrideNewer: boolean }> = [];
  outcome: InjectOutcome | Error = 'updated';

  constructor(readonly ref: string) {}

  async inject(caBundlePem: string, _now: number, overrideNewer = false): Promise<InjectOutcome> {
    this.injected.push({ bundle: caBundlePem, overrideNewer });
    if (this.outcome instanceof Error) throw this.outcome;
    return this.outcome;
  }
}
