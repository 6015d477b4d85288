/**
 * What changes between two upstream releases, from their generated data: CRDs (served and
 * stored versions, conversion, schema), webhooks, controllers, RBAC, feature gates (and their
 * defaults), flags (and their defaults). Pure data; `kruise-ha upgrade-diff <from> <to>` prints it.
 */
import { diffJson, type Json } from './json-patch.js';
import type { Condition, PolicyRule, UpstreamWebhook } from './release.js';
import { UPSTREAM_RELEASES, upstreamRelease } from './releases.js';

/** Added, removed, and changed members of a named collection. */
export interface Changes<T> {
  readonly added: T[];
  readonly removed: T[];
}

export interface CrdChange {
  /** `<plural>.<group>`. */
  readonly name: string;
  readonly servedAdded: string[];
  readonly servedRemoved: string[];
  /** Set when the storage version changes. */
  readonly storageVersion?: { readonly from: string; readonly to: string };
  /** Set when conversion through the manager's webhook starts or stops. */
  readonly conversionWebhook?: { readonly from: boolean; readonly to: boolean };
  /** JSON paths of the CRD manifest that differ (schemas, printer columns, annotations), counted. */
  readonly manifestChanges: number;
}

export interface WebhookRef {
  readonly type: 'mutating' | 'validating';
  readonly name: string;
  readonly path: string;
}

export interface WebhookChange extends WebhookRef {
  /** What differs, e.g. `path /a -> /b`, `rules`, `failurePolicy Ignore -> Fail`, `start condition`. */
  readonly changes: string[];
}

export interface DefaultChange {
  readonly name: string;
  readonly from: string;
  readonly to: string;
}

export interface ReleaseDiff {
  readonly from: string;
  readonly to: string;
  readonly direction: 'upgrade' | 'downgrade' | 'same';
  readonly crds: Changes<string> & { readonly changed: CrdChange[] };
  readonly webhooks: Changes<WebhookRef> & { readonly changed: WebhookChange[] };
  readonly controllers: Changes<string> & { readonly startConditionChanged: string[] };
  /** `group/resource:verb` of upstream's manager role (config/rbac/role.yaml). */
  readonly managerRbac: Changes<string>;
  /** `group/resource:verb` of kruise-daemon's role. */
  readonly daemonRbac: Changes<string>;
  readonly featureGates: Changes<string> & { readonly defaultChanged: DefaultChange[] };
  readonly flags: Changes<string> & { readonly defaultChanged: DefaultChange[] };
  /** Why applying `to` over an install of `from` breaks it (a downgrade over newer stored versions). */
  readonly blockers: string[];
  /** What to do around the change (stale webhook entries, storage migration, removed gates). */
  readonly notes: string[];
}

const triples = (rules: readonly PolicyRule[]): Set<string> => {
  const out = new Set<string>();
  for (const r of rules)
    for (const g of r.apiGroups)
      for (const res of r.resources)
        for (const v of r.verbs)
          out.add(`${g || 'core'}/${res}${r.resourceNames ? `[${r.resourceNames.join(',')}]` : ''}:${v}`);
  return out;
};

function setChanges(from: Iterable<string>, to: Iterable<string>): Changes<string> {
  const a = new Set(from);
  const b = new Set(to);
  return { added: [...b].filter((x) => !a.has(x)).sort(), removed: [...a].filter((x) => !b.has(x)).sort() };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const key = (w: { type: string; name: string }) => `${w.type}/${w.name}`;
const ref = (w: UpstreamWebhook): WebhookRef => ({ type: w.type, name: w.name, path: w.path });

/** Release order of two tags (negative: `a` is older). */
export function compareReleases(a: string, b: string): number {
  const n = (v: string) => v.replace(/^v/, '').split(/[.-]/).map(Number);
  const [x, y] = [n(a), n(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return 0;
}

function describeCondition(c: Condition): string {
  if (c.all) return `(${c.all.map(describeCondition).join(' and ')})`;
  if (c.any) return `(${c.any.map(describeCondition).join(' or ')})`;
  if (c.not) return `not ${describeCondition(c.not)}`;
  if (c.gate !== undefined) return c.gate;
  if (c.crd !== undefined) return `CRD ${c.crd}`;
  return String(c.const);
}

/** The typed difference between two releases this library renders; throws for an unknown one. */
export function releaseDiff(fromVersion: string, toVersion: string): ReleaseDiff {
  for (const v of [fromVersion, toVersion])
    if (!UPSTREAM_RELEASES.includes(v))
      throw new Error(`${v} is not a release this library renders; it renders ${UPSTREAM_RELEASES.join(', ')}`);
  const from = upstreamRelease(fromVersion);
  const to = upstreamRelease(toVersion);
  const order = compareReleases(fromVersion, toVersion);
  const direction = order < 0 ? 'upgrade' : order > 0 ? 'downgrade' : 'same';

  const crdName = (c: { plural: string; group: string }) => `${c.plural}.${c.group}`;
  const fromCrds = new Map(from.crds.map((c) => [crdName(c), c]));
  const toCrds = new Map(to.crds.map((c) => [crdName(c), c]));
  const crdChanged: CrdChange[] = [];
  for (const [name, b] of toCrds) {
    const a = fromCrds.get(name);
    if (!a) continue;
    const served = setChanges(a.versions, b.versions);
    const manifestChanges = diffJson(a.manifest as Json, b.manifest as Json).length;
    if (!served.added.length && !served.removed.length && a.storageVersion === b.storageVersion && !manifestChanges)
      continue;
    crdChanged.push({
      name,
      servedAdded: served.added,
      servedRemoved: served.removed,
      ...(a.storageVersion !== b.storageVersion
        ? { storageVersion: { from: a.storageVersion, to: b.storageVersion } }
        : {}),
      ...(a.conversionWebhook !== b.conversionWebhook
        ? { conversionWebhook: { from: a.conversionWebhook, to: b.conversionWebhook } }
        : {}),
      manifestChanges,
    });
  }

  const fromHooks = new Map(from.webhooks.map((w) => [key(w), w]));
  const toHooks = new Map(to.webhooks.map((w) => [key(w), w]));
  const hookChanged: WebhookChange[] = [];
  for (const [k, b] of toHooks) {
    const a = fromHooks.get(k);
    if (!a) continue;
    const changes = [
      ...(a.path !== b.path ? [`path ${a.path} -> ${b.path}`] : []),
      ...(!same(a.rules, b.rules) ? ['rules'] : []),
      ...(a.failurePolicy !== b.failurePolicy ? [`failurePolicy ${a.failurePolicy} -> ${b.failurePolicy}`] : []),
      ...(!same(a.objectSelector, b.objectSelector) || !same(a.namespaceSelector, b.namespaceSelector)
        ? ['selectors']
        : []),
      ...(!same(a.requires, b.requires)
        ? [`served when ${describeCondition(a.requires)} -> ${describeCondition(b.requires)}`]
        : []),
    ];
    if (changes.length) hookChanged.push({ ...ref(b), changes });
  }

  const fromControllers = new Map(from.controllers.map((c) => [c.name, c]));
  const controllers = setChanges(
    fromControllers.keys(),
    to.controllers.map((c) => c.name),
  );
  const startConditionChanged = to.controllers
    .filter((c) => fromControllers.has(c.name) && !same(fromControllers.get(c.name)!.requires, c.requires))
    .map(
      (c) =>
        `${c.name}: ${describeCondition(fromControllers.get(c.name)!.requires)} -> ${describeCondition(c.requires)}`,
    );

  const gatesFrom = new Map(from.featureGates.map((g) => [g.name, g]));
  const gateDefaults: DefaultChange[] = to.featureGates
    .filter((g) => gatesFrom.has(g.name) && gatesFrom.get(g.name)!.default !== g.default)
    .map((g) => ({ name: g.name, from: String(gatesFrom.get(g.name)!.default), to: String(g.default) }));
  const flagsFrom = new Map(from.flags.map((f) => [f.name, f]));
  const flagDefaults: DefaultChange[] = to.flags
    .filter((f) => flagsFrom.has(f.name) && flagsFrom.get(f.name)!.default !== f.default)
    .map((f) => ({ name: f.name, from: flagsFrom.get(f.name)!.default, to: f.default }));

  const webhooks = {
    added: to.webhooks.filter((w) => !fromHooks.has(key(w))).map(ref),
    removed: from.webhooks.filter((w) => !toHooks.has(key(w))).map(ref),
    changed: hookChanged,
  };
  const featureGates = {
    ...setChanges(
      gatesFrom.keys(),
      to.featureGates.map((g) => g.name),
    ),
    defaultChanged: gateDefaults,
  };
  const crds = { ...setChanges(fromCrds.keys(), toCrds.keys()), changed: crdChanged };

  const blockers: string[] = [];
  const notes: string[] = [];
  // A version the API server has stored objects in must stay in the CRD (status.storedVersions):
  // a CRD that drops it is refused, and objects stored in it could not be read.
  for (const c of crdChanged) {
    const storedOnlyInFrom = fromCrds.get(c.name)!.storageVersion;
    if (!toCrds.get(c.name)!.versions.includes(storedOnlyInFrom))
      blockers.push(
        `${c.name}: ${fromVersion} stores objects as ${storedOnlyInFrom}, which ${toVersion} does not serve; the API server refuses a CRD that drops a stored version, and those objects could not be read`,
      );
  }
  for (const name of crds.removed)
    blockers.push(`${name}: ${toVersion} has no such CRD; removing it deletes every object of it`);
  if (direction === 'downgrade') {
    notes.push(
      `a downgrade: ${fromVersion} may already have written objects in versions or fields ${toVersion} does not know; kruise-ha renders it only on a fresh install or after the stored versions were migrated back (docs/upstream-releases.md)`,
    );
  }
  const migrated = crdChanged.filter((c) => c.storageVersion);
  if (migrated.length)
    notes.push(
      `storage version changes (${migrated.map((c) => `${c.name} ${c.storageVersion!.from} -> ${c.storageVersion!.to}`).join(', ')}): existing objects stay stored in the old version until rewritten; keep the old version served until they are (status.storedVersions)`,
    );
  const renamed = webhooks.removed.filter((w) => !webhooks.added.some((x) => x.name === w.name));
  if (renamed.length)
    notes.push(
      `webhooks no longer in ${toVersion} (${renamed.map((w) => w.name).join(', ')}): apply the new output with the same field manager (server-side apply) so the entries are removed, then check with \`kruise-ha doctor\` that no stale entry is left`,
    );
  if (featureGates.removed.length)
    notes.push(
      `gates ${toVersion} does not know (${featureGates.removed.join(', ')}): remove them from featureGates first; the binary refuses to start with an unknown gate`,
    );
  for (const d of gateDefaults)
    notes.push(
      `feature gate ${d.name} defaults to ${d.to} in ${toVersion} (was ${d.from}): set it to keep the old behaviour`,
    );

  return {
    from: fromVersion,
    to: toVersion,
    direction,
    crds,
    webhooks,
    controllers: { ...controllers, startConditionChanged },
    managerRbac: setChanges(triples(from.managerRbac), triples(to.managerRbac)),
    daemonRbac: setChanges(triples(from.daemonRbac), triples(to.daemonRbac)),
    featureGates,
    flags: {
      ...setChanges(
        flagsFrom.keys(),
        to.flags.map((f) => f.name),
      ),
      defaultChanged: flagDefaults,
    },
    blockers,
    notes,
  };
}

/** The diff as text, one section per kind of change, empty sections left out. */
export function renderReleaseDiff(d: ReleaseDiff): string {
  const lines = [`kruise-manager ${d.from} -> ${d.to} (${d.direction})`];
  const section = (title: string, items: string[]) => {
    if (!items.length) return;
    lines.push('', `${title}:`, ...items.map((i) => `  ${i}`));
  };
  section('Blockers (applying the new output over the old install breaks it)', d.blockers);
  section('CRDs added', d.crds.added);
  section('CRDs removed', d.crds.removed);
  section(
    'CRDs changed',
    d.crds.changed.map((c) =>
      [
        c.name,
        ...(c.servedAdded.length ? [`serves +${c.servedAdded.join(',')}`] : []),
        ...(c.servedRemoved.length ? [`stops serving ${c.servedRemoved.join(',')}`] : []),
        ...(c.storageVersion ? [`stores ${c.storageVersion.from} -> ${c.storageVersion.to}`] : []),
        ...(c.conversionWebhook
          ? [c.conversionWebhook.to ? 'converts through the manager webhook' : 'no longer converts through the webhook']
          : []),
        ...(c.manifestChanges ? [`${c.manifestChanges} schema/manifest changes`] : []),
      ].join('; '),
    ),
  );
  const hook = (w: WebhookRef) => `${w.type} ${w.name} ${w.path}`;
  section('Webhooks added', d.webhooks.added.map(hook));
  section('Webhooks removed', d.webhooks.removed.map(hook));
  section(
    'Webhooks changed',
    d.webhooks.changed.map((w) => `${hook(w)}: ${w.changes.join('; ')}`),
  );
  section('Controllers added', d.controllers.added);
  section('Controllers removed', d.controllers.removed);
  section('Controller start conditions changed', d.controllers.startConditionChanged);
  section('Manager permissions added (upstream role.yaml)', d.managerRbac.added);
  section('Manager permissions removed (upstream role.yaml)', d.managerRbac.removed);
  section('Daemon permissions added', d.daemonRbac.added);
  section('Daemon permissions removed', d.daemonRbac.removed);
  section('Feature gates added', d.featureGates.added);
  section('Feature gates removed', d.featureGates.removed);
  section(
    'Feature gate defaults changed',
    d.featureGates.defaultChanged.map((c) => `${c.name}: ${c.from} -> ${c.to}`),
  );
  section(
    'Flags added',
    d.flags.added.map((f) => `--${f}`),
  );
  section(
    'Flags removed',
    d.flags.removed.map((f) => `--${f}`),
  );
  section(
    'Flag defaults changed',
    d.flags.defaultChanged.map((c) => `--${c.name}: ${c.from} -> ${c.to}`),
  );
  section('What to do', d.notes);
  return `${lines.join('\n')}\n`;
}
