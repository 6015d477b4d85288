/** Rules on single values both rooms check: names, ports, worker counts; and the runtime's user. */
import { Flags, objectNamesFor, RuntimeControllers, workersFlag } from './names.js';
import type { Problem } from './problems.js';

/** Upstream's feature-gate names are CamelCase (k8s.io/component-base/featuregate). */
export const FEATURE_GATE_NAME = /^[A-Z][A-Za-z0-9]*$/;

export function featureGateNameProblems(field: string, name: string): Problem[] {
  return FEATURE_GATE_NAME.test(name)
    ? []
    : [
        {
          field,
          value: name,
          message: 'is not a feature gate name',
          fix: 'use the upstream CamelCase name, e.g. "ImagePullJobGate"',
        },
      ];
}

/** RFC 1123 DNS label: what Kubernetes requires of namespace and Service names. */
export const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** RFC 1123 subdomain: what Kubernetes requires of most object names (and of API groups). */
export const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function dnsLabelProblems(field: string, value: string): Problem[] {
  return value.length <= 63 && DNS_LABEL.test(value)
    ? []
    : [
        {
          field,
          value,
          message: 'is not a valid DNS label (RFC 1123)',
          fix: 'use at most 63 lower-case letters, digits and "-", starting and ending with a letter or digit',
        },
      ];
}

export function dnsSubdomainProblems(field: string, value: string): Problem[] {
  return value.length <= 253 && DNS_SUBDOMAIN.test(value)
    ? []
    : [
        {
          field,
          value,
          message: 'is not a valid DNS subdomain (RFC 1123)',
          fix: 'use at most 253 lower-case letters, digits, "-" and ".", each label starting and ending with a letter or digit',
        },
      ];
}

/** Concurrent reconciles per controller (`--<controller>-workers`): bounds and default. */
export const Workers = { min: 1, max: 1000, default: 3 } as const;

/**
 * Controller names as they appear in `--<controller>-workers`: lower-case words joined by "-"
 * (`sidecarset`, `configmap-mirror`), which a long flag carries as is.
 */
const CONTROLLER_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

export function workersProblems(field: string, workers: number): Problem[] {
  return Number.isInteger(workers) && workers >= Workers.min && workers <= Workers.max
    ? []
    : [
        {
          field,
          value: workers,
          message: `must be a whole number from ${Workers.min} to ${Workers.max}`,
          fix: `e.g. ${Workers.default}`,
        },
      ];
}

export function controllerNameProblems(field: string, name: string): Problem[] {
  return CONTROLLER_NAME.test(name)
    ? []
    : [
        {
          field,
          value: name,
          message: 'is not a controller name',
          fix: 'use the lower-case controller name, words joined by "-", e.g. "sidecarset"',
        },
      ];
}

/**
 * Every flag the runtime's parser accepts, given the controllers it carries: the shared flags and
 * one `--<name>-workers` per controller. It refuses any other flag at start (exit 2).
 */
export function runtimeFlags(controllers: readonly string[] = Object.values(RuntimeControllers)): string[] {
  return [...Object.values(Flags), ...controllers.map(workersFlag)];
}

/**
 * Why the runtime would refuse `--<flag>` (empty when it parses it): the one rule the constructs
 * check what they render (`controllerWorkers`, `extraArgs`) against, and the runtime's wording of
 * an unknown flag.
 */
export function runtimeFlagProblems(
  field: string,
  flag: string,
  controllers: readonly string[] = Object.values(RuntimeControllers),
): Problem[] {
  if (runtimeFlags(controllers).includes(flag)) return [];
  const workers = flag.endsWith(workersFlag(''));
  return [
    {
      field,
      value: flag,
      message: workers
        ? `is not a worker flag of this project's runtime, whose only controllers are ${controllers.join(', ')}`
        : "is not a flag of this project's runtime, which refuses to start with it",
      fix: workers
        ? `use one of: ${controllers.join(', ')}`
        : `remove it; the runtime parses: ${runtimeFlags(controllers).join(', ')}`,
    },
  ];
}

export function portProblems(field: string, port: number): Problem[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535
    ? []
    : [{ field, value: port, message: 'is not a TCP port', fix: 'use a whole number from 1 to 65535' }];
}

/**
 * The runtime image's user and group (distroless "nonroot"); the pod's securityContext and the
 * image config both use it, and the image's files are owned by root so this user cannot rewrite them.
 */
export const RUNTIME_UID = 65532;

/**
 * Each listener's port is a TCP port and no two share one (the manager binds them all on one
 * network namespace: with host network, on the node's). `ports` maps names to numbers in the
 * order a problem should blame; undefined entries are skipped. `name` turns a key into the
 * field to report (a prop path, a flag).
 */
export function distinctPortProblems(
  ports: { readonly [key: string]: number | undefined },
  fix: string,
  name: (key: string) => string = (k) => k,
): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<number, string>();
  for (const [key, port] of Object.entries(ports)) {
    if (port === undefined) continue;
    const invalid = portProblems(name(key), port);
    problems.push(...invalid);
    const other = seen.get(port);
    if (invalid.length === 0 && other !== undefined)
      problems.push({ field: name(key), value: port, message: `collides with ${name(other)}`, fix });
    if (!seen.has(port)) seen.set(port, key);
  }
  return problems;
}

/** A JSON object (not null, not an array): what untrusted input must be before its fields are read. */
export const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Whether `name` can prefix a program's object names (objectNamesFor): it must be a DNS label, and
 * its webhook Service's name too (at most 63 characters; the other names may be longer).
 */
export function objectNamePrefixProblems(field: string, name: string): Problem[] {
  const service = objectNamesFor(name).webhookService;
  const most = 63 - objectNamesFor('').webhookService.length;
  return DNS_LABEL.test(name) && service.length <= 63
    ? []
    : [
        {
          field,
          value: name,
          message: `cannot prefix the program's object names: they must be valid names, its webhook Service's (${service}) a DNS label of at most 63 characters`,
          fix: `use lower-case letters, digits and "-", at most ${most} characters, e.g. "team-labeler"`,
        },
      ];
}
