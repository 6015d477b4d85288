/**
 * The benchmark's handle on its load generator process (bench/loadgen.ts): spawned with the same Node, the same
 * loader (tsx) and `--expose-gc`, driven over IPC. One generator serves one target at a time.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { LoadFigures, LoadRun, LoadTarget } from './loadgen.js';

export type { GeneratorStalls, LoadFigures, LoadRun, LoadTarget } from './loadgen.js';

export class LoadGenerator {
  private next = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private readonly exited: Promise<void>;

  private constructor(readonly child: ChildProcess) {
    child.on('message', (m: { id: number; result?: unknown; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.error !== undefined) p?.reject(new Error(`load generator: ${m.error}`));
      else p?.resolve(m.result);
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        for (const p of this.pending.values()) p.reject(new Error(`load generator exited (${code ?? signal})`));
        this.pending.clear();
        resolve();
      }),
    );
  }

  /** Starts the generator process. */
  static start(): LoadGenerator {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--expose-gc', new URL('./loadgen.ts', import.meta.url).pathname],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    return new LoadGenerator(child);
  }

  get pid(): number {
    return this.child.pid!;
  }

  private call<T>(message: object): Promise<T> {
    const id = this.next++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, ...message });
    });
  }

  /** Opens `target.pool` keep-alive connections (one request each) before any clock starts. */
  open(target: LoadTarget): Promise<{ opened: number; failed: number }> {
    return this.call({ op: 'open', target });
  }

  run(run: LoadRun): Promise<LoadFigures> {
    return this.call({ op: 'run', run });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    await this.call({ op: 'close' }).catch(() => undefined);
    await this.exited;
  }
}
