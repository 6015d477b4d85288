import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, parse } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as Esbuild from 'esbuild';
import { propError } from '../core/errors.js';
import { buildWithRedirects, EsbuildFailure, type Redirect } from './esbuild-child.js';

/** The bundled runtime: one ESM file and its source map. */
export interface RuntimeBundle {
  readonly code: Uint8Array;
  readonly map: Uint8Array;
}

// CommonJS dependencies (prom-client, ...) call require(); an ESM bundle has none, so the
// banner provides one. The alias keeps the banner from colliding with bundled names.
const REQUIRE_BANNER =
  "import { createRequire as __kruiseHaCreateRequire } from 'node:module';\n" +
  'const require = __kruiseHaCreateRequire(import.meta.url);';

/**
 * Bundles `entrypoint` into `main.mjs` + `main.mjs.map` in memory. Deterministic: esbuild's
 * output depends only on the sources, and the map's paths are made relative to the package
 * root (not to the synth output folder), so they are the same on every machine.
 */
export function bundleRuntime(entrypoint: string, outputName: string): RuntimeBundle {
  const root = packageRoot(entrypoint);
  const esbuild = esbuildPath(entrypoint);
  const shim = runtimeShim(entrypoint, 'undici-shim');
  const genStub = runtimeShim(entrypoint, 'client-node-gen-stub');
  const options: Esbuild.BuildOptions & { write: false } = {
    entryPoints: [entrypoint],
    absWorkingDir: root,
    // Never written (write: false); it only anchors the map's relative source paths.
    outfile: join(root, outputName),
    write: false,
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'esm',
    minify: true,
    // A separate file plus the sourceMappingURL comment that --enable-source-maps follows.
    sourcemap: 'linked',
    // Stack traces need only the mappings; the sources would double the image layer.
    sourcesContent: false,
    banner: { js: REQUIRE_BANNER },
    // client-node's config.js imports undici (Agent, ProxyAgent; its fetch-based modules import
    // fetch), but the runtime talks to the API server through lib/runtime/kube (node:https), so
    // nothing calls it. Measured on node 24: a bundle of only undici costs +20 MB of RSS; with
    // the shim (which throws, naming the client-node path, if ever called) and no generated API
    // class, main.mjs shrinks from 3.10 to 1.32 MB, its `--help` exit RSS from 100.5 to 84.9 MB
    // and the running manager's idle RSS from 118–124 to 99.5–99.9 MB (bench compare).
    alias: shim ? { undici: shim } : undefined,
    logLevel: 'silent',
  };
  let files;
  try {
    files = genStub
      ? buildWithRedirects(esbuild, options, [genRedirect(genStub)])
      : loadEsbuild(esbuild).buildSync(options).outputFiles;
  } catch (e) {
    const errors = e instanceof EsbuildFailure ? e.errors : ((e as { errors?: Esbuild.Message[] }).errors ?? []);
    const detail = errors.slice(0, 5).map(formatMessage).join('; ') || (e as Error).message;
    throw propError(
      'entrypoint',
      entrypoint,
      `could not be bundled by esbuild: ${detail}`,
      'fix the import above, or point entrypoint at a module that bundles for Node (no native addons)',
    );
  }
  const code = files.find((f) => f.path.endsWith(outputName));
  const map = files.find((f) => f.path.endsWith(`${outputName}.map`));
  if (!code || !map)
    throw new Error(`esbuild returned ${files.map((f) => f.path).join(', ')}, not ${outputName} and its map`);
  return { code: code.contents, map: map.contents };
}

/**
 * client-node's config.js imports `./gen/index.js` (every generated model and API class, ~340 KB)
 * for `KubeConfig.makeApiClient` alone, which the runtime never calls. Measured on node 24 with the
 * image's flags and env: without them main.mjs shrinks from 1.18 to 0.84 MB, its `--help` exit RSS
 * from 81.3 to 70.8 MiB, and the manager's idle RSS (bench compare) from 95.0–100.5 to 85.9–86.1 MB
 * (anonymous memory 44.6–45.3 to 35.8 MB). Synth is faster too (esbuild parses ~840 fewer modules):
 * a RuntimeImage synth took 0.79–0.93 s before, 0.28–0.33 s with the child process (~40 ms of it).
 */
function genRedirect(stub: string): Redirect {
  return { importerSuffix: '/@kubernetes/client-node/dist/config.js', path: './gen/index.js', to: stub };
}

function loadEsbuild(path: string): typeof Esbuild {
  return createRequire(path)(path) as typeof Esbuild;
}

/**
 * esbuild is kruise-ha-runtime's dependency, not the constructs' (only RuntimeImage needs it):
 * resolved from where the entrypoint is, else from beside this package or the working folder.
 */
function esbuildPath(entrypoint: string): string {
  const path = resolveNearby(entrypoint, 'esbuild');
  if (path) return path;
  throw propError(
    'entrypoint',
    entrypoint,
    'cannot be bundled: esbuild is not installed (RuntimeImage bundles with it at synth)',
    'npm install kruise-ha-runtime (it brings esbuild), or npm install --save-dev esbuild',
  );
}

/** Resolves `id` from where the entrypoint is, else from beside this package or the working folder. */
function resolveNearby(entrypoint: string, id: string): string | undefined {
  for (const from of [entrypoint, import.meta.url, join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(from).resolve(id);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    }
  }
  return undefined;
}

/**
 * One of the runtime's stand-ins (lib/runtime/kube/NAME.ts): in the sources beside this file, else
 * in the installed kruise-ha-runtime package beside its main module. Undefined for an entrypoint
 * bundled without that package: then the real code is bundled as is (heavier, never wrong).
 */
function runtimeShim(entrypoint: string, name: 'undici-shim' | 'client-node-gen-stub'): string | undefined {
  const source = fileURLToPath(new URL(`../../runtime/kube/${name}.ts`, import.meta.url));
  if (existsSync(source)) return source;
  const main = resolveNearby(entrypoint, 'kruise-ha-runtime/main');
  const shim = main && join(dirname(main), 'kube', `${name}.js`);
  return shim && existsSync(shim) ? shim : undefined;
}

function formatMessage(m: Esbuild.Message): string {
  return m.location ? `${m.location.file}:${m.location.line}:${m.location.column}: ${m.text}` : m.text;
}

/** Nearest folder with a package.json above the entrypoint (its own folder if none). */
function packageRoot(entrypoint: string): string {
  let dir = dirname(entrypoint);
  while (dir !== parse(dir).root) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return dirname(entrypoint);
}
