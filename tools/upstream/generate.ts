/**
 * npm run upstream:generate [-- --check] [-- --version vX.Y.Z]
 *
 * Reads every OpenKruise release pinned in tools/upstream/pin.json (each Go module's go.sum hash
 * is checked before anything is read) and writes lib/upstream/kruise.generated.ts:
 * per release its CRDs (config/crd/bases + the conversion patch), webhooks
 * (config/webhook/manifests.yaml + patch_manifests.yaml) joined with the handler that serves
 * each path and its start condition, controllers with their start conditions and RBAC markers,
 * feature gates, and the flags of the packages the manager links. The newest release is stored
 * whole, every other one as its difference from it (json-patch.ts), to keep the package small.
 *
 * --check   compare instead of write (exit 1 when the data is stale)
 * --version add (or re-pin) a release: Go verifies it against the checksum database, the pin
 *           records its hash, and every release is regenerated. The default release becomes
 *           the newest stable one pinned.
 *
 * Cross-checks make a new upstream version fail loudly instead of rendering wrong data:
 * every manifest path must be served by a handler, the RBAC markers read from the code
 * must add up to exactly upstream's generated config/rbac/role.yaml, and every permission the
 * code uses without a marker (tools/upstream/undeclared.json) must be stated for the release
 * with the line of its code that needs it. What to do when one fails: docs/upstream-releases.md.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { diffJson, type Json } from '../../lib/upstream/json-patch.js';
import type {
  Condition,
  GateImplication,
  PolicyRule,
  UndeclaredNeed,
  UpstreamController,
  UpstreamCrd,
  UpstreamFeatureGate,
  UpstreamFlag,
  UpstreamHandlerSet,
  UpstreamRelease,
  UpstreamWebhook,
} from '../../lib/upstream/release.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PIN = join(ROOT, 'tools/upstream/pin.json');
const OUT = join(ROOT, 'lib/upstream/kruise.generated.ts');
const UNDECLARED = join(ROOT, 'tools/upstream/undeclared.json');

interface Pin {
  module: string;
  /** The release `ManagerImage.upstream()` renders without a version: the newest stable one. */
  default: string;
  /** Release tag -> go.sum hash (h1:...). */
  releases: Record<string, string>;
}
interface Facts {
  featureGates: UpstreamFeatureGate[];
  flags: UpstreamFlag[];
  libraryFlagSets: string[];
  implications: GateImplication[];
  webhookHandlers: Array<UpstreamHandlerSet & { rbac: PolicyRule[] | null }>;
  webhookServerRbac: PolicyRule[];
  controllers: Array<UpstreamController & { rbac: PolicyRule[] | null }>;
  conversionPath: string;
}
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function fail(message: string): never {
  process.stderr.write(`upstream:generate: ${message}\n`);
  process.exit(1);
}

function go(args: string[], cwd: string): string {
  try {
    return execFileSync(process.env.GO ?? 'go', args, {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, GOWORK: 'off', GOFLAGS: '-mod=mod' },
      maxBuffer: 64 << 20,
    });
  } catch (e) {
    const err = e as { stderr?: string; message: string };
    fail(`go ${args.join(' ')} failed: ${err.stderr || err.message}`);
  }
}

/** Downloads module@version; returns its directory and go.sum hash. */
function download(module: string, version: string): { dir: string; sum: string } {
  const info = JSON.parse(go(['mod', 'download', '-json', `${module}@${version}`], '/')) as {
    Dir?: string;
    Sum?: string;
    Error?: string;
  };
  if (info.Error || !info.Dir || !info.Sum)
    fail(`cannot download ${module}@${version}: ${info.Error ?? 'no Dir/Sum in the answer'}`);
  return { dir: info.Dir, sum: info.Sum };
}

const yamlDocs = (path: string): Doc[] =>
  parseAllDocuments(readFileSync(path, 'utf8'))
    .map((d) => d.toJS() as Doc)
    .filter(Boolean);

function crds(dir: string, conversionPath: string): UpstreamCrd[] {
  const bases = join(dir, 'config/crd/bases');
  // kustomize applies patchesStrategicMerge; the only one upstream lists turns on conversion.
  const kustomization = yamlDocs(join(dir, 'config/crd/kustomization.yaml'))[0];
  const converted = new Set<string>();
  for (const patch of (kustomization.patchesStrategicMerge ?? []) as string[]) {
    const doc = yamlDocs(join(dir, 'config/crd', patch))[0];
    if (doc.spec?.conversion?.webhook?.clientConfig?.service?.path !== conversionPath)
      fail(`${patch}: expected a conversion webhook patch on ${conversionPath}`);
    converted.add(doc.metadata.name);
  }
  const out = readdirSync(bases)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file): UpstreamCrd => {
      const manifest = yamlDocs(join(bases, file))[0];
      const spec = manifest.spec;
      const versions = (spec.versions as Doc[]).filter((v) => v.served).map((v) => v.name as string);
      return {
        kind: spec.names.kind,
        group: spec.group,
        plural: spec.names.plural,
        namespaced: spec.scope === 'Namespaced',
        versions,
        storageVersion: (spec.versions as Doc[]).find((v) => v.storage)!.name,
        conversionWebhook: converted.has(manifest.metadata.name),
        manifest,
      };
    });
  for (const name of converted)
    if (!out.some((c) => `${c.plural}.${c.group}` === name)) fail(`conversion patch for unknown CRD ${name}`);
  return out;
}

function webhooks(dir: string, handlers: UpstreamHandlerSet[]): UpstreamWebhook[] {
  const byPath = new Map(handlers.flatMap((h) => h.paths.map((p) => [p, h] as const)));
  const patches = new Map<string, Doc>();
  for (const doc of yamlDocs(join(dir, 'config/webhook/patch_manifests.yaml')))
    for (const w of doc.webhooks as Doc[]) patches.set(w.name, w);
  const out: UpstreamWebhook[] = [];
  for (const doc of yamlDocs(join(dir, 'config/webhook/manifests.yaml'))) {
    const type = doc.kind === 'MutatingWebhookConfiguration' ? 'mutating' : 'validating';
    for (const w of doc.webhooks as Doc[]) {
      const path = w.clientConfig.service.path as string;
      const handler =
        byPath.get(path) ?? fail(`webhook ${w.name}: no handler serves ${path}; the binary would delete it`);
      const patch = patches.get(w.name) ?? {};
      out.push({
        type,
        name: w.name,
        path,
        rules: w.rules,
        failurePolicy: w.failurePolicy,
        sideEffects: w.sideEffects,
        admissionReviewVersions: w.admissionReviewVersions,
        ...(patch.objectSelector ? { objectSelector: patch.objectSelector } : {}),
        ...(patch.namespaceSelector ? { namespaceSelector: patch.namespaceSelector } : {}),
        handler: handler.package,
        requires: handler.requires,
      });
      patches.delete(w.name);
    }
  }
  if (patches.size > 0) fail(`patch_manifests.yaml patches unknown webhooks: ${[...patches.keys()].join(', ')}`);
  const rendered = new Set(out.map((w) => w.path));
  const unrendered = [...byPath.keys()].filter((p) => !rendered.has(p));
  if (unrendered.length > 0) fail(`handlers serve paths no manifest entry uses: ${unrendered.join(', ')}`);
  return out.sort((a, b) => a.type.localeCompare(b.type) || a.name.localeCompare(b.name));
}

const rulesOf = (path: string, kind: string): PolicyRule[] =>
  yamlDocs(path)
    .filter((d) => d.kind === kind)
    .flatMap((d) =>
      (d.rules as Doc[]).map((r) => ({
        apiGroups: r.apiGroups,
        resources: r.resources,
        verbs: r.verbs,
        ...(r.resourceNames ? { resourceNames: r.resourceNames } : {}),
      })),
    );

/** group/resource/verb triples, the level at which two rule lists can be compared. */
function triples(rules: PolicyRule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules)
    for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${g}/${res}:${v}`);
  return out;
}

interface UndeclaredEntry {
  component: string;
  namespace?: string;
  rules: PolicyRule[];
  /** Per release: the line of code that needs it, or why that release does not. */
  releases: Record<string, { file: string; contains: string } | { notNeeded: string }>;
}

/**
 * The needs the code has without a marker, for one release: each entry must say, for this
 * release, the line of code that needs it (checked to exist) or why the release does not.
 * Bounded by upstream's own union role.
 */
function undeclared(dir: string, version: string, role: PolicyRule[], components: Set<string>): UndeclaredNeed[] {
  const file = JSON.parse(readFileSync(UNDECLARED, 'utf8')) as { entries: UndeclaredEntry[] };
  const allowed = triples(role);
  const out: UndeclaredNeed[] = [];
  const unstated = file.entries.filter((e) => !(version in e.releases));
  if (unstated.length)
    fail(
      `${UNDECLARED}: ${unstated.length} entries say nothing about ${version} (${unstated.map((e) => e.component).join(', ')}): ` +
        'run the real-binary test for it and state, per entry, the line that needs it or why it is not needed (docs/upstream-releases.md)',
    );
  for (const entry of file.entries) {
    const evidence = entry.releases[version];
    if ('notNeeded' in evidence) continue;
    if (!components.has(entry.component)) fail(`${UNDECLARED}: ${version} has no component ${entry.component}`);
    let code = '';
    try {
      code = readFileSync(join(dir, evidence.file), 'utf8');
    } catch {
      /* reported below */
    }
    if (!code.includes(evidence.contains))
      fail(
        `${UNDECLARED}: ${version}: ${evidence.file} does not contain "${evidence.contains}" (${entry.component}); ` +
          'find the line that needs the permission now, or prove with the real binary that it is not needed (docs/upstream-releases.md)',
      );
    const beyond = [...triples(entry.rules)].filter((t) => !allowed.has(t));
    if (beyond.length)
      fail(`${UNDECLARED}: ${entry.component} asks for more than ${version}'s role.yaml grants: ${beyond.join(', ')}`);
    out.push({
      component: entry.component,
      rules: entry.rules,
      ...(entry.namespace ? { namespace: entry.namespace } : {}),
      evidence,
    });
  }
  return out;
}

function checkMarkersAddUp(release: Omit<UpstreamRelease, 'managerRbac' | 'undeclared'>, role: PolicyRule[]): void {
  const fromCode = triples([
    ...release.webhookServerRbac,
    ...release.handlerSets.flatMap((h) => h.rbac),
    ...release.controllers.flatMap((c) => c.rbac),
  ]);
  const fromRole = triples(role);
  const missing = [...fromRole].filter((t) => !fromCode.has(t));
  const extra = [...fromCode].filter((t) => !fromRole.has(t));
  if (missing.length || extra.length) {
    fail(
      `RBAC markers read from the code differ from config/rbac/role.yaml; the extractor misses something.\n  in role.yaml only: ${missing.join(', ')}\n  in markers only: ${extra.join(', ')}`,
    );
  }
}

/** Semver order of release tags (pre-releases before their release). */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.replace(/^v/, '').split('-', 2);
    return { nums: core.split('.').map(Number), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < 3; i++) if (x.nums[i] !== y.nums[i]) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre.localeCompare(y.pre);
}

function render(releases: UpstreamRelease[], defaultVersion: string): string {
  const sorted = [...releases].sort((a, b) => compareVersions(a.version, b.version));
  const base = sorted[sorted.length - 1];
  const baseJson = base as unknown as Json;
  const lines = [
    `// Generated by tools/upstream/generate.ts from ${base.module} ${sorted.map((r) => `${r.version} (${r.sum})`).join(', ')}.`,
    '// Do not edit: run `npm run upstream:generate` (`-- --version vX.Y.Z` adds a release).',
    '',
    `/** Every release this library renders, oldest first. */`,
    `export const RELEASE_VERSIONS: readonly string[] = ${JSON.stringify(sorted.map((r) => r.version))};`,
    `/** What \`ManagerImage.upstream()\` renders without a version: the newest stable release. */`,
    `export const DEFAULT_RELEASE: string = ${JSON.stringify(defaultVersion)};`,
    `/** The release stored whole (the newest). */`,
    `export const BASE_RELEASE: string = ${JSON.stringify(base.version)};`,
    '',
    `/** ${base.version} as JSON text, parsed when first used (typed string: no literal type in the declarations). */`,
    `export const BASE_RELEASE_JSON: string = ${JSON.stringify(JSON.stringify(base))};`,
    '',
    '/** Every other release as a json-patch.ts difference from the base, as JSON text. */',
    'export const RELEASE_PATCHES: { readonly [version: string]: string } = {',
    ...sorted
      .filter((r) => r !== base)
      .map(
        (r) =>
          `  ${JSON.stringify(r.version)}: ${JSON.stringify(JSON.stringify(diffJson(baseJson, r as unknown as Json)))},`,
      ),
    '};',
    '',
  ];
  return lines.join('\n');
}

/** Reads one pinned release from its verified module. */
function generateRelease(
  module: string,
  version: string,
  pinnedSum: string,
): { release: UpstreamRelease; summary: string } {
  const { dir, sum } = download(module, version);
  if (sum !== pinnedSum) fail(`${module}@${version} has checksum ${sum}; ${PIN} pins ${pinnedSum}`);
  const facts = JSON.parse(go(['run', '.', dir], join(ROOT, 'tools/upstream/extract'))) as Facts;
  const handlerSets = facts.webhookHandlers.map((h) => ({ ...h, rbac: h.rbac ?? [] }));
  const partial = {
    module,
    version,
    sum,
    featureGates: facts.featureGates,
    flags: facts.flags,
    libraryFlagSets: facts.libraryFlagSets ?? [],
    implications: facts.implications ?? [],
    crds: crds(dir, facts.conversionPath),
    webhooks: webhooks(dir, handlerSets),
    handlerSets,
    conversionPath: facts.conversionPath,
    webhookServerRbac: facts.webhookServerRbac ?? [],
    controllers: facts.controllers.map((c) => ({ ...c, rbac: c.rbac ?? [] })),
    leaderElectionRbac: rulesOf(join(dir, 'config/rbac/leader_election_role.yaml'), 'Role'),
    daemonRbac: rulesOf(join(dir, 'config/rbac/daemon_role.yaml'), 'ClusterRole'),
  };
  const managerRbac = rulesOf(join(dir, 'config/rbac/role.yaml'), 'ClusterRole');
  checkMarkersAddUp(partial, managerRbac);
  const components = new Set([...partial.controllers.map((c) => c.name), ...partial.handlerSets.map((h) => h.package)]);
  const release: UpstreamRelease = {
    ...partial,
    undeclared: undeclared(dir, version, managerRbac, components),
    managerRbac,
  };
  const conditionCount = (c: Condition): number =>
    1 + [...(c.all ?? []), ...(c.any ?? []), ...(c.not ? [c.not] : [])].reduce((n, t) => n + conditionCount(t), 0);
  const summary =
    `${version}: ${partial.crds.length} CRDs, ${partial.webhooks.length} webhooks, ${partial.controllers.length} controllers, ` +
    `${partial.featureGates.length} feature gates, ${partial.flags.length} flags, ` +
    `${partial.controllers.reduce((n, c) => n + conditionCount(c.requires), 0)} condition terms`;
  return { release, summary };
}

const RELEASE_TAG = /^v\d+\.\d+\.\d+(-[\w.]+)?$/;

function main(): void {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const versionArg = args.indexOf('--version');
  const pin = JSON.parse(readFileSync(PIN, 'utf8')) as Pin;
  if (versionArg >= 0) {
    const version = args[versionArg + 1];
    if (!RELEASE_TAG.test(version ?? '')) fail(`--version needs a release tag like v1.9.1, got '${version}'`);
    // Go checks the download against the checksum database; the pin records what it accepted.
    pin.releases = { ...pin.releases, [version]: download(pin.module, version).sum };
  }
  const versions = Object.keys(pin.releases).sort(compareVersions);
  for (const v of versions) if (!RELEASE_TAG.test(v)) fail(`${PIN}: '${v}' is not a release tag`);
  const stable = versions.filter((v) => !v.includes('-'));
  if (!stable.length) fail(`${PIN} pins no stable release`);
  pin.default = stable[stable.length - 1];

  const generated = versions.map((v) => generateRelease(pin.module, v, pin.releases[v]));
  const text = render(
    generated.map((g) => g.release),
    pin.default,
  );
  const summary = generated.map((g) => g.summary).join('; ');
  const pinText = `${JSON.stringify({ module: pin.module, default: pin.default, releases: Object.fromEntries(versions.map((v) => [v, pin.releases[v]])) }, null, 2)}\n`;
  if (check) {
    let current = '';
    try {
      current = readFileSync(OUT, 'utf8');
    } catch {
      /* missing counts as stale */
    }
    if (current !== text) fail(`${OUT} is stale for ${versions.join(', ')}: run \`npm run upstream:generate\``);
    if (readFileSync(PIN, 'utf8') !== pinText)
      fail(`${PIN} is not in its generated form: run \`npm run upstream:generate\``);
    process.stdout.write(`upstream:generate: up to date (default ${pin.default}; ${summary})\n`);
    return;
  }
  writeFileSync(PIN, pinText);
  writeFileSync(OUT, text);
  process.stdout.write(`upstream:generate: wrote ${OUT} (default ${pin.default}; ${summary})\n`);
}

if (dirname(fileURLToPath(import.meta.url)) === dirname(process.argv[1] ?? '')) main();
