import { Duration } from 'cdk8s';
import {
  FeatureGates,
  Flags,
  Paths,
  RUNTIME_LEADER_ELECTION_RULES,
  RUNTIME_NAMESPACED_RULES,
  RUNTIME_UID,
  runtimeClusterRules,
  runtimeFlagProblems,
  workersFlag,
  type CertMode,
  type Role,
} from '../../contract.js';
import { kplus } from '../core/api.js';
import type { CrdManifest } from '../crds/crds.js';
import { propError, wholeSeconds } from '../core/errors.js';
import { RUNTIME_RESOURCES, runtimeWebhooks } from '../webhooks/runtime-webhooks.js';
import { LogFormat, LogLevel, UPSTREAM_DEFAULT_VERBOSITY } from './logging.js';
import type { AggregatedResource } from './rbac.js';
import { runtimeCrds } from '../crds/runtime-crds.js';
import { UninstallProtection } from './uninstall-guard.js';
import type { CustomResourceAccess } from './custom-resource-access.js';
import { resolveUpstreamProfile, UpstreamProfile } from './upstream-profile.js';
import type { PolicyRule, UpstreamRelease } from '../../upstream/release.js';
import { DEFAULT_UPSTREAM_RELEASE, releasesWith, upstreamRelease } from '../../upstream/releases.js';
import type { WebhookDefinition } from '../webhooks/webhooks.js';

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
  /** Whether `daemonOptions` is set. */
  readonly daemonOptions?: boolean;
  readonly kubeCacheMutationDetector?: boolean;
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

/** What a flavour renders its own flags from. */
export interface FlavourArgsInput {
  readonly role: Role;
  readonly certMode: CertMode;
  readonly pprofPort?: number;
  readonly logLevel?: LogLevel;
  readonly logFormat?: LogFormat;
  readonly resyncPeriod?: Duration;
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
  /**
   * Seconds a stopping pod keeps serving before SIGTERM (the kubelet's preStop sleep action), for
   * a binary that stops listening at once: the EndpointSlice change reaches every kube-proxy first.
   * Undefined for a binary that drains itself.
   */
  readonly preStopSleepSeconds?: number;
  /** Throws for props the flavour cannot honour, naming the prop. */
  _check(input: FlavourInput): void;
  _resolve(input: FlavourInput): ResolvedFlavour;
  /** The flags only this flavour's binary parses. */
  _args(input: FlavourArgsInput): string[];
  _liveness(healthPort: number): kplus.Probe;
  /**
   * Why the binary would refuse `--<flag>`, or undefined when it has the flag. A flag no
   * release registers may be a library's (klog, controller-runtime) and passes unless `strict`.
   */
  _flagProblem(flag: string, strict: boolean): { problem: string; fix: string } | undefined;
}

/**
 * Flags only upstream kruise-manager (and kruise-daemon) parse; the runtime rejects them, so
 * they stay out of the shared contract.
 */
const UpstreamFlags = {
  enablePprof: 'enable-pprof',
  pprofAddr: 'pprof-addr',
  loggingFormat: 'logging-format',
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

/**
 * Flags of the libraries kruise-manager hands its command line to (main.go), which this
 * library renders. The real-binary test checks them against the binary's --help.
 */
const LIBRARY_FLAGS: { readonly [registration: string]: readonly string[] } = {
  'k8s.io/klog/v2.InitFlags': [Flags.logToStderr, Flags.verbosity],
  'github.com/openkruise/kruise/pkg/util/feature.DefaultMutableFeatureGate.AddFlag': [Flags.featureGates],
  'k8s.io/component-base/logs/api/v1.AddFlags': [UpstreamFlags.loggingFormat],
};

const flavours = new Map<string, ManagerFlavourProfile>();

/** openkruise/kruise-manager (Go) of one release, as the official chart runs it. */
export function upstreamFlavour(version: string): ManagerFlavourProfile {
  const known = flavours.get(version);
  if (known) return known;
  const made = makeUpstreamFlavour(upstreamRelease(version));
  flavours.set(version, made);
  return made;
}

function makeUpstreamFlavour(release: UpstreamRelease): ManagerFlavourProfile {
  const own = new Set(release.flags.map((f) => f.name));
  const library = new Set(release.libraryFlagSets.flatMap((r) => LIBRARY_FLAGS[r] ?? []));
  return {
    command: ['/manager'],
    // The image's `nobody`, as the chart's securityContext.
    uid: 65534,
    writablePaths: [
      { name: 'tmp', path: '/tmp', sizeMi: 64 },
      { name: 'log', path: '/log', sizeMi: 256 },
    ],
    webhookTemplate: true,
    // Upstream closes its webhook listener at SIGTERM without draining: the [ha-drills] rollouts and
    // the v1.8.3 -> v1.9.1 upgrade lost creates that kube-proxy still sent to a stopping replica
    // ("connection refused"). Its image has no executable for an exec hook (its Dockerfile deletes
    // /bin and /usr/bin), so the kubelet sleeps (Kubernetes 1.30+; older API servers drop the field).
    preStopSleepSeconds: 5,
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
        version: release.version,
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
        daemon: resolveDaemon(input.daemon, profile.gates),
        upstreamProfile: profile,
      };
    },
    _args(input) {
      if (input.logFormat && !library.has(UpstreamFlags.loggingFormat)) {
        const others = releasesWith((r) =>
          r.libraryFlagSets.some((f) => LIBRARY_FLAGS[f]?.includes(UpstreamFlags.loggingFormat)),
        );
        throw propError(
          'logFormat',
          `LogFormat.${input.logFormat.toUpperCase()}`,
          `is rendered as --${UpstreamFlags.loggingFormat}, which kruise-manager ${release.version} does not have (it refuses to start with it); ${others.join(', ')} ${others.length > 1 ? 'have' : 'has'} it`,
          `remove logFormat, or use ManagerImage.upstream({ version: '${others[others.length - 1]}' })`,
        );
      }
      // 0 (the chart's default): no periodic resync, the watches alone drive reconciles.
      const resync = input.resyncPeriod === undefined ? 0 : wholeSeconds('resyncPeriod', input.resyncPeriod);
      return [
        `--${Flags.leaderElectionResourceLock}=leases`,
        `--${Flags.logToStderr}=true`,
        ...(input.logLevel ?? LogLevel.verbosity(UPSTREAM_DEFAULT_VERBOSITY))._upstreamArgs(),
        `--${Flags.syncPeriod}=${resync === 0 ? '0' : `${resync}s`}`,
        ...(input.logFormat ? [`--${UpstreamFlags.loggingFormat}=${input.logFormat}`] : []),
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
    _flagProblem(flag, strict) {
      if (own.has(flag) || library.has(flag)) return undefined;
      const others = releasesWith((r) => r.flags.some((f) => f.name === flag));
      if (!others.length) {
        if (!strict) return undefined;
        const suffix = flag.slice(flag.lastIndexOf('-'));
        const alike = [...own].filter((f) => f.endsWith(suffix)).sort();
        return {
          problem: `is not a flag of kruise-manager ${release.version}, nor of any release this library renders`,
          fix: `use one of: ${(alike.length ? alike : [...own].sort()).join(', ')}`,
        };
      }
      return {
        problem: `is not a flag of kruise-manager ${release.version}, which refuses to start with it; ${others.join(', ')} ${others.length > 1 ? 'have' : 'has'} it`,
        fix: `remove it, or use ManagerImage.upstream({ version: '${others[others.length - 1]}' })`,
      };
    },
  };
}

/**
 * Whether kruise-daemon is rendered: as asked, else when its gate is on (the chart drops the
 * DaemonSet with `KruiseDaemon=false`); asking for it with the gate off is refused.
 */
function resolveDaemon(asked: boolean | undefined, gates: { readonly [gate: string]: boolean }): boolean {
  const gate = gates.KruiseDaemon !== false;
  if (asked && !gate) {
    throw propError(
      'daemon',
      true,
      'renders kruise-daemon while featureGates.KruiseDaemon is false, so the manager would not use it',
      'remove daemon (KruiseDaemon=false leaves it out), or remove KruiseDaemon=false',
    );
  }
  return asked ?? gate;
}

/** The default release's upstream flavour. */
export const UPSTREAM_FLAVOUR: ManagerFlavourProfile = upstreamFlavour(DEFAULT_UPSTREAM_RELEASE);

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
    if (input.daemonOptions)
      onlyUpstream('daemonOptions', 'set', 'kruise-daemon ships only in the upstream image', 'remove daemonOptions');
    if (input.kubeCacheMutationDetector)
      onlyUpstream(
        'kubeCacheMutationDetector',
        true,
        "is client-go's debug switch; this project's runtime has no such detector",
        'remove kubeCacheMutationDetector',
      );
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
    if (input.logFormat === LogFormat.TEXT) {
      throw propError(
        'logFormat',
        'LogFormat.TEXT',
        "is upstream's klog format; this project's runtime writes JSON lines only",
        'remove logFormat (or use LogFormat.JSON), or use ManagerImage.upstream()',
      );
    }
    if (input.resyncPeriod !== undefined) {
      throw propError(
        'resyncPeriod',
        input.resyncPeriod.toHumanString(),
        "sets upstream's periodic resync of its informers; this project's runtime has none (its watches drive every reconcile, and a stale cache fails readiness)",
        'remove resyncPeriod, or use ManagerImage.upstream()',
      );
    }
    return [
      `--${Flags.role}=${input.role}`,
      `--${Flags.certMode}=${input.certMode}`,
      ...(input.logLevel ? input.logLevel._runtimeArgs() : []),
    ];
  },
  // The runtime's /healthz fails when the event loop stalls or a watch is stuck.
  _liveness(port) {
    return kplus.Probe.fromHttpGet(Paths.healthz, { port, ...LIVENESS_TIMING, timeoutSeconds: Duration.seconds(5) });
  },
  // The runtime refuses any flag it does not parse (exit 2), library-like or not: the contract's rule.
  _flagProblem(flag) {
    const [refused] = runtimeFlagProblems(flag, flag);
    if (!refused) return undefined;
    // Kruise's other controllers run in the upstream image.
    const workers = flag.endsWith(workersFlag(''));
    return { problem: refused.message, fix: workers ? `${refused.fix}, ${UPSTREAM_FIX}` : refused.fix };
  },
};
