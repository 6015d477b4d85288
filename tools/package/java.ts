/**
 * The Java package: jsii-pacmak --targets java into .packages/java (a Maven repository layout holding the jar, its
 * sources and javadoc). pacmak compiles the generated code with Maven against the dependencies' jars, and one of them
 * is missing from the Maven repository reachable here: cdk8s-plus-28 (404 for every file under
 * org/cdk8s/cdk8s-plus-28/, while org/cdk8s/cdk8s is there). When Maven cannot get it, it is built the same way,
 * by jsii-pacmak from the assembly in node_modules/cdk8s-plus-28 (the artifact the cdk8s team publishes is built
 * from that assembly too), and installed into the local Maven repository. Both are cached in
 * ~/.cache/kruise-ts-envtest (the local Maven repository; the cdk8s-plus-28 build keyed by its version).
 *
 * Usage: tsx tools/package/java.ts [--dependencies-only]
 * (--dependencies-only: only cdk8s-plus-28 into the local Maven repository, for a jar built before: the languages
 * tier's global setup, when .packages/ comes from its cache.)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CACHE = join(homedir(), '.cache', 'kruise-ts-envtest');
/** The local Maven repository of every Java build and test here (MAVEN_REPO_LOCAL overrides). */
export const MAVEN_REPO = process.env.MAVEN_REPO_LOCAL ?? join(CACHE, 'maven-repository');
const PACMAK = join(ROOT, 'node_modules', 'jsii-pacmak', 'bin', 'jsii-pacmak');

function sh(command: string, args: string[], cwd = ROOT): void {
  const result = spawnSync(command, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
}

function mavenHas(groupPath: string, artifact: string, version: string): boolean {
  return existsSync(join(MAVEN_REPO, groupPath, artifact, version, `${artifact}-${version}.jar`));
}

/** Whether Maven resolves the artifact from its remote repositories (downloading it into MAVEN_REPO). */
function mavenGets(coordinates: string): boolean {
  const result = spawnSync(
    'mvn',
    [
      '-B',
      '-q',
      `-Dmaven.repo.local=${MAVEN_REPO}`,
      'dependency:get',
      `-Dartifact=${coordinates}`,
      '-Dtransitive=false',
    ],
    { cwd: ROOT, stdio: 'ignore' },
  );
  return result.status === 0;
}

function ensureCdk8sPlus(): void {
  const dir = join(ROOT, 'node_modules', 'cdk8s-plus-28');
  const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
  if (mavenHas('org/cdk8s', 'cdk8s-plus-28', version) || mavenGets(`org.cdk8s:cdk8s-plus-28:${version}`)) return;
  const out = join(CACHE, `java-cdk8s-plus-28-${version}`);
  const artifacts = join(out, 'java', 'org', 'cdk8s', 'cdk8s-plus-28', version);
  const jar = join(artifacts, `cdk8s-plus-28-${version}.jar`);
  if (!existsSync(jar)) {
    process.stderr.write(`java: building cdk8s-plus-28 ${version} for Maven from its assembly (once)\n`);
    mkdirSync(out, { recursive: true });
    sh(process.execPath, [
      PACMAK,
      '--targets',
      'java',
      '--no-npmignore',
      '--outdir',
      out,
      '--maven-local-repository',
      MAVEN_REPO,
      dir,
    ]);
  }
  sh('mvn', [
    '-B',
    '-q',
    `-Dmaven.repo.local=${MAVEN_REPO}`,
    'install:install-file',
    `-Dfile=${jar}`,
    `-DpomFile=${join(artifacts, `cdk8s-plus-28-${version}.pom`)}`,
  ]);
}

ensureCdk8sPlus();
if (!process.argv.includes('--dependencies-only'))
  sh(process.execPath, [
    PACMAK,
    '--targets',
    'java',
    '--force',
    '--no-npmignore',
    '--maven-local-repository',
    MAVEN_REPO,
  ]);
