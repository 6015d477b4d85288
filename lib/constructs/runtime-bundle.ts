import { existsSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { buildSync, type Message } from 'esbuild';
import { propError } from './errors.js';

/** The bundled runtime: one ESM file and its source map. */
export interface RuntimeBundle {
  readonly code: Uint8Array;
  readonly map: Uint8Array;
}

// CommonJS dependencies (prom-client, ...) call require(); an ESM bundle has none, so the
// banner provides one. The alias keeps the banner from colliding with bundled names.
const REQUIRE_BANNER = "import { createRequire as __kruiseHaCreateRequire } from 'node:module';\n" +
  'const require = __kruiseHaCreateRequire(import.meta.url);';

/**
 * Bundles `entrypoint` into `main.mjs` + `main.mjs.map` in memory. Deterministic: esbuild's
 * output depends only on the sources, and the map's paths are made relative to the package
 * root (not to the synth output folder), so they are the same on every machine.
 */
export function bundleRuntime(entrypoint: string, outputName: string): RuntimeBundle {
  const root = packageRoot(entrypoint);
  let result;
  try {
    result = buildSync({
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
      logLevel: 'silent',
    });
  } catch (e) {
    const errors = (e as { errors?: Message[] }).errors ?? [];
    const detail = errors.slice(0, 5).map(formatMessage).join('; ') || (e as Error).message;
    throw propError('entrypoint', entrypoint, `could not be bundled by esbuild: ${detail}`,
      'fix the import above, or point entrypoint at a module that bundles for Node (no native addons)');
  }
  const code = result.outputFiles.find((f) => f.path.endsWith(outputName));
  const map = result.outputFiles.find((f) => f.path.endsWith(`${outputName}.map`));
  if (!code || !map) throw new Error(`esbuild returned ${result.outputFiles.map((f) => f.path).join(', ')}, not ${outputName} and its map`);
  return { code: code.contents, map: map.contents };
}

function formatMessage(m: Message): string {
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
