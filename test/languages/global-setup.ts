/**
 * Once per run: every language's package (as `npm run package` builds them, into .packages/), and the TypeScript
 * examples' YAML the other languages must reproduce (its folder in KRUISE_LANGUAGES_EXPECTED, support.ts).
 *
 * Jest loads this file with Node's own loader (type stripping), which cannot resolve `./x.js` to `.ts`: so it
 * imports nothing of ours.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(homedir(), '.cache', 'kruise-ts-envtest');

function run(command: string, args: string[], env: Record<string, string> = {}): void {
  const result = spawnSync(command, args, { cwd: REPO, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
}

export default function globalSetup(): void {
  const started = Date.now();
  // pacmak compiles the Go module too: with go.test.ts's caches (module cache; build cache per Go release).
  const goVersion = spawnSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).stdout.trim();
  run('npx', ['jsii-pacmak', '--targets', 'js', 'python', 'go', '--force', '--no-npmignore'], {
    GOMODCACHE: join(CACHE, 'go-mod'),
    GOCACHE: join(CACHE, `go-build-${goVersion}`),
    GOFLAGS: '-modcacherw',
    GOTOOLCHAIN: 'local',
  });
  run('npx', ['tsx', 'tools/package/java.ts']);
  // For RuntimeImage from another language, installed with npm in the app's folder (python.test.ts).
  run('npm', ['pack', './packages/runtime', '--pack-destination', '.packages/js']);
  const built = Date.now();
  const expected = mkdtempSync(join(tmpdir(), 'kruise-languages-'));
  for (const file of readdirSync(join(REPO, 'examples')).filter((f) => f.endsWith('.ts'))) {
    run('npx', ['tsx', '--tsconfig', 'tsconfig.dev.json', `examples/${file}`], {
      CDK8S_OUTDIR: join(expected, file.replace(/\.ts$/, '')),
    });
  }
  process.env.KRUISE_LANGUAGES_EXPECTED = expected;
  process.stderr.write(
    `\nlanguages: packages built in ${((built - started) / 1000).toFixed(1)} s, the TypeScript examples synthesized in ${((Date.now() - built) / 1000).toFixed(1)} s\n`,
  );
}
