/**
 * Go: test/languages/go, a module that uses the built Go package (.packages/go/kruiseha, by `replace`) with the
 * cdk8s, cdk8s-plus-28 and constructs modules from the Go module proxy, rewrites every example in Go and must
 * synthesize the same YAML; its `go test` suite (a snapshot test, a validation error) runs once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CACHE,
  expectOperatorLikeTypeScript,
  expectTypeScriptOutput,
  portableExamples,
  REPO,
  run,
  runtimeApp,
} from './support.js';

const APP = join(REPO, 'test', 'languages', 'go');
const version = run('go', ['env', 'GOVERSION'], { cwd: APP }).stdout.trim();
/** Downloads and builds survive between runs: the module cache is content-addressed, the build cache per Go. */
const env = {
  GOMODCACHE: join(CACHE, 'go-mod'),
  GOCACHE: join(CACHE, `go-build-${version}`),
  GOFLAGS: '-modcacherw',
  GOTOOLCHAIN: 'local',
};
const out = mkdtempSync(join(tmpdir(), 'kruise-go-'));
const binary = join(out, 'examples');

beforeAll(() => {
  run('go', ['build', '-o', binary, '.'], { cwd: APP, env });
}, 900_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const portable = portableExamples();

describe('Go', () => {
  it('synthesizes every example byte-identical to the TypeScript example', () => {
    run(binary, [portable.join(','), join(out, 'synth')], { cwd: APP, env });
    expectTypeScriptOutput(join(out, 'synth'), portable);
  }, 600_000);

  it('RuntimeImage fails at synth with the reason and the fix', () => {
    const result = run(binary, ['runtime-image', join(out, 'runtime-image')], { cwd: APP, env, allowFailure: true });
    expect(result.status).not.toBe(0);
    // The prop as a Go user writes it: RuntimeImageProps.Entrypoint.
    expect(result.stderr).toMatch(/Entrypoint: has no default: kruise-ha-runtime .* is not installed in the folder/);
    expect(result.stderr).toMatch(/go1\.\d+.* app runs kruise-ha from the jsii kernel's private copy/);
  }, 120_000);

  it("Operator: the guide's TypeScript program deployed by a Go chart renders as the guide's TypeScript chart", () => {
    const dir = runtimeApp(join(out, 'operator-app'));
    expectOperatorLikeTypeScript(dir, (outdir) => run(binary, ['own-operator', outdir], { cwd: dir, env }));
  }, 300_000);

  it("passes the module's own go test suite (snapshot, validation error naming ExpectedNodes)", () => {
    const result = run('go', ['test', '-count=1', '-v', '.'], { cwd: APP, env });
    expect(result.stdout).toMatch(/--- PASS: TestLogShipperMatchesSnapshot/);
    expect(result.stdout).toMatch(/--- PASS: TestABadPropFailsSynthNamingItAsWritten/);
  }, 600_000);
});
