import { Duration } from 'cdk8s';
import {
  FeatureGates,
  Flags,
  Paths,
  RUNTIME_LEADER_ELECTION_RULES,
  RUNTIME_NAMESPACED_RULES,
  RUNTIME_UID,
  runtimeClusterRules,
} from '../contract.js';
import { kplus } from './api.js';
import type { CrdManifest } from './crds.js';
import { propError } from './errors.js';
import { RUNTIME_RESOURCES, runtimeWebhooks } from './kruise-api.js';
import type { AggregatedResource } from './rbac.js';
import { runtimeCrds } from './runtime-crds.js';
import { UninstallProtection } from './uninstall-guard.js';
import { CustomResourceAccess } from './upstream/permissions.js';
import { resolveUpstreamProfile, UpstreamProfile } from './upstream/profile.js';
import type { PolicyRule } from './upstream/release.js';
import type { WebhookDefinition } from './webhooks.js';

/**
 * Kinds whose objects carry Secret payloads inline (a ResourceDistribution distributes
 * Secrets): only the aggregated `admin` role gets them, as upstream does.
 */
const SECRET_CARRYING_KINDS = ['ResourceDistribution'];

/** The KruiseManager props a flavour's rendering depends on beyond the image. */
export interface FlavourInput {
  readonly namespace: string;
  readonly featureGates?: { readonly [gate: string]: boolean };
  readonly externalCertificates: boolean;
  readonly customResourceAccess?: CustomResourceAccess;
  readonly uninstallProtection?: UninstallProtection;
  /** Props only one flavour supports, checked by {@link ManagerFlavourProfile._check}. */
  readonly split: boolean;
  readonly daemon?: boolean;
}

/** Everything a flavour renders outside the manager container, resolved once by KruiseManager. */
export interface ResolvedFlavour {
  /** Rendered as `--feature-gates` (manager and daemon). */
  readonly featureGates: { readonly [gate: string]: boolean };
  readonly crds: CrdManifest[];
  readonly clusterRules: PolicyRule[];
  readonly namespacedRules?: { readonly [namespace: string]: PolicyRule[] };
  readonly leaderElectionRules: PolicyRule[];
  readonly conversionCrds: string[];
  readonly aggregated: AggregatedResource[];
  readonly webhooks: WebhookDefinition[];
  readonly uninstallProtection: UninstallProtection;
  /** Whether kruise-daemon is rendered. */
  readonly daemon: boolean;
  /** Upstream image only: what the binary runs, from upstream's own definitions. */
  readonly upstreamProfile?: UpstreamProfile;
}

/** A writable emptyDir under the read-only root filesystem. */
export interface WritablePath {
  readonly name: string;
  readonly path: string;
  readonly sizeMi: number;
}

/**
 * What one manager process needs from the install: its container (command, user, probes,
 * writable paths, its own flags) and the objects around it (CRDs, RBAC, webhooks, gates).
 * Each flavour answers once here, so no construct asks which image it renders. Not part of
 * the API: `ManagerImage` chooses the flavour.
 */
export interface ManagerFlavourProfile {
  readonly command?: string[];
  /** User, group and fsGroup of the pod. */
  readonly uid: number;
  readonly writablePaths: WritablePath[];
  /** Whether the webhook configurations carry upstream's `template` annotation snapshot. */
  readonly webhookTemplate: boolean;
  /** Throws for props the flavour cannot honour, naming the prop. */
  _check(input: FlavourInput): void;
  _resolve(input: FlavourInput): ResolvedFlavour;
  /** The flags only this flavour's binary parses. */
  _args(input: { readonly role: string; readonly certMode: string; readonly pprofPort?: number }): string[];
  _liveness(healthPort: number): kplus.Probe;
}

/**
 * Flags only upstream kruise-manager (and kruise-daemon) parse; the runtime rejects them, so
 * they stay out of the shared contract.
 */
const UpstreamFlags = {
  enablePprof: 'enable-pprof',
  pprofAddr: 'pprof-addr',
} as const;

/**
 * pprof flags of an upstream binary: explicitly off (both binaries default to on, on every
 * interface), or on at the given port.
 */
export function pprofArgs(port: number | undefined): string[] {
  return port === undefined
    ? [`--${UpstreamFlags.enablePprof}=false`]
    : [`--${UpstreamFlags.enablePprof}=true`, `--${UpstreamFlags.pprofAddr}=:${port}`];
}

const LIVENESS_TIMING = {
  initialDelaySeconds: Duration.seconds(10),
  periodSeconds: Duration.seconds(10),
  failureThreshold: 3,
};
const UPSTREAM_FIX = 'or use ManagerImage.upstream()';

/** openkruise/kruise-manager (Go), as the official chart runs it. */
export const UPSTREAM_FLAVOUR: ManagerFlavourProfile = {
  command: ['/manager'],
  // The image's `nobody`, as the chart's securityContext.
  uid: 65534,
  writablePaths: [
    { name: 'tmp', path: '/tmp', sizeMi: 64 },
    { name: 'log', path: '/log', sizeMi: 256 },
  ],
  webhookTemplate: true,
  _check(input) {
    if (input.split) {
      throw propError(
        'topology',
        'split',
        'needs a manager that can run its webhook without its controllers; this library supports that for the runtime image only',
        'use ManagerTopology.colocated() with the upstream image, or ManagerImage.runtime(...)',
      );
    }
  },
  _resolve(input) {
    const protection = input.uninstallProtection ?? UninstallProtection.deletionProtection();
    const profile = resolveUpstreamProfile({
      namespace: input.namespace,
      featureGates: input.featureGates,
      externalCertificates: input.externalCertificates,
      customResourceAccess: input.customResourceAccess,
      protectionGates: protection.featureGates,
      crdLabels: protection.crdLabels,
    });
    return {
      featureGates: profile.flags,
      crds: profile.crds,
      clusterRules: profile.clusterRules,
      namespacedRules: profile.namespacedRules,
      leaderElectionRules: profile.leaderElectionRules,
      conversionCrds: profile.conversionCrds,
      aggregated: profile.release.crds.map((c) => ({
        apiGroup: c.group,
        resource: c.plural,
        adminOnly: SECRET_CARRYING_KINDS.includes(c.kind),
      })),
      webhooks: profile.webhooks,
      uninstallProtection: protection,
      daemon: input.daemon ?? true,
      upstreamProfile: profile,
    };
  },
  _args(input) {
    return [
      `--${Flags.leaderElectionResourceLock}=leases`,
      `--${Flags.logToStderr}=true`,
      `--${Flags.verbosity}=4`,
      `--${Flags.syncPeriod}=0`,
      ...pprofArgs(input.pprofPort),
    ];
  },
  // Upstream 1.7/1.8 register no healthz check (its /healthz answers 404). A TCP check of the
  // health listener cannot see a hung process: the kernel completes the handshake for a frozen
  // listener, so the HA drill's SIGSTOPped replica was never restarted. /readyz is answered by the
  // process itself (its webhook controller initialized and its webhook server answering over
  // TLS), needs no API server once started, and fails when the process hangs.
  _liveness(port) {
    return kplus.Probe.fromHttpGet(Paths.readyz, { port, ...LIVENESS_TIMING, timeoutSeconds: Duration.seconds(5) });
  },
};

/** This project's TypeScript runtime. */
export const RUNTIME_FLAVOUR: ManagerFlavourProfile = {
  uid: RUNTIME_UID,
  writablePaths: [{ name: 'tmp', path: '/tmp', sizeMi: 64 }],
  webhookTemplate: false,
  _check(input) {
    const onlyUpstream = (prop: string, value: unknown, problem: string, fix: string) => {
      throw propError(prop, value, problem, `${fix}, ${UPSTREAM_FIX}`);
    };
    if (input.customResourceAccess)
      onlyUpstream(
        'customResourceAccess',
        'set',
        "only narrows the upstream manager's wildcard grants; the runtime needs none",
        'remove customResourceAccess',
      );
    if (input.daemon) onlyUpstream('daemon', true, 'kruise-daemon ships only in the upstream image', 'remove daemon');
    // The runtime refuses any other gate at start (a crash loop): refuse it here, by name.
    const readable: readonly string[] = Object.values(FeatureGates);
    for (const [gate, enabled] of Object.entries(input.featureGates ?? {})) {
      if (!readable.includes(gate)) {
        onlyUpstream(
          `featureGates.${gate}`,
          enabled,
          `is not a gate of this project's runtime, which reads only ${readable.join(' and ')}`,
          `remove ${gate}`,
        );
      }
    }
    const protection = input.uninstallProtection;
    if (protection && protection.kind !== 'none') {
      onlyUpstream(
        'uninstallProtection',
        `UninstallProtection.${protection.kind}()`,
        'guards upstream Kruise workloads only',
        'remove uninstallProtection',
      );
    }
  },
  _resolve(input) {
    return {
      featureGates: { ...input.featureGates },
      crds: runtimeCrds(),
      clusterRules: runtimeClusterRules(RUNTIME_RESOURCES),
      namespacedRules: { [input.namespace]: [...RUNTIME_NAMESPACED_RULES] },
      leaderElectionRules: [...RUNTIME_LEADER_ELECTION_RULES],
      conversionCrds: [],
      aggregated: RUNTIME_RESOURCES.map((r) => ({ apiGroup: r.group, resource: r.plural, adminOnly: false })),
      webhooks: runtimeWebhooks(input.featureGates),
      uninstallProtection: UninstallProtection.none(),
      daemon: false,
    };
  },
  _args(input) {
    if (input.pprofPort !== undefined) {
      throw propError(
        'pprof',
        true,
        "is served by upstream kruise-manager only; this project's runtime has no pprof listener",
        'remove pprof, or use ManagerImage.upstream() (profile the runtime with node --cpu-prof / --heap-prof instead)',
      );
    }
    return [`--${Flags.role}=${input.role}`, `--${Flags.certMode}=${input.certMode}`];
  },
  // The runtime's /healthz fails when the event loop stalls or a watch is stuck.
  _liveness(port) {
    return kplus.Probe.fromHttpGet(Paths.healthz, { port, ...LIVENESS_TIMING, timeoutSeconds: Duration.seconds(5) });
  },
};
