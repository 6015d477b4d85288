/**
 * Runs the real manager (lib/runtime/main.ts) as a child process, the way a pod would: one
 * Node process (`node --import tsx`, no wrapper process, so signals reach it), its own ports,
 * JSON logs captured for assertions and for failure messages.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface ManagerProcessOptions {
  name: string;
  kubeconfigPath: string;
  namespace: string;
  args?: string[];
  env?: Record<string, string>;
  /** A bundled main.mjs to run as is (as the image does) instead of the sources through tsx. */
  bundle?: string;
  /** Another program's sources to run through tsx instead of lib/runtime/main.ts (a user's program on run()). */
  script?: string;
  /** Node flags before the script (the image entrypoint's, with `bundle`). */
  nodeArgs?: readonly string[];
  /**
   * A cgroup directory the process joins before it execs node (its `cgroup.procs`), as a container
   * starts inside its limits: node sizes its heap from the group's memory limit at start.
   */
  cgroup?: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class ManagerProcess {
  private output = '';
  readonly exited: Promise<Exit>;

  private constructor(
    readonly name: string,
    readonly child: ChildProcess,
    readonly ports: { webhook: number; health: number; metrics: number },
    private readonly certDir: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      this.output += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.output += d;
    });
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  static async start(o: ManagerProcessOptions): Promise<ManagerProcess> {
    const ports = { webhook: await freePort(), health: await freePort(), metrics: await freePort() };
    const certDir = mkdtempSync(join(tmpdir(), `mgr-${o.name}-`));
    const child = spawn(
      o.cgroup ? '/bin/sh' : process.execPath,
      [
        // the shell writes its own PID into the group, then becomes node (same PID)
        ...(o.cgroup ? ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', o.cgroup, process.execPath] : []),
        ...(o.nodeArgs ?? []),
        ...(o.bundle ? [o.bundle] : ['--import', 'tsx', o.script ?? join(ROOT, 'lib/runtime/main.ts')]),
        `--kubeconfig=${o.kubeconfigPath}`,
        `--metrics-addr=127.0.0.1:${ports.metrics}`,
        `--health-probe-addr=127.0.0.1:${ports.health}`,
        '--drain-timeout=1s',
        ...(o.args ?? []),
      ],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          NODE_OPTIONS: '',
          POD_NAMESPACE: o.namespace,
          POD_NAME: o.name,
          WEBHOOK_PORT: String(ports.webhook),
          WEBHOOK_HOST: '127.0.0.1',
          WEBHOOK_CERT_DIR: certDir,
          ...o.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    return new ManagerProcess(o.name, child, ports, certDir);
  }

  logs(): string {
    return this.output;
  }

  async get(path: string, port = this.ports.health): Promise<{ status: number; body: string }> {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  }

  /** 1 when this process leads (the `leader_election_master_status` gauge), 0 otherwise. */
  async leading(): Promise<boolean> {
    try {
      const { body } = await this.get('/metrics', this.ports.metrics);
      return /^leader_election_master_status\{[^}]*\} 1$/m.test(body);
    } catch {
      return false;
    }
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null)
        throw new Error(`${this.name} exited with ${this.child.exitCode} before ready:\n${this.output}`);
      try {
        if ((await this.get('/readyz')).status === 200) return;
      } catch {
        /* not listening yet */
      }
      await sleep(200);
    }
    throw new Error(
      `${this.name} not ready within ${timeoutMs}ms:\n${(await this.get('/readyz?verbose').catch(() => ({ body: '' }))).body}\n${this.output}`,
    );
  }

  signal(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL if it has not exited within `graceMs`; removes its cert dir. */
  async stop(graceMs = 15_000): Promise<Exit> {
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    rmSync(this.certDir, { recursive: true, force: true });
    return exit;
  }
}
