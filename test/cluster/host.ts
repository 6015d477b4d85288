// What every local cluster on this machine shares, and what only the last one to stop may undo: the global sysctls
// the kubelets set at start (saved once, before the first cluster's first kubelet) and the host directories made as
// the nodes' mount points (the nodes of every cluster bind their own directories over the same host paths). Each
// cluster joins at start and leaves at stop; a cluster whose process died is dropped by the next one to join or leave.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { alive } from '../envtest/process.js';
import { acquireLock } from '../support/content-cache.js';
import { KUBELET_SYSCTLS, readSysctls, trySh, writeSysctls } from './sys.js';

/** The machine-wide files: users.json (the live clusters), sysctls.json (the originals), created-paths.json. */
export const HOST_DIR = join(tmpdir(), 'kruise-ha-clusters');

interface User {
  readonly pid: number;
  readonly slot: number;
}

const file = (name: string, dir: string) => join(dir, name);

function read<T>(name: string, dir: string, fallback: T): T {
  const path = file(name, dir);
  if (!existsSync(path)) return fallback;
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch {
    return fallback; // a write cut short by a crash: what it held is rebuilt from the machine's state
  }
}

const write = (name: string, dir: string, value: unknown) =>
  writeFileSync(file(name, dir), `${JSON.stringify(value)}\n`);

function locked<T>(dir: string, body: () => T): T {
  mkdirSync(dir, { recursive: true });
  const release = acquireLock(
    join(dir, 'lock'),
    () => undefined,
    60_000,
    'cluster',
    `another cluster's start or stop holds it; if none is running, remove ${join(dir, 'lock')}`,
  );
  try {
    return body();
  } finally {
    release();
  }
}

/** Users still alive, without `leaving`. */
function live(dir: string, leaving?: User): User[] {
  return read<User[]>('users.json', dir, []).filter(
    (u) => alive(u.pid) && !(leaving && u.pid === leaving.pid && u.slot === leaving.slot),
  );
}

/** Restores the saved sysctls and removes the mount points made (only empty directories). Returns what stayed. */
function undo(dir: string): string[] {
  const problems: string[] = [];
  const saved = read<Record<string, string> | undefined>('sysctls.json', dir, undefined);
  if (saved) problems.push(...writeSysctls(saved).map((n) => `sysctl ${n} could not be restored`));
  for (const [path, top] of read<Array<[string, string]>>('created-paths.json', dir, [])) {
    // Only the empty directories made as mount points: rmdir refuses anything with content.
    for (let p = path; p.startsWith(top); p = dirname(p)) {
      if (!trySh('rmdir', [p])) {
        if (existsSync(p)) problems.push(`${p} (a mount point a cluster created) is not empty; left in place`);
        break;
      }
      if (p === top) break;
    }
  }
  for (const name of ['sysctls.json', 'created-paths.json']) rmSync(file(name, dir), { force: true });
  return problems;
}

/**
 * Cluster `slot` of process `pid` starts: when it is the only live one, what dead clusters left is undone first and
 * the machine's sysctls are saved as the originals. Returns what an undo could not restore.
 */
export function joinHost(slot: number, pid = process.pid, dir = HOST_DIR): string[] {
  return locked(dir, () => {
    const users = live(dir, { pid, slot });
    const problems = users.length === 0 ? undo(dir) : [];
    if (!existsSync(file('sysctls.json', dir))) write('sysctls.json', dir, readSysctls(KUBELET_SYSCTLS));
    write('users.json', dir, [...users, { pid, slot }]);
    return problems;
  });
}

/** Makes sure host directory `path` exists as a mount point; one made here is removed when the last cluster leaves. */
export function hostMountPoint(path: string, dir = HOST_DIR): void {
  locked(dir, () => {
    if (existsSync(path)) return;
    let top = path;
    while (!existsSync(dirname(top))) top = dirname(top);
    mkdirSync(path, { recursive: true });
    write('created-paths.json', dir, [...read<Array<[string, string]>>('created-paths.json', dir, []), [path, top]]);
  });
}

/**
 * Cluster `slot` of process `pid` has stopped (or died): when no other live cluster is left, the sysctls are restored
 * and the mount points made are removed. Returns what could not be undone.
 */
export function leaveHost(slot: number, pid = process.pid, dir = HOST_DIR): string[] {
  if (!existsSync(dir)) return [];
  return locked(dir, () => {
    const users = live(dir, { pid, slot });
    if (users.length > 0) {
      write('users.json', dir, users);
      return [];
    }
    rmSync(file('users.json', dir), { force: true });
    return undo(dir);
  });
}
