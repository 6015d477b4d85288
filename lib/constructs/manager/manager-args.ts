import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import {
  controllerNameProblems,
  distinctPortProblems,
  featureGateNameProblems,
  Flags,
  LeaderElectionDefaults,
  leaseTimingProblems,
  Names,
  Roles,
  type CertMode,
  type Role,
  workersFlag,
  workersProblems,
} from '../../contract.js';
import { k8s } from '../core/api.js';
import { checkDnsSubdomain, propError, throwProblems, wholeSeconds } from '../core/errors.js';
import { ManagerFlavourProfile, RUNTIME_FLAVOUR, UPSTREAM_FLAVOUR } from './flavour.js';
import type { LogFormat, LogLevel } from './logging.js';
import { LeaderElectionOptions } from './options.js';

/** Leader election with every default filled in and the timing invariant checked. */
export interface ResolvedLeaderElection {
  readonly namespace: string;
  readonly id: string;
  readonly leaseDurationSeconds: number;
  readonly renewDeadlineSeconds: number;
  readonly retryPeriodSeconds: number;
}

/** Applies defaults and checks LeaseDuration > RenewDeadline > 1.2 x RetryPeriod (client-go's rule). */
export function resolveLeaderElection(
  options: LeaderElectionOptions | undefined,
  installNamespace: string,
  defaultId: string = Names.leaderElectionId,
): ResolvedLeaderElection {
  const seconds = (prop: string, d: Duration | undefined, fallback: number) =>
    d ? wholeSeconds(`leaderElection.${prop}`, d) : fallback;
  const timing = options?.timing;
  if (timing && (options.leaseDuration || options.renewDeadline || options.retryPeriod)) {
    throw propError(
      'leaderElection.timing',
      'set with leaseDuration/renewDeadline/retryPeriod',
      'gives the timing twice',
      'use timing (e.g. LeaseTiming.fastHandover(), or LeaseTiming.of(...)) or the three durations, not both',
    );
  }
  const le: ResolvedLeaderElection = {
    namespace: options?.namespace ?? installNamespace,
    id: options?.id ?? defaultId,
    leaseDurationSeconds:
      timing?.leaseDurationSeconds ??
      seconds('leaseDuration', options?.leaseDuration, LeaderElectionDefaults.leaseDurationSeconds),
    renewDeadlineSeconds:
      timing?.renewDeadlineSeconds ??
      seconds('renewDeadline', options?.renewDeadline, LeaderElectionDefaults.renewDeadlineSeconds),
    retryPeriodSeconds:
      timing?.retryPeriodSeconds ??
      seconds('retryPeriod', options?.retryPeriod, LeaderElectionDefaults.retryPeriodSeconds),
  };
  checkDnsSubdomain('leaderElection.id', le.id);
  checkDnsSubdomain('leaderElection.namespace', le.namespace);
  throwProblems(
    leaseTimingProblems({
      leaseDuration: le.leaseDurationSeconds * 1000,
      renewDeadline: le.renewDeadlineSeconds * 1000,
      retryPeriod: le.retryPeriodSeconds * 1000,
    }),
    (field) => `leaderElection.${field}`,
  );
  return le;
}

/**
 * Checks each port and that no two share a number (the contract's rule). `ports` maps prop
 * names (after `prefix`) to numbers, in the order the error should blame.
 */
export function checkDistinctPorts<T extends { [K in keyof T]: number | undefined }>(
  ports: T,
  fix: string,
  prefix = 'ports.',
): void {
  throwProblems(distinctPortProblems({ ...ports }, fix, (key) => `${prefix}${key}`));
}

/**
 * Sets the ephemeral-storage request and limit of the first container of a workload's pod
 * template. cdk8s-plus renders ephemeral storage in whole GiB only, so this patches the L1
 * object instead. The typed L1 class re-serializes the patched spec, reading each quantity's
 * `.value`: the values must be `k8s.Quantity`, a bare string would vanish.
 */
export function setEphemeralStorage(workload: ApiObject, request: Size, limit: Size): void {
  const resources = '/spec/template/spec/containers/0/resources';
  const mi = (size: Size) => k8s.Quantity.fromString(`${size.toMebibytes()}Mi`);
  workload.addJsonPatch(
    JsonPatch.add(`${resources}/requests/ephemeral-storage`, mi(request)),
    JsonPatch.add(`${resources}/limits/ephemeral-storage`, mi(limit)),
  );
}

/** Everything the command line is rendered from. */
export interface ManagerArgsInput {
  /** Which binary parses the command line (each adds its own flags). */
  readonly upstream: boolean;
  readonly role: Role;
  readonly leaderElection: ResolvedLeaderElection;
  readonly metricsPort: number;
  readonly healthPort: number;
  readonly featureGates: { [gate: string]: boolean };
  readonly controllerWorkers: { [controller: string]: number };
  readonly certMode: CertMode;
  readonly extraArgs: string[];
  /** Port of the pprof listener; undefined turns pprof off (upstream's default is on, `:8090`). */
  readonly pprofPort?: number;
  /** @default - upstream: verbosity 4 (the chart's); runtime: info */
  readonly logLevel?: LogLevel;
  /** @default - each binary's own (upstream text, runtime JSON) */
  readonly logFormat?: LogFormat;
  /** Upstream only. @default - no periodic resync (`--sync-period=0`, the chart's) */
  readonly resyncPeriod?: Duration;
}

/** The manager's command line. Upstream flag names for both images; see lib/contract.ts. */
export function renderManagerArgs(input: ManagerArgsInput): string[] {
  return renderFlavourArgs(input.upstream ? UPSTREAM_FLAVOUR : RUNTIME_FLAVOUR, input);
}

/** {@link renderManagerArgs} for a flavour's profile (what ManagerWorkload holds). */
export function renderFlavourArgs(flavour: ManagerFlavourProfile, input: Omit<ManagerArgsInput, 'upstream'>): string[] {
  const leads = input.role !== Roles.webhook;
  const le = input.leaderElection;
  const args = [`--${Flags.enableLeaderElection}=${leads}`];
  if (leads) {
    args.push(
      `--${Flags.leaderElectionNamespace}=${le.namespace}`,
      `--${Flags.leaderElectionId}=${le.id}`,
      `--${Flags.leaseDuration}=${le.leaseDurationSeconds}s`,
      `--${Flags.renewDeadline}=${le.renewDeadlineSeconds}s`,
      `--${Flags.retryPeriod}=${le.retryPeriodSeconds}s`,
    );
  }
  args.push(`--${Flags.metricsAddr}=:${input.metricsPort}`, `--${Flags.healthProbeAddr}=:${input.healthPort}`);
  args.push(
    ...flavour._args({
      role: input.role,
      certMode: input.certMode,
      pprofPort: input.pprofPort,
      logLevel: input.logLevel,
      logFormat: input.logFormat,
      resyncPeriod: input.resyncPeriod,
    }),
  );
  const gates = Object.keys(input.featureGates).sort();
  for (const gate of gates) throwProblems(featureGateNameProblems('featureGates', gate));
  if (gates.length > 0)
    args.push(`--${Flags.featureGates}=${gates.map((g) => `${g}=${input.featureGates[g]}`).join(',')}`);
  for (const controller of Object.keys(input.controllerWorkers).sort()) {
    const workers = input.controllerWorkers[controller];
    throwProblems(controllerNameProblems('controllerWorkers', controller));
    throwProblems(workersProblems(`controllerWorkers.${controller}`, workers));
    const refused = flavour._flagProblem(workersFlag(controller), true);
    if (refused)
      throw propError(
        `controllerWorkers.${controller}`,
        workers,
        `renders --${workersFlag(controller)}, which ${refused.problem}`,
        refused.fix,
      );
    if (leads) args.push(`--${workersFlag(controller)}=${workers}`);
  }
  input.extraArgs.forEach((arg, i) => {
    const name = /^--?([^=\s]+)/.exec(arg)?.[1];
    const refused = name === undefined ? undefined : flavour._flagProblem(name, false);
    if (refused) throw propError(`extraArgs[${i}]`, arg, `--${name} ${refused.problem}`, refused.fix);
  });
  return [...args, ...input.extraArgs];
}
