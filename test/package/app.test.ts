/**
 * A cdk8s user's first day, end to end. Packs both packages, lays out an app as
 * `cdk8s init typescript-app` does, installs the tarballs offline from a warmed npm cache, then:
 * `cdk8s synth` and the template's unmodified `jest` with the README's snapshot test on every
 * supported Node; the examples compiled by the template's tsc and run; the types of every
 * documented import path; RuntimeImage from the installed packages, and kruise-ha-image
 * through node_modules/.bin against a local registry. Prints the install footprint.
 *
 * The template: cdk8s-cli's own `templates/typescript-app` and the variables its `init` fills
 * in, from the cdk8s-cli devDependency (2.207.x; the version is in the test's name). `cdk8s
 * init` itself cannot run here, as its post hook's `cdk8s import` downloads from GitHub; the
 * hook's other steps run as it runs them: `npm install`, `npm run compile`, `npm run test -- -u`,
 * `npm run synth`. (`import` only writes imports/k8s.ts, which the template's main.ts does not use.)
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RegistryClient } from '../../lib/image/registry.js';
import { RegistryHttp } from '../../lib/image/registry-http.js';
import { pushTestBase } from '../integration/base-image-fixture.js';
import { RegistryProcess } from '../integration/registry-process.js';
import {
  CACHE,
  PackedPackage,
  REPO,
  Result,
  RunOptions,
  folderBytes,
  kb,
  mb,
  packPackages,
  run,
  systemNodeDir,
} from './support.js';

const NPM_CACHE = join(CACHE, 'npm-e2e');
/** Node releases fetched from the npm registry (node-<platform>-<arch>), besides the machine's and the project's. */
const FETCHED_NODES = ['20.19.0', '22.23.3'];

const cliDir = dirname(createRequire(import.meta.url).resolve('cdk8s-cli/package.json'));
const cli = JSON.parse(readFileSync(join(cliDir, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};
const TEMPLATE = `cdk8s-cli ${cli.version} typescript-app`;

const temp = mkdtempSync(join(tmpdir(), 'kruise-app-'));
const app = join(temp, 'app');
const registry = new RegistryProcess();
const figures: string[] = [];
/** Where the run's time goes (printed, never asserted): the set-up's steps and each Node's synth and jest. */
const phases: string[] = [];
function timed<T>(label: string, step: () => T): T {
  const started = Date.now();
  try {
    return step();
  } finally {
    phases.push(`${label} ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
let packed: { constructs: PackedPackage; runtime: PackedPackage };
let nodes: Array<{ label: string; dir: string }>;
let warmedNow = false;

afterAll(async () => {
  if (figures.length > 0) process.stderr.write(`install footprint (${TEMPLATE}):\n  ${figures.join('\n  ')}\n`);
  if (phases.length > 0) process.stderr.write(`app.test.ts time: ${phases.join(', ')}\n`);
  await registry.cleanup();
  rmSync(temp, { recursive: true, force: true });
}, 60_000);

const npmFlags = ['--cache', NPM_CACHE, '--no-audit', '--no-fund'];
const floor = () => nodes[0];
const project = () => nodes[nodes.length - 1];
const inApp = (command: string, args: string[], options: Partial<RunOptions> = {}): Result =>
  run(command, args, { cwd: app, ...options });

/** The Node binary of a release, installed once into the cache. */
function fetchNode(version: string): string {
  const prefix = join(CACHE, 'node', version);
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(prefix, 'node_modules', pkg, 'bin');
  if (!existsSync(join(dir, 'node'))) {
    mkdirSync(prefix, { recursive: true });
    run(
      'npm',
      [
        'install',
        '--prefix',
        prefix,
        '--no-save',
        '--no-package-lock',
        '--prefer-offline',
        ...npmFlags,
        `${pkg}@${version}`,
      ],
      { cwd: prefix },
    );
  }
  return dir;
}

function nodeVersion(dir: string): string {
  return run(join(dir, 'node'), ['--version'], { cwd: temp }).stdout.trim();
}

/** The template's files with the values `cdk8s init` puts in (cdk8s-cli's lib/cli/cmds/init.js). */
function scaffold(): void {
  const fromCli = createRequire(join(cliDir, 'package.json'));
  const { substitute } = fromCli('sscaff/lib/substitute.js') as {
    substitute: (s: string, v: Record<string, string>) => string;
  };
  const variables = {
    $base: 'app',
    cdk8s_core_version: (fromCli('cdk8s/package.json') as { version: string }).version,
    cdk8s_plus_version: (fromCli('cdk8s-plus-33/package.json') as { version: string }).version,
    constructs_version: cli.dependencies.constructs.replace('^', ''),
    cdk8s_cli_spec: `^${cli.version}`,
  };
  const template = join(cliDir, 'templates', 'typescript-app');
  for (const file of readdirSync(template, { recursive: true, encoding: 'utf8' })) {
    const source = join(template, file);
    if (statSync(source).isDirectory() || file === '.hooks.sscaff.js') continue;
    const target = join(app, substitute(file, variables));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, substitute(readFileSync(source, 'utf8'), variables));
  }
}

/** Everything the app will install, fetched once (with the network) into the npm cache. */
function warmCache(): void {
  const manifest = JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as {
    dependencies: object;
    devDependencies: object;
  };
  const dependencies = {
    ...manifest.dependencies,
    ...manifest.devDependencies,
    ...packed.constructs.manifest.dependencies,
    ...packed.runtime.manifest.dependencies,
  };
  const body = `${JSON.stringify({ name: 'warm', private: true, dependencies }, null, 2)}\n`;
  const marker = join(NPM_CACHE, `warmed-${createHash('sha256').update(body).digest('hex').slice(0, 16)}`);
  if (existsSync(marker) && !warmedNow) return;
  const dir = join(temp, 'warm');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), body);
  run('npm', ['install', '--prefer-offline', '--ignore-scripts', ...npmFlags], { cwd: dir });
  writeFileSync(marker, body);
  warmedNow = true;
}

/** `npm install --offline` in the app; a cache pruned since it was warmed is warmed again. */
function installOffline(args: string[], options: Partial<RunOptions> = {}): Result {
  const attempt = () =>
    inApp('npm', ['install', '--offline', ...npmFlags, ...args], { ...options, allowFailure: true });
  let result = attempt();
  if (result.status !== 0 && /ENOTCACHED/.test(result.stdout + result.stderr) && !warmedNow) {
    warmedNow = true;
    warmCache();
    result = attempt();
  }
  if (result.status !== 0)
    throw new Error(
      `npm install --offline ${args.join(' ')} exited with ${result.status}:\n${result.stderr.slice(-4000)}`,
    );
  return result;
}

/**
 * Files that import documented paths. The expected errors prove the types are the real ones:
 * an unresolved import is an error, and `any` would leave the directive unused, also an error.
 */
const CONSTRUCTS_IMPORTS = [
  "import { KruiseManager } from 'kruise-ha';",
  "import { Ports } from 'kruise-ha/contract';",
  '// @ts-expect-error a construct needs its scope and id',
  'new KruiseManager();',
  'export const webhookPort: 9876 = Ports.webhook;',
  '',
].join('\n');
const RUNTIME_IMPORTS = [
  "import { Manager } from 'kruise-ha-runtime';",
  "import { publishImage } from 'kruise-ha-runtime/image';",
  '// @ts-expect-error publishImage needs its options',
  'void publishImage();',
  'export const manager: typeof Manager = Manager;',
  '',
].join('\n');

/** The code blocks of the README's user section, in order. */
function readmeBlocks(): string[] {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Use it in your cdk8s app'),
    readme.indexOf('\n## ', readme.indexOf('## Use it in your cdk8s app') + 3),
  );
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

/** Installs a tarball; what npm reports it added, and how much node_modules grew. */
function installTarball(tarball: string, extra: string[], nodeDir: string): { added: number; bytes: number } {
  const before = folderBytes(join(app, 'node_modules'));
  const result = installOffline([tarball, '--json', ...extra], { nodeDir });
  const report = JSON.parse(result.stdout.slice(result.stdout.search(/^\{/m))) as { added: number };
  return { added: report.added, bytes: folderBytes(join(app, 'node_modules')) - before };
}

beforeAll(async () => {
  packed = timed('packages', () => packPackages(join(temp, 'packages')));
  mkdirSync(app);
  timed('scaffold', scaffold);
  timed('npm cache warm check', warmCache);
  // Lowest first, the project's Node last; a machine whose Node is one of them runs it once.
  const candidates = [
    { label: `the lowest kruise-ha declares`, dir: timed('fetch Node 20', () => fetchNode(FETCHED_NODES[0])) },
    { label: "the machine's", dir: systemNodeDir() },
    { label: 'Node 22', dir: timed('fetch Node 22', () => fetchNode(FETCHED_NODES[1])) },
    { label: "the project's", dir: dirname(process.execPath) },
  ].map((n) => ({ ...n, label: `${nodeVersion(n.dir)} (${n.label})` }));
  nodes = candidates.filter(
    (n, i) => candidates.findIndex((m) => m.label.split(' ')[0] === n.label.split(' ')[0]) === i,
  );
  // cdk8s init's post hook, but `cdk8s import`.
  timed('template npm install', () => installOffline([]));
  timed('template compile', () => inApp('npm', ['run', 'compile']));
  timed('template test -u', () => inApp('npm', ['run', 'test', '--', '-u']));
  timed('template synth', () => inApp('npm', ['run', 'synth']));
  await registry.start();
}, 900_000);

describe(`a fresh ${TEMPLATE} app`, () => {
  it("installs kruise-ha offline, engine-strict on the lowest Node it declares, without the runtime's dependencies", () => {
    const added = timed('install kruise-ha', () =>
      installTarball(packed.constructs.tarball, ['--engine-strict'], floor().dir),
    );
    figures.push(
      `kruise-ha: tarball ${kb(packed.constructs.size)}, unpacked ${kb(packed.constructs.unpackedSize)}; npm added ${added.added} packages, node_modules grew ${mb(added.bytes)}`,
    );
    for (const name of [
      '@kubernetes/client-node',
      'esbuild',
      'prom-client',
      'tar-stream',
      '@peculiar/x509',
      'kruise-ha-runtime',
    ]) {
      expect({ name, installed: existsSync(join(app, 'node_modules', name)) }).toEqual({ name, installed: false });
    }
    // kruise-ha and its cdk8s-plus line; cdk8s and constructs are the app's (one copy).
    expect(added.added).toBe(2);
    for (const nested of [
      'kruise-ha/node_modules/cdk8s',
      'kruise-ha/node_modules/constructs',
      'cdk8s-plus-28/node_modules/cdk8s',
    ]) {
      expect({ nested, installed: existsSync(join(app, 'node_modules', nested)) }).toEqual({
        nested,
        installed: false,
      });
    }
    // Only RuntimeImage needs the runtime, and it says so.
    const image = (props: string) =>
      inApp(
        'node',
        [
          '-e',
          [
            "const { App } = require('cdk8s');",
            "const { RuntimeImage } = require('kruise-ha');",
            `new RuntimeImage(new App(), 'Image', { repository: 'registry.example.com/team/manager'${props} });`,
          ].join('\n'),
        ],
        { allowFailure: true },
      );
    const bundled = image('');
    expect({ status: bundled.status, stderr: bundled.stderr }).toEqual({
      status: 1,
      stderr: expect.stringMatching(
        /Error: entrypoint: has no default: kruise-ha-runtime is not installed .*\(got undefined\)\. Fix: npm install kruise-ha-runtime, or pass entrypoint/,
      ),
    });
    const own = image(", entrypoint: './main.ts'");
    expect({ status: own.status, stderr: own.stderr }).toEqual({
      status: 1,
      stderr: expect.stringMatching(
        /Error: entrypoint: cannot be bundled: esbuild is not installed .*\(got ".*main\.ts"\)\. Fix: npm install kruise-ha-runtime \(it brings esbuild\)/,
      ),
    });
  }, 300_000);

  describe('the README app and its snapshot test', () => {
    beforeAll(() => {
      const [main, test] = readmeBlocks();
      writeFileSync(join(app, 'main.ts'), main);
      writeFileSync(join(app, 'main.test.ts'), test);
      // What the user does once after changing the chart: record the snapshot.
      timed('README snapshot jest -u', () => inApp('npx', ['jest', '-u']));
    }, 300_000);

    it("cdk8s synth and the template's jest pass on every supported Node, with the same output", () => {
      const outputs = new Map<string, string>();
      for (const node of nodes) {
        try {
          timed(`synth on ${node.label}`, () => inApp('npm', ['run', 'synth'], { nodeDir: node.dir }));
          const yaml = readFileSync(join(app, 'dist', 'kruise.k8s.yaml'), 'utf8');
          expect(yaml).toMatch(/^kind: Deployment\n(.*\n)*? {2}name: kruise-controller-manager$/m);
          outputs.set(node.label, yaml);
          const tested = timed(`jest on ${node.label}`, () => inApp('npm', ['test'], { nodeDir: node.dir }));
          expect(tested.stdout + tested.stderr).toMatch(
            /Tests:\s+1 passed, 1 total[\s\S]*Snapshots:\s+1 passed, 1 total/,
          );
        } catch (e) {
          throw new Error(`on Node ${node.label}: ${(e as Error).message}`, { cause: e });
        }
        figures.push(`synth and jest passed on Node ${node.label}`);
      }
      expect(new Set(outputs.values()).size).toBe(1);
      expect(outputs.size).toBe(nodes.length);
    }, 600_000);
  });

  it("compiles every example with the template's tsc, and the examples synthesize there", () => {
    mkdirSync(join(app, 'examples'));
    // The top-level examples: one chart file each. (examples/own-operator is an ESM program with its chart; the SDK
    // guide's test below builds the same operator in this app, as docs/sdk.md lays it out.)
    for (const file of readdirSync(join(REPO, 'examples')).filter((f) => f.endsWith('.ts')))
      copyFileSync(join(REPO, 'examples', file), join(app, 'examples', file));
    // The paths a user imports, under the template's tsconfig (CommonJS, node10 resolution,
    // and a full library check: our declarations pass under its @types/node 14 and lib es2016).
    writeFileSync(join(app, 'imports.ts'), CONSTRUCTS_IMPORTS);
    timed('compile examples', () => inApp('npm', ['run', 'compile']));
    const runnable = readdirSync(join(app, 'examples')).filter((f) => f.endsWith('.js') && f !== 'runtime-image.js');
    for (const file of runnable) inApp('node', [join('examples', file)]);
    expect(readdirSync(join(app, 'cdk8s.out')).filter((f) => f.endsWith('.k8s.yaml'))).toHaveLength(runnable.length);
    // As the README says to run one: ts-node, from source.
    rmSync(join(app, 'cdk8s.out'), { recursive: true });
    inApp('npx', ['ts-node', 'examples/small-cluster.ts']);
    expect(readdirSync(join(app, 'cdk8s.out'))).toEqual(['kruise-small-cluster.k8s.yaml']);
  }, 300_000);

  it('resolves the types under module: nodenext too, and an ESM app imports kruise-ha by name', () => {
    // An ESM project as TypeScript 5.9's `tsc --init` sets it up (module nodenext).
    const dir = join(app, 'nodenext');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    run('npx', ['tsc', '--init'], { cwd: dir });
    writeFileSync(join(dir, 'imports.ts'), CONSTRUCTS_IMPORTS);
    inApp('npx', ['tsc', '--noEmit', '-p', 'nodenext']);
    const esm = inApp(
      'node',
      [
        '--input-type=module',
        '-e',
        [
          "import { Chart, Testing } from 'cdk8s';",
          "import { KruiseManager } from 'kruise-ha';",
          "import { Names } from 'kruise-ha/contract';",
          "const chart = new Chart(Testing.app(), 'esm');",
          "new KruiseManager(chart, 'Kruise');",
          "console.log(Testing.synth(chart).filter((o) => o.kind === 'Service' && o.metadata.name === Names.webhookService).length);",
        ].join('\n'),
      ],
      { nodeDir: project().dir },
    );
    expect(esm.stdout.trim()).toBe('1');
  }, 300_000);

  describe('with kruise-ha-runtime for RuntimeImage', () => {
    let base = '';

    beforeAll(async () => {
      const added = timed('install kruise-ha-runtime', () => installTarball(packed.runtime.tarball, [], project().dir));
      figures.push(
        `kruise-ha-runtime: tarball ${kb(packed.runtime.size)}, unpacked ${kb(packed.runtime.unpackedSize)}; npm added ${added.added} packages, node_modules grew ${mb(added.bytes)}`,
      );
      const client = new RegistryClient(
        new RegistryHttp(registry.host, { credentials: { searched: 'test', find: () => undefined } }),
      );
      await pushTestBase(client, 'test/base', '1');
      base = `${registry.host}/test/base:1`;
    }, 300_000);

    it('resolves kruise-ha-runtime and kruise-ha-runtime/image for TypeScript, both ways', () => {
      writeFileSync(join(app, 'nodenext', 'runtime-imports.ts'), RUNTIME_IMPORTS);
      inApp('npx', ['tsc', '--noEmit', '-p', 'nodenext']);
      // The template's tsconfig resolves them too. Its full library check cannot pass: the
      // runtime's declarations (and client-node's) need Node 24's types, not its @types/node 14.
      writeFileSync(join(app, 'runtime-imports.ts'), RUNTIME_IMPORTS);
      inApp('npx', ['tsc', '--noEmit', '--skipLibCheck', '-p', '.']);
    }, 300_000);

    it("RuntimeImage bundles the installed runtime at synth, from the CommonJS app on the machine's Node", () => {
      writeFileSync(
        join(app, 'image.ts'),
        [
          "import { App, Chart } from 'cdk8s';",
          "import { KruiseManager, ManagerImage, RuntimeImage } from 'kruise-ha';",
          "const app = new App({ outdir: 'image.out' });",
          "const chart = new Chart(app, 'kruise');",
          `const image = new RuntimeImage(chart, 'Image', { repository: '${registry.host}/kruise-ha/manager', baseImage: '${base}' });`,
          "new KruiseManager(chart, 'Kruise', { image: ManagerImage.fromRuntime(image) });",
          'app.synth();',
          'console.log(image.imageReference);',
        ].join('\n'),
      );
      const synth = inApp('npx', ['ts-node', 'image.ts']);
      const reference = synth.stdout.trim();
      expect(reference).toMatch(new RegExp(`^${registry.host.replace(/\./g, '\\.')}/kruise-ha/manager:[0-9a-f]{20}$`));
      expect(readFileSync(join(app, 'image.out', 'kruise.k8s.yaml'), 'utf8')).toContain(`image: ${reference}`);
      const context = join(app, 'image.out', 'runtime-image', 'context');
      const help = inApp('node', [join(context, 'main.mjs'), '--help'], { nodeDir: project().dir });
      expect(help.stdout).toMatch(/--enable-leader-election/);
      // undici aliased, and client-node's generated code redirected, to the installed runtime's stand-ins
      // (lib/constructs/runtime-image/runtime-bundle.ts), not bundled.
      const bundled = readFileSync(join(context, 'main.mjs'), 'utf8');
      expect(bundled).toContain('the bundled runtime has no undici');
      expect(bundled).toContain('the bundled runtime has no generated client-node API');
      expect(bundled).not.toContain('"V1PodSpec"');
      // The example that uses it, as copied into the app and compiled above.
      inApp('node', [join('examples', 'runtime-image.js')]);
      expect(existsSync(join(app, 'cdk8s.out', 'runtime-image', 'context', 'main.mjs'))).toBe(true);
    }, 300_000);

    it('kruise-ha-image works from node_modules/.bin: help, loud failures, and a real publish', () => {
      const bin = join('node_modules', '.bin', 'kruise-ha-image');
      const options = { nodeDir: project().dir, allowFailure: true };
      const help = inApp(bin, ['--help'], options);
      expect({ status: help.status, stdout: help.stdout }).toEqual({
        status: 0,
        stdout: expect.stringMatching(/^usage: kruise-ha-image publish/),
      });
      const bare = inApp(bin, [], options);
      expect({ status: bare.status, stderr: bare.stderr }).toEqual({
        status: 2,
        stderr: expect.stringMatching(/^kruise-ha-image: expected "publish <dir>", got ""/),
      });
      const missing = inApp(bin, ['publish', 'no-such-dir'], options);
      expect({ status: missing.status, stderr: missing.stderr }).toEqual({
        status: 1,
        stderr: expect.stringMatching(/no-such-dir/),
      });

      const published = inApp(bin, ['publish', 'image.out'], { nodeDir: project().dir });
      const reference = readFileSync(join(app, 'image.out', 'kruise.k8s.yaml'), 'utf8').match(
        /image: (\S+\/kruise-ha\/manager:\S+)/,
      )![1];
      expect(published.stdout).toMatch(new RegExp(`^${reference.replace(/\./g, '\\.')}@sha256:[0-9a-f]{64}\n$`));
      const again = inApp(bin, ['publish', 'image.out'], { nodeDir: project().dir });
      expect(again.stdout).toBe(published.stdout);
      expect(again.stderr).toContain('is up to date');
    }, 300_000);

    it("docs/sdk.md as a newcomer follows it: the guide's files in this app, synthesized by ts-node", () => {
      // The guide's code blocks that start with `// <file>.ts`, written as it says, into a folder of this app.
      const dir = join(app, 'sdk');
      mkdirSync(dir);
      const guide = readFileSync(join(REPO, 'docs', 'sdk.md'), 'utf8');
      const files = [...guide.matchAll(/```ts\n\/\/ ([\w.-]+\.ts)\n([\s\S]*?)```/g)].map((m) => [m[1], m[2]] as const);
      expect(files.map(([f]) => f)).toEqual(['team-operator.ts', 'operator.ts', 'main.ts']);
      for (const [file, code] of files) writeFileSync(join(dir, file), code);
      try {
        // As cdk8s.yaml's `npx ts-node main.ts` runs it (type-checked), into an outdir of its own.
        inApp('npx', ['ts-node', join('sdk', 'main.ts')], { env: { CDK8S_OUTDIR: 'sdk.out' } });
        const yaml = readFileSync(join(app, 'sdk.out', 'team-operator.k8s.yaml'), 'utf8');
        expect(yaml).toContain('name: mpod.team-operator.kruise-ha.io');
        expect(yaml).toContain('path: /mutate--v1-pod');
        expect(yaml).toMatch(/resources:\n\s+- configmaps\n/);
        expect(yaml).toMatch(/image: registry\.example\.com\/team\/team-operator:[0-9a-f]{20}/);
        const bundle = join(app, 'sdk.out', 'runtime-image', 'context', 'main.mjs');
        const printed = inApp('node', [bundle, '--registrations'], { nodeDir: project().dir });
        expect(JSON.parse(printed.stdout)).toMatchObject({ name: 'team-operator', flags: ['mirror-namespace'] });
      } finally {
        // The template's tsc compiles every .ts of the app, with a library check the runtime's types cannot pass.
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);

    it('kruise-ha doctor works from node_modules/.bin: help, and a bad flag fails loudly by name', () => {
      const bin = join('node_modules', '.bin', 'kruise-ha');
      const options = { nodeDir: project().dir, allowFailure: true };
      const help = inApp(bin, ['doctor', '--help'], options);
      expect({ status: help.status, stdout: help.stdout }).toEqual({
        status: 0,
        stdout: expect.stringMatching(/^Usage: kruise-ha doctor/),
      });
      const bad = inApp(bin, ['doctor', '--bogus'], options);
      expect({ status: bad.status, stderr: bad.stderr }).toEqual({
        status: 2,
        stderr: expect.stringMatching(/Unknown option '--bogus'.*Fix: see kruise-ha doctor --help/),
      });
    }, 120_000);
  });
});
