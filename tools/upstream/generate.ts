/**
 * npm run upstream:generate [-- --check] [-- --version vX.Y.Z]
 *
 * Reads the pinned OpenKruise Go module (tools/upstream/pin.json; the go.sum hash is checked
 * before anything is read) and writes lib/constructs/upstream/kruise.generated.ts: CRDs
 * (config/crd/bases + the conversion patch), webhooks (config/webhook/manifests.yaml +
 * patch_manifests.yaml) joined with the handler that serves each path and its start
 * condition, controllers with their start conditions and RBAC markers, feature gates.
 *
 * --check   compare instead of write (exit 1 when the module is stale)
 * --version pin another release: Go verifies it against the checksum database, the pin is
 *           rewritten with its hash, and the module regenerated.
 *
 * Cross-checks make a new upstream version fail loudly instead of rendering wrong data:
 * every manifest path must be served by a handler, and the RBAC markers read from the code
 * must add up to exactly upstream's generated config/rbac/role.yaml.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type {
  Condition,
  GateImplication,
  PolicyRule,
  UndeclaredNeed,
  UpstreamController,
  UpstreamCrd,
  UpstreamFeatureGate,
  UpstreamHandlerSet,
  UpstreamRelease,
  UpstreamWebhook,
} from '../../lib/constructs/upstream/release.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PIN = join(ROOT, 'tools/upstream/pin.json');
const OUT = join(ROOT, 'lib/constructs/upstream/kruise.generated.ts');
const UNDECLARED = join(ROOT, 'tools/upstream/undeclared.json');

interface Pin {
  module: string;
  version: string;
  sum: string;
}
interface Facts {
  featureGates: UpstreamFeatureGate[];
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

/** The hand-kept needs, each proven by its cited line and bounded by upstream's own union role. */
function undeclared(dir: string, version: string, role: PolicyRule[], components: Set<string>): UndeclaredNeed[] {
  const file = JSON.parse(readFileSync(UNDECLARED, 'utf8')) as { version: string; entries: UndeclaredNeed[] };
  if (file.version !== version)
    fail(`${UNDECLARED} was confirmed for ${file.version}, not ${version}: re-run the real-binary test and update it`);
  const allowed = triples(role);
  for (const need of file.entries) {
    if (!components.has(need.component)) fail(`${UNDECLARED}: unknown component ${need.component}`);
    let code = '';
    try {
      code = readFileSync(join(dir, need.evidence.file), 'utf8');
    } catch {
      /* reported below */
    }
    if (!code.includes(need.evidence.contains))
      fail(`${UNDECLARED}: ${need.evidence.file} no longer contains "${need.evidence.contains}" (${need.component})`);
    const beyond = [...triples(need.rules)].filter((t) => !allowed.has(t));
    if (beyond.length)
      fail(`${UNDECLARED}: ${need.component} asks for more than upstream's role.yaml grants: ${beyond.join(', ')}`);
  }
  return file.entries;
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

function render(release: UpstreamRelease): string {
  const { crds: crdList, ...rest } = release;
  const lines = [
    `// Generated by tools/upstream/generate.ts from ${release.module}@${release.version} (${release.sum}).`,
    '// Do not edit: run `npm run upstream:generate` (`-- --version vX.Y.Z` for another release).',
    "import type { UpstreamCrd, UpstreamRelease } from './release.js';",
    '',
    '// CRD schemas are large: kept as JSON text, parsed once when the module loads.',
    'const CRDS: UpstreamCrd[] = [',
    ...crdList.map((c) => `  JSON.parse(${JSON.stringify(JSON.stringify(c))}) as UpstreamCrd,`),
    '];',
    '',
    `export const KRUISE_RELEASE: UpstreamRelease = { crds: CRDS, ...${JSON.stringify(rest, null, 2).replace(/\n/g, '\n')} };`,
    '',
  ];
  return lines.join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const versionArg = args.indexOf('--version');
  let pin = JSON.parse(readFileSync(PIN, 'utf8')) as Pin;
  if (versionArg >= 0) {
    const version = args[versionArg + 1];
    if (!/^v\d+\.\d+\.\d+(-[\w.]+)?$/.test(version ?? ''))
      fail(`--version needs a release tag like v1.8.3, got '${version}'`);
    // Go checks the download against the checksum database; the pin records what it accepted.
    pin = { ...pin, version, sum: download(pin.module, version).sum };
    if (!check) writeFileSync(PIN, `${JSON.stringify(pin, null, 2)}\n`);
  }
  const { dir, sum } = download(pin.module, pin.version);
  if (sum !== pin.sum) fail(`${pin.module}@${pin.version} has checksum ${sum}; ${PIN} pins ${pin.sum}`);

  const facts = JSON.parse(go(['run', '.', dir], join(ROOT, 'tools/upstream/extract'))) as Facts;
  const handlerSets = facts.webhookHandlers.map((h) => ({ ...h, rbac: h.rbac ?? [] }));
  const partial = {
    module: pin.module,
    version: pin.version,
    sum,
    featureGates: facts.featureGates,
    implications: facts.implications,
    crds: crds(dir, facts.conversionPath),
    webhooks: webhooks(dir, handlerSets),
    handlerSets,
    conversionPath: facts.conversionPath,
    webhookServerRbac: facts.webhookServerRbac,
    controllers: facts.controllers.map((c) => ({ ...c, rbac: c.rbac ?? [] })),
    leaderElectionRbac: rulesOf(join(dir, 'config/rbac/leader_election_role.yaml'), 'Role'),
    daemonRbac: rulesOf(join(dir, 'config/rbac/daemon_role.yaml'), 'ClusterRole'),
  };
  const managerRbac = rulesOf(join(dir, 'config/rbac/role.yaml'), 'ClusterRole');
  checkMarkersAddUp(partial, managerRbac);
  const components = new Set([...partial.controllers.map((c) => c.name), ...partial.handlerSets.map((h) => h.package)]);
  const text = render({ ...partial, undeclared: undeclared(dir, pin.version, managerRbac, components), managerRbac });
  const conditionCount = (c: Condition): number =>
    1 + [...(c.all ?? []), ...(c.any ?? []), ...(c.not ? [c.not] : [])].reduce((n, t) => n + conditionCount(t), 0);
  const summary =
    `${partial.crds.length} CRDs, ${partial.webhooks.length} webhooks, ${partial.controllers.length} controllers, ` +
    `${partial.featureGates.length} feature gates, ${partial.controllers.reduce((n, c) => n + conditionCount(c.requires), 0)} condition terms`;
  if (check) {
    let current = '';
    try {
      current = readFileSync(OUT, 'utf8');
    } catch {
      /* missing counts as stale */
    }
    if (current !== text) fail(`${OUT} is stale for ${pin.module}@${pin.version}: run \`npm run upstream:generate\``);
    process.stdout.write(`upstream:generate: up to date (${pin.version}: ${summary})\n`);
    return;
  }
  writeFileSync(OUT, text);
  process.stdout.write(`upstream:generate: wrote ${OUT} from ${pin.module}@${pin.version}: ${summary}\n`);
}

if (dirname(fileURLToPath(import.meta.url)) === dirname(process.argv[1] ?? '')) main();
