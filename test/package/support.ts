/**
 * Packing the two packages and running commands the way a user's shell does: a clean
 * environment (no npm_* variables from the npm script running Jest), and a chosen Node first on
 * PATH instead of the repository's node_modules/.bin.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { cachedInto } from '../support/content-cache.js';
import { NPM_PACKAGES, npmPackagesInputs, packNpmPackages, tarballNames } from '../support/package-cache.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const RUNTIME_DIR = join(REPO, 'packages', 'runtime');
/** Survives between runs (CI caches it): Node binaries and the npm cache the app installs from. */
export const CACHE = join(homedir(), '.cache', 'kruise-ts-envtest');

export interface Result {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd: string;
  /** Folder of the `node` to put first on PATH (default: the machine's own, as a user's shell has it). */
  readonly nodeDir?: string;
  readonly env?: Record<string, string>;
  /** Whether a non-zero exit is the expected outcome (default: it throws). */
  readonly allowFailure?: boolean;
  readonly timeoutMs?: number;
}

/** PATH without the repository's node_modules/.bin, where npm put the project's Node 24. */
function userPath(): string[] {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((p) => p !== '' && !p.includes('node_modules/.bin') && !p.includes('node_modules/node/bin'));
}

/** The machine's Node: the first `node` on the PATH a user's shell has. */
export function systemNodeDir(): string {
  const dir = userPath().find((p) => existsSync(join(p, 'node')));
  if (!dir)
    throw new Error(
      `no node on PATH (${userPath().join(delimiter)}): install Node, or run the tests where a user would`,
    );
  return dir;
}

export function run(command: string, args: readonly string[], options: RunOptions): Result {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    // npm_config_* would reconfigure the user's npm; NODE_OPTIONS is Jest's.
    if (value !== undefined && !/^(npm_|NODE_OPTIONS$|INIT_CWD$|JEST_WORKER_ID$)/i.test(key)) env[key] = value;
  }
  env.PATH = [options.nodeDir ?? systemNodeDir(), ...userPath()].join(delimiter);
  Object.assign(env, options.env);
  const result = spawnSync(command, [...args], {
    cwd: options.cwd,
    env,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 300_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  const out: Result = { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  if (result.error) throw new Error(`${command} ${args.join(' ')} (in ${options.cwd}): ${result.error.message}`);
  if (out.status !== 0 && !options.allowFailure) {
    const tail = (s: string) => s.split('\n').slice(-40).join('\n');
    throw new Error(
      `${command} ${args.join(' ')} (in ${options.cwd}) exited with ${out.status}\n--- stdout\n${tail(out.stdout)}\n--- stderr\n${tail(out.stderr)}`,
    );
  }
  return out;
}

export interface PackedPackage {
  readonly name: string;
  readonly version: string;
  readonly tarball: string;
  /** Bytes of the .tgz. */
  readonly size: number;
  readonly unpackedSize: number;
  readonly files: string[];
  readonly manifest: PackageManifest;
  /** Each file's bytes, by its path in the package. */
  readonly contents: ReadonlyMap<string, Buffer>;
}

export interface PackageManifest {
  name: string;
  version: string;
  main?: string;
  types?: string;
  bin?: Record<string, string>;
  engines?: { node?: string };
  exports?: Record<string, string | Record<string, string>>;
  typesVersions?: Record<string, Record<string, string[]>>;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/**
 * `npm pack` of the repository (kruise-ha) and of packages/runtime (kruise-ha-runtime), as a maintainer or `npm
 * install <git url>` does it from a checkout without build output (npm's lifecycle scripts compile first), copied into
 * `destination`: from the content cache when a run packed the same inputs before (test/support/package-cache.ts; the
 * languages tier's global setup seeds it), packed now otherwise. What each package holds is read from its tarball.
 */
export function packPackages(destination: string): { constructs: PackedPackage; runtime: PackedPackage } {
  cachedInto(destination, { name: NPM_PACKAGES, inputs: npmPackagesInputs(), build: packNpmPackages });
  const names = tarballNames();
  const describe = (tarball: string, root: string): PackedPackage => {
    const contents = tarballContents(tarball);
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageManifest;
    return {
      name: manifest.name,
      version: manifest.version,
      tarball,
      size: statSync(tarball).size,
      unpackedSize: [...contents.values()].reduce((sum, b) => sum + b.length, 0),
      files: [...contents.keys()].sort(),
      manifest,
      contents,
    };
  };
  return {
    constructs: describe(join(destination, names.constructs), REPO),
    runtime: describe(join(destination, names.runtime), RUNTIME_DIR),
  };
}

/**
 * The files of an npm tarball (gzipped ustar, every path under `package/`; pax headers for long paths), by path
 * without that prefix, as npm pack lists them.
 */
export function tarballContents(tarball: string): Map<string, Buffer> {
  const tar = gunzipSync(readFileSync(tarball));
  const files = new Map<string, Buffer>();
  const text = (from: number, length: number) =>
    tar
      .subarray(from, from + length)
      .toString('utf8')
      .replace(/\0.*$/s, '');
  let paxPath: string | undefined;
  for (let at = 0; at + 512 <= tar.length;) {
    if (tar.subarray(at, at + 512).every((b) => b === 0)) break; // the end-of-archive blocks
    const size = parseInt(text(at + 124, 12).trim() || '0', 8);
    const type = text(at + 156, 1) || '0';
    const prefix = text(at + 345, 155);
    const body = tar.subarray(at + 512, at + 512 + size);
    if (type === 'x') {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString('utf8'))?.[1];
    } else {
      const path = paxPath ?? (prefix ? `${prefix}/${text(at, 100)}` : text(at, 100));
      paxPath = undefined;
      if (type === '0') files.set(path.replace(/^package\//, ''), Buffer.from(body));
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  if (files.size === 0) throw new Error(`${tarball}: no file in the tarball`);
  return files;
}

/** Every file a package.json points at: main, types, bin, exports, typesVersions. */
export function entryFiles(manifest: PackageManifest): string[] {
  const files = new Set<string>();
  const add = (p: string | undefined) => {
    if (p) files.add(p.replace(/^\.\//, ''));
  };
  add(manifest.main);
  add(manifest.types);
  Object.values(manifest.bin ?? {}).forEach(add);
  for (const target of Object.values(manifest.exports ?? {})) {
    if (typeof target === 'string') add(target);
    else Object.values(target).forEach(add);
  }
  for (const paths of Object.values(manifest.typesVersions ?? {})) Object.values(paths).flat().forEach(add);
  return [...files].sort();
}

/** Bytes of the files under a folder (symlinks not followed). */
export function folderBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

export const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
export const kb = (bytes: number) => `${(bytes / 1e3).toFixed(0)} kB`;
