/**
 * The Python, Java and Go packages judged as their users would use them (docs/languages.md): each language's app
 * (test/languages/<language>) rewrites every example of examples/ and must synthesize the TypeScript example's YAML
 * byte for byte. global-setup.ts builds the packages (npm run package's jsii-pacmak) and synthesizes the TypeScript
 * examples once per run; the language toolchains' downloads are cached under ~/.cache/kruise-ts-envtest, keyed by
 * the versions they hold.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from '@jest/globals';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));
export const PACKAGES = join(REPO, '.packages');
export const CACHE = join(homedir(), '.cache', 'kruise-ts-envtest');
/** Where global-setup.ts wrote the TypeScript examples' output: <dir>/<example>/<chart>.k8s.yaml. */
export const EXPECTED_ENV = 'KRUISE_LANGUAGES_EXPECTED';
/** RuntimeImage bundles the TypeScript runtime with Node at synth: the other languages get its error instead. */
export const TS_ONLY_EXAMPLES = ['runtime-image'];

/** Every example of examples/, by file name. */
export function examples(): string[] {
  return readdirSync(join(REPO, 'examples'))
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.replace(/\.ts$/, ''))
    .sort();
}

/** The version of an npm package as installed here: the languages' apps pin the same cdk8s, constructs, ... */
export function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string })
    .version;
}

export interface Result {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; allowFailure?: boolean; timeoutMs?: number },
): Result {
  const result = spawnSync(command, [...args], {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 900_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new Error(`${command} ${args.join(' ')} (in ${options.cwd}): ${result.error.message}`);
  const out: Result = { status: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  if (out.status !== 0 && !options.allowFailure) {
    const tail = (s: string) => s.split('\n').slice(-40).join('\n');
    throw new Error(
      `${command} ${args.join(' ')} (in ${options.cwd}) exited with ${out.status}\n--- stdout\n${tail(out.stdout)}\n--- stderr\n${tail(out.stderr)}`,
    );
  }
  return out;
}

/** Every file under `dir`, relative, sorted. */
export function files(dir: string, prefix = ''): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/** The TypeScript example's output, file by file (`<chart>.k8s.yaml` → text). */
export function expectedOutput(example: string): Record<string, string> {
  const dir = process.env[EXPECTED_ENV];
  if (!dir) throw new Error(`${EXPECTED_ENV} is not set: run the languages tests through jest (global-setup.ts)`);
  return outputOf(join(dir, example));
}

export function outputOf(dir: string): Record<string, string> {
  return Object.fromEntries(files(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}

/** The examples every language rewrites: all but the TypeScript-only ones. */
export function portableExamples(): string[] {
  return examples().filter((e) => !TS_ONLY_EXAMPLES.includes(e));
}

/** Each example's output in `dir/<example>/` is the TypeScript example's, file by file, byte for byte. */
export function expectTypeScriptOutput(dir: string, names: readonly string[]): void {
  for (const example of names) {
    expect({ example, files: outputOf(join(dir, example)) }).toEqual({ example, files: expectedOutput(example) });
  }
}

/**
 * `dir` as an npm folder with this run's packed kruise-ha and kruise-ha-runtime and the cdk8s the apps pin: where
 * RuntimeImage finds the runtime and esbuild (a language's app runs kruise-ha from the jsii kernel's own copy).
 */
export function runtimeApp(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{ "private": true }\n');
  const tarball = (prefix: string) =>
    join(
      PACKAGES,
      'js',
      readdirSync(join(PACKAGES, 'js')).find((f) => f.startsWith(prefix))!,
    );
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      tarball('kruise-ha-runtime-'),
      tarball('kruise-ha@'),
      `cdk8s@${installedVersion('cdk8s')}`,
      `constructs@${installedVersion('constructs')}`,
    ],
    { cwd: dir },
  );
  return dir;
}

/** docs/sdk.md's chart as a CommonJS TypeScript app (the guide's main.ts, outdir from argv). */
const TYPESCRIPT_OPERATOR_APP = `const { App, Chart } = require('cdk8s');
const { Operator, OperatorProgram, RuntimeImage } = require('kruise-ha');
const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'team-operator');
const image = new RuntimeImage(chart, 'Image', { repository: 'registry.example.com/team/team-operator', entrypoint: './operator.ts' });
new Operator(chart, 'Operator', { program: OperatorProgram.fromRuntimeImage(image) });
app.synth();
`;

/**
 * Operator from another language: docs/sdk.md's TypeScript program (its blocks that start with `// <file>.ts`, but
 * the chart) written into the runtime app `dir`, deployed by `synth(outdir)` (the language's `own-operator` chart, run
 * in `dir`) and by the guide's TypeScript chart. Expects the two outputs byte-identical, with the binding rendered.
 */
export function expectOperatorLikeTypeScript(dir: string, synth: (outdir: string) => void): void {
  const guide = readFileSync(join(REPO, 'docs', 'sdk.md'), 'utf8');
  for (const [, file, code] of guide.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n([\s\S]*?)```/g))
    if (file !== 'main.ts') writeFileSync(join(dir, file), code);
  synth(join(dir, 'operator-other.out'));
  writeFileSync(join(dir, 'operator-app.js'), TYPESCRIPT_OPERATOR_APP);
  run('node', ['operator-app.js', join(dir, 'operator-typescript.out')], { cwd: dir });
  const other = outputOf(join(dir, 'operator-other.out'));
  expect(other['team-operator.k8s.yaml']).toContain('name: mpod.team-operator.kruise-ha.io');
  expect(other).toEqual(outputOf(join(dir, 'operator-typescript.out')));
}
