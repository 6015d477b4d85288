/**
 * Java: test/languages/java, a Maven project on the built jar (.packages/java, installed into the local Maven
 * repository as a user installs a downloaded artifact) and the cdk8s artifacts from Maven Central (cdk8s-plus-28,
 * missing there, built by tools/package/java.ts); it rewrites every example in Java with builders and must synthesize
 * the same YAML; its JUnit suite (a snapshot test, a validation error) runs once.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  CACHE,
  expectOperatorLikeTypeScript,
  expectTypeScriptOutput,
  installedVersion,
  PACKAGES,
  portableExamples,
  REPO,
  run,
  runtimeApp,
} from './support.js';

const APP = join(REPO, 'test', 'languages', 'java');
/** Shared with tools/package/java.ts: every Maven download survives between runs. */
const MAVEN_REPO = process.env.MAVEN_REPO_LOCAL ?? join(CACHE, 'maven-repository');
const VERSION = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const mvn = (...args: string[]) =>
  run(
    'mvn',
    [
      '-B',
      '-q',
      `-Dmaven.repo.local=${MAVEN_REPO}`,
      `-Dkruise-ha.version=${VERSION}`,
      `-Dcdk8s.version=${installedVersion('cdk8s')}`,
      `-Dcdk8s-plus-28.version=${installedVersion('cdk8s-plus-28')}`,
      `-Dconstructs.version=${installedVersion('constructs')}`,
      ...args,
    ],
    { cwd: APP },
  );
const out = mkdtempSync(join(tmpdir(), 'kruise-java-'));
let classpath = '';

beforeAll(() => {
  const artifacts = join(PACKAGES, 'java', 'io', 'github', 'kruise-ha', 'kruise-ha', VERSION);
  // Every run: the jar of this run's build replaces the one a previous run installed under the same version.
  mvn(
    'install:install-file',
    `-Dfile=${join(artifacts, `kruise-ha-${VERSION}.jar`)}`,
    `-DpomFile=${join(artifacts, `kruise-ha-${VERSION}.pom`)}`,
  );
  mvn('compile', 'dependency:build-classpath', `-Dmdep.outputFile=${join(out, 'classpath.txt')}`);
  classpath = [join(APP, 'target', 'classes'), readFileSync(join(out, 'classpath.txt'), 'utf8').trim()].join(delimiter);
}, 900_000);
afterAll(() => rmSync(out, { recursive: true, force: true }));

const portable = portableExamples();

describe('Java', () => {
  it('synthesizes every example byte-identical to the TypeScript example', () => {
    run('java', ['-cp', classpath, 'examples.Main', portable.join(','), join(out, 'synth')], { cwd: APP });
    expectTypeScriptOutput(join(out, 'synth'), portable);
  }, 600_000);

  it('RuntimeImage fails at synth with the reason and the fix', () => {
    const result = run('java', ['-cp', classpath, 'examples.Main', 'runtime-image', join(out, 'runtime-image')], {
      cwd: APP,
      allowFailure: true,
    });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(/entrypoint: has no default: kruise-ha-runtime .* is not installed in the folder/);
    expect(result.stderr).toMatch(/Java\/\d+.* app runs kruise-ha from the jsii kernel's private copy/);
  }, 120_000);

  it("Operator: the guide's TypeScript program deployed by a Java chart renders as the guide's TypeScript chart", () => {
    const dir = runtimeApp(join(out, 'operator-app'));
    expectOperatorLikeTypeScript(dir, (outdir) =>
      run('java', ['-cp', classpath, 'examples.Main', 'own-operator', outdir], { cwd: dir }),
    );
  }, 300_000);

  it("passes the project's own JUnit suite (snapshot, validation error naming expectedNodes)", () => {
    mvn('test');
    const report = readFileSync(join(APP, 'target', 'surefire-reports', 'examples.ChartsTest.txt'), 'utf8');
    expect(report).toMatch(/Tests run: 2, Failures: 0, Errors: 0, Skipped: 0/);
  }, 600_000);
});
