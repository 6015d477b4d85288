/**
 * Once per run: every language's package (as `npm run package` builds them, into .packages/), and the TypeScript
 * examples' YAML the other languages must reproduce (its folder in KRUISE_LANGUAGES_EXPECTED, support.ts).
 *
 * .packages/ comes from the content cache (test/support/package-cache.ts) when nothing it is built from changed since
 * a run built it; its npm tarballs seed the package tier's entry. KRUISE_HA_TEST_CACHE=0 builds it every run.
 *
 * Jest loads this file with Node's own loader (type stripping), which cannot resolve `./x.js` to `.ts`: so it
 * pulls our modules in through tsx's tsImport.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsImport } from 'tsx/esm/api';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(homedir(), '.cache', 'kruise-ts-envtest');

function run(command: string, args: string[], env: Record<string, string> = {}): void {
  const result = spawnSync(command, args, { cwd: REPO, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
}

/** `npm run package`'s steps, into .packages/, from a checkout without build output (as pack.test.ts packs). */
function buildPackages(removeBuildOutput: () => void): void {
  removeBuildOutput();
  rmSync(join(REPO, '.packages'), { recursive: true, force: true });
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
}

export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const cache = (await tsImport(
    '../support/content-cache.ts',
    import.meta.url,
  )) as typeof import('../support/content-cache.js');
  const packages = (await tsImport(
    '../support/package-cache.ts',
    import.meta.url,
  )) as typeof import('../support/package-cache.js');
  const target = join(REPO, '.packages');
  const { outcome } = cache.cachedInto(target, {
    name: packages.LANGUAGE_PACKAGES,
    inputs: packages.languagePackagesInputs(),
    build: (dir) => {
      buildPackages(packages.removeBuildOutput);
      cpSync(target, dir, { recursive: true });
    },
  });
  // java.test.ts compiles against cdk8s-plus-28 from the local Maven repository, where java.ts puts it: a hit
  // built nothing, so make sure it is there (a look when it is).
  if (outcome === 'hit') run('npx', ['tsx', 'tools/package/java.ts', '--dependencies-only']);
  packages.seedNpmPackages(join(target, 'js'));
  const built = Date.now();
  const expected = mkdtempSync(join(tmpdir(), 'kruise-languages-'));
  for (const file of readdirSync(join(REPO, 'examples')).filter((f) => f.endsWith('.ts'))) {
    run('npx', ['tsx', '--tsconfig', 'tsconfig.dev.json', `examples/${file}`], {
      CDK8S_OUTDIR: join(expected, file.replace(/\.ts$/, '')),
    });
  }
  process.env.KRUISE_LANGUAGES_EXPECTED = expected;
  process.stderr.write(
    `\nlanguages: packages (${outcome}) in ${((built - started) / 1000).toFixed(1)} s, the TypeScript examples synthesized in ${((Date.now() - built) / 1000).toFixed(1)} s\n`,
  );
}
