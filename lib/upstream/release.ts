/**
 * The shape of an upstream OpenKruise release as `npm run upstream:generate` extracts it from
 * upstream's Go module, and the rules that decide, for a set of feature gates, which of its
 * webhooks the binary serves, which controllers start and what they need. Pure data and pure
 * functions: the constructs render from these, the tests compare them with the real binary.
 */
import type { PolicyRule } from '../contract.js';

/** The contract's rule shape, which the generated data uses too. */
export type { PolicyRule };

/** A start condition, as upstream's Go code states it (exactly one field is set). */
export interface Condition {
  readonly all?: Condition[];
  readonly any?: Condition[];
  readonly not?: Condition;
  /** A feature gate that must be enabled. */
  readonly gate?: string;
  /** A Kruise kind whose CRD must be installed (upstream asks API discovery). */
  readonly crd?: string;
  readonly const?: boolean;
}

export interface UpstreamFeatureGate {
  readonly name: string;
  readonly default: boolean;
  readonly preRelease: string;
}

/** When `when` holds after the flags are parsed, upstream forces the gates in `set`. */
export interface GateImplication {
  readonly when: Condition;
  readonly set: { readonly [gate: string]: boolean };
}

export interface WebhookRule {
  readonly apiGroups: string[];
  readonly apiVersions: string[];
  readonly operations: string[];
  readonly resources: string[];
  readonly scope?: string;
}

export interface LabelSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: string[];
}

/** One webhook of upstream's config/webhook/manifests.yaml, joined with the handler serving it. */
export interface UpstreamWebhook {
  readonly type: 'mutating' | 'validating';
  readonly name: string;
  readonly path: string;
  readonly rules: WebhookRule[];
  readonly failurePolicy: string;
  readonly sideEffects: string;
  readonly admissionReviewVersions: string[];
  /** From config/webhook/patch_manifests.yaml (delete protection). */
  readonly objectSelector?: { readonly matchExpressions: LabelSelectorRequirement[] };
  /** From config/webhook/patch_manifests.yaml (the pod webhooks skip the control plane). */
  readonly namespaceSelector?: { readonly matchExpressions: LabelSelectorRequirement[] };
  /** Go package of the handler (pkg/webhook/...). */
  readonly handler: string;
  /** When the binary serves the path; otherwise it deletes the entry at start-up. */
  readonly requires: Condition;
}

/** A set of handlers registered together (one add_*.go call), with its RBAC markers. */
export interface UpstreamHandlerSet {
  readonly package: string;
  readonly paths: string[];
  readonly requires: Condition;
  readonly rbac: PolicyRule[];
}

export interface UpstreamController {
  /** Name given to controller-runtime (`controller.New`), as the binary logs it. */
  readonly name: string;
  readonly package: string;
  readonly requires: Condition;
  /** Its `+kubebuilder:rbac` markers. */
  readonly rbac: PolicyRule[];
}

/**
 * A permission upstream's code uses without declaring it in the component that uses it (upstream
 * grants it only through the union role). Hand-kept in tools/upstream/undeclared.json, each
 * with the line of code that proves it; the generator checks the line still exists.
 */
export interface UndeclaredNeed {
  /** Controller name or handler package (as in `controllers` / `handlerSets`). */
  readonly component: string;
  readonly rules: PolicyRule[];
  /** The code only writes in this namespace: granted by a Role there, not cluster-wide. */
  readonly namespace?: string;
  readonly evidence: { readonly file: string; readonly contains: string };
}

export interface UpstreamCrd {
  readonly kind: string;
  readonly group: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly versions: string[];
  readonly storageVersion: string;
  /** Served through the manager's conversion webhook (the manager patches its caBundle). */
  readonly conversionWebhook: boolean;
  /** The CustomResourceDefinition as upstream ships it (config/crd/bases). */
  readonly manifest: { readonly [key: string]: unknown };
}

/** A command-line flag kruise-manager registers (flag.XxxVar in a package it links). */
export interface UpstreamFlag {
  readonly name: string;
  /** The default as upstream's source states it, e.g. `3`, `:8080`, `15 * time.Second`. */
  readonly default: string;
  /** Go flag type: String, Bool, Int, Duration, ... */
  readonly type: string;
  /** Package that registers it (`.` is main.go). */
  readonly package: string;
}

export interface UpstreamRelease {
  readonly module: string;
  readonly version: string;
  /** The go.sum hash of the module the data was read from. */
  readonly sum: string;
  readonly featureGates: UpstreamFeatureGate[];
  /** The flags of upstream's own packages (libraries' flags: {@link libraryFlagSets}). */
  readonly flags: UpstreamFlag[];
  /**
   * Calls in main.go that hand the command line to a library, which adds its own flags
   * (`k8s.io/klog/v2.InitFlags`: `--v`, `--logtostderr`, ...).
   */
  readonly libraryFlagSets: string[];
  readonly implications: GateImplication[];
  readonly crds: UpstreamCrd[];
  readonly webhooks: UpstreamWebhook[];
  readonly handlerSets: UpstreamHandlerSet[];
  /** Path of the CRD conversion handler. */
  readonly conversionPath: string;
  /** RBAC markers of the webhook server itself (configurations and CRD caBundles). */
  readonly webhookServerRbac: PolicyRule[];
  readonly controllers: UpstreamController[];
  /** Needs the code has beyond the markers of the component that has them. */
  readonly undeclared: UndeclaredNeed[];
  /** config/rbac/leader_election_role.yaml. */
  readonly leaderElectionRbac: PolicyRule[];
  /** config/rbac/daemon_role.yaml (kruise-daemon's ClusterRole). */
  readonly daemonRbac: PolicyRule[];
  /** config/rbac/role.yaml: the union upstream grants the manager. */
  readonly managerRbac: PolicyRule[];
}

/** What a condition is evaluated against. */
export interface Environment {
  readonly gates: { readonly [gate: string]: boolean };
  /** Kinds whose CRDs are installed. */
  readonly crds: ReadonlySet<string>;
}

export function holds(c: Condition, env: Environment): boolean {
  if (c.all) return c.all.every((t) => holds(t, env));
  if (c.any) return c.any.some((t) => holds(t, env));
  if (c.not) return !holds(c.not, env);
  if (c.gate !== undefined) return env.gates[c.gate] === true;
  if (c.crd !== undefined) return env.crds.has(c.crd);
  if (c.const !== undefined) return c.const;
  throw new Error(`upstream release data: empty condition ${JSON.stringify(c)}`);
}

/**
 * The gates the binary runs with: its defaults, then the flags, then its
 * SetDefaultFeatureGates() implications, in upstream's order.
 */
export function effectiveGates(
  release: UpstreamRelease,
  flags: { readonly [gate: string]: boolean },
): { [gate: string]: boolean } {
  const gates: { [gate: string]: boolean } = {};
  for (const g of release.featureGates) gates[g.name] = g.default;
  // component-base's AllAlpha/AllBeta: every gate of that stage the flags do not name takes the value.
  for (const [all, stage] of ALL_GATES) {
    if (flags[all] === undefined) continue;
    for (const g of release.featureGates) if (g.preRelease === stage && !(g.name in flags)) gates[g.name] = flags[all];
  }
  Object.assign(gates, flags);
  for (const [all] of ALL_GATES) delete gates[all];
  for (const imp of release.implications) {
    if (holds(imp.when, { gates, crds: new Set() })) Object.assign(gates, imp.set);
  }
  return gates;
}

/** component-base's switches for every gate of a stage, which every release's binary accepts. */
const ALL_GATES = [
  ['AllAlpha', 'Alpha'],
  ['AllBeta', 'Beta'],
] as const;

/** Gate names the release does not know (the binary refuses to start with them). */
export function unknownGates(release: UpstreamRelease, flags: { readonly [gate: string]: boolean }): string[] {
  const known = new Set([...release.featureGates.map((g) => g.name), ...ALL_GATES.map(([all]) => all)]);
  return Object.keys(flags).filter((g) => !known.has(g));
}

/** The webhooks the binary keeps in its configurations for this environment. */
export function servedWebhooks(release: UpstreamRelease, env: Environment): UpstreamWebhook[] {
  return release.webhooks.filter((w) => holds(w.requires, env));
}

/** The controllers that start in the leader for this environment. */
export function startedControllers(release: UpstreamRelease, env: Environment): UpstreamController[] {
  return release.controllers.filter((c) => holds(c.requires, env));
}
