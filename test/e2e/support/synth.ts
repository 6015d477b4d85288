/**
 * Synthesizes an example exactly as `npm run synth` does for the default app: the example file
 * run as the cdk8s app (`tsx examples/<file>`), writing into a fresh output directory.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { RuntimeImageChart, runtimeImageProps } from '../../cluster/images/runtime-app.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface Synthesized {
  /** The output directory (cdk8s.out equivalent). */
  readonly dir: string;
  /** The YAML files written, absolute paths, sorted. */
  readonly files: string[];
}

/** An object of a synthesized output, as far as the tier reads it. */
export interface OutputObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; annotations?: Record<string, string> };
}

/** Every object in `files`, in order. */
export function objectsIn(files: readonly string[]): OutputObject[] {
  return files
    .flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJS() as OutputObject))
    .filter(Boolean);
}

/** The YAML files of an output directory, absolute paths, sorted. */
export function outputFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => join(dir, f));
}

/** Runs `examples/<file>` as the cdk8s app; `env` adds variables the example reads. */
export function synthExample(file: string, env: Record<string, string> = {}): Promise<Synthesized> {
  return synthApp(join('examples', file), env);
}

/** The default app on upstream release `version` (support/release-app.ts), as `npm run synth` writes it. */
export function synthRelease(version: string): Promise<Synthesized> {
  return synthApp(join('test', 'e2e', 'support', 'release-app.ts'), { KRUISE_HA_RELEASE: version });
}

function synthApp(file: string, env: Record<string, string>): Promise<Synthesized> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-synth-'));
  return new Promise((resolve, reject) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      ['--tsconfig', 'tsconfig.dev.json', file],
      { cwd: ROOT, timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '', CDK8S_OUTDIR: dir, ...env } },
      (err, _stdout, stderr) => {
        if (err) {
          reject(new Error(`synth of ${file} failed: ${stderr || err.message}`));
          return;
        }
        resolve({ dir, files: outputFiles(dir) });
      },
    );
  });
}

/**
 * The runtime flavour's output: the same chart and props that published the runtime image into
 * `registry`, so the Deployment names exactly that image.
 */
export function synthRuntime(registry: string, baseImage: string): Synthesized {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-runtime-'));
  const app = new App({ outdir: dir });
  new RuntimeImageChart(app, 'kruise-runtime', runtimeImageProps(registry, baseImage));
  app.synth();
  return { dir, files: outputFiles(dir) };
}
