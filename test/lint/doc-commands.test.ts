/**
 * Every command the README and docs/*.md give (`npm run <script>`, `npm test`, `npx <bin> [subcommand]`, in code
 * blocks and inline code) is run by a named test, or is listed below with the reason no test runs it. A command
 * documented without an entry fails here, naming the doc, the command and the fix, so a doc cannot promise a
 * command nobody runs without saying so.
 */
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Run by `file`, which must contain `runsAs` (default: the command itself); `how` says how, when not as written. */
interface Run {
  file: string;
  runsAs?: string;
  how?: string;
}
/** Not run by any test, and why. */
interface NotRun {
  notRun: string;
}

/** One entry per documented command, as extracted (`npm run X`, `npm test`, `npx BIN [SUBCOMMAND]`). */
const COMMANDS: Record<string, Run | NotRun> = {
  'npm run envtest': { file: 'test/integration/local-loop.test.ts' },
  'npm run envtest:install-runtime': { file: 'test/integration/local-loop.test.ts' },
  'npm run runtime': { file: 'test/integration/local-loop.test.ts' },
  'npm run doctor': {
    file: 'test/unit/tools/documented-help.test.ts',
    how: '--help only; the doctor itself runs in test/integration/doctor.test.ts as `node lib/doctor/cli.ts`',
  },
  'npm run image': {
    file: 'test/unit/tools/documented-help.test.ts',
    how: '--help only; publish runs in test/integration/runtime-image.test.ts through lib/image',
  },
  'npm run cluster:images': {
    file: 'test/unit/tools/documented-help.test.ts',
    how: '--help only; the images are built by test/integration/cluster-images.test.ts through test/cluster/images',
  },
  'npm run drills:publish': { file: 'test/unit/tools/test-run.test.ts', runsAs: "'run', '--silent', 'drills:publish'" },
  'npm run test:timings': { file: 'test/unit/tools/test-run.test.ts', runsAs: "'run', '--silent', 'test:timings'" },
  'npm run test:unit': {
    file: 'test/unit/tools/test-run.test.ts',
    runsAs: "'run', '--silent', 'test:unit'",
    how: 'with --listTests: which files `-- FILE` selects, not the tier',
  },
  'npm run synth': {
    file: 'test/package/app.test.ts',
    runsAs: "inApp('npm', ['run', 'synth']",
    how: "in a cdk8s template app (README's own-app section); this repo's `npm run synth` (Quickstart) is not run",
  },
  'npm run upstream:generate': {
    file: 'test/integration/upstream-generated.test.ts',
    runsAs: "'tools/upstream/generate.ts', '--check'",
    how: "the task's script with --check, through node --import tsx rather than npm",
  },
  'npx jest': {
    file: 'test/package/app.test.ts',
    runsAs: "inApp('npx', ['jest', '-u'])",
    how: "README's `npx jest -u` in the template app; the draw's replay line (development.md) is not run",
  },
  'npx ts-node': { file: 'test/package/app.test.ts', runsAs: "inApp('npx', ['ts-node', 'examples/small-cluster.ts'])" },
  'npx kruise-ha doctor': {
    file: 'test/package/app.test.ts',
    runsAs: "join('node_modules', '.bin', 'kruise-ha')",
    how: 'the bin npx resolves, from the installed package: --help and a bad flag',
  },
  'npx kruise-ha-image publish': {
    file: 'test/package/app.test.ts',
    runsAs: "join('node_modules', '.bin', 'kruise-ha-image')",
    how: 'the bin npx resolves, from the installed package: help, failures and a real publish',
  },
  'npx kruise-ha upgrade-diff': {
    file: 'test/unit/upstream/upgrade.test.ts',
    runsAs: "cli('upgrade-diff'",
    how: "in-process: the main() of lib/doctor/cli.ts that the kruise-ha bin calls, not the bin's process",
  },
  'npm test': { notRun: 'it is the whole suite (tools/test/run.ts) that runs every test here; CI runs it' },
  'npm run test:integration': { notRun: 'a whole tier; npm test runs the same Jest project (tools/test/run.ts PLAN)' },
  'npm run test:languages': { notRun: 'a whole tier; npm test runs the same Jest project (tools/test/run.ts PLAN)' },
  'npm run test:package': { notRun: 'a whole tier; npm test runs the same Jest project (tools/test/run.ts PLAN)' },
  'npm run test:e2e': { notRun: 'the e2e tier (real cluster, root, ~45 min); npm test runs the same Jest project' },
  'npm run test:fast': {
    notRun: 'runs the unit tier; test-run.test.ts checks its plan against npm test (FAST_PLAN), without running it',
  },
  'npm run test:upstream-releases': {
    notRun: 'runs upstream-real.test.ts once per pinned release (minutes each); npm test runs those steps itself',
  },
  'npx projen test:full-draw': { notRun: 'every generated case of the differential suites: far over any test budget' },
  'npx projen': { notRun: 'regenerates tracked files (package.json, tsconfigs, jest.config.json); a test must not' },
  'npx projen compile:constructs': {
    notRun: 'writes dist/; the package tier builds through the same task via prepack (pack.test.ts), not this command',
  },
  'npm run compile': {
    notRun: 'jsii and the builds into dist/ (not yet covered: the package tier builds via prepack)',
  },
  'npm run package': {
    notRun: "every language's package with jsii-pacmak (minutes); test/languages/global-setup.ts runs its steps",
  },
  'npm run docs': { notRun: 'typedoc rewrites docs/api, tracked files a test must leave alone (not yet covered)' },
  'npm run bench': { notRun: 'benchmarks upstream against the runtime for minutes per mode on a quiet machine' },
  'npx pepr build': { notRun: "Pepr's command, named in docs/sdk.md's comparison; Pepr is not a dependency here" },
  'npm run cluster': {
    notRun: 'the real local cluster (root, minutes); the e2e tier starts it through test/cluster in its global setup',
  },
};

/** The docs whose commands must be covered: the README and docs/*.md (docs/api is generated). */
function docs(): string[] {
  return [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
}

/** Code blocks' and inline code's text in markdown. */
function codeOf(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]);
  const prose = markdown.replace(/```[^\n]*\n[\s\S]*?```/g, '');
  return [...blocks, ...[...prose.matchAll(/`([^`\n]+)`/g)].map((m) => m[1])];
}

/** The commands in a piece of code, as COMMANDS keys them. */
function commandsIn(code: string): string[] {
  const found = [...code.matchAll(/\bnpm run (?:--silent )?([\w:.-]+)/g)].map((m) => `npm run ${m[1]}`);
  if (/\bnpm test\b/.test(code)) found.push('npm test');
  for (const m of code.matchAll(/\bnpx (?:--?[\w-]+ )*([\w@/.-]+)(?: ([a-z][\w:-]*)(?=\s|$))?/gm))
    found.push(`npx ${m[1]}${m[2] ? ` ${m[2]}` : ''}`);
  return found;
}

/** Every documented command and the docs that give it. */
function documented(): Map<string, string[]> {
  const where = new Map<string, string[]>();
  for (const doc of docs()) {
    for (const code of codeOf(readFileSync(join(ROOT, doc), 'utf8'))) {
      for (const command of commandsIn(code)) {
        const docsOf = where.get(command) ?? [];
        if (!docsOf.includes(doc)) where.set(command, [...docsOf, doc]);
      }
    }
  }
  return where;
}

describe('documented commands', () => {
  it('extracts commands from code blocks and inline code only', () => {
    const md =
      'run `npm run a -- x` or npm run prose\n```sh\nnpm install && npm test\nnpx kruise-ha doctor -n x\n```\n';
    expect(codeOf(md).flatMap(commandsIn).sort()).toEqual(['npm run a', 'npm test', 'npx kruise-ha doctor']);
    expect(commandsIn('KRUISE_HA_SEED=1 npx jest test/integration/x.test.ts')).toEqual(['npx jest']);
  });

  it('each is run by a named test or listed with the reason it is not', () => {
    const problems: string[] = [];
    for (const [command, where] of documented()) {
      if (!COMMANDS[command])
        problems.push(
          `${where.join(', ')}: \`${command}\` is documented but no test is named for it. Fix: run it in a test and ` +
            `add { file } to COMMANDS in test/lint/doc-commands.test.ts, or add { notRun: '<why no test can run it>' }`,
        );
    }
    expect(problems).toEqual([]);
  });

  it("each named test file exists and holds the command (or the form it runs it in: 'runsAs')", () => {
    const problems: string[] = [];
    for (const [command, entry] of Object.entries(COMMANDS)) {
      if ('notRun' in entry) continue;
      const needle = entry.runsAs ?? command;
      if (!existsSync(join(ROOT, entry.file))) problems.push(`${command}: ${entry.file} does not exist`);
      else if (!readFileSync(join(ROOT, entry.file), 'utf8').includes(needle))
        problems.push(
          `${command}: ${entry.file} does not contain ${JSON.stringify(needle)}. Fix: name the test that runs it, ` +
            'or set runsAs to the text by which that file runs it',
        );
    }
    expect(problems).toEqual([]);
  });

  it('no entry is left for a command the docs no longer give', () => {
    const given = documented();
    expect(
      Object.keys(COMMANDS)
        .filter((c) => !given.has(c))
        .map(
          (c) =>
            `\`${c}\` is in COMMANDS but no doc gives it. Fix: remove its entry from test/lint/doc-commands.test.ts`,
        ),
    ).toEqual([]);
  });
});
