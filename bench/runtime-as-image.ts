/**
 * Our runtime as its image runs it (lib/constructs/runtime-image/runtime-image.ts): the esbuild bundle on plain
 * node, with the entrypoint's node flags and the image's environment. Benchmarks measure this, not the sources
 * through tsx.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleRuntime } from '../lib/constructs/runtime-image/runtime-bundle.js';
import { RUNTIME_ENV, RUNTIME_NODE_FLAGS } from '../lib/constructs/runtime-image/runtime-dockerfile.js';

/** Bundles lib/runtime/main.ts into `dir`/main.mjs; returns its path. */
export function writeRuntimeBundle(dir: string): string {
  const bundle = bundleRuntime(fileURLToPath(new URL('../lib/runtime/main.ts', import.meta.url)), 'main.mjs');
  const path = join(dir, 'main.mjs');
  writeFileSync(path, bundle.code);
  return path;
}

export const IMAGE_NODE_FLAGS: readonly string[] = RUNTIME_NODE_FLAGS;

/** The image's environment as an object (NODE_ENV, malloc tuning). */
export const IMAGE_ENV: Readonly<Record<string, string>> = Object.fromEntries(
  RUNTIME_ENV.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]),
);
