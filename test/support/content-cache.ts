/**
 * A content-addressed cache for the deterministic builds the test tiers would otherwise repeat every run (issue #35):
 * the language packages of test/languages and the npm tarballs of test/package (test/support/package-cache.ts).
 *
 * - key: sha256 over the bytes of every file `git ls-files` lists under the given paths (tracked, and new files git
 *   does not ignore, as they are on disk) and over labelled values (tool versions). A changed input is a new key.
 * - entry: `<root>/<name>-<key>/` (root: ~/.cache/kruise-ts-envtest), built into a temporary folder beside it and
 *   renamed into place, so an entry is complete or absent. A lock per name (a directory made atomically, broken when
 *   its owner's process is gone) makes a second run wait for the first one's build and then use it; the newest
 *   `keep` entries of a name stay, older ones are removed.
 * - KRUISE_HA_TEST_CACHE=0: no cache, every call builds (into a temporary folder, then the target).
 *
 * Every call prints one line: the name, hit/miss/disabled, the key, the seconds it took.
 *
 * Node builtins only and erasable syntax: global-setup files load it through tsx's tsImport.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { homedir, hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { alive } from '../envtest/process.js';

/** Where the entries live unless a request names another root (the unit test does). */
export const CACHE_ROOT = join(homedir(), '.cache', 'kruise-ts-envtest');
/** `KRUISE_HA_TEST_CACHE=0` turns the cache off: every call builds. */
export const DISABLE_ENV = 'KRUISE_HA_TEST_CACHE';
/** Hex digits of the key in an entry's folder name and the printed line. */
const KEY_LENGTH = 20;

export interface KeyInputs {
  /** The git checkout the paths are relative to. */
  readonly root: string;
  /** Pathspecs for `git ls-files` (folders, files, globs): the tracked files and the new ones git does not ignore. */
  readonly paths: readonly string[];
  /** Everything else the build depends on, by label (tool versions, ...). */
  readonly values?: Readonly<Record<string, string>>;
}

/** The files a key covers: what `git ls-files` lists under the paths, sorted. */
export function keyFiles(inputs: KeyInputs): string[] {
  const listed = spawnSync(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...inputs.paths],
    { cwd: inputs.root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  if (listed.status !== 0)
    throw new Error(
      `content cache: git ls-files in ${inputs.root} exited with ${listed.status ?? listed.error?.message}: ${listed.stderr}. Fix: run from a git checkout, or set ${DISABLE_ENV}=0`,
    );
  const files = [...new Set(listed.stdout.split('\0').filter((f) => f !== ''))].sort();
  // A key over nothing would hit whatever the build now does.
  if (files.length === 0) throw new Error(`content cache: no file under ${inputs.paths.join(', ')} in ${inputs.root}`);
  return files;
}

/** sha256 (hex) of the inputs' files, path and bytes, and of their values. */
export function contentKey(inputs: KeyInputs): string {
  const hash = createHash('sha256');
  for (const file of keyFiles(inputs)) {
    const path = join(inputs.root, file);
    let digest: string;
    if (!existsSync(path) && !isSymlink(path)) digest = 'deleted';
    else if (isSymlink(path)) digest = `symlink:${readlinkSync(path)}`;
    else digest = createHash('sha256').update(readFileSync(path)).digest('hex');
    hash.update(`file ${JSON.stringify(file)} ${digest}\n`);
  }
  const values = Object.entries(inputs.values ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [label, value] of values) hash.update(`value ${JSON.stringify(label)} ${JSON.stringify(value)}\n`);
  return hash.digest('hex');
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/** What a command prints for its version (stdout and stderr, colours removed), or why it could not run. */
export function toolVersion(command: string, args: readonly string[]): string {
  const result = spawnSync(command, [...args], { encoding: 'utf8', timeout: 60_000 });
  if (result.error) return `unavailable: ${result.error.message}`;
  // eslint-disable-next-line no-control-regex
  const text = `${result.stdout ?? ''}${result.stderr ?? ''}`.replace(/\u001b\[[0-9;]*m/g, '').trim();
  return result.status === 0 ? text : `exit ${result.status}: ${text}`;
}

export interface CacheRequest {
  /** The entry's name: its folder is `<root>/<name>-<key>`. Letters, digits and dashes. */
  readonly name: string;
  /** What the entry is built from. */
  readonly inputs: KeyInputs;
  /** Writes the entry's files into `dir` (an empty folder). A throw stores nothing. */
  readonly build: (dir: string) => void;
  /** Default CACHE_ROOT. */
  readonly root?: string;
  /** Entries of this name kept, newest (last used) first; default 3. */
  readonly keep?: number;
  /** Where the one line goes; default stderr. */
  readonly log?: (line: string) => void;
  /** Environment read for KRUISE_HA_TEST_CACHE; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** How long to wait for another run's build of this name before failing; default an hour. */
  readonly lockTimeoutMs?: number;
}

export interface CacheOutcome {
  readonly outcome: 'hit' | 'miss' | 'disabled';
  /** The full key (undefined when disabled). */
  readonly key?: string;
  readonly seconds: number;
}

/** Whether KRUISE_HA_TEST_CACHE turns the cache off. */
export function cacheDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[DISABLE_ENV] === '0';
}

/**
 * `target` (replaced) holds the entry's files: from the cache on a hit; built, stored, then copied on a miss; built
 * straight into it when the cache is off.
 */
export function cachedInto(target: string, request: CacheRequest): CacheOutcome {
  return withEntry(request, (entry) => replaceWith(target, entry), true);
}

/** The entry exists afterwards (built on a miss); nothing is copied out. Does nothing when the cache is off. */
export function ensureCached(request: CacheRequest): CacheOutcome {
  return withEntry(request, () => undefined, false);
}

function withEntry(request: CacheRequest, use: (entry: string) => void, buildWhenDisabled: boolean): CacheOutcome {
  const started = Date.now();
  const log = request.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const seconds = () => (Date.now() - started) / 1000;
  const report = (outcome: CacheOutcome['outcome'], key?: string, note = ''): CacheOutcome => {
    const result = { outcome, key, seconds: seconds() };
    log(
      `content cache: ${request.name} ${outcome}${key ? ` key ${key.slice(0, KEY_LENGTH)}` : ''} in ${result.seconds.toFixed(1)} s${note}`,
    );
    return result;
  };
  if (!/^[A-Za-z0-9][A-Za-z0-9-]*$/.test(request.name))
    throw new Error(`content cache: name ${JSON.stringify(request.name)}: letters, digits and dashes only`);

  if (cacheDisabled(request.env ?? process.env)) {
    if (!buildWhenDisabled) return report('disabled', undefined, ` (${DISABLE_ENV}=0: not stored)`);
    const dir = mkdtempSync(join(tmpdir(), `${request.name}-`));
    try {
      request.build(dir);
      use(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    return report('disabled', undefined, ` (${DISABLE_ENV}=0: built, not stored)`);
  }

  const root = request.root ?? CACHE_ROOT;
  mkdirSync(root, { recursive: true });
  const key = contentKey(request.inputs);
  const entry = join(root, `${request.name}-${key.slice(0, KEY_LENGTH)}`);
  const release = acquireLock(join(root, `${request.name}.lock`), log, request.lockTimeoutMs ?? 3600_000);
  try {
    if (existsSync(entry)) {
      const now = new Date();
      utimesSync(entry, now, now); // last used: pruning keeps it
      use(entry);
      return report('hit', key);
    }
    const building = join(root, `.${request.name}-${key.slice(0, KEY_LENGTH)}.tmp-${process.pid}-${token()}`);
    mkdirSync(building);
    try {
      request.build(building);
      // An input edited during the build: the output may hold either version, so it is not stored under this key.
      const after = contentKey(request.inputs);
      if (after !== key) {
        use(building);
        return report('miss', key, ' (an input changed during the build: not stored)');
      }
      try {
        renameSync(building, entry);
      } catch (e) {
        // Only when the lock was broken under a live build: the other build's entry stands, ours goes.
        if (!existsSync(entry)) throw e;
      }
    } finally {
      rmSync(building, { recursive: true, force: true });
    }
    prune(root, request.name, entry, request.keep ?? 3);
    use(entry);
    return report('miss', key);
  } finally {
    release();
  }
}

/** `target` becomes a copy of `source` (file modes kept). */
function replaceWith(target: string, source: string): void {
  rmSync(target, { recursive: true, force: true });
  mkdirSync(dirname(target), { recursive: true });
  cpSync(source, target, { recursive: true });
}

function token(): string {
  return randomBytes(6).toString('hex');
}

/** Keeps the `keep` most recently used entries of `name`; removes leftovers of builds whose process is gone. */
function prune(root: string, name: string, current: string, keep: number): void {
  const escaped = name.replace(/[-]/g, '\\-');
  const entryName = new RegExp(`^${escaped}-[0-9a-f]{${KEY_LENGTH}}$`);
  const leftover = new RegExp(`^\\.${escaped}-[0-9a-f]{${KEY_LENGTH}}\\.tmp-(\\d+)-[0-9a-f]+$`);
  const removing = new RegExp(`^\\.${escaped}-removing-[0-9a-f]+$`);
  const entries: Array<{ path: string; used: number }> = [];
  for (const file of readdirSync(root)) {
    const path = join(root, file);
    if (entryName.test(file)) entries.push({ path, used: path === current ? Infinity : statSync(path).mtimeMs });
    const building = leftover.exec(file);
    // What a build or a removal that died left: only this name's, under its lock.
    if ((building && !alive(Number(building[1]))) || removing.test(file))
      rmSync(path, { recursive: true, force: true });
  }
  entries.sort((a, b) => b.used - a.used);
  for (const { path } of entries.slice(Math.max(keep, 1))) {
    // Renamed first: a reader never sees half an entry under its name.
    const doomed = join(root, `.${name}-removing-${token()}`);
    renameSync(path, doomed);
    rmSync(doomed, { recursive: true, force: true });
  }
}

interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly at: number;
  readonly token: string;
}

/** A lock whose owner is on another host is taken as live for this long. */
const FOREIGN_LOCK_MS = 3 * 3600_000;
/** An owner file absent this long after its lock was made (a crash between the two): the lock is stale. */
const UNWRITTEN_OWNER_MS = 30_000;

function readOwner(lock: string): { text: string; owner?: LockOwner } | undefined {
  try {
    const text = readFileSync(join(lock, 'owner'), 'utf8');
    try {
      return { text, owner: JSON.parse(text) as LockOwner };
    } catch {
      return { text };
    }
  } catch {
    return undefined;
  }
}

function lockStale(lock: string): { stale: boolean; text?: string; describe: string } {
  const read = readOwner(lock);
  if (!read?.owner) {
    let age: number;
    try {
      age = Date.now() - statSync(lock).mtimeMs;
    } catch {
      return { stale: false, describe: 'a lock just released' };
    }
    return { stale: age > UNWRITTEN_OWNER_MS, text: read?.text, describe: 'a lock without its owner yet' };
  }
  const { owner } = read;
  const describe = `process ${owner.pid} on ${owner.host}`;
  if (owner.host === hostname()) return { stale: !alive(owner.pid), text: read.text, describe };
  return { stale: Date.now() - owner.at > FOREIGN_LOCK_MS, text: read.text, describe };
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Takes `lock` (a directory: mkdir is atomic), waiting while a live process holds it; returns its release. `who`
 * begins its log line and error, `fix` ends the error thrown after `timeoutMs`. A lock whose owner is gone is
 * broken by one process at a time (mkdir `<lock>/breaking`), which checks the owner again before removing it.
 */
export function acquireLock(
  lock: string,
  log: (line: string) => void,
  timeoutMs: number,
  who = 'content cache',
  fix = `remove ${lock} if no run is building, or set ${DISABLE_ENV}=0`,
): () => void {
  const mine: LockOwner = { pid: process.pid, host: hostname(), at: Date.now(), token: token() };
  let waitingSince = 0;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'owner'), JSON.stringify(mine));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const seen = lockStale(lock);
    if (seen.stale) {
      breakLock(lock, seen.text);
      continue;
    }
    if (waitingSince === 0) {
      waitingSince = Date.now();
      log(`${who}: waiting for ${lock}, held by ${seen.describe}`);
    } else if (Date.now() - waitingSince > timeoutMs) {
      throw new Error(
        `${who}: waited ${Math.round(timeoutMs / 1000)} s for ${lock}, held by ${seen.describe}. Fix: ${fix}`,
      );
    }
    sleep(250);
  }
  return () => {
    if (readOwner(lock)?.owner?.token === mine.token) rmSync(lock, { recursive: true, force: true });
  };
}

function breakLock(lock: string, staleText: string | undefined): void {
  const breaking = join(lock, 'breaking');
  try {
    mkdirSync(breaking);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // Another process is breaking it; one that died doing so leaves `breaking` behind.
    if (code === 'EEXIST') {
      try {
        if (Date.now() - statSync(breaking).mtimeMs > UNWRITTEN_OWNER_MS)
          rmSync(breaking, { recursive: true, force: true });
      } catch {
        // gone meanwhile
      }
      sleep(100);
    }
    return; // ENOENT: the lock went meanwhile
  }
  // Still the owner judged stale (not a new lock made meanwhile): remove it.
  if (readOwner(lock)?.text === staleText && lockStale(lock).stale) rmSync(lock, { recursive: true, force: true });
  else rmSync(breaking, { recursive: true, force: true });
}
