// A real CNCF distribution registry (Debian's docker-registry) on a free loopback port,
// with temp storage and optionally htpasswd auth, for the runtime-image integration tests.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ENSURE = join(dirname(fileURLToPath(import.meta.url)), '..', 'setup', 'ensure-docker-registry.sh');

export interface RegistryAuth {
  username: string;
  password: string;
}

export class RegistryProcess {
  private child?: ChildProcess;
  private stderr = '';
  readonly dir = mkdtempSync(join(tmpdir(), 'kruise-registry-'));
  port = 0;

  constructor(private readonly auth?: RegistryAuth) {}

  /** host:port, as an image reference spells the registry. */
  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    execFileSync('bash', [ENSURE], { stdio: ['ignore', 'inherit', 'inherit'] });
    this.port = await freePort();
    const lines = [
      'version: 0.1',
      'log: { level: error, accesslog: { disabled: true } }',
      `storage: { filesystem: { rootdirectory: ${join(this.dir, 'data')} }, delete: { enabled: true }, maintenance: { uploadpurging: { enabled: false } } }`,
      `http: { addr: "${this.host}", secret: integration-test-secret }`,
    ];
    if (this.auth) {
      // The registry accepts bcrypt entries only; htpasswd -B writes one.
      const entry = execFileSync('htpasswd', ['-Bbn', this.auth.username, this.auth.password], {
        encoding: 'utf8',
      }).trim();
      writeFileSync(join(this.dir, 'htpasswd'), `${entry}\n`);
      lines.push(`auth: { htpasswd: { realm: test-registry, path: ${join(this.dir, 'htpasswd')} } }`);
    }
    writeFileSync(join(this.dir, 'config.yml'), `${lines.join('\n')}\n`);
    const child = (this.child = spawn('docker-registry', ['serve', join(this.dir, 'config.yml')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    }));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4000);
    });
    await this.waitReady();
    return this;
  }

  private async waitReady(): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (this.child?.exitCode !== null)
        throw new Error(`docker-registry exited with ${this.child?.exitCode}:\n${this.stderr}`);
      const status = await fetch(`http://${this.host}/v2/`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200 || status === 401) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`docker-registry did not answer on ${this.host} within 20 s:\n${this.stderr}`);
  }

  /** Stops the process (the storage stays until cleanup, so a restart would keep the images). */
  async stop(): Promise<void> {
    const child = this.child;
    // A signalled process has signalCode set and exitCode null.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
