/**
 * What a healthy install of the manager found in the namespace looks like: the webhooks it
 * serves, the CRDs it needs, the permissions it uses. Read from the manager's Deployment (image,
 * flags) and, for the upstream image, from upstream's own generated release definitions — the
 * same pure data the constructs render from (lib/upstream: no cdk8s, no I/O).
 */
import type { V1Deployment } from '@kubernetes/client-node';
import {
  CERTIFICATE_RULES,
  CertModes,
  FeatureGates,
  Flags,
  Names,
  RUNTIME_LEADER_ELECTION_RULES,
  RUNTIME_NAMESPACED_RULES,
  RuntimeApi,
  runtimeClusterRules,
  servedRuntimeWebhooks,
  type PolicyRule,
} from '../contract.js';
import { KRUISE_AND_BUILT_IN_ACCESS, managerPermissions } from '../upstream/permissions.js';
import {
  effectiveGates,
  servedWebhooks,
  startedControllers,
  type Condition,
  type Environment,
  type UpstreamRelease,
} from '../upstream/release.js';
import { DEFAULT_UPSTREAM_RELEASE, UPSTREAM_RELEASES, upstreamRelease } from '../upstream/releases.js';
import type { Permission } from './model.js';

export type Flavour = 'upstream' | 'runtime';

export interface ExpectedWebhook {
  readonly type: 'mutating' | 'validating';
  readonly name: string;
  readonly path: string;
}

export interface ExpectedCrd {
  /** `<plural>.<group>`. */
  readonly name: string;
  /** Controllers and webhooks that need it (what breaks without it). */
  readonly neededBy: string[];
}

export interface Expectations {
  readonly flavour: Flavour;
  readonly image: string;
  /** Upstream image: the release whose definitions the install is judged against. */
  readonly release?: string;
  /** Set when that release is not exactly the image's tag (how it was chosen). */
  readonly versionNote?: string;
  readonly webhooks: ExpectedWebhook[];
  readonly crds: ExpectedCrd[];
  readonly permissions: Permission[];
  readonly serviceAccount: string;
  readonly lease: { readonly name: string; readonly namespace: string };
  readonly externalCertificates: boolean;
  /** CRDs converted by the manager's webhook: their caBundle must trust the CA too. */
  readonly conversionCrds: string[];
}

const UPSTREAM_IMAGE = /(^|\/)openkruise\/kruise-manager(:|@|$)/;

/** The manager container of a Deployment (named `manager`, else the first). */
export function managerContainer(d: V1Deployment) {
  const containers = d.spec?.template?.spec?.containers ?? [];
  return containers.find((c) => c.name === Names.managerContainer) ?? containers[0];
}

/** The value of `--flag=value` (or `--flag value`) in a container's command line. */
export function flagValue(d: V1Deployment, flag: string): string | undefined {
  const c = managerContainer(d);
  const argv = [...(c?.command ?? []), ...(c?.args ?? [])];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a.startsWith(`--${flag}=`) || a.startsWith(`-${flag}=`)) return a.slice(a.indexOf('=') + 1);
    if ((a === `--${flag}` || a === `-${flag}`) && i + 1 < argv.length && !argv[i + 1].startsWith('-'))
      return argv[i + 1];
  }
  return undefined;
}

function parseGates(value: string | undefined): Record<string, boolean> {
  const gates: Record<string, boolean> = {};
  for (const part of (value ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [gate, enabled] = part.split('=');
    gates[gate] = enabled === 'true';
  }
  return gates;
}

export function expectations(namespace: string, deployments: V1Deployment[]): Expectations | undefined {
  if (deployments.length === 0) return undefined;
  const image = managerContainer(deployments[0])?.image ?? '';
  const leader = deployments.find((d) => flagValue(d, Flags.leaderElectionId) !== undefined) ?? deployments[0];
  const lease = {
    name: flagValue(leader, Flags.leaderElectionId) ?? Names.leaderElectionId,
    namespace: flagValue(leader, Flags.leaderElectionNamespace) ?? namespace,
  };
  const serviceAccount = deployments[0].spec?.template?.spec?.serviceAccountName ?? 'default';
  return UPSTREAM_IMAGE.test(image)
    ? upstream(namespace, image, deployments, lease, serviceAccount)
    : runtime(namespace, image, deployments, lease, serviceAccount);
}

function upstream(
  namespace: string,
  image: string,
  deployments: V1Deployment[],
  lease: Expectations['lease'],
  serviceAccount: string,
): Expectations {
  const { release, note } = judgedRelease(image, deployments[0]);
  const gates = effectiveGates(release, parseGates(flagValue(deployments[0], Flags.featureGates)));
  // What the binary runs when every CRD is installed; a missing CRD is the CRD check's finding.
  const env: Environment = { gates, crds: new Set(release.crds.map((c) => c.kind)) };
  const webhooks = servedWebhooks(release, env);
  const controllers = startedControllers(release, env);
  const needs = new Map<string, Set<string>>();
  const need = (kind: string, who: string) => needs.set(kind, (needs.get(kind) ?? new Set()).add(who));
  for (const c of controllers) crdKinds(c.requires).forEach((k) => need(k, c.name));
  for (const w of webhooks) {
    crdKinds(w.requires).forEach((k) => need(k, w.name));
    for (const crd of release.crds) {
      if (
        w.rules.some((r) => r.apiGroups.includes(crd.group) && r.resources.some((x) => x.split('/')[0] === crd.plural))
      )
        need(crd.kind, w.name);
    }
  }
  for (const crd of release.crds.filter((c) => c.conversionWebhook))
    need(crd.kind, `${release.conversionPath} (conversion)`);
  const external = gates[FeatureGates.enableExternalCerts] === true;
  const conversionCrds = release.crds.filter((c) => c.conversionWebhook).map((c) => `${c.plural}.${c.group}`);
  const manager = managerPermissions(release, env, KRUISE_AND_BUILT_IN_ACCESS);
  return {
    flavour: 'upstream',
    image,
    release: release.version,
    versionNote: note,
    webhooks: webhooks.map((w) => ({ type: w.type, name: w.name, path: w.path })),
    crds: release.crds
      .filter((c) => needs.has(c.kind))
      .map((c) => ({ name: `${c.plural}.${c.group}`, neededBy: [...needs.get(c.kind)!].sort() })),
    permissions: [
      ...expand(manager.cluster),
      // Namespaced needs (pull-secret writes in kruise-daemon-config) are granted by Roles there, not cluster-wide.
      ...Object.entries(manager.namespaced).flatMap(([ns, rules]) => expand(rules, ns)),
      ...expand(
        release.leaderElectionRbac.filter((r) => r.resources.includes('leases') || r.resources.includes('events')),
        lease.namespace,
      ),
      ...certificatePermissions(namespace, external, conversionCrds),
    ],
    serviceAccount,
    lease,
    externalCertificates: external,
    conversionCrds,
  };
}

/** The flag names of a container's command line (`--name=value`, `--name value`, `-name`). */
function flagNames(d: V1Deployment): string[] {
  const c = managerContainer(d);
  return [...(c?.command ?? []), ...(c?.args ?? [])]
    .map((a) => /^--?([^=\s]+)/.exec(a)?.[1])
    .filter((n): n is string => n !== undefined);
}

/**
 * The release an upstream install is judged against: the image tag when it is a release this
 * doctor has definitions for; else the same minor line's release; else (a digest, a custom
 * tag) the newest release whose flags and feature gates fit the command line.
 */
export function judgedRelease(image: string, d: V1Deployment): { release: UpstreamRelease; note?: string } {
  const tag = /:([^:/@]+)$/.exec(image.split('@')[0])?.[1];
  if (tag && UPSTREAM_RELEASES.includes(tag)) return { release: upstreamRelease(tag) };
  const minor = tag ? /^v?(\d+)\.(\d+)\./.exec(tag) : null;
  if (minor) {
    const line = UPSTREAM_RELEASES.filter((v) => v.startsWith(`v${minor[1]}.${minor[2]}.`));
    if (line.length) {
      const v = line[line.length - 1];
      return {
        release: upstreamRelease(v),
        note: `the image tag is ${tag}; judged against ${v}'s definitions, the release of the same minor line this doctor knows (it knows ${UPSTREAM_RELEASES.join(', ')})`,
      };
    }
  }
  const flags = flagNames(d);
  const gates = Object.keys(parseGates(flagValue(d, Flags.featureGates)));
  const fits = UPSTREAM_RELEASES.filter((v) => {
    const r = upstreamRelease(v);
    const own = new Set(r.flags.map((f) => f.name));
    const anyRelease = (f: string) => UPSTREAM_RELEASES.some((o) => upstreamRelease(o).flags.some((x) => x.name === f));
    return (
      flags.every((f) => own.has(f) || !anyRelease(f)) && gates.every((g) => r.featureGates.some((x) => x.name === g))
    );
  });
  const v = fits.length ? fits[fits.length - 1] : DEFAULT_UPSTREAM_RELEASE;
  return {
    release: upstreamRelease(v),
    note: `the image ${tag ? `tag ${tag} is not a release this doctor knows` : 'has no release tag'}; judged against ${v}'s definitions, ${
      fits.length
        ? 'the newest release whose flags and feature gates fit the command line'
        : 'the default release (no release fits the command line)'
    }`,
  };
}

function runtime(
  namespace: string,
  image: string,
  deployments: V1Deployment[],
  lease: Expectations['lease'],
  serviceAccount: string,
): Expectations {
  const external = deployments.some((d) => flagValue(d, Flags.certMode) === CertModes.external);
  return {
    flavour: 'runtime',
    image,
    webhooks: servedRuntimeWebhooks(parseGates(flagValue(deployments[0], Flags.featureGates))).map((w) => ({ ...w })),
    crds: RuntimeApi.resources.map((r) => ({
      name: `${r.plural}.${r.group}`,
      neededBy: RuntimeApi.webhooks.filter((w) => w.path.includes(r.kind.toLowerCase())).map((w) => w.name),
    })),
    permissions: [
      ...expand(runtimeClusterRules()),
      // The kruise-configuration ConfigMap (patchPodMetadata whitelist), by name in the manager's namespace.
      ...expand(RUNTIME_NAMESPACED_RULES, namespace),
      ...expand([...RUNTIME_LEADER_ELECTION_RULES], lease.namespace),
      ...certificatePermissions(namespace, external, []),
    ],
    serviceAccount,
    lease,
    externalCertificates: external,
    conversionCrds: [],
  };
}

function certificatePermissions(namespace: string, external: boolean, conversionCrds: string[]): Permission[] {
  if (external)
    return expand(
      [{ apiGroups: [''], resources: ['secrets'], verbs: [...CERTIFICATE_RULES.externalSecretVerbs] }],
      namespace,
    );
  const verbs = [...CERTIFICATE_RULES.caBundleVerbs];
  return [
    ...expand([{ apiGroups: [''], resources: ['secrets'], verbs: [...CERTIFICATE_RULES.secretVerbs] }], namespace),
    ...expand([
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['mutatingwebhookconfigurations'],
        verbs,
        resourceNames: [Names.mutatingWebhookConfiguration],
      },
      {
        apiGroups: ['admissionregistration.k8s.io'],
        resources: ['validatingwebhookconfigurations'],
        verbs,
        resourceNames: [Names.validatingWebhookConfiguration],
      },
      ...(conversionCrds.length > 0
        ? [
            {
              apiGroups: ['apiextensions.k8s.io'],
              resources: ['customresourcedefinitions'],
              verbs,
              resourceNames: conversionCrds,
            },
          ]
        : []),
    ]),
  ];
}

/** Kinds named by `crd` leaves of a start condition (negated leaves excluded). */
function crdKinds(c: Condition): string[] {
  if (c.crd !== undefined) return [c.crd];
  return [...(c.all ?? []), ...(c.any ?? [])].flatMap(crdKinds);
}

/** One permission per verb, resource and name of each rule; wildcards cannot be asked and are skipped. */
export function expand(rules: readonly PolicyRule[], namespace?: string): Permission[] {
  const out = new Map<string, Permission>();
  for (const rule of rules) {
    for (const group of rule.apiGroups) {
      for (const full of rule.resources) {
        const [resource, subresource] = full.split('/');
        if (group === '*' || resource === '*') continue;
        for (const verb of rule.verbs) {
          if (verb === '*') continue;
          for (const name of rule.resourceNames?.length ? rule.resourceNames : [undefined]) {
            const p: Permission = {
              verb,
              group,
              resource,
              ...(subresource ? { subresource } : {}),
              ...(name ? { name } : {}),
              ...(namespace ? { namespace } : {}),
            };
            out.set(JSON.stringify(p), p);
          }
        }
      }
    }
  }
  return [...out.values()];
}
