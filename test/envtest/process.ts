// Child-process plumbing for the envtest control plane: free ports, spawning
// into their own process group, bounded shutdown, and reaping leftovers of
// runs that died without cleaning up (Node has no prctl(PDEATHSIG)).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Every control plane's scratch dir starts with this, inside os.tmpdir(). */
export const DIR_PREFIX = 'kruise-ts-envtest-';
const PIDS_FILE = 'pids.json';

/** Asks the OS for a currently free port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `bin` as the leader of a new process group (so stop can signal the
 * whole group) with stdout+stderr appended to `logFile`. Writing straight to a
 * file, not a pipe, keeps the child alive and logging if this process dies.
 */
export function spawnLogged(bin: string, args: string[], logFile: string): ChildProcess {
  const fd = openSync(logFile, 'a');
  try {
    const child = spawn(bin, args, { detached: true, stdio: ['ignore', fd, fd] });
    child.unref(); // the exit hooks below, not the event loop, keep children from outliving us
    return child;
  } finally {
    closeSync(fd);
  }
}

export const isRunning = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/** SIGTERM the child's group, then SIGKILL if it has not exited within `graceMs` (0: SIGKILL at once). */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.pid === undefined || !isRunning(child)) return;
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  if (graceMs <= 0) {
    killGroup(pid, 'SIGKILL');
    return exited;
  }
  killGroup(pid, 'SIGTERM');
  const ac = new AbortController();
  const escalate = sleep(graceMs, undefined, { signal: ac.signal }).then(
    () => killGroup(pid, 'SIGKILL'),
    () => undefined,
  );
  await exited;
  ac.abort();
  await escalate;
}

const exitKillables = new Set<{ killNow(): void }>();
let hooksInstalled = false;

/**
 * Children sit in their own process groups (so a Ctrl-C to the terminal does
 * not kill them half-way through a graceful stop); these hooks make sure they
 * still die with us. pids.json + reapLeftovers() cover SIGKILL. Returns an unregister function.
 */
export function killOnExit(target: { killNow(): void }): () => void {
  exitKillables.add(target);
  if (!hooksInstalled) {
    hooksInstalled = true;
    process.once('exit', () => {
      for (const t of exitKillables) t.killNow();
    });
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      const onSignal = () => {
        if (process.listenerCount(sig) > 1) return; // another handler (cli.ts) owns shutdown
        for (const t of exitKillables) t.killNow();
        process.removeListener(sig, onSignal);
        process.kill(process.pid, sig); // die the default way for this signal
      };
      process.on(sig, onSignal);
    }
  }
  return () => exitKillables.delete(target);
}

/** Last lines of a log, for error messages that explain why a binary failed. */
export function tail(file: string, lines = 25): string {
  if (!existsSync(file)) return '(no log written)';
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** Records which process owns `dir` and which children live in it, for {@link reapLeftovers}. */
export function recordPids(dir: string, children: Array<ChildProcess | undefined>): void {
  const pids = children.flatMap((c) => (c?.pid !== undefined && isRunning(c) ? [c.pid] : []));
  writeFileSync(join(dir, PIDS_FILE), JSON.stringify({ owner: process.pid, children: pids }));
}

/**
 * A process's state letter and process group, from /proc/<pid>/stat; undefined when it cannot be read (the process is
 * gone, or there is no /proc). The line is "pid (comm) state ppid pgrp ...", and comm may hold spaces and
 * parentheses, so it is read after the last ')'.
 */
export function procStat(pid: number | string): { state: string; pgrp: number } | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { state, pgrp: Number(pgrp) };
}

/** A zombie (Z) or dead (X) process has exited: it only waits to be reaped. */
const exited = (state: string) => state === 'Z' || state === 'X';

/**
 * Whether a process with this PID runs (EPERM: it does, owned by someone else). A zombie does not: it has exited and
 * only waits to be reaped, which an init that never reaps leaves undone forever (see {@link liveGroupMembers}).
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = procStat(pid);
  return stat === undefined || !exited(stat.state); // no /proc to read (not Linux): kill's answer stands
}

/**
 * The processes of group `pgid` that have not exited, from /proc. A zombie has exited: it only waits for its parent
 * (or, orphaned, for PID 1, which on some machines never reaps) to collect its status, so `kill(-pgid, 0)`, which
 * still succeeds for it, would call an ended job alive.
 */
export function liveGroupMembers(pgid: number): number[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    const stat = procStat(entry); // undefined: gone between the listing and the read
    return stat && stat.pgrp === pgid && !exited(stat.state) ? [Number(entry)] : [];
  });
}

/**
 * Kills children and removes scratch dirs left by envtest runs whose owning
 * process is gone (SIGKILLed jest, closed terminal). A pid is only killed if
 * its command line still mentions the dir, so a recycled pid is never hit.
 */
export function reapLeftovers(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    let rec: { owner: number; children: number[] };
    try {
      rec = JSON.parse(readFileSync(join(dir, PIDS_FILE), 'utf8'));
    } catch {
      continue;
    }
    if (alive(rec.owner)) continue;
    for (const pid of rec.children) {
      let cmdline: string;
      try {
        cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      } catch {
        continue;
      }
      if (cmdline.includes(dir)) killGroup(pid, 'SIGKILL');
    }
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
