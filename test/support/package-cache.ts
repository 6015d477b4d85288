/**
 * The packages the package and languages tiers test, from the content cache (content-cache.ts) when nothing they are
 * built from changed, so a run builds each at most once and a later run with the same inputs builds none:
 *
 * - `npm-packages`: the two npm tarballs (kruise-ha-<version>.tgz, kruise-ha-runtime-<version>.tgz), `npm pack` of a
 *   checkout without build output (npm's prepack compiles: tools/package/build.ts). test/package installs them.
 * - `language-packages`: `.packages/` as test/languages/global-setup.ts builds it (jsii-pacmak's js, python, go and
 *   java packages). Its js/ holds the same two tarballs: it seeds `npm-packages`, so a run of both tiers packs once.
 *
 * Node builtins and content-cache.ts only, erasable syntax: the languages' global setup loads it through tsImport.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KeyInputs, ensureCached, toolVersion } from './content-cache.js';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const NPM_PACKAGES = 'npm-packages';
export const LANGUAGE_PACKAGES = 'language-packages';

/**
 * What `npm pack` of the two packages reads: the sources, the build (tools/package, the tsconfigs), the manifests and
 * the lockfile (every dependency's version, jsii's and TypeScript's included), the files the tarballs carry besides
 * the build (README.md, LICENSE), and this recipe.
 */
const NPM_PATHS = [
  'lib',
  'tools/package',
  'package.json',
  'package-lock.json',
  'packages/runtime',
  'tsconfig*.json',
  'README.md',
  'LICENSE',
  'test/support/package-cache.ts',
  'test/support/content-cache.ts',
];

/** The version of a package as installed in node_modules (what the build runs, whatever the lockfile says). */
function installed(name: string): string {
  const path = join(REPO, 'node_modules', name, 'package.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version : 'absent';
}

function npmValues(): Record<string, string> {
  return {
    node: process.version,
    npm: toolVersion('npm', ['--version']),
    ...Object.fromEntries(
      ['jsii', 'typescript', 'esbuild', 'cdk8s', 'cdk8s-plus-28', 'constructs'].map((n) => [n, installed(n)]),
    ),
  };
}

export function npmPackagesInputs(): KeyInputs {
  return { root: REPO, paths: NPM_PATHS, values: npmValues() };
}

/**
 * What the language packages read besides: jsii-pacmak and the toolchains it runs (Go for the module, the JDK and
 * Maven for the jar, Python for the wheel; the Python build tools pacmak installs from PyPI are not pinned by it),
 * the Java build (tools/package/java.ts, in NPM_PATHS) and the languages' global setup (the recipe).
 */
export function languagePackagesInputs(): KeyInputs {
  return {
    root: REPO,
    paths: [...NPM_PATHS, 'test/languages/global-setup.ts'],
    values: {
      ...npmValues(),
      'jsii-pacmak': installed('jsii-pacmak'),
      go: toolVersion('go', ['env', 'GOVERSION']),
      java: toolVersion('java', ['-version']),
      maven: toolVersion('mvn', ['--version']).split('\n')[0],
      python: toolVersion('python3', ['--version']),
    },
  };
}

/** The tarballs' file names, as npm pack names them (the entry's files). */
export function tarballNames(): { constructs: string; runtime: string } {
  const version = (file: string) => (JSON.parse(readFileSync(join(REPO, file), 'utf8')) as { version: string }).version;
  return {
    constructs: `kruise-ha-${version('package.json')}.tgz`,
    runtime: `kruise-ha-runtime-${version('packages/runtime/package.json')}.tgz`,
  };
}

/** A fresh clone has no build output: npm's lifecycle scripts must build the packages from the sources alone. */
export function removeBuildOutput(): void {
  for (const dir of ['dist', 'packages/runtime/dist', '.jsii'])
    rmSync(join(REPO, dir), { recursive: true, force: true });
}

/**
 * `npm pack` of the repository and of packages/runtime, as a maintainer or `npm install <git url>` does it (npm's
 * lifecycle scripts compile first), into `dir`.
 */
export function packNpmPackages(dir: string): void {
  removeBuildOutput();
  for (const spec of ['.', './packages/runtime']) {
    // The repository's own npm and Node 24, as a maintainer runs it (the lifecycle scripts need them).
    const result = spawnSync('npm', ['pack', spec, '--pack-destination', dir], {
      cwd: REPO,
      encoding: 'utf8',
      timeout: 300_000,
    });
    if (result.status !== 0) throw new Error(`npm pack ${spec} exited with ${result.status}:\n${result.stderr}`);
  }
  const names = tarballNames();
  const packed = readdirSync(dir).sort();
  if (packed.join() !== [names.constructs, names.runtime].sort().join())
    throw new Error(`npm pack wrote ${packed.join(', ')} (expected ${names.constructs} and ${names.runtime})`);
}

/**
 * `npm-packages` from the tarballs in `.packages/js` (jsii-pacmak's `npm pack` of the repository, and the runtime's),
 * when that entry is not there yet: the package tier of the same run then packs nothing.
 */
export function seedNpmPackages(js: string): void {
  const names = tarballNames();
  const files = readdirSync(js);
  const constructs = files.find((f) => f.startsWith('kruise-ha@') && f.endsWith('.jsii.tgz'));
  if (!constructs || !files.includes(names.runtime))
    throw new Error(`${js}: expected kruise-ha@*.jsii.tgz and ${names.runtime}, found ${files.join(', ')}`);
  ensureCached({
    name: NPM_PACKAGES,
    inputs: npmPackagesInputs(),
    build: (dir) => {
      copyFileSync(join(js, constructs), join(dir, names.constructs));
      copyFileSync(join(js, names.runtime), join(dir, names.runtime));
    },
  });
}
