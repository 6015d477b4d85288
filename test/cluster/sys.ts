// Host plumbing for the local cluster: commands, namespaces, links, cgroups and sysctls, each
// with its undo. Everything here acts only on names from paths.ts.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CGROUP_ROOT, PROCESS_CGROUP_HIERARCHY } from './paths.js';

/** Runs a command; throws with its stderr. */
export function sh(cmd: string, args: string[], input?: string): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as Error & { stderr?: string };
    throw new Error(`cluster: \`${cmd} ${args.join(' ')}\` failed: ${err.stderr?.trim() || err.message}`, {
      cause: e,
    });
  }
}

/** Like sh, but returns false instead of throwing (for undo steps whose target may be gone). */
export function trySh(cmd: string, args: string[]): boolean {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** `ip netns exec`-free command in a named netns (nsenter keeps our mount namespace). */
export const inNetns = (netns: string, cmd: string, args: string[]) =>
  sh('nsenter', [`--net=/run/netns/${netns}`, '--', cmd, ...args]);

// ---- cgroups ---------------------------------------------------------------------------

/** The v1 hierarchies mounted here (hybrid layout: `unified` is the cgroup2 mount, skipped). */
export function v1Hierarchies(): string[] {
  return readdirSync(CGROUP_ROOT).filter((h) => {
    if (h === 'unified') return false;
    const p = join(CGROUP_ROOT, h);
    return statSync(p).isDirectory() && existsSync(join(p, 'cgroup.procs'));
  });
}

/** Creates `<h>/<path>` in every v1 hierarchy; cpuset children get their parent's cpus and mems. */
export function createCgroup(path: string): void {
  for (const h of v1Hierarchies()) {
    let cur = join(CGROUP_ROOT, h);
    for (const part of path.split('/').filter(Boolean)) {
      const next = join(cur, part);
      if (!existsSync(next)) {
        mkdirSync(next);
        if (h === 'cpuset') {
          for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(next, f), readFileSync(join(cur, f)));
        }
      }
      cur = next;
    }
  }
}

/** The `cgroup.procs` file processes write themselves into to join the process cgroup `<prefix>/<name>`. */
export function processCgroupProcs(prefix: string, name: string): string {
  const dir = join(CGROUP_ROOT, PROCESS_CGROUP_HIERARCHY, prefix, name);
  if (!existsSync(dir)) createCgroup(`${prefix}/${name}`);
  return join(dir, 'cgroup.procs');
}

function walk(dir: string, out: string[]): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) walk(join(dir, e.name), out);
  out.push(dir); // children first
  return out;
}

/** One cluster's top-level cgroups (`<prefix>`, `<prefix>-node-N`) in hierarchy `h`, depth-first. */
function ownedCgroups(h: string, prefix: string): string[] {
  const root = join(CGROUP_ROOT, h);
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((n) => n === prefix || n.startsWith(`${prefix}-`))
    .flatMap((n) => walk(join(root, n), []));
}

/** PIDs in the cgroup subtree `path` of the pids hierarchy (or in all of the cluster `prefix`'s if omitted). */
export function pidsIn(prefix: string, path?: string): number[] {
  const dirs = path
    ? existsSync(join(CGROUP_ROOT, PROCESS_CGROUP_HIERARCHY, path))
      ? walk(join(CGROUP_ROOT, PROCESS_CGROUP_HIERARCHY, path), [])
      : []
    : ownedCgroups(PROCESS_CGROUP_HIERARCHY, prefix);
  return dirs.flatMap((d) => {
    try {
      return readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

/**
 * SIGKILLs every process in a cgroup subtree of ours (containers, shims, daemons: all started by
 * the cluster, nothing else can be in these cgroups) until it is empty.
 */
export async function killCgroup(prefix: string, path?: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = pidsIn(prefix, path);
    if (pids.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(`cluster: processes ${pids.join(', ')} in cgroup ${path ?? prefix + '*'} survived SIGKILL`);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await sleep(100);
  }
}

/**
 * Removes every cgroup of ours in every hierarchy, children first, including the cgroup2 mount
 * (`unified`), where the kubelet also creates its tree for the controllers only cgroup2 has.
 * Returns what could not go.
 */
export async function removeCgroups(prefix: string): Promise<string[]> {
  const left: string[] = [];
  const unified = existsSync(join(CGROUP_ROOT, 'unified', 'cgroup.procs')) ? ['unified'] : [];
  for (const h of [...v1Hierarchies(), ...unified]) {
    for (const dir of ownedCgroups(h, prefix)) {
      let ok = false;
      // A cgroup whose last task just died can be busy for a moment.
      for (let i = 0; i < 50 && !ok; i++) {
        try {
          rmdirSync(dir);
          ok = true;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') ok = true;
          else await sleep(100);
        }
      }
      if (!ok) left.push(dir);
    }
  }
  return left;
}

// ---- processes -------------------------------------------------------------------------

export interface SpawnSpec {
  /** Process cgroup name (pids/<prefix>/<name>); also the log file's base name. */
  name: string;
  /** The cluster's prefix (paths.ts ClusterSite). */
  prefix: string;
  bin: string;
  args: string[];
  logFile: string;
  /** Enter this netns (name under /run/netns) ... */
  netns?: string;
  /** ... or the mount and network namespaces of this holder process. */
  holderPid?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/**
 * Starts a process in its own process group, already inside its cgroup when it execs (so every
 * descendant, e.g. containerd's shims, is found there by cleanup), in the given namespaces, with
 * output appended to a file (it keeps logging if we die). The PID is the binary's own: sh execs
 * nsenter, which execs the binary.
 */
export function spawnInCgroup(spec: SpawnSpec): ChildProcess {
  const procs = processCgroupProcs(spec.prefix, spec.name);
  const enter = spec.holderPid
    ? ['nsenter', '-t', String(spec.holderPid), '-m', '-n', '--']
    : spec.netns
      ? ['nsenter', `--net=/run/netns/${spec.netns}`, '--']
      : [];
  mkdirSync(dirname(spec.logFile), { recursive: true });
  const fd = openSync(spec.logFile, 'a');
  try {
    const child = spawn('sh', ['-c', 'echo $$ > "$0" && exec "$@"', procs, ...enter, spec.bin, ...spec.args], {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: spec.env ?? process.env,
      cwd: spec.cwd,
    });
    child.unref();
    return child;
  } finally {
    closeSync(fd);
  }
}

export const running = (c?: ChildProcess) => !!c && c.exitCode === null && c.signalCode === null;

/** SIGTERM, then SIGKILL after `graceMs` (0: SIGKILL at once); resolves when it has exited. */
export async function stopChild(child: ChildProcess | undefined, graceMs = 10_000): Promise<void> {
  if (!child || child.pid === undefined || !running(child)) return;
  const pid = child.pid;
  // Children are unref'ed; without this the event loop could drain (and the process exit mid-
  // teardown) between the SIGKILL timer firing and the child's exit being reported.
  child.ref();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const kill = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      /* gone */
    }
  };
  kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
  const t = graceMs > 0 ? setTimeout(() => kill('SIGKILL'), graceMs) : undefined;
  await exited;
  if (t) clearTimeout(t);
}

export function tail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log written)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

// ---- sysctls ---------------------------------------------------------------------------

/**
 * Global (not per-netns) sysctls the kubelet sets at start-up (setupKernelTunables with
 * protectKernelDefaults=false); saved before the first kubelet starts and restored at teardown.
 */
export const KUBELET_SYSCTLS = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
];

export function readSysctls(names: string[]): Record<string, string> {
  return Object.fromEntries(names.map((n) => [n, readFileSync(`/proc/sys/${n}`, 'utf8').trim()]));
}

export function writeSysctls(values: Record<string, string>): string[] {
  const failed: string[] = [];
  for (const [n, v] of Object.entries(values)) {
    try {
      if (readFileSync(`/proc/sys/${n}`, 'utf8').trim() !== v) writeFileSync(`/proc/sys/${n}`, v);
    } catch {
      failed.push(n);
    }
  }
  return failed;
}
