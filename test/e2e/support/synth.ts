/**
 * Synthesizes an example exactly as `npm run synth` does for the default app: the example file
 * run as the cdk8s app (`tsx examples/<file>`), writing into a fresh output directory.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface Synthesized {
  /** The output directory (cdk8s.out equivalent). */
  readonly dir: string;
  /** The YAML files written, absolute paths, sorted. */
  readonly files: string[];
  /** All of them concatenated, as one apply stream. */
  readonly yaml: string;
}

/** Runs `examples/<file>` as the cdk8s app; `env` adds variables the example reads. */
export function synthExample(file: string, env: Record<string, string> = {}): Promise<Synthesized> {
  const dir = mkdtempSync(join(tmpdir(), 'e2e-synth-'));
  return new Promise((resolve, reject) => {
    execFile(
      join(ROOT, 'node_modules/.bin/tsx'),
      ['--tsconfig', 'tsconfig.dev.json', join('examples', file)],
      { cwd: ROOT, timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '', CDK8S_OUTDIR: dir, ...env } },
      (err, _stdout, stderr) => {
        if (err) {
          reject(new Error(`synth of examples/${file} failed: ${stderr || err.message}`));
          return;
        }
        const files = readdirSync(dir)
          .filter((f) => f.endsWith('.yaml'))
          .sort()
          .map((f) => join(dir, f));
        resolve({ dir, files, yaml: files.map((f) => readFileSync(f, 'utf8')).join('\n---\n') });
      },
    );
  });
}
