/**
 * Python: a virtualenv with cdk8s, cdk8s-plus-28 and constructs from PyPI (the versions the TypeScript side has)
 * plus the built wheel; test/languages/python/app.py rewrites every example in Python and must synthesize the same
 * YAML; its pytest suite (a snapshot test, a validation error) runs once.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CACHE,
  expectOperatorLikeTypeScript,
  expectTypeScriptOutput,
  installedVersion,
  outputOf,
  PACKAGES,
  portableExamples,
  REPO,
  run,
  runtimeApp,
} from './support.js';

const APP = join(REPO, 'test', 'languages', 'python');
const REQUIREMENTS = [
  `cdk8s==${installedVersion('cdk8s')}`,
  `cdk8s-plus-28==${installedVersion('cdk8s-plus-28')}`,
  `constructs==${installedVersion('constructs')}`,
  'pytest==8.3.5',
  'PyYAML==6.0.2',
];
const python = run('python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { cwd: REPO }).stdout.trim();
/** Keyed by Python's version and every pinned requirement: a change builds a new one. */
const VENV = join(CACHE, `python-venv-${python}-${REQUIREMENTS.join('-').replace(/[^A-Za-z0-9.=-]/g, '')}`);
const bin = (name: string) => join(VENV, 'bin', name);
const out = mkdtempSync(join(tmpdir(), 'kruise-python-'));

beforeAll(() => {
  if (!existsSync(bin('pytest'))) {
    rmSync(VENV, { recursive: true, force: true });
    run('python3', ['-m', 'venv', VENV], { cwd: REPO });
    run(bin('pip'), ['install', '--quiet', '--disable-pip-version-check', ...REQUIREMENTS], { cwd: REPO });
  }
  const wheel = readdirSync(join(PACKAGES, 'python')).find((f) => f.endsWith('.whl'));
  if (!wheel) throw new Error(`no wheel in ${join(PACKAGES, 'python')}: npm run package builds it`);
  run(
    bin('pip'),
    [
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-deps',
      '--force-reinstall',
      join(PACKAGES, 'python', wheel),
    ],
    { cwd: REPO },
  );
}, 900_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const portable = portableExamples();
const TYPESCRIPT_RUNTIME_IMAGE_APP = `const { App, Chart } = require('cdk8s');
const { KruiseManager, ManagerImage, RuntimeImage } = require('kruise-ha');
const app = new App({ outdir: process.argv[2] });
const chart = new Chart(app, 'kruise-runtime-image');
const image = new RuntimeImage(chart, 'Image', { repository: 'registry.example.com/platform/kruise-ha-manager' });
new KruiseManager(chart, 'Kruise', { image: ManagerImage.fromRuntime(image), replicas: 3 });
app.synth();
`;

describe('Python', () => {
  it('synthesizes every example byte-identical to the TypeScript example', () => {
    run(bin('python'), ['app.py', portable.join(','), out], { cwd: APP });
    expectTypeScriptOutput(out, portable);
  }, 600_000);

  it('RuntimeImage fails at synth with the reason and the fix', () => {
    const result = run(bin('python'), ['app.py', 'runtime-image', out], { cwd: APP, allowFailure: true });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/entrypoint: has no default: kruise-ha-runtime .* is not installed in the folder/);
    expect(result.stderr).toMatch(/Python\/3\.\d+.* app runs kruise-ha from the jsii kernel's private copy/);
    expect(result.stderr).toMatch(/Fix: run npm install kruise-ha-runtime in /);
  }, 120_000);

  it('RuntimeImage and Operator work once kruise-ha-runtime is installed in the app folder: as a TypeScript app there renders them', () => {
    const dir = runtimeApp(join(out, 'runtime-image-app'));
    run(bin('python'), [join(APP, 'app.py'), 'runtime-image', join(dir, 'python.out')], { cwd: dir });
    // examples/runtime-image.ts as a CommonJS app in the same folder, on the same installed runtime.
    writeFileSync(join(dir, 'app.js'), TYPESCRIPT_RUNTIME_IMAGE_APP);
    run('node', ['app.js', join(dir, 'typescript.out')], { cwd: dir });
    const python = outputOf(join(dir, 'python.out'));
    expect(python['kruise-runtime-image.k8s.yaml']).toMatch(
      /image: registry\.example\.com\/platform\/kruise-ha-manager:[0-9a-f]{20}\n/,
    );
    expect(python).toEqual(outputOf(join(dir, 'typescript.out')));

    // Operator from Python: the guide's TypeScript program in the same folder, deployed by a Python chart, renders
    // what the guide's TypeScript chart renders (synth bundles the program and reads its registrations either way).
    expectOperatorLikeTypeScript(dir, (outdir) =>
      run(bin('python'), [join(APP, 'app.py'), 'own-operator', outdir], { cwd: dir }),
    );
  }, 300_000);

  it("passes the app's own pytest suite (snapshot, validation error naming expected_nodes)", () => {
    const result = run(bin('pytest'), ['-q', '-p', 'no:cacheprovider', 'tests'], { cwd: APP });
    expect(result.stdout).toMatch(/2 passed/);
  }, 300_000);
});
