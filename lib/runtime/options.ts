import { parseArgs } from 'node:util';
import {
  CertModes,
  controllerNameProblems,
  DEFAULT_CERT_DIR,
  describeProblem,
  distinctPortProblems,
  Env,
  FeatureGates,
  Flags,
  KruiseObjectNames,
  Names,
  type ObjectNames,
  portProblems,
  Ports,
  Roles,
  type Role,
  REGISTRATIONS_FLAG,
  RuntimeControllers,
  runtimeFlagProblems,
  runtimeFlags,
  Workers,
  workersFlag,
  workersProblems,
} from '../contract.js';
import { isLogLevel, LogLevel } from './log.js';
import {
  certModeOf,
  OptionsError,
  parseAddr,
  parseBool,
  parseDuration,
  parseGates,
  parseLeaseTiming,
  refuse,
  type HostPort,
} from './option-parsers.js';

export { OptionsError, parseAddr, parseDuration, type HostPort } from './option-parsers.js';

/** What shutdown keeps after the drain window for stopping servers and exiting. */
export const SHUTDOWN_RESERVE_MS = 2_000;

/** Controllers this runtime carries, for `--<name>-workers` (the contract's list, which the constructs check). */
export const CONTROLLERS: readonly string[] = Object.values(RuntimeControllers);

/** Everything the manager is configured with: flags (upstream names) and env vars. */
export interface ManagerOptions {
  readonly role: Role;
  readonly leaderElection: boolean;
  readonly leaderElectionNamespace: string;
  readonly leaderElectionId: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly metricsAddr: HostPort;
  readonly healthAddr: HostPort;
  readonly webhookPort: number;
  readonly webhookHost: string;
  readonly certDir: string;
  readonly certMode: 'self-managed' | 'external';
  readonly certsRenewBeforeMs: number;
  readonly secretName: string;
  readonly serviceName: string;
  /** The webhook configurations whose caBundle this replica keeps (self-managed certificates). */
  readonly mutatingWebhookConfiguration: string;
  readonly validatingWebhookConfiguration: string;
  readonly podNamespace: string;
  readonly podName: string;
  /** Namespace to watch; empty for all namespaces. */
  readonly watchNamespace: string;
  readonly featureGates: Record<string, boolean>;
  readonly workers: Record<string, number>;
  readonly kubeconfig?: string;
  readonly drainTimeoutMs: number;
  /** SIGTERM to exit, whatever the work in flight; under the pod's terminationGracePeriodSeconds. */
  readonly gracefulShutdownTimeoutMs: number;
  /**
   * Admission answers from a webhook cache at once while it was proven fresh this recently; past it,
   * a review waits for the relist (Informer.awaitFresh) and readiness may fail (Informer.checkReady).
   */
  readonly maxCacheStalenessMs: number;
  readonly logLevel: LogLevel;
}

/** What a program adds to the runtime's flags. */
export interface FlagSet {
  /** A program's own flags (see {@link readFlags}), read as strings and left to their program. @default none */
  readonly extraFlags?: readonly string[];
  /**
   * The controllers whose `--<name>-workers` are parsed. @default the contract's (what the constructs accept in
   * `controllerWorkers`)
   */
  readonly controllers?: readonly string[];
  /**
   * The default names of the program's Lease, webhook Service, certificate Secret and webhook
   * configurations (`--leader-election-id`, SERVICE_NAME and SECRET_NAME still override theirs).
   * @default Kruise's (KruiseObjectNames)
   */
  readonly names?: ObjectNames;
}

/**
 * The flags in argv as given, by name: the runtime's (with the workers flags of `controllers`) and
 * `extraFlags` (a program's own, all read as strings), or 'help'. Throws {@link OptionsError} on an
 * unknown or malformed flag, and an Error when an extra flag reuses a name the runtime reads.
 */
export function readFlags(
  argv: readonly string[],
  { extraFlags = [], controllers = CONTROLLERS }: FlagSet = {},
): Record<string, string | undefined> | 'help' {
  // The constructs accept a controller name of this shape only (a carried controller must be tunable).
  for (const controller of controllers)
    refuse(controllerNameProblems('controllers', controller), 'controllers', controller);
  const runtime = runtimeFlags(controllers);
  const taken = extraFlags.filter((f) => f === 'help' || runtime.includes(f));
  if (taken.length > 0) throw new Error(`flag names already read by the runtime: ${taken.join(', ')}`);
  const parsed = {
    ...Object.fromEntries([...runtime, ...extraFlags].map((f) => [f, { type: 'string' as const }])),
    help: { type: 'boolean', short: 'h' },
  } as const;
  let values: Record<string, string | boolean | undefined>;
  try {
    // An unknown flag is named by the contract's rule (with the flags it could be), before the strict parse.
    for (const token of parseArgs({ args: [...argv], options: parsed, strict: false, tokens: true }).tokens) {
      if (token.kind !== 'option' || Object.hasOwn(parsed, token.name)) continue;
      const problems = runtimeFlagProblems(token.rawName, token.name, controllers).map((p) =>
        extraFlags.length === 0 ? p : { ...p, fix: `${p.fix}; and this program's own: ${extraFlags.join(', ')}` },
      );
      if (problems.length > 0) throw new OptionsError(problems.map(describeProblem).join('; '));
    }
    ({ values } = parseArgs({ args: [...argv], options: parsed, strict: true, allowPositionals: false }));
  } catch (err) {
    if (err instanceof OptionsError) throw err;
    throw new OptionsError(`${(err as Error).message}. Fix: see --help`);
  }
  if (values.help) return 'help';
  return values as Record<string, string | undefined>;
}

/**
 * Parses argv and env; a program's `extraFlags` (see {@link readFlags}) are accepted and left to their
 * program. Throws {@link OptionsError} with a message naming the flag.
 */
export function parseOptions(argv: string[], env: NodeJS.ProcessEnv, flagSet: FlagSet = {}): ManagerOptions | 'help' {
  const values = readFlags(argv, flagSet);
  return values === 'help' ? 'help' : optionsFromFlags(values, env, flagSet);
}

/** The options of flags already read by {@link readFlags} with the same `flagSet`, and env. */
export function optionsFromFlags(
  values: Record<string, string | undefined>,
  env: NodeJS.ProcessEnv,
  flagSet: FlagSet = {},
): ManagerOptions {
  const controllers = flagSet.controllers ?? CONTROLLERS;
  const names = flagSet.names ?? KruiseObjectNames;
  const flag = (name: string): string | undefined => values[name];
  const role = flag(Flags.role) ?? Roles.all;
  if (!Object.values(Roles).includes(role as never)) {
    throw new OptionsError(`--${Flags.role}: "${role}" is not a role. Fix: use ${Object.values(Roles).join(', ')}`);
  }
  const featureGates = parseGates(flag(Flags.featureGates) ?? '');
  const certMode = certModeOf(flag(Flags.certMode), featureGates);
  if (!Object.values(CertModes).includes(certMode as never)) {
    throw new OptionsError(
      `--${Flags.certMode}: "${certMode}" is not a certificate mode. Fix: use ${Object.values(CertModes).join(' or ')}`,
    );
  }
  const logLevel = flag(Flags.logLevel) ?? 'info';
  if (!isLogLevel(logLevel))
    throw new OptionsError(`--${Flags.logLevel}: "${logLevel}" is not a level. Fix: use debug, info, warn or error`);
  const lockKind = flag(Flags.leaderElectionResourceLock) ?? 'leases';
  if (lockKind !== 'leases')
    throw new OptionsError(`--${Flags.leaderElectionResourceLock}: "${lockKind}" is not supported. Fix: use leases`);

  const podNamespace = env[Env.podNamespace] ?? Names.namespace;
  const lease = parseLeaseTiming(flag);
  const workers: Record<string, number> = {};
  for (const controller of controllers) {
    const raw = flag(workersFlag(controller)) ?? String(Workers.default);
    refuse(workersProblems(controller, Number(raw)), `--${workersFlag(controller)}`, raw);
    workers[controller] = Number(raw);
  }
  const rawWebhookPort = env[Env.webhookPort] ?? String(Ports.webhook);
  refuse(portProblems(Env.webhookPort, Number(rawWebhookPort)), Env.webhookPort, rawWebhookPort);
  const webhookPort = Number(rawWebhookPort);
  const options: ManagerOptions = {
    role: role as Role,
    leaderElection:
      role !== Roles.webhook && parseBool(Flags.enableLeaderElection, flag(Flags.enableLeaderElection) ?? 'true'),
    leaderElectionNamespace: flag(Flags.leaderElectionNamespace) ?? podNamespace,
    leaderElectionId: flag(Flags.leaderElectionId) ?? names.leaderElectionId,
    leaseDurationMs: lease.leaseDuration,
    renewDeadlineMs: lease.renewDeadline,
    retryPeriodMs: lease.retryPeriod,
    metricsAddr: parseAddr(`--${Flags.metricsAddr}`, flag(Flags.metricsAddr) ?? `:${Ports.metrics}`),
    healthAddr: parseAddr(`--${Flags.healthProbeAddr}`, flag(Flags.healthProbeAddr) ?? `:${Ports.health}`),
    webhookPort,
    webhookHost: env[Env.webhookHost] ?? '0.0.0.0',
    certDir: env[Env.webhookCertDir] ?? DEFAULT_CERT_DIR,
    certMode: certMode as ManagerOptions['certMode'],
    certsRenewBeforeMs: parseDuration(Env.certsRenewBefore, env[Env.certsRenewBefore] ?? '720h'),
    secretName: env[Env.secretName] ?? names.webhookSecret,
    serviceName: env[Env.serviceName] ?? names.webhookService,
    mutatingWebhookConfiguration: names.mutatingWebhookConfiguration,
    validatingWebhookConfiguration: names.validatingWebhookConfiguration,
    podNamespace,
    podName: env[Env.podName] ?? (env.HOSTNAME || `manager-${process.pid}`),
    watchNamespace: flag(Flags.namespace) ?? '',
    featureGates,
    workers,
    kubeconfig: flag(Flags.kubeconfig),
    drainTimeoutMs: parseDuration(`--${Flags.drainTimeout}`, flag(Flags.drainTimeout) ?? '5s'),
    gracefulShutdownTimeoutMs: parseDuration(
      `--${Flags.gracefulShutdownTimeout}`,
      flag(Flags.gracefulShutdownTimeout) ?? '20s',
    ),
    maxCacheStalenessMs: parseDuration(`--${Flags.maxCacheStaleness}`, flag(Flags.maxCacheStaleness) ?? '10s'),
    logLevel,
  };
  if (options.gracefulShutdownTimeoutMs < options.drainTimeoutMs + SHUTDOWN_RESERVE_MS) {
    throw new OptionsError(
      `--${Flags.gracefulShutdownTimeout}: ${options.gracefulShutdownTimeoutMs}ms leaves no time after --${Flags.drainTimeout} ` +
        `(${options.drainTimeoutMs}ms). Fix: make it at least --${Flags.drainTimeout} + ${SHUTDOWN_RESERVE_MS / 1000}s, and below the pod's terminationGracePeriodSeconds (default 30s)`,
    );
  }
  if (options.maxCacheStalenessMs < 1000) {
    throw new OptionsError(
      `--${Flags.maxCacheStaleness}: ${options.maxCacheStalenessMs}ms is shorter than one watch reconnect. Fix: use at least 1s, e.g. 10s`,
    );
  }
  // The flags are blamed before the env var the constructs set from the same ports.
  const collisions = distinctPortProblems(
    {
      [Env.webhookPort]: options.webhookPort,
      [`--${Flags.metricsAddr}`]: options.metricsAddr.port,
      [`--${Flags.healthProbeAddr}`]: options.healthAddr.port,
    },
    'give each its own port',
  );
  if (collisions.length > 0) throw new OptionsError(collisions.map(describeProblem).join('; '));
  return options;
}

/** What `--help` says of the program the runtime runs: its first line and its own flags. */
export interface HelpProgram {
  readonly title: string;
  /** Each flag's usage (`name=VALUE`, without the dashes) and what it does. */
  readonly flags: readonly (readonly [usage: string, text: string])[];
  /** The controllers whose `--<name>-workers` it lists. @default the contract's (Kruise's) */
  readonly controllers?: readonly string[];
  /** The default object names it gives. @default Kruise's */
  readonly names?: ObjectNames;
}

/** `--help` text: every flag and env var the runtime reads; Kruise's manager unless `program` says otherwise. */
export function helpText(
  program: HelpProgram = {
    title: 'kruise-ha manager: leader-elected controllers and a replicated admission webhook.',
    flags: [],
  },
): string {
  const names = program.names ?? KruiseObjectNames;
  const f = (name: string, text: string) => `  --${name.padEnd(34)} ${text}`;
  const e = (name: string, text: string) => `  ${name.padEnd(36)} ${text}`;
  const own = program.flags.length > 0 ? ['Flags of this program:', ...program.flags.map(([u, t]) => f(u, t)), ''] : [];
  return [
    program.title,
    '',
    ...own,
    'Flags (upstream kruise-manager names):',
    f(`${Flags.enableLeaderElection}=BOOL`, 'run controllers only while holding the Lease (default true)'),
    f(`${Flags.leaderElectionNamespace}=NS`, 'namespace of the Lease (default $POD_NAMESPACE)'),
    f(`${Flags.leaderElectionId}=NAME`, `name of the Lease (default ${names.leaderElectionId})`),
    f(`${Flags.leaseDuration}=DUR`, 'how long a standby waits before taking over (default 15s)'),
    f(`${Flags.renewDeadline}=DUR`, 'leader gives up when it cannot renew this long (default 10s)'),
    f(`${Flags.retryPeriod}=DUR`, 'interval of acquire/renew attempts, jittered x1.2 (default 2s)'),
    f(`${Flags.leaderElectionResourceLock}=leases`, 'lock kind; only leases'),
    f(`${Flags.metricsAddr}=ADDR`, `Prometheus /metrics listener (default :${Ports.metrics})`),
    f(`${Flags.healthProbeAddr}=ADDR`, `/readyz and /healthz listener (default :${Ports.health})`),
    f(
      `${Flags.featureGates}=A=true,B=false`,
      `${FeatureGates.podWebhook}=false: serve no pod webhook; ${FeatureGates.enableExternalCerts}=true: as --${Flags.certMode}=external`,
    ),
    f(`${Flags.namespace}=NS`, 'watch only this namespace (default all)'),
    f(`${Flags.kubeconfig}=PATH`, 'kubeconfig file (default in-cluster config, then $KUBECONFIG)'),
    ...(program.controllers ?? CONTROLLERS).map((c) =>
      f(`${workersFlag(c)}=N`, `concurrent reconciles of the ${c} controller (default ${Workers.default})`),
    ),
    f(`${Flags.role}=ROLE`, 'all (default), webhook (no leader election) or controllers'),
    f(`${Flags.certMode}=MODE`, 'self-managed (default) or external (cert-manager)'),
    f(`${Flags.drainTimeout}=DUR`, 'keep serving admission this long after SIGTERM (default 5s)'),
    f(
      `${Flags.gracefulShutdownTimeout}=DUR`,
      'exit within this long after SIGTERM, whatever is in flight; keep it under terminationGracePeriodSeconds (default 20s)',
    ),
    f(
      `${Flags.maxCacheStaleness}=DUR`,
      'admission answers from a webhook cache at once while it was proven fresh this recently; past it, a review waits up to 8s for the relist, then is refused (503), and readiness fails if an API server refuses this replica or calls it while it reaches none (default 10s)',
    ),
    f(`${Flags.logLevel}=LEVEL`, 'debug, info (default), warn or error; logs are JSON lines on stderr'),
    f(
      REGISTRATIONS_FLAG,
      'print the registrations (webhook bindings, controllers, the kinds they use) as JSON and exit, reaching no cluster',
    ),
    f(
      `${Flags.syncPeriod}, --${Flags.restConfigQps}, --${Flags.restConfigBurst}, --${Flags.logToStderr}, --${Flags.verbosity}`,
      'accepted for upstream compatibility',
    ),
    '',
    'Environment (upstream names):',
    e(Env.podNamespace, `install namespace (default ${Names.namespace})`),
    e(Env.podName, "this replica's identity in the Lease (default $HOSTNAME)"),
    e(Env.webhookPort, `webhook HTTPS port (default ${Ports.webhook})`),
    e(Env.webhookHost, 'webhook listen address (default 0.0.0.0)'),
    e(Env.webhookCertDir, `where serving certificates are written (default ${DEFAULT_CERT_DIR})`),
    e(Env.secretName, `certificate Secret (default ${names.webhookSecret})`),
    e(Env.serviceName, `webhook Service (default ${names.webhookService})`),
    e(Env.certsRenewBefore, 'renew the serving certificate this long before expiry (default 720h)'),
  ].join('\n');
}
