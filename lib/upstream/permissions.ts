import { Environment, holds, PolicyRule, UpstreamCrd, UpstreamRelease } from './release.js';

/** A resource of an API group, e.g. `{ apiGroup: 'example.com', resource: 'widgets' }`. */
export interface GroupResource {
  /** API group; '' for the core group. */
  readonly apiGroup: string;
  /** Plural resource name. */
  readonly resource: string;
}

/**
 * How far upstream's wildcard reads (`*` and `* /scale`) are narrowed: not at all (`wildcard`), or to the built-in
 * workloads, Kruise's own resources and `extra`. KruiseManager's `customResourceAccess` prop chooses it.
 */
export interface ResourceAccess {
  readonly wildcard: boolean;
  readonly extra: readonly GroupResource[];
}

/** The default: the built-in workloads and Kruise's own resources only. */
export const KRUISE_AND_BUILT_IN_ACCESS: ResourceAccess = { wildcard: false, extra: [] };

/** Replaces a wildcard rule by the resources `access` narrows it to; other rules pass through. */
function narrow(access: ResourceAccess, rule: PolicyRule, known: GroupResource[]): PolicyRule[] {
  const wildGroup = rule.apiGroups.includes('*');
  const wildResources = rule.resources.filter((r) => r === '*' || r.startsWith('*/'));
  if (access.wildcard || (!wildGroup && wildResources.length === 0)) return [rule];
  if (!wildGroup || wildResources.length !== rule.resources.length) {
    throw new Error(`upstream release data: cannot narrow the rule ${JSON.stringify(rule)}`);
  }
  const targets = [...known, ...access.extra];
  return wildResources.flatMap((wild) => {
    const sub = wild === '*' ? '' : wild.slice(1); // '/scale' or ''
    return targets.map((t) => ({ apiGroups: [t.apiGroup], resources: [`${t.resource}${sub}`], verbs: rule.verbs }));
  });
}

/** Workloads whose scale subresource upstream reads: the built-in ones. */
const BUILT_IN_SCALABLE: GroupResource[] = ['deployments', 'replicasets', 'statefulsets'].map((resource) => ({
  apiGroup: 'apps',
  resource,
}));

/** What the manager needs: cluster-wide rules, and rules only needed in one namespace (a Role there). */
export interface ManagerPermissions {
  readonly cluster: PolicyRule[];
  readonly namespaced: { readonly [namespace: string]: PolicyRule[] };
}

/**
 * The manager's permissions for an environment: the RBAC markers of every controller that
 * starts and every webhook handler that is served, their undeclared needs, plus the webhook
 * server's reads, with wildcards narrowed by `access`. Writes to the webhook configurations
 * and CRDs are left to the name-restricted certificate role.
 */
export function managerPermissions(
  release: UpstreamRelease,
  env: Environment,
  access: ResourceAccess,
): ManagerPermissions {
  const controllers = release.controllers.filter((c) => holds(c.requires, env));
  const handlerSets = release.handlerSets.filter((h) => holds(h.requires, env));
  const active = new Set([...controllers.map((c) => c.name), ...handlerSets.map((h) => h.package)]);
  const needs = release.undeclared.filter((n) => active.has(n.component));

  const installed = release.crds.filter((c) => env.crds.has(c.kind));
  const scalable = installed.filter(hasScaleSubresource).map((c) => ({ apiGroup: c.group, resource: c.plural }));
  const kruise = installed.map((c) => ({ apiGroup: c.group, resource: c.plural }));
  const rules = [
    ...controllers.flatMap((c) => c.rbac),
    ...handlerSets.flatMap((h) => h.rbac),
    ...needs.filter((n) => !n.namespace).flatMap((n) => n.rules),
    ...release.webhookServerRbac.map((r) => ({
      ...r,
      verbs: r.verbs.filter((v) => v === 'get' || v === 'list' || v === 'watch'),
    })),
  ];
  const namespaced: { [namespace: string]: PolicyRule[] } = {};
  for (const need of needs) {
    if (need.namespace) namespaced[need.namespace] = mergeRules([...(namespaced[need.namespace] ?? []), ...need.rules]);
  }
  return {
    cluster: mergeRules(
      rules.flatMap((r) =>
        narrow(access, r, r.resources.some((x) => x.endsWith('/scale')) ? [...BUILT_IN_SCALABLE, ...scalable] : kruise),
      ),
    ),
    namespaced,
  };
}

function hasScaleSubresource(crd: UpstreamCrd): boolean {
  const versions = (crd.manifest.spec as { versions?: Array<{ subresources?: { scale?: object } }> }).versions ?? [];
  return versions.some((v) => v.subresources?.scale !== undefined);
}

/**
 * Folds rules into one per API group and verb set, resources sorted: the same permissions,
 * stated once. Rules with resourceNames are kept apart.
 */
export function mergeRules(rules: PolicyRule[]): PolicyRule[] {
  const verbs = new Map<string, Set<string>>(); // "group\0resource" -> verbs
  const named: PolicyRule[] = [];
  for (const rule of rules) {
    if (rule.resourceNames?.length) {
      named.push(rule);
      continue;
    }
    for (const group of rule.apiGroups) {
      for (const resource of rule.resources) {
        const key = `${group}\0${resource}`;
        const set = verbs.get(key) ?? new Set<string>();
        rule.verbs.forEach((v) => set.add(v));
        verbs.set(key, set);
      }
    }
  }
  const grouped = new Map<string, PolicyRule>(); // "group\0verbs" -> rule
  for (const [key, set] of [...verbs].sort(([a], [b]) => a.localeCompare(b))) {
    const [group, resource] = key.split('\0');
    const sortedVerbs = [...set].sort();
    const id = `${group}\0${sortedVerbs.join(',')}`;
    const existing = grouped.get(id);
    if (existing) existing.resources.push(resource);
    else grouped.set(id, { apiGroups: [group], resources: [resource], verbs: sortedVerbs });
  }
  return [...grouped.values(), ...named];
}
