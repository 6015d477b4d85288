/**
 * Parsers of single flags and env vars for options.ts: each throws an {@link OptionsError} naming
 * the flag, the value as given and the fix; rules both rooms check come from the contract.
 */
import {
  CertModes,
  FeatureGates,
  featureGateNameProblems,
  Flags,
  LeaderElectionDefaults,
  leaseTimingProblems,
  portProblems,
  Ports,
  type LeaseTimingMs,
  type Problem,
} from '../contract.js';

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

/** A bad flag or env var; the message names it, the value and the fix. */
export class OptionsError extends Error {}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go-style duration (`15s`, `500ms`, `720h`). */
export function parseDuration(name: string, value: string): number {
  const match = DURATION.exec(value.trim());
  if (!match)
    throw new OptionsError(
      `${name}: "${value}" is not a duration. Fix: use a number with a unit, e.g. 15s, 500ms, 720h`,
    );
  return Math.round(parseFloat(match[1]) * UNIT_MS[match[2]]);
}

/** Parses `:8080`, `0.0.0.0:8080` or `[::1]:8080`. */
export function parseAddr(name: string, value: string): HostPort {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(value);
  const port = match ? Number(match[3]) : NaN;
  if (!match || portProblems(name, port).length > 0) {
    throw new OptionsError(
      `${name}: "${value}" is not host:port. Fix: use e.g. ":${Ports.metrics}" or "127.0.0.1:${Ports.metrics}"`,
    );
  }
  return { host: match[1] ?? (match[2] || '0.0.0.0'), port };
}

/** Contract problems as one options error naming the flag and the value as given. */
export function refuse(problems: Problem[], name: string, raw: string): void {
  if (problems.length > 0)
    throw new OptionsError(problems.map((p) => `${name}: "${raw}" ${p.message}. Fix: ${p.fix}`).join('; '));
}

const RUNTIME_GATES: readonly string[] = Object.values(FeatureGates);

/** `A=true,B=false`; a gate this runtime does not read is refused by name, never ignored. */
export function parseGates(value: string): Record<string, boolean> {
  const name = `--${Flags.featureGates}`;
  const gates: Record<string, boolean> = {};
  for (const part of value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [gate, enabled, extra] = part.split('=');
    if ((enabled !== 'true' && enabled !== 'false') || extra !== undefined) {
      throw new OptionsError(`${name}: "${part}" is not Gate=true|false. Fix: e.g. ${name}=PodWebhook=true`);
    }
    refuse(featureGateNameProblems(name, gate), name, gate);
    if (!RUNTIME_GATES.includes(gate)) {
      throw new OptionsError(
        `${name}: "${gate}" is not a feature gate of this runtime, which reads only ${RUNTIME_GATES.join(' and ')}. ` +
          'Fix: remove it (gates of upstream components this runtime does not carry need the upstream image)',
      );
    }
    gates[gate] = enabled === 'true';
  }
  return gates;
}

/** `--cert-mode`, or upstream's EnableExternalCerts gate meaning the same; the two must agree. */
export function certModeOf(flag: string | undefined, gates: Record<string, boolean>): string {
  const gate = gates[FeatureGates.enableExternalCerts];
  const fromGate = gate === undefined ? undefined : gate ? CertModes.external : CertModes.selfManaged;
  if (flag !== undefined && fromGate !== undefined && flag !== fromGate) {
    throw new OptionsError(
      `--${Flags.certMode}: "${flag}" contradicts --${Flags.featureGates}=${FeatureGates.enableExternalCerts}=${gate}. ` +
        `Fix: drop one of them (${FeatureGates.enableExternalCerts}=true means --${Flags.certMode}=${CertModes.external})`,
    );
  }
  return flag ?? fromGate ?? CertModes.selfManaged;
}

/** Flag and default of each Lease timing, by the contract rule's field names. */
const LEASE_FLAGS: Record<keyof Omit<LeaseTimingMs, 'jitterFactor'>, [string, number]> = {
  leaseDuration: [Flags.leaseDuration, LeaderElectionDefaults.leaseDurationSeconds],
  renewDeadline: [Flags.renewDeadline, LeaderElectionDefaults.renewDeadlineSeconds],
  retryPeriod: [Flags.retryPeriod, LeaderElectionDefaults.retryPeriodSeconds],
};

export function parseLeaseTiming(
  flag: (name: string) => string | undefined,
): Required<Omit<LeaseTimingMs, 'jitterFactor'>> {
  const raw = (field: keyof typeof LEASE_FLAGS) => flag(LEASE_FLAGS[field][0]) ?? `${LEASE_FLAGS[field][1]}s`;
  const timing = {
    leaseDuration: parseDuration(`--${Flags.leaseDuration}`, raw('leaseDuration')),
    renewDeadline: parseDuration(`--${Flags.renewDeadline}`, raw('renewDeadline')),
    retryPeriod: parseDuration(`--${Flags.retryPeriod}`, raw('retryPeriod')),
  };
  for (const p of leaseTimingProblems(timing)) {
    const field = p.field as keyof typeof LEASE_FLAGS;
    refuse([p], `--${LEASE_FLAGS[field][0]}`, raw(field));
  }
  return timing;
}

export function parseBool(name: string, value: string): boolean {
  if (value === 'true' || value === '') return true;
  if (value === 'false') return false;
  throw new OptionsError(`--${name}: "${value}" is not a boolean. Fix: use --${name}=true or --${name}=false`);
}

/** Parses a whole number (`3`, `-1`), as a program's `integer` flag. */
export function parseInteger(name: string, value: string): number {
  if (!/^-?\d+$/.test(value.trim()))
    throw new OptionsError(`${name}: "${value}" is not a whole number. Fix: use digits only, e.g. ${name}=3`);
  return Number(value);
}
