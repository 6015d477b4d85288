/**
 * A throw-away containerd (Debian's, from test/setup/ensure-image-tools.sh) in a scratch folder, to
 * pull the built images the way a node does (docker.io through a hosts.toml mirror) and run them.
 * Everything lives under its folder; `cleanup` stops it by PID, unmounts what is left and removes it.
 *
 * `ctr run` has no --user in containerd 1.6 (its process runs as the image's USER), so `runAs` runs
 * a containerd-unpacked image with runc and an OCI spec that sets the uid, as the kubelet's
 * runAsUser does through CRI.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const RUN_DIR = '/run/containerd';

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunAsOptions {
  readonly uid: number;
  readonly gid: number;
  /** PATH and the like; the image's Env is not applied by runc. */
  readonly env?: readonly string[];
  readonly cwd?: string;
}

export class ContainerdProcess {
  readonly dir = mkdtempSync(join(tmpdir(), 'kruise-containerd-'));
  readonly namespace = 'kruise-images-test';
  private child?: ChildProcess;
  private log = '';
  private seq = 0;
  /** Whether /run/containerd existed before: containerd 1.6 puts its shims' sockets in /run/containerd/s, always. */
  private readonly hadRunDir = existsSync(RUN_DIR);

  get socket(): string {
    return join(this.dir, 'containerd.sock');
  }

  get hostsDir(): string {
    return join(this.dir, 'certs.d');
  }

  /** Routes `host` (e.g. docker.io) to a plain-HTTP registry, and nowhere else. */
  mirror(host: string, registry: string): void {
    mkdirSync(join(this.hostsDir, host), { recursive: true });
    writeFileSync(
      join(this.hostsDir, host, 'hosts.toml'),
      [
        // The mirror is the server too: a failed pull never falls back to the internet.
        `server = "http://${registry}"`,
        `[host."http://${registry}"]`,
        '  capabilities = ["pull", "resolve"]',
        '',
      ].join('\n'),
    );
  }

  async start(): Promise<this> {
    const d = this.dir;
    writeFileSync(
      join(d, 'config.toml'),
      [
        'version = 2',
        `root = "${d}/root"`,
        `state = "${d}/state"`,
        'disabled_plugins = ["io.containerd.grpc.v1.cri"]',
        '[grpc]',
        `  address = "${this.socket}"`,
        '[ttrpc]',
        `  address = "${this.socket}.ttrpc"`,
        '[plugins."io.containerd.internal.v1.opt"]',
        `  path = "${d}/opt"`,
        '',
      ].join('\n'),
    );
    const child = (this.child = spawn('containerd', ['--config', join(d, 'config.toml')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    }));
    child.stderr!.setEncoding('utf8').on('data', (t: string) => {
      this.log = (this.log + t).slice(-8000);
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`containerd exited with ${child.exitCode}:\n${this.log}`);
      if ((await this.ctr(['version']).catch(() => undefined))?.code === 0) return this;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`containerd did not answer on ${this.socket} within 30 s:\n${this.log}`);
  }

  /** ctr against this containerd; never rejects on a non-zero exit (the result says it). */
  ctr(args: readonly string[]): Promise<RunResult> {
    return collect('ctr', ['--address', this.socket, '--namespace', this.namespace, ...args]);
  }

  /** Pulls and unpacks, resolving registries through the hosts dir (the node's certs.d). */
  async pull(ref: string): Promise<void> {
    const r = await this.ctr(['images', 'pull', '--hosts-dir', this.hostsDir, ref]);
    if (r.code !== 0) throw new Error(`ctr images pull ${ref} failed (${r.code}):\n${r.stderr}\n${r.stdout}`);
  }

  /**
   * `ctr run --rm --net-host --read-only`, no cgroup: the process is the image's (USER, ENV, WORKDIR),
   * with `args` as its argv when given.
   */
  run(ref: string, args: readonly string[] = []): Promise<RunResult> {
    const id = `run-${process.pid}-${++this.seq}`;
    // runc state and stdio fifos in our folder, not under /run/containerd (ctr's defaults).
    const local = ['--runc-root', join(this.dir, 'runc'), '--fifo-dir', join(this.dir, 'fifo')];
    return this.ctr(['run', '--rm', '--net-host', '--read-only', '--cgroup', '', ...local, ref, id, ...args]);
  }

  /**
   * The image's root filesystem (a writable containerd snapshot of it, removed after) mounted while `use`
   * runs. Writable as the kubelet's is: runc creates mount points, then remounts the root read-only.
   */
  async withRootfs<T>(ref: string, use: (rootfs: string, bundle: string) => Promise<T>): Promise<T> {
    const bundle = join(this.dir, 'bundles', `mnt-${process.pid}-${++this.seq}`);
    const rootfs = join(bundle, 'rootfs');
    mkdirSync(rootfs, { recursive: true });
    const mounted = await this.ctr(['images', 'mount', '--rw', ref, rootfs]);
    if (mounted.code !== 0) throw new Error(`ctr images mount ${ref} failed:\n${mounted.stderr}`);
    try {
      return await use(rootfs, bundle);
    } finally {
      await this.ctr(['images', 'unmount', '--rm', rootfs]);
    }
  }

  /** Runs argv in the image's root filesystem (read-only) with runc as uid:gid, host network, no capabilities. */
  runAs(ref: string, argv: readonly string[], options: RunAsOptions): Promise<RunResult> {
    return this.withRootfs(ref, async (rootfs, bundle) => {
      await exec('runc', ['spec', '--bundle', bundle]);
      const spec = JSON.parse(readFileSync(join(bundle, 'config.json'), 'utf8')) as OciSpec;
      spec.process.terminal = false;
      spec.process.args = [...argv];
      spec.process.user = { uid: options.uid, gid: options.gid };
      spec.process.env = [...(options.env ?? ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'])];
      spec.process.cwd = options.cwd ?? '/';
      spec.process.noNewPrivileges = true;
      spec.process.capabilities = { bounding: [], effective: [], permitted: [], inheritable: [], ambient: [] };
      spec.root = { path: rootfs, readonly: true };
      spec.hostname = undefined;
      spec.linux.namespaces = spec.linux.namespaces.filter((n) => n.type !== 'network' && n.type !== 'uts');
      writeFileSync(join(bundle, 'config.json'), JSON.stringify(spec, null, 2));
      return collect('runc', ['--root', join(this.dir, 'runc'), 'run', '--bundle', bundle, basename(bundle)]);
    });
  }

  /** Stops containerd (SIGTERM to its PID), unmounts anything left under the folder, removes it. */
  async cleanup(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    for (const target of mountsUnder(this.dir).reverse()) await exec('umount', [target]).catch(() => undefined);
    // The shim-socket folder containerd 1.6 hard-codes, when we created it and nobody else uses it now.
    if (!this.hadRunDir)
      for (const d of ['s', '']) {
        try {
          rmdirSync(join(RUN_DIR, d));
        } catch (e) {
          if (!['ENOENT', 'ENOTEMPTY'].includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
        }
      }
    const left = mountsUnder(this.dir);
    if (left.length) throw new Error(`mounts left under ${this.dir}: ${left.join(', ')}`);
    if (existsSync(this.dir)) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Runs a command to its end; never rejects on a non-zero exit (the result says it). */
function collect(command: string, args: readonly string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const c = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.setEncoding('utf8').on('data', (t: string) => (stdout += t));
    c.stderr.setEncoding('utf8').on('data', (t: string) => (stderr += t));
    c.once('error', reject);
    c.once('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Mount points at or below `dir`, from this mount namespace's table. */
export function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((m): m is string => !!m && (m === dir || m.startsWith(`${dir}/`)))
    .map((m) => m.replace(/\\040/g, ' '));
}

interface OciSpec {
  process: {
    terminal?: boolean;
    args: string[];
    user: { uid: number; gid: number };
    env: string[];
    cwd: string;
    noNewPrivileges?: boolean;
    capabilities?: Record<string, string[]>;
  };
  root: { path: string; readonly: boolean };
  hostname?: string;
  linux: { namespaces: { type: string }[] };
}
