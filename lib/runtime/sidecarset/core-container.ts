/**
 * The rules of Kubernetes' core pod validation that upstream's SidecarSet webhook applies to
 * sidecars: it converts them into a fake pod (pkg/webhook/sidecarset/validating
 * validateContainersForSidecarSet) and runs k8s.io/kubernetes pkg/apis/core/validation
 * ValidatePodCreate on it. A sidecar that core validation refuses would make every pod it is
 * injected into refused by the API server; upstream refuses the SidecarSet at write instead, and so
 * does this runtime. Checked on the defaulted SidecarSet (the mutating webhook fills pull policy,
 * protocol, probe periods, ...), so an absent defaulted field is not an error here.
 */
import { DNS_SUBDOMAIN, isRecord, isValidLabelKey as isQualifiedName } from '../../contract.js';

type Obj = Record<string, unknown>;

/** validation.IsValidPortName (IANA_SVC_NAME). */
export function portNameProblems(name: string): string[] {
  const out: string[] = [];
  if (name.length > 15) out.push('must be no more than 15 characters');
  if (!/^[-a-z0-9]+$/.test(name)) out.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) out.push('must contain at least one letter (a-z)');
  if (name.includes('--')) out.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) out.push('must not begin or end with a hyphen');
  return out;
}

const validPort = (n: unknown) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 65535;

/** core validation ValidatePortNumOrName. */
function portNumOrName(port: unknown, at: string, errors: string[]): void {
  if (typeof port === 'string') {
    for (const p of portNameProblems(port)) errors.push(`${at}: ${JSON.stringify(port)} ${p}`);
  } else if (!validPort(port)) errors.push(`${at}: ${JSON.stringify(port)} must be between 1 and 65535, inclusive`);
}

const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];

function ports(c: Obj, at: string, errors: string[]): void {
  if (!Array.isArray(c.ports)) return;
  const names = new Set<string>();
  c.ports.forEach((p: unknown, i) => {
    if (!isRecord(p)) return;
    const here = `${at}.ports[${i}]`;
    if (typeof p.name === 'string' && p.name !== '') {
      const problems = portNameProblems(p.name);
      for (const problem of problems) errors.push(`${here}.name: ${JSON.stringify(p.name)} ${problem}`);
      if (!problems.length && names.has(p.name))
        errors.push(`${here}.name: "${p.name}" is duplicated; port names must be unique in a container`);
      names.add(p.name);
    }
    if (p.containerPort === undefined || p.containerPort === 0) errors.push(`${here}.containerPort: is required`);
    else if (!validPort(p.containerPort))
      errors.push(`${here}.containerPort: ${JSON.stringify(p.containerPort)} must be between 1 and 65535, inclusive`);
    if (p.hostPort !== undefined && p.hostPort !== 0 && !validPort(p.hostPort))
      errors.push(`${here}.hostPort: ${JSON.stringify(p.hostPort)} must be between 1 and 65535, inclusive`);
    if (p.protocol !== undefined && !PROTOCOLS.includes(p.protocol as string))
      errors.push(`${here}.protocol: ${JSON.stringify(p.protocol)} must be one of ${PROTOCOLS.join(', ')}`);
  });
}

/** core validation checkHostPortConflicts: a host port (per IP and protocol) used twice among `containers`. */
function hostPortConflicts(containers: Obj[], at: string, errors: string[]): void {
  const seen = new Set<string>();
  containers.forEach((c) => {
    if (!Array.isArray(c.ports)) return;
    c.ports.forEach((p: unknown) => {
      if (!isRecord(p) || !p.hostPort) return;
      const key = `${String(p.hostIP ?? '')}/${String(p.protocol ?? 'TCP')}/${String(p.hostPort)}`;
      if (seen.has(key)) errors.push(`${at}: host port ${key} is used by more than one container`);
      seen.add(key);
    });
  });
}

/** core/v1 validation's env var name (validation.IsEnvVarName). */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

function env(c: Obj, at: string, errors: string[]): void {
  if (!Array.isArray(c.env)) return;
  c.env.forEach((e: unknown, i) => {
    if (!isRecord(e)) return;
    const here = `${at}.env[${i}]`;
    if (typeof e.name !== 'string' || e.name === '') errors.push(`${here}.name: is required`);
    else if (!ENV_NAME.test(e.name))
      errors.push(
        `${here}.name: ${JSON.stringify(e.name)} is not a valid environment variable name (letters, digits, '_', '-', '.'; not starting with a digit)`,
      );
    if (!isRecord(e.valueFrom)) return;
    const from = e.valueFrom;
    const sources = ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef'].filter(
      (k) => from[k] !== undefined && from[k] !== null,
    );
    if (sources.length !== 1)
      errors.push(
        `${here}.valueFrom: must specify exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef`,
      );
    if (typeof e.value === 'string' && e.value !== '')
      errors.push(`${here}.valueFrom: may not be specified when \`value\` is not empty`);
    if (isRecord(from.fieldRef)) fieldRefProblems(from.fieldRef, ENV_FIELD_PATHS, `${here}.valueFrom.fieldRef`, errors);
    if (isRecord(from.resourceFieldRef)) {
      const r = from.resourceFieldRef.resource;
      if (typeof r !== 'string' || r === '') errors.push(`${here}.valueFrom.resourceFieldRef.resource: is required`);
      else if (!RESOURCE_FIELD_PATHS.includes(r) && !/^(requests|limits)\.hugepages-/.test(r))
        errors.push(
          `${here}.valueFrom.resourceFieldRef.resource: ${JSON.stringify(r)} must be one of ${RESOURCE_FIELD_PATHS.join(', ')}`,
        );
    }
    for (const ref of ['configMapKeyRef', 'secretKeyRef'])
      if (isRecord(from[ref])) keySelectorProblems(from[ref] as Obj, `${here}.valueFrom.${ref}`, errors);
  });
}

const ENV_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.serviceAccountName',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
const VOLUME_FIELD_PATHS = [
  'metadata.name',
  'metadata.namespace',
  'metadata.labels',
  'metadata.annotations',
  'metadata.uid',
];
/** What podshelper.ConvertDownwardAPIFieldLabel knows, beyond the subscripted labels and annotations. */
const KNOWN_FIELD_PATHS = [
  ...VOLUME_FIELD_PATHS,
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.hostIPs',
  'status.podIP',
  'status.podIPs',
];
const RESOURCE_FIELD_PATHS = [
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
];

/** core validateObjectFieldSelector: apiVersion v1 (defaulted), a known path allowed where it is used. */
function fieldRefProblems(ref: Obj, allowed: string[], at: string, errors: string[]): void {
  const path = typeof ref.fieldPath === 'string' ? ref.fieldPath : '';
  if (ref.apiVersion !== undefined && ref.apiVersion !== 'v1') {
    errors.push(
      `${at}.fieldPath: ${JSON.stringify(path)} cannot be converted: unsupported pod version ${JSON.stringify(ref.apiVersion)}`,
    );
    return;
  }
  if (path === '') {
    errors.push(`${at}.fieldPath: is required`);
    return;
  }
  const sub = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(path);
  if (sub) {
    const key = sub[1] === 'metadata.annotations' ? sub[2].toLowerCase() : sub[2];
    if (!isQualifiedName(key)) errors.push(`${at}: ${JSON.stringify(key)} is not a valid label or annotation key`);
    return;
  }
  if (!KNOWN_FIELD_PATHS.includes(path))
    errors.push(`${at}.fieldPath: ${JSON.stringify(path)} is not a field the downward API supports`);
  else if (!allowed.includes(path))
    errors.push(`${at}.fieldPath: ${JSON.stringify(path)} must be one of ${allowed.join(', ')}`);
}

const isSubdomain = (v: unknown) => typeof v === 'string' && v.length <= 253 && DNS_SUBDOMAIN.test(v);
/** validation.IsConfigMapKey. */
const isConfigMapKey = (k: string) =>
  k.length <= 253 && /^[-._a-zA-Z0-9]+$/.test(k) && k !== '.' && k !== '..' && !k.startsWith('..');

/** core validateConfigMapKeySelector / validateSecretKeySelector. */
function keySelectorProblems(ref: Obj, at: string, errors: string[]): void {
  if (!isSubdomain(ref.name ?? ''))
    errors.push(`${at}.name: ${JSON.stringify(ref.name ?? '')} is not a valid name (DNS subdomain)`);
  if (typeof ref.key !== 'string' || ref.key === '') errors.push(`${at}.key: is required`);
  else if (!isConfigMapKey(ref.key))
    errors.push(`${at}.key: ${JSON.stringify(ref.key)} is not a valid key (letters, digits, '-', '_', '.')`);
}

function envFrom(c: Obj, at: string, errors: string[]): void {
  if (!Array.isArray(c.envFrom)) return;
  c.envFrom.forEach((e: unknown, i) => {
    if (!isRecord(e)) return;
    const here = `${at}.envFrom[${i}]`;
    if (typeof e.prefix === 'string' && e.prefix !== '' && !ENV_NAME.test(e.prefix))
      errors.push(`${here}.prefix: ${JSON.stringify(e.prefix)} is not a valid environment variable name`);
    const refs = ['configMapRef', 'secretRef'].filter((k) => e[k] !== undefined && e[k] !== null);
    if (refs.length === 0) errors.push(`${here}: must specify one of: configMapRef or secretRef`);
    if (refs.length > 1) errors.push(`${here}: may not have more than one field specified at a time`);
    for (const ref of refs) {
      const name = isRecord(e[ref]) ? (e[ref] as Obj).name : undefined;
      if (typeof name !== 'string' || name === '') errors.push(`${here}.${ref}.name: is required`);
      else if (!isSubdomain(name))
        errors.push(`${here}.${ref}.name: ${JSON.stringify(name)} is not a valid name (DNS subdomain)`);
    }
  });
}

/** Upstream validateLocalDescendingPath: relative, without a `..` element. */
function localDescendingPath(path: string, at: string, errors: string[]): void {
  if (path.startsWith('/')) errors.push(`${at}: ${JSON.stringify(path)} must be a relative path`);
  if (path.split(/[\\/]/).includes('..')) errors.push(`${at}: ${JSON.stringify(path)} must not contain '..'`);
}

const PROPAGATION = ['None', 'HostToContainer', 'Bidirectional'];

function volumeMounts(c: Obj, at: string, errors: string[]): void {
  if (!Array.isArray(c.volumeMounts)) return;
  const paths = new Set<string>();
  const devices = pathsByName(c.volumeDevices, 'devicePath');
  const devicePaths = new Set(devices.values());
  c.volumeMounts.forEach((m: unknown, i) => {
    if (!isRecord(m)) return;
    const here = `${at}.volumeMounts[${i}]`;
    if (typeof m.name !== 'string' || m.name === '') errors.push(`${here}.name: is required`);
    if (typeof m.mountPath !== 'string' || m.mountPath === '') errors.push(`${here}.mountPath: is required`);
    else {
      if (paths.has(m.mountPath))
        errors.push(`${here}.mountPath: ${JSON.stringify(m.mountPath)} must be unique in a container`);
      paths.add(m.mountPath);
    }
    // core ValidateVolumeMounts: no overlap with the container's volumeDevices.
    const name = typeof m.name === 'string' ? m.name : '';
    if (devices.has(name))
      errors.push(
        `${here}.name: ${JSON.stringify(name)} is also in volumeDevices; a volume is either mounted or a device`,
      );
    const mountPath = typeof m.mountPath === 'string' ? m.mountPath : '';
    if (devicePaths.has(mountPath))
      errors.push(
        `${here}.mountPath: ${JSON.stringify(mountPath)} is also a devicePath in volumeDevices; use another path`,
      );
    if (typeof m.subPath === 'string' && m.subPath !== '') localDescendingPath(m.subPath, `${here}.subPath`, errors);
    if (typeof m.subPathExpr === 'string' && m.subPathExpr !== '') {
      if (typeof m.subPath === 'string' && m.subPath !== '')
        errors.push(`${here}.subPathExpr: subPathExpr and subPath are mutually exclusive`);
      localDescendingPath(m.subPathExpr, `${here}.subPathExpr`, errors);
    }
    if (m.mountPropagation !== undefined) {
      if (!PROPAGATION.includes(m.mountPropagation as string))
        errors.push(
          `${here}.mountPropagation: ${JSON.stringify(m.mountPropagation)} must be one of ${PROPAGATION.join(', ')}`,
        );
      else if (
        m.mountPropagation === 'Bidirectional' &&
        !(isRecord(c.securityContext) && c.securityContext.privileged === true)
      )
        errors.push(
          `${here}.mountPropagation: Bidirectional mount propagation is available only to privileged containers`,
        );
    }
  });
}

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];

const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:[eE]([-+]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$/;
const SUFFIX: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/** A quantity's value (precise enough to compare and to tell whole numbers), or undefined if it is not one. */
export function quantityValue(q: unknown): number | undefined {
  const m = QUANTITY.exec(typeof q === 'number' ? String(q) : typeof q === 'string' ? q : '');
  if (!m) return undefined;
  const [, sign, digits, exp, suffix] = m;
  let v = Number(digits);
  if (exp !== undefined) v *= 10 ** Number(exp);
  else if (suffix && suffix in BINARY) v *= 2 ** BINARY[suffix];
  else if (suffix) v *= 10 ** SUFFIX[suffix];
  return sign === '-' ? -v : v;
}

const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');
const isHugePages = (name: string) => name.startsWith('hugepages-');
/** helper.IsExtendedResourceName: not native, not `requests.`-prefixed, and `requests.<name>` a qualified name. */
const isExtended = (name: string) =>
  !isNative(name) && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`);
const STANDARD_CONTAINER_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];

/** core validation validateContainerResourceName; undefined when valid. */
function resourceNameProblem(name: string): string | undefined {
  if (!isQualifiedName(name)) return 'is not a valid resource name (a qualified name, e.g. cpu or example.com/gpu)';
  if (!name.includes('/')) {
    if (!STANDARD_CONTAINER_RESOURCES.includes(name) && !isHugePages(name))
      return 'must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-<size>) or a prefixed extended resource';
  } else if (!isNative(name) && !isExtended(name)) return "doesn't follow extended resource name standard";
  return undefined;
}

function resources(c: Obj, at: string, errors: string[]): void {
  const r = c.resources;
  if (!isRecord(r)) return;
  if (Array.isArray(r.claims))
    r.claims.forEach((claim: unknown, i) =>
      errors.push(
        `${at}.resources.claims[${i}]: ${JSON.stringify(isRecord(claim) ? claim.name : claim)} must name one of the pod's resourceClaims; a SidecarSet has none`,
      ),
    );
  const limits = isRecord(r.limits) ? r.limits : {};
  const requests = isRecord(r.requests) ? r.requests : {};
  for (const [kind, list] of [
    ['limits', limits],
    ['requests', requests],
  ] as const) {
    for (const [name, q] of Object.entries(list)) {
      const here = `${at}.resources.${kind}.${name}`;
      const problem = resourceNameProblem(name);
      if (problem) errors.push(`${here}: ${JSON.stringify(name)} ${problem}`);
      const v = quantityValue(q);
      if (v !== undefined && v < 0) errors.push(`${here}: ${JSON.stringify(q)} must be greater than or equal to 0`);
      else if (v !== undefined && isExtended(name) && !Number.isInteger(v))
        errors.push(`${here}: ${JSON.stringify(q)} must be an integer`);
    }
  }
  for (const [name, request] of Object.entries(requests)) {
    const overcommit = isNative(name) && !isHugePages(name);
    const wanted = quantityValue(request);
    if (!(name in limits)) {
      if (!overcommit)
        errors.push(`${at}.resources.limits: a limit of ${name} must be set: it is not an overcommitable resource`);
      continue;
    }
    const limit = quantityValue(limits[name]);
    if (limit === undefined || wanted === undefined) continue;
    if (!overcommit && wanted !== limit)
      errors.push(
        `${at}.resources.requests.${name}: ${JSON.stringify(request)} must be equal to the ${name} limit ${JSON.stringify(limits[name])}`,
      );
    else if (wanted > limit)
      errors.push(
        `${at}.resources.requests.${name}: ${JSON.stringify(request)} must be less than or equal to the ${name} limit ${JSON.stringify(limits[name])}`,
      );
  }
  const all = [...Object.keys(limits), ...Object.keys(requests)];
  if (all.some(isHugePages) && !all.some((n) => n === 'cpu' || n === 'memory'))
    errors.push(`${at}.resources: HugePages require cpu or memory`);
}

const HANDLERS = ['exec', 'httpGet', 'tcpSocket', 'grpc', 'sleep'];

/** core validation validateHandler: exactly one handler, each valid. */
function handler(h: Obj, at: string, errors: string[], kinds: string[], opts: CoreValidationOptions = {}): void {
  const present = HANDLERS.filter((k) => h[k] !== undefined && h[k] !== null);
  if (present.length === 0) errors.push(`${at}: must specify a handler type (${kinds.join(', ')})`);
  if (present.length > 1) errors.push(`${at}: may not specify more than one handler type (has ${present.join(', ')})`);
  const exec = h.exec;
  if (isRecord(exec) && !(Array.isArray(exec.command) && exec.command.length > 0))
    errors.push(`${at}.exec.command: is required`);
  const http = h.httpGet;
  if (isRecord(http)) {
    if (http.path !== undefined && http.path === '') errors.push(`${at}.httpGet.path: is required`);
    portNumOrName(http.port, `${at}.httpGet.port`, errors);
    if (http.scheme !== undefined && http.scheme !== 'HTTP' && http.scheme !== 'HTTPS')
      errors.push(`${at}.httpGet.scheme: ${JSON.stringify(http.scheme)} must be HTTP or HTTPS`);
    if (Array.isArray(http.httpHeaders))
      http.httpHeaders.forEach((hdr: unknown, i) => {
        const name = isRecord(hdr) ? hdr.name : undefined;
        if (typeof name !== 'string' || !/^[-A-Za-z0-9]+$/.test(name))
          errors.push(`${at}.httpGet.httpHeaders[${i}].name: ${JSON.stringify(name)} is not a valid HTTP header name`);
      });
  }
  if (isRecord(h.tcpSocket)) portNumOrName(h.tcpSocket.port, `${at}.tcpSocket.port`, errors);
  // core validateSleepAction: 1 to the pod's terminationGracePeriodSeconds (zero only behind a gate upstream leaves
  // off); no bound when the pod has none.
  const graceSeconds = opts.terminationGracePeriodSeconds;
  if (isRecord(h.sleep) && graceSeconds !== undefined) {
    const seconds = h.sleep.seconds;
    if (typeof seconds !== 'number' || seconds <= 0 || seconds > graceSeconds)
      errors.push(
        `${at}.sleep.seconds: ${JSON.stringify(seconds)} must be greater than 0 and at most terminationGracePeriodSeconds (${graceSeconds}); sleep fewer seconds`,
      );
  }
  if (isRecord(h.grpc)) portNumOrName(h.grpc.port, `${at}.grpc.port`, errors);
}

const PROBE_FIELDS = ['initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold'];

function probe(c: Obj, kind: 'livenessProbe' | 'readinessProbe' | 'startupProbe', at: string, errors: string[]): void {
  const p = c[kind];
  if (!isRecord(p)) return;
  const here = `${at}.${kind}`;
  handler(p, here, errors, ['exec', 'httpGet', 'tcpSocket', 'grpc']);
  for (const f of PROBE_FIELDS) {
    if (typeof p[f] === 'number' && (p[f] as number) < 0)
      errors.push(`${here}.${f}: ${String(p[f])} must be greater than or equal to 0`);
  }
  const grace = p.terminationGracePeriodSeconds;
  if (typeof grace === 'number' && grace <= 0)
    errors.push(`${here}.terminationGracePeriodSeconds: must be greater than 0`);
  if (
    kind !== 'readinessProbe' &&
    p.successThreshold !== undefined &&
    p.successThreshold !== 0 &&
    p.successThreshold !== 1
  )
    errors.push(`${here}.successThreshold: ${JSON.stringify(p.successThreshold)} must be 1`);
  if (kind === 'readinessProbe' && grace !== undefined && grace !== null)
    errors.push(`${here}.terminationGracePeriodSeconds: must not be set for readinessProbes`);
}

function lifecycle(c: Obj, at: string, errors: string[], opts: CoreValidationOptions = {}): void {
  if (!isRecord(c.lifecycle)) return;
  for (const hook of ['postStart', 'preStop']) {
    const h = c.lifecycle[hook];
    if (isRecord(h)) handler(h, `${at}.lifecycle.${hook}`, errors, ['exec', 'httpGet', 'tcpSocket', 'sleep'], opts);
  }
}

/** Which object the containers are validated in: a pod (the default) or a pod template. */
export interface CoreValidationOptions {
  /**
   * A pod template (PodValidationOptions.ResourceIsPod false, as upstream's CloneSet webhook): an
   * image with leading or trailing whitespace passes, as core validation lets it in templates.
   */
  readonly podTemplate?: boolean;
  /**
   * The pod's terminationGracePeriodSeconds (after defaulting): a sleep hook is valid for 1 to that
   * many seconds (validateSleepAction). Unset: no bound, as core validation with a nil grace period
   * (upstream v1.9.1 validates a SidecarSet's containers in a fake pod with 30).
   */
  readonly terminationGracePeriodSeconds?: number;
  /** The pod's volumes, which the containers' volumeDevices and volumeMounts are checked against. */
  readonly volumes?: unknown;
}

/** Checks of one container common to init and regular containers (core validateContainerCommon, and pod-only ones). */
function common(c: Obj, at: string, errors: string[], volumes: Map<string, Obj>, opts: CoreValidationOptions): void {
  if (!opts.podTemplate && typeof c.image === 'string' && c.image.trim() !== '' && c.image !== c.image.trim())
    errors.push(`${at}.image: ${JSON.stringify(c.image)} must not have leading or trailing whitespace`);
  if (
    c.terminationMessagePolicy !== undefined &&
    !TERMINATION_MESSAGE_POLICIES.includes(c.terminationMessagePolicy as string)
  )
    errors.push(
      `${at}.terminationMessagePolicy: ${JSON.stringify(c.terminationMessagePolicy)} must be File or FallbackToLogsOnError`,
    );
  if (c.imagePullPolicy !== undefined && !PULL_POLICIES.includes(c.imagePullPolicy as string))
    errors.push(`${at}.imagePullPolicy: ${JSON.stringify(c.imagePullPolicy)} must be Always, IfNotPresent or Never`);
  ports(c, at, errors);
  env(c, at, errors);
  envFrom(c, at, errors);
  volumeMounts(c, at, errors);
  volumeDevices(c, at, errors, volumes);
  resources(c, at, errors);
  resizePolicy(c, at, errors);
  securityContext(c, at, errors);
}

/** A container's volumeMounts or volumeDevices as core's GetVolumeMountMap/GetVolumeDeviceMap: name to path. */
function pathsByName(list: unknown, pathField: 'mountPath' | 'devicePath'): Map<string, string> {
  const out = new Map<string, string>();
  for (const x of Array.isArray(list) ? list : [])
    if (isRecord(x))
      out.set(typeof x.name === 'string' ? x.name : '', typeof x[pathField] === 'string' ? x[pathField] : '');
  return out;
}

/**
 * core ValidateVolumeDevices against the SidecarSet's volumes (upstream's fake pod has exactly those): each device
 * names a persistentVolumeClaim or ephemeral volume, once, at a unique path without '..', neither of them used by the
 * container's volumeMounts.
 */
function volumeDevices(c: Obj, at: string, errors: string[], volumes: Map<string, Obj>): void {
  if (!Array.isArray(c.volumeDevices)) return;
  const mounts = pathsByName(c.volumeMounts, 'mountPath');
  const mountPaths = new Set(mounts.values());
  const names = new Set<string>();
  const paths = new Set<string>();
  c.volumeDevices.forEach((d: unknown, i) => {
    const dev = isRecord(d) ? d : {};
    const here = `${at}.volumeDevices[${i}]`;
    const name = typeof dev.name === 'string' ? dev.name : '';
    const path = typeof dev.devicePath === 'string' ? dev.devicePath : '';
    const volume = volumes.get(name);
    if (name === '') errors.push(`${here}.name: is required; name a persistentVolumeClaim volume of spec.volumes`);
    if (names.has(name))
      errors.push(`${here}.name: ${JSON.stringify(name)} is used by another volumeDevice; use each once`);
    if (volume === undefined)
      errors.push(
        `${here}.name: ${JSON.stringify(name)} names no volume of spec.volumes; add a persistentVolumeClaim volume of that name`,
      );
    else if (volume.persistentVolumeClaim == null && volume.ephemeral == null)
      errors.push(
        `${here}.name: ${JSON.stringify(name)} is not a persistentVolumeClaim or ephemeral volume, the only sources of a block device; mount it with volumeMounts instead`,
      );
    if (path === '') errors.push(`${here}.devicePath: is required, e.g. "/dev/xvda"`);
    if (paths.has(path))
      errors.push(`${here}.devicePath: ${JSON.stringify(path)} is used by another volumeDevice; use each once`);
    if (path !== '' && path.split('/').includes('..'))
      errors.push(
        `${here}.devicePath: ${JSON.stringify(path)} must not contain '..'; give an absolute path without it`,
      );
    else paths.add(path);
    if (mounts.has(name))
      errors.push(
        `${here}.name: ${JSON.stringify(name)} is also in volumeMounts; a volume is either mounted or a device`,
      );
    if (mountPaths.has(path))
      errors.push(`${here}.devicePath: ${JSON.stringify(path)} is also a mountPath in volumeMounts; use another path`);
    if (name !== '') names.add(name);
  });
}

function resizePolicy(c: Obj, at: string, errors: string[]): void {
  if (!Array.isArray(c.resizePolicy)) return;
  const seen = new Set<string>();
  c.resizePolicy.forEach((p: unknown, i) => {
    const r = isRecord(p) ? p : {};
    const here = `${at}.resizePolicy[${i}]`;
    if (r.resourceName !== 'cpu' && r.resourceName !== 'memory')
      errors.push(`${here}.resourceName: ${JSON.stringify(r.resourceName)} must be cpu or memory`);
    else if (seen.has(r.resourceName)) errors.push(`${here}.resourceName: ${r.resourceName} is duplicated`);
    else seen.add(r.resourceName);
    if (r.restartPolicy !== 'NotRequired' && r.restartPolicy !== 'RestartContainer')
      errors.push(`${here}.restartPolicy: ${JSON.stringify(r.restartPolicy)} must be NotRequired or RestartContainer`);
  });
}

const MAX_ID = 2147483647;

/** core ValidateSecurityContext (the pod's user namespace is the host's). */
function securityContext(c: Obj, at: string, errors: string[]): void {
  const sc = c.securityContext;
  if (!isRecord(sc)) return;
  const here = `${at}.securityContext`;
  for (const id of ['runAsUser', 'runAsGroup'])
    if (typeof sc[id] === 'number' && ((sc[id] as number) < 0 || (sc[id] as number) > MAX_ID))
      errors.push(`${here}.${id}: ${String(sc[id])} must be between 0 and ${MAX_ID}, inclusive`);
  if (sc.procMount !== undefined && sc.procMount !== null) {
    if (sc.procMount !== 'Default' && sc.procMount !== 'Unmasked')
      errors.push(`${here}.procMount: ${JSON.stringify(sc.procMount)} must be Default or Unmasked`);
    else if (sc.procMount === 'Unmasked')
      errors.push(`${here}.procMount: Unmasked needs hostUsers false, which a sidecar cannot set`);
  }
  if (sc.allowPrivilegeEscalation === false) {
    if (sc.privileged === true)
      errors.push(`${here}: cannot set allowPrivilegeEscalation to false and privileged to true`);
    const caps = isRecord(sc.capabilities) && Array.isArray(sc.capabilities.add) ? sc.capabilities.add : [];
    if (caps.includes('CAP_SYS_ADMIN'))
      errors.push(`${here}: cannot set allowPrivilegeEscalation to false and capabilities.add CAP_SYS_ADMIN`);
  }
}

/**
 * Every problem core pod validation finds in a SidecarSet's sidecars, as upstream's fake pod
 * meets them: `containers` as the pod's containers, `initContainers` as its init containers,
 * `volumes` as its volumes (what volumeDevices may name), `graceSeconds` as its terminationGracePeriodSeconds (what
 * a sleep hook may last; upstream v1.9.1's fake pod has 30, v1.8.3's had none set, 0, refusing every sleep).
 */
export function coreSidecarErrors(
  containers: unknown,
  initContainers: unknown,
  opts: CoreValidationOptions = {},
): string[] {
  const errors: string[] = [];
  const volumesByName = new Map<string, Obj>();
  for (const v of Array.isArray(opts.volumes) ? opts.volumes : [])
    if (isRecord(v) && typeof v.name === 'string' && !volumesByName.has(v.name)) volumesByName.set(v.name, v);
  const list = (x: unknown) => (Array.isArray(x) ? x.filter(isRecord) : []);
  const regular = list(containers);
  (Array.isArray(containers) ? containers : []).forEach((c: unknown, i) => {
    if (!isRecord(c)) return;
    const at = `spec.containers[${i}]`;
    common(c, at, errors, volumesByName, opts);
    lifecycle(c, at, errors, opts);
    probe(c, 'livenessProbe', at, errors);
    probe(c, 'readinessProbe', at, errors);
    probe(c, 'startupProbe', at, errors);
  });
  hostPortConflicts(regular, 'spec.containers', errors);
  (Array.isArray(initContainers) ? initContainers : []).forEach((c: unknown, i) => {
    if (!isRecord(c)) return;
    const at = `spec.initContainers[${i}]`;
    common(c, at, errors, volumesByName, opts);
    hostPortConflicts([c], at, errors);
    if (c.restartPolicy !== undefined && c.restartPolicy !== null && c.restartPolicy !== 'Always')
      errors.push(`${at}.restartPolicy: ${JSON.stringify(c.restartPolicy)} must be Always (or unset)`);
    if (c.restartPolicy === 'Always') {
      lifecycle(c, at, errors, opts);
      probe(c, 'livenessProbe', at, errors);
      probe(c, 'readinessProbe', at, errors);
      probe(c, 'startupProbe', at, errors);
    } else {
      for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])
        if (c[f] !== undefined && c[f] !== null)
          errors.push(`${at}.${f}: may not be set for init containers without restartPolicy=Always`);
    }
  });
  return errors;
}

const HOST_PATH_TYPES = [
  '',
  'DirectoryOrCreate',
  'Directory',
  'FileOrCreate',
  'File',
  'Socket',
  'CharDevice',
  'BlockDevice',
];

/** core ValidateLocalNonReservedPath. */
function localNonReservedPath(path: unknown, at: string, errors: string[]): void {
  if (typeof path !== 'string' || path === '') {
    errors.push(`${at}: is required`);
    return;
  }
  localDescendingPath(path, at, errors);
  if (path.startsWith('..')) errors.push(`${at}: ${JSON.stringify(path)} must not start with '..'`);
}

function mode(m: unknown, at: string, errors: string[]): void {
  if (typeof m === 'number' && (m < 0 || m > 0o777))
    errors.push(`${at}: ${m} must be a number between 0 and 0777 (octal), both inclusive`);
}

function keyToPaths(items: unknown, at: string, errors: string[]): void {
  if (!Array.isArray(items)) return;
  items.forEach((kp: unknown, i) => {
    const k = isRecord(kp) ? kp : {};
    if (typeof k.key !== 'string' || k.key === '') errors.push(`${at}[${i}].key: is required`);
    localNonReservedPath(k.path, `${at}[${i}].path`, errors);
    mode(k.mode, `${at}[${i}].mode`, errors);
  });
}

/**
 * core validateVolumeSource for the sources SidecarSets use (hostPath, configMap, secret,
 * downwardAPI, emptyDir): what upstream's fake pod refuses beyond names and source counts.
 */
export function coreVolumeErrors(volumes: unknown): string[] {
  const errors: string[] = [];
  (Array.isArray(volumes) ? volumes : []).forEach((v: unknown, i) => {
    if (!isRecord(v)) return;
    const at = `spec.volumes[${i}]`;
    if (isRecord(v.hostPath)) {
      const path = v.hostPath.path;
      const type = v.hostPath.type;
      if (typeof path !== 'string' || path === '') errors.push(`${at}.hostPath.path: is required`);
      else {
        if (path.split(/[\\/]/).includes('..'))
          errors.push(`${at}.hostPath.path: ${JSON.stringify(path)} must not contain '..'`);
        if (type !== undefined && type !== null && !HOST_PATH_TYPES.includes(type as string))
          errors.push(
            `${at}.hostPath.type: ${JSON.stringify(type)} must be one of ${HOST_PATH_TYPES.slice(1).join(', ')} (or empty)`,
          );
      }
    }
    if (isRecord(v.configMap)) {
      if (typeof v.configMap.name !== 'string' || v.configMap.name === '')
        errors.push(`${at}.configMap.name: is required`);
      mode(v.configMap.defaultMode, `${at}.configMap.defaultMode`, errors);
      keyToPaths(v.configMap.items, `${at}.configMap.items`, errors);
    }
    if (isRecord(v.secret)) {
      if (typeof v.secret.secretName !== 'string' || v.secret.secretName === '')
        errors.push(`${at}.secret.secretName: is required`);
      mode(v.secret.defaultMode, `${at}.secret.defaultMode`, errors);
      keyToPaths(v.secret.items, `${at}.secret.items`, errors);
    }
    if (isRecord(v.downwardAPI)) {
      mode(v.downwardAPI.defaultMode, `${at}.downwardAPI.defaultMode`, errors);
      (Array.isArray(v.downwardAPI.items) ? v.downwardAPI.items : []).forEach((f: unknown, j) => {
        const file = isRecord(f) ? f : {};
        const here = `${at}.downwardAPI.items[${j}]`;
        localNonReservedPath(file.path, `${here}.path`, errors);
        if (isRecord(file.fieldRef)) fieldRefProblems(file.fieldRef, VOLUME_FIELD_PATHS, `${here}.fieldRef`, errors);
        mode(file.mode, `${here}.mode`, errors);
      });
    }
    if (isRecord(v.emptyDir)) {
      const limit = quantityValue(v.emptyDir.sizeLimit);
      if (limit !== undefined && limit < 0) errors.push(`${at}.emptyDir.sizeLimit: must not be negative`);
    }
  });
  return errors;
}
