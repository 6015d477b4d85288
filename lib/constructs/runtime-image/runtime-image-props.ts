import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseReference } from '../../image/reference.js';
import { propError } from '../core/errors.js';

// Validation of RuntimeImage's props: every error names the prop, the value and the fix.

/** The runtime package RuntimeImage bundles by default (an optional peer dependency of kruise-ha). */
const RUNTIME_PACKAGE = 'kruise-ha-runtime';

/**
 * The runtime: its TypeScript source in a checkout of this repository, else kruise-ha-runtime installed beside
 * kruise-ha, else in the folder the app runs from. The last is the only place a Python, Java or Go app can put it:
 * their jsii kernel (named in JSII_AGENT) runs kruise-ha from a private copy, beside which nothing is installed.
 */
export function defaultEntrypoint(): string {
  const source = fileURLToPath(new URL('../../runtime/main.ts', import.meta.url));
  if (existsSync(source)) return source;
  for (const from of [import.meta.url, join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(from).resolve(`${RUNTIME_PACKAGE}/main`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  const agent = process.env.JSII_AGENT;
  if (agent) {
    throw propError(
      'entrypoint',
      undefined,
      `has no default: ${RUNTIME_PACKAGE} (the TypeScript runtime RuntimeImage bundles with Node) is not installed in the folder this app runs from (${process.cwd()}); a ${agent} app runs kruise-ha from the jsii kernel's private copy, so only that folder is searched`,
      `run npm install ${RUNTIME_PACKAGE} in ${process.cwd()} (the same version as kruise-ha), or pass entrypoint: the path of its dist/runtime/main.js; or build the image from a TypeScript app (docs/languages.md)`,
    );
  }
  throw propError(
    'entrypoint',
    undefined,
    `has no default: ${RUNTIME_PACKAGE} is not installed (kruise-ha does not depend on it, so synthesizing without RuntimeImage downloads no runtime dependencies)`,
    `npm install ${RUNTIME_PACKAGE}, or pass entrypoint: "<path to your main module>"`,
  );
}

export function checkEntrypoint(entrypoint: string): string {
  if (!isAbsolute(entrypoint) && !entrypoint.startsWith('.')) {
    // A bare name would be resolved against node_modules by esbuild: refuse the ambiguity.
    throw propError('entrypoint', entrypoint, 'is not a file path', 'pass an absolute path or one starting with "./"');
  }
  const path = resolve(entrypoint);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw propError(
      'entrypoint',
      entrypoint,
      `does not exist (resolved to ${path})`,
      'pass the path of a .ts or .js module',
    );
  }
  if (!/\.(m|c)?[jt]s$/.test(path)) {
    throw propError(
      'entrypoint',
      entrypoint,
      'is not a JavaScript or TypeScript module',
      'pass a .ts, .mts, .js or .mjs file',
    );
  }
  return path;
}

export function checkRepository(repository: string): string {
  const fix =
    'use a lower-case repository without tag or digest, such as "registry.example.com/team/kruise-manager"; the tag is computed from the content';
  if (typeof repository !== 'string' || repository === '')
    throw propError('repository', repository, 'is required', fix);
  let ref;
  try {
    ref = parseReference(repository);
  } catch (e) {
    throw propError('repository', repository, `is not a valid repository: ${(e as Error).message}`, fix);
  }
  if (ref.tag || ref.digest) throw propError('repository', repository, 'has a tag or digest', fix);
  return repository;
}

export function checkBaseImage(base: string): string {
  const fix = 'pin the base, such as "docker.io/library/node:24-bookworm-slim" or "...@sha256:<digest>"';
  let ref;
  try {
    ref = parseReference(base);
  } catch (e) {
    throw propError('baseImage', base, `is not a valid image reference: ${(e as Error).message}`, fix);
  }
  if (!ref.tag && !ref.digest) throw propError('baseImage', base, 'has no tag or digest, so it would float', fix);
  return base;
}

export function checkLabels(labels: Record<string, string>): Record<string, string> {
  for (const [key, value] of Object.entries(labels)) {
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(key)) {
      throw propError(
        `labels["${key}"]`,
        key,
        'is not a label key',
        'use reverse-DNS keys such as "org.opencontainers.image.revision"',
      );
    }
    if (typeof value !== 'string')
      throw propError(`labels["${key}"]`, value, 'is not a string', 'pass string values only');
  }
  return labels;
}

export function checkEpoch(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 253402300799) {
    throw propError(
      'sourceDateEpoch',
      seconds,
      'is not whole seconds since 1970',
      'pass e.g. the commit time: git log -1 --format=%ct',
    );
  }
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
