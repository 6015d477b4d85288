/**
 * Builds the two npm packages from lib/ (README, "Use it in your cdk8s app"):
 *
 * - `constructs`: kruise-ha (the repository root) into dist/. jsii first checks the public API (lib/index.ts) and
 *   writes its assembly, `.jsii`, which the Python, Java and Go packages are generated from (docs/languages.md); then
 *   tsc writes the declarations
 *   (tsconfig.constructs.json); esbuild compiles every source file of that program to
 *   CommonJS, so the stock cdk8s app (CommonJS, ts-node, Jest 29) loads it with `require` on
 *   every supported Node, and ESM apps import it too. dist/package.json marks dist/ CommonJS.
 * - `runtime`: kruise-ha-runtime (packages/runtime) into packages/runtime/dist/: ESM, by tsc
 *   (tsconfig.runtime.json).
 *
 * Each build empties its output folder first, so a package never ships a stale file.
 * Usage: tsx tools/package/build.ts constructs|runtime
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import ts from 'typescript';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const LIB = join(ROOT, 'lib') + sep;
// What CommonJS gives a module in place of import.meta.url (the constructs read files beside them).
const MODULE_URL = '__kruiseHaModuleUrl';
const MODULE_URL_BANNER = `const ${MODULE_URL} = require("node:url").pathToFileURL(__filename).href;`;

class BuildError extends Error {}

/** Type-checks and emits a tsconfig's program; any diagnostic fails the build. */
function compile(tsconfig: string): ts.Program {
  const problems: ts.Diagnostic[] = [];
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, tsconfig), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => problems.push(d),
  });
  if (!config || problems.length > 0 || config.errors.length > 0)
    throw diagnosticsError(tsconfig, [...problems, ...(config?.errors ?? [])]);
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options });
  const emitted = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
  if (diagnostics.length > 0) throw diagnosticsError(tsconfig, diagnostics);
  return program;
}

function diagnosticsError(tsconfig: string, diagnostics: readonly ts.Diagnostic[]): BuildError {
  const text = ts.formatDiagnostics(diagnostics, {
    getCanonicalFileName: (f) => f,
    getCurrentDirectory: () => ROOT,
    getNewLine: () => '\n',
  });
  return new BuildError(`${tsconfig}: ${diagnostics.length} TypeScript error(s):\n${text}`);
}

/** The Node release the constructs package declares as its lowest (package.json `engines`). */
function constructsMinNode(): string {
  const engines =
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string } }).engines?.node ??
    '';
  const version = /^>=\s*(\d+\.\d+\.\d+)$/.exec(engines)?.[1];
  if (!version)
    throw new BuildError(
      `package.json engines.node: expected ">= X.Y.Z" (got ${JSON.stringify(engines)}). Fix: set minNodeVersion in .projenrc.ts and run npx projen`,
    );
  return version;
}

/**
 * jsii's API check and assembly (.jsii) from tsconfig.jsii.json. Its JavaScript (ESM, into dist/) is replaced below.
 * Silenced: reserved words (pacmak escapes them, e.g. Python's `for_`), and cdk8s-plus-28 being a dependency rather
 * than a peer (deliberate: README, "Your cdk8s-plus line"), which jsii would otherwise rewrite package.json for.
 */
function jsiiAssembly(): void {
  rmSync(join(ROOT, '.jsii'), { force: true });
  const jsii = spawnSync(
    process.execPath,
    [
      join(ROOT, 'node_modules', 'jsii', 'bin', 'jsii'),
      '--no-fix-peer-dependencies',
      '--fail-on-warnings',
      '--silence-warnings',
      'reserved-word',
      '--silence-warnings',
      'metadata/missing-peer-dependency',
    ],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (jsii.status !== 0)
    throw new BuildError(
      `jsii: the public API (lib/index.ts) has no form in the other languages:\n${jsii.stdout}${jsii.stderr}\nFix: see docs/languages.md, "What jsii refuses"`,
    );
}

function buildConstructs(): void {
  const out = join(ROOT, 'dist');
  jsiiAssembly();
  rmSync(out, { recursive: true, force: true });
  const program = compile('tsconfig.constructs.json');
  const target = `node${constructsMinNode()}`;
  let count = 0;
  for (const file of program.getSourceFiles()) {
    if (file.isDeclarationFile || !file.fileName.startsWith(LIB)) continue;
    const source = relative(ROOT, file.fileName);
    const usesModuleUrl = file.text.includes('import.meta.url');
    const result = transformSync(file.text, {
      loader: 'ts',
      format: 'cjs',
      platform: 'node',
      target,
      sourcefile: source,
      logLevel: 'silent',
      define: { 'import.meta.url': MODULE_URL },
      banner: usesModuleUrl ? MODULE_URL_BANNER : undefined,
    });
    // A warning here is a construct that would misbehave in CommonJS (import.meta.dirname, ...).
    if (result.warnings.length > 0) {
      throw new BuildError(
        `${source}: cannot be compiled to CommonJS: ${result.warnings.map((w) => w.text).join('; ')}. Fix: use import.meta.url only, or move the code out of the constructs`,
      );
    }
    const output = join(out, relative(LIB, file.fileName)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(output), { recursive: true });
    writeFileSync(output, result.code);
    count++;
  }
  writeFileSync(join(out, 'package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
  process.stderr.write(
    `kruise-ha: ${count} modules (CommonJS, ${target}) and their declarations in ${relative(ROOT, out)}/, the jsii assembly in .jsii\n`,
  );
}

function buildRuntime(): void {
  const dir = join(ROOT, 'packages', 'runtime');
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  const program = compile('tsconfig.runtime.json');
  copyFileSync(join(ROOT, 'LICENSE'), join(dir, 'LICENSE'));
  const count = program.getSourceFiles().filter((f) => !f.isDeclarationFile && f.fileName.startsWith(LIB)).length;
  process.stderr.write(
    `kruise-ha-runtime: ${count} modules (ESM) and their declarations in ${relative(ROOT, dir)}/dist/\n`,
  );
}

const builds: Record<string, () => void> = { constructs: buildConstructs, runtime: buildRuntime };
const which = process.argv[2] ?? '';
try {
  const build = builds[which];
  if (!build)
    throw new BuildError(
      `package: expected one of ${Object.keys(builds).join(', ')} (got ${JSON.stringify(which)}). Fix: tsx tools/package/build.ts constructs`,
    );
  build();
} catch (e) {
  if (!(e instanceof BuildError)) throw e;
  process.stderr.write(`${e.message}\n`);
  process.exitCode = 1;
}
