/**
 * The pod-level rules of Kubernetes' core ValidatePodSpec (k8s.io/kubernetes v1.32
 * pkg/apis/core/validation, the release upstream OpenKruise v1.9.1 links) that upstream's
 * WorkloadSpread webhook reaches when it validates a subset patch merged into the target's pod
 * template (pkg/webhook/workloadspread/validating validateWorkloadSpreadSubsets: strategic merge,
 * then convertor.ConvertPod, which applies the pod defaults, then ValidatePodSpec). A merged
 * template that fails them would make every pod placed in the subset refused by the API server;
 * upstream refuses the WorkloadSpread instead, and so does this runtime.
 *
 * Covered here (what a patch can introduce across containers and volumes): volume names (required,
 * DNS label, unique), one source per volume (a patch merged by name onto a volume of another
 * source gives it two), container and init container names (required, DNS label, unique across
 * both lists), images (required), at least one container, volume mounts naming a declared volume
 * (a volume that failed its own checks is not declared, as upstream), volume devices (a declared
 * PVC or ephemeral volume, unique name and path, no overlap with the mounts), and the pod-level
 * fields restartPolicy, dnsPolicy, nodeSelector, tolerations, serviceAccountName,
 * priorityClassName, nodeName, hostname, subdomain, activeDeadlineSeconds. The per-container rules
 * (ports, env, probes, resources, security context, ...) come from the SidecarSet port
 * (../sidecarset/core-container.ts), in its own wording. Field paths are upstream's:
 * `spec.subsets[i].patch.containers[0].volumeMounts[0].name: Not found: "data"`.
 *
 * Also covered, for pod templates checked whole (CloneSet, ../cloneset/validate.ts): node and pod
 * (anti-)affinity terms, topology spread constraints, host aliases, readiness and scheduling gates,
 * the pod security context's ids and sysctl names, the DNS config (nameservers, option names, and
 * required under dnsPolicy None), and with `podTemplate` the template-only rules (no ephemeral
 * containers, whitespace around images allowed) and sleep hooks judged against the grace period.
 *
 * Not covered: the pod security context's other fields (seLinux, seccomp, appArmor, windows
 * options), DNS searches, matchLabelKeys rules, overhead, OS-specific rules, resource claims and the
 * per-source details of the volume sources the SidecarSet port does not check.
 */
import { isRecord } from '../../contract.js';
import { isValidLabelKey, isValidLabelValue, validateSelector } from '../../contract/selector.js';
import { DNS_LABEL, DNS_SUBDOMAIN } from '../../contract/values.js';
import { isIP } from 'node:net';
import { nodeSelectorTermProblems, tolerationProblems } from '../../contract/workloadspread.js';
import { coreSidecarErrors, coreVolumeErrors, type CoreValidationOptions } from '../sidecarset/core-container.js';

type Obj = Record<string, unknown>;

/** The volume sources in the order validateVolumeSource counts them: [JSON key, upstream's field path name]. */
const VOLUME_SOURCES: ReadonlyArray<readonly [string, string]> = [
  ['emptyDir', 'emptyDir'],
  ['hostPath', 'hostPath'],
  ['gitRepo', 'gitRepo'],
  ['gcePersistentDisk', 'gcePersistentDisk'],
  ['awsElasticBlockStore', 'awsElasticBlockStore'],
  ['secret', 'secret'],
  ['nfs', 'nfs'],
  ['iscsi', 'iscsi'],
  ['glusterfs', 'glusterfs'],
  ['flocker', 'flocker'],
  ['persistentVolumeClaim', 'persistentVolumeClaim'],
  ['rbd', 'rbd'],
  ['cinder', 'cinder'],
  ['cephfs', 'cephFS'],
  ['quobyte', 'quobyte'],
  ['downwardAPI', 'downwarAPI'],
  ['fc', 'fc'],
  ['flexVolume', 'flexVolume'],
  ['configMap', 'configMap'],
  ['azureFile', 'azureFile'],
  ['vsphereVolume', 'vsphereVolume'],
  ['photonPersistentDisk', 'photonPersistentDisk'],
  ['portworxVolume', 'portworxVolume'],
  ['azureDisk', 'azureDisk'],
  ['storageos', 'storageos'],
  ['projected', 'projected'],
  ['scaleIO', 'scaleIO'],
  ['csi', 'csi'],
  ['ephemeral', 'ephemeral'],
];

/** A value as field.Error prints it (%#v: strings quoted, numbers bare). */
const q = (v: unknown) =>
  typeof v === 'string' ? JSON.stringify(v) : v === undefined || v === null ? '""' : String(v);
const required = (path: string) => `${path}: Required value`;
const invalid = (path: string, value: unknown, msg: string) => `${path}: Invalid value: ${q(value)}: ${msg}`;
const duplicate = (path: string, value: unknown) => `${path}: Duplicate value: ${q(value)}`;
const notFound = (path: string, value: unknown) => `${path}: Not found: ${q(value)}`;
const unsupported = (path: string, value: unknown, supported: string[]) =>
  `${path}: Unsupported value: ${q(value)}: supported values: ${supported.map((s) => q(s)).join(', ')}`;

const DNS_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/** ValidateDNS1123Label: one error per message of IsDNS1123Label. */
function dnsLabel(value: string, path: string): string[] {
  const out: string[] = [];
  if (value.length > 63) out.push(invalid(path, value, 'must be no more than 63 characters'));
  if (!DNS_LABEL.test(value)) out.push(invalid(path, value, DNS_LABEL_MSG));
  return out;
}

/** NameIsDNSSubdomain (service account, priority class and node names). */
function dnsSubdomain(value: string, path: string): string[] {
  const out: string[] = [];
  if (value.length > 253) out.push(invalid(path, value, 'must be no more than 253 characters'));
  if (!DNS_SUBDOMAIN.test(value)) out.push(invalid(path, value, DNS_SUBDOMAIN_MSG));
  return out;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** ValidateVolumes: the errors, and the declared volumes (those without an error of their own) by name. */
function volumes(spec: Obj, at: string): { errors: string[]; declared: Map<string, Obj> } {
  const errors: string[] = [];
  const declared = new Map<string, Obj>();
  const names = new Set<string>();
  const sourceErrors = coreVolumeErrors(spec.volumes);
  list(spec.volumes).forEach((raw, i) => {
    const v = isRecord(raw) ? raw : {};
    const here = `${at}.volumes[${i}]`;
    const el: string[] = [];
    // Defaulting (SetDefaults_Volume) makes a volume without a source an emptyDir.
    let sources = 0;
    for (const [key, path] of VOLUME_SOURCES) {
      if (v[key] === undefined || v[key] === null) continue;
      if (sources > 0) el.push(`${here}.${path}: Forbidden: may not specify more than 1 volume type`);
      else sources++;
    }
    const prefix = `spec.volumes[${i}].`;
    for (const e of sourceErrors) if (e.startsWith(prefix)) el.push(`${here}.${e.slice(prefix.length)}`);
    const name = str(v.name);
    if (name === '') el.push(required(`${here}.name`));
    else el.push(...dnsLabel(name, `${here}.name`));
    if (names.has(name)) el.push(duplicate(`${here}.name`, name));
    if (el.length === 0) {
      names.add(name);
      declared.set(name, v);
    } else errors.push(...el);
  });
  return { errors, declared };
}

const isBlockSource = (v: Obj | undefined) =>
  !!v &&
  ((v.persistentVolumeClaim !== undefined && v.persistentVolumeClaim !== null) ||
    (v.ephemeral !== undefined && v.ephemeral !== null));

/** What validateContainerCommon checks against the pod's volumes, with names and images. */
function containerCommon(c: Obj, here: string, declared: Map<string, Obj>): string[] {
  const out: string[] = [];
  const name = str(c.name);
  if (name === '') out.push(required(`${here}.name`));
  else out.push(...dnsLabel(name, `${here}.name`));
  if (str(c.image) === '') out.push(required(`${here}.image`));
  const mounts = list(c.volumeMounts).filter(isRecord);
  const devices = list(c.volumeDevices).filter(isRecord);
  const deviceNames = new Set(devices.map((d) => str(d.name)));
  const devicePaths = new Set(devices.map((d) => str(d.devicePath)));
  list(c.volumeMounts).forEach((m, j) => {
    if (!isRecord(m)) return;
    const p = `${here}.volumeMounts[${j}]`;
    if (!declared.has(str(m.name))) out.push(notFound(`${p}.name`, str(m.name)));
    if (deviceNames.has(str(m.name)))
      out.push(invalid(`${p}.name`, str(m.name), 'must not already exist in volumeDevices'));
    if (devicePaths.has(str(m.mountPath)))
      out.push(invalid(`${p}.mountPath`, str(m.mountPath), 'must not already exist as a path in volumeDevices'));
  });
  const mountNames = new Set(mounts.map((m) => str(m.name)));
  const mountPaths = new Set(mounts.map((m) => str(m.mountPath)));
  const seenNames = new Set<string>();
  const seenPaths = new Set<string>();
  list(c.volumeDevices).forEach((d, j) => {
    if (!isRecord(d)) return;
    const p = `${here}.volumeDevices[${j}]`;
    const dn = str(d.name);
    const dp = str(d.devicePath);
    if (dn === '') out.push(required(`${p}.name`));
    if (seenNames.has(dn)) out.push(invalid(`${p}.name`, dn, 'must be unique'));
    if (declared.has(dn) && !isBlockSource(declared.get(dn)))
      out.push(
        invalid(
          `${p}.name`,
          dn,
          'can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode',
        ),
      );
    if (!declared.has(dn)) out.push(notFound(`${p}.name`, dn));
    if (dp === '') out.push(required(`${p}.devicePath`));
    if (seenPaths.has(dp)) out.push(invalid(`${p}.devicePath`, dp, 'must be unique'));
    if (dp !== '' && dp.split(/[\\/]/).includes('..'))
      out.push(invalid(`${p}.devicePath`, dp, "can not contain backsteps ('..')"));
    else seenPaths.add(dp);
    if (mountNames.has(dn)) out.push(invalid(`${p}.name`, dn, 'must not already exist in volumeMounts'));
    if (mountPaths.has(dp))
      out.push(invalid(`${p}.devicePath`, dp, 'must not already exist as a path in volumeMounts'));
    if (dn !== '') seenNames.add(dn);
  });
  return out;
}

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];

/**
 * Every problem core pod validation finds in a merged pod template's spec, each as
 * `<at>.<field>: <message>` (`at`: `spec.subsets[i].patch`). The spec is taken as upstream has it
 * after ConvertPod's defaulting: an absent restartPolicy or dnsPolicy is defaulted, not an error.
 */
export function mergedPodSpecProblems(podSpec: unknown, at: string, opts: CoreValidationOptions = {}): string[] {
  const spec: Obj = isRecord(podSpec) ? podSpec : {};
  const out: string[] = [];
  const { errors, declared } = volumes(spec, at);
  out.push(...errors);
  const containers = list(spec.containers);
  const initContainers = list(spec.initContainers);
  if (containers.length === 0) out.push(required(`${at}.containers`));
  const names = new Set<string>();
  containers.forEach((raw, i) => {
    const c = isRecord(raw) ? raw : {};
    const here = `${at}.containers[${i}]`;
    out.push(...containerCommon(c, here, declared));
    if (names.has(str(c.name))) out.push(duplicate(`${here}.name`, str(c.name)));
    else names.add(str(c.name));
  });
  initContainers.forEach((raw, i) => {
    const c = isRecord(raw) ? raw : {};
    const here = `${at}.initContainers[${i}]`;
    out.push(...containerCommon(c, here, declared));
    if (names.has(str(c.name))) out.push(duplicate(`${here}.name`, str(c.name)));
    else if (str(c.name) !== '') names.add(str(c.name));
  });
  // The per-container rules of the SidecarSet port, but its volume devices and their overlap with mounts, which
  // containerCommon above checks in upstream's words.
  const core: CoreValidationOptions = {
    ...opts,
    volumes: spec.volumes ?? [],
    terminationGracePeriodSeconds:
      opts.terminationGracePeriodSeconds ??
      (typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : undefined),
  };
  for (const e of coreSidecarErrors(spec.containers ?? [], spec.initContainers ?? [], core))
    if (
      !/^spec\.(init)?[cC]ontainers\[\d+\]\.volumeDevices\[/.test(e) &&
      !/^spec\.(init)?[cC]ontainers\[\d+\]\.volumeMounts\[\d+\]\.\w+: .* is also (in|a devicePath in) volumeDevices/.test(
        e,
      )
    )
      out.push(`${at}.${e.slice('spec.'.length)}`);
  const restart = spec.restartPolicy;
  if (restart !== undefined && restart !== null && restart !== '' && !RESTART_POLICIES.includes(restart as string))
    out.push(unsupported(`${at}.restartPolicy`, restart, RESTART_POLICIES));
  const dns = spec.dnsPolicy;
  if (dns !== undefined && dns !== null && dns !== '' && !DNS_POLICIES.includes(dns as string))
    out.push(unsupported(`${at}.dnsPolicy`, dns, DNS_POLICIES));
  if (isRecord(spec.nodeSelector))
    for (const [k, v] of Object.entries(spec.nodeSelector)) {
      if (!isValidLabelKey(k)) out.push(invalid(`${at}.nodeSelector`, k, 'is not a valid label key ([prefix/]name)'));
      if (typeof v !== 'string' || !isValidLabelValue(v))
        out.push(invalid(`${at}.nodeSelector`, v, 'is not a valid label value'));
    }
  for (const [field, message] of tolerationProblems(spec.tolerations, `${at}.tolerations`))
    out.push(`${field}: ${message}`);
  for (const field of ['serviceAccountName', 'priorityClassName', 'nodeName']) {
    const v = str(spec[field]);
    if (v !== '') out.push(...dnsSubdomain(v, `${at}.${field}`));
  }
  for (const field of ['hostname', 'subdomain']) {
    const v = str(spec[field]);
    if (v !== '') out.push(...dnsLabel(v, `${at}.${field}`));
  }
  const deadline = spec.activeDeadlineSeconds;
  if (typeof deadline === 'number' && (deadline < 1 || deadline > 2147483647))
    out.push(invalid(`${at}.activeDeadlineSeconds`, deadline, 'must be between 1 and 2147483647, inclusive'));
  out.push(...podLevelProblems(spec, at, opts));
  return out;
}

/** core validatePodAffinityTerm: a qualified topologyKey, a valid label selector and namespaces. */
function podAffinityTermProblems(raw: unknown, at: string): string[] {
  const term = isRecord(raw) ? raw : {};
  const out: string[] = [];
  const key = str(term.topologyKey);
  if (key === '') out.push(`${at}.topologyKey: Required value: can not be empty`);
  else if (!isValidLabelKey(key))
    out.push(invalid(`${at}.topologyKey`, key, 'is not a qualified name ([prefix/]name)'));
  for (const field of ['labelSelector', 'namespaceSelector'])
    if (term[field] !== undefined && term[field] !== null) out.push(...validateSelector(term[field], `${at}.${field}`));
  list(term.namespaces).forEach((n, i) => out.push(...dnsLabel(String(n), `${at}.namespaces[${i}]`)));
  return out;
}

const SYSCTL_NAME = /^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$/;
const WHEN_UNSATISFIABLE = ['DoNotSchedule', 'ScheduleAnyway'];

/**
 * Pod-level rules of core ValidatePodSpec beyond the ones above: node affinity terms, topology
 * spread constraints (maxSkew, topologyKey, whenUnsatisfiable, minDomains, duplicates), host
 * aliases, readiness gates, sysctls, a DNS config under dnsPolicy None, and (in a pod template)
 * no ephemeral containers.
 */
function podLevelProblems(spec: Obj, at: string, opts: CoreValidationOptions): string[] {
  const out: string[] = [];
  const node = isRecord(spec.affinity) && isRecord(spec.affinity.nodeAffinity) ? spec.affinity.nodeAffinity : {};
  const nodeAt = `${at}.affinity.nodeAffinity`;
  const requiredTerms = node.requiredDuringSchedulingIgnoredDuringExecution;
  if (isRecord(requiredTerms)) {
    const terms = list(requiredTerms.nodeSelectorTerms);
    const reqAt = `${nodeAt}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms`;
    if (terms.length === 0) out.push(`${reqAt}: Required value: must have at least one node selector term`);
    terms.forEach((t, i) => out.push(...nodeSelectorTermProblems(t, `${reqAt}[${i}]`).map(([f, m]) => `${f}: ${m}`)));
  }
  list(node.preferredDuringSchedulingIgnoredDuringExecution).forEach((raw, i) => {
    const term = isRecord(raw) ? raw : {};
    const here = `${nodeAt}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
    if (typeof term.weight !== 'number' || term.weight < 1 || term.weight > 100)
      out.push(invalid(`${here}.weight`, term.weight, 'must be in the range 1-100'));
    out.push(...nodeSelectorTermProblems(term.preference ?? {}, `${here}.preference`).map(([f, m]) => `${f}: ${m}`));
  });
  const affinity = isRecord(spec.affinity) ? spec.affinity : {};
  for (const kind of ['podAffinity', 'podAntiAffinity']) {
    const a = isRecord(affinity[kind]) ? affinity[kind] : {};
    const here = `${at}.affinity.${kind}`;
    list(a.requiredDuringSchedulingIgnoredDuringExecution).forEach((t, i) =>
      out.push(...podAffinityTermProblems(t, `${here}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`)),
    );
    list(a.preferredDuringSchedulingIgnoredDuringExecution).forEach((raw, i) => {
      const w = isRecord(raw) ? raw : {};
      const termAt = `${here}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      if (typeof w.weight !== 'number' || w.weight < 1 || w.weight > 100)
        out.push(invalid(`${termAt}.weight`, w.weight, 'must be in the range 1-100'));
      out.push(...podAffinityTermProblems(w.podAffinityTerm, `${termAt}.podAffinityTerm`));
    });
  }
  const seen = new Set<string>();
  list(spec.topologySpreadConstraints).forEach((raw, i) => {
    const c = isRecord(raw) ? raw : {};
    const here = `${at}.topologySpreadConstraints[${i}]`;
    if (typeof c.maxSkew !== 'number' || c.maxSkew <= 0)
      out.push(invalid(`${here}.maxSkew`, c.maxSkew, 'must be greater than zero'));
    if (str(c.topologyKey) === '') out.push(required(`${here}.topologyKey`));
    else if (!isValidLabelKey(str(c.topologyKey)))
      out.push(invalid(`${here}.topologyKey`, c.topologyKey, 'is not a qualified name ([prefix/]name)'));
    if (!WHEN_UNSATISFIABLE.includes(str(c.whenUnsatisfiable)))
      out.push(unsupported(`${here}.whenUnsatisfiable`, c.whenUnsatisfiable, WHEN_UNSATISFIABLE));
    if (c.minDomains !== undefined && c.minDomains !== null) {
      if (typeof c.minDomains !== 'number' || c.minDomains <= 0)
        out.push(invalid(`${here}.minDomains`, c.minDomains, 'must be greater than 0'));
      else if (c.whenUnsatisfiable !== 'DoNotSchedule')
        out.push(
          invalid(`${here}.minDomains`, c.minDomains, 'can only use minDomains if whenUnsatisfiable=DoNotSchedule'),
        );
    }
    const pair = `${str(c.topologyKey)}\0${str(c.whenUnsatisfiable)}`;
    if (seen.has(pair))
      out.push(
        duplicate(`${here}.{topologyKey, whenUnsatisfiable}`, `${str(c.topologyKey)}, ${str(c.whenUnsatisfiable)}`),
      );
    seen.add(pair);
  });
  list(spec.hostAliases).forEach((raw, i) => {
    const a = isRecord(raw) ? raw : {};
    if (!isIP(str(a.ip))) out.push(invalid(`${at}.hostAliases[${i}].ip`, str(a.ip), 'must be a valid IP address'));
    list(a.hostnames).forEach((h, j) =>
      out.push(...dnsSubdomain(String(h), `${at}.hostAliases[${i}].hostnames[${j}]`)),
    );
  });
  list(spec.readinessGates).forEach((raw, i) => {
    const type = isRecord(raw) ? str(raw.conditionType) : '';
    if (!isValidLabelKey(type))
      out.push(invalid(`${at}.readinessGates[${i}].conditionType`, type, 'is not a qualified name ([prefix/]name)'));
  });
  const security = isRecord(spec.securityContext) ? spec.securityContext : {};
  for (const id of ['runAsUser', 'runAsGroup', 'fsGroup']) {
    const v = security[id];
    if (typeof v === 'number' && (v < 0 || v > 2147483647))
      out.push(invalid(`${at}.securityContext.${id}`, v, 'must be between 0 and 2147483647, inclusive'));
  }
  list(security.supplementalGroups).forEach((g, i) => {
    if (typeof g === 'number' && (g < 0 || g > 2147483647))
      out.push(
        invalid(`${at}.securityContext.supplementalGroups[${i}]`, g, 'must be between 0 and 2147483647, inclusive'),
      );
  });
  const gates = new Set<string>();
  list(spec.schedulingGates).forEach((raw, i) => {
    const name = isRecord(raw) ? str(raw.name) : '';
    if (!isValidLabelKey(name))
      out.push(invalid(`${at}.schedulingGates[${i}]`, name, 'is not a qualified name ([prefix/]name)'));
    else if (gates.has(name)) out.push(duplicate(`${at}.schedulingGates[${i}]`, name));
    gates.add(name);
  });
  const sysctls = new Set<string>();
  list(security.sysctls).forEach((raw, i) => {
    const name = isRecord(raw) ? str(raw.name) : '';
    const here = `${at}.securityContext.sysctls[${i}].name`;
    if (name === '') out.push(required(here));
    else if (name.length > 253 || !SYSCTL_NAME.test(name)) out.push(invalid(here, name, 'is not a valid sysctl name'));
    else if (sysctls.has(name)) out.push(duplicate(here, name));
    sysctls.add(name);
  });
  if (spec.dnsPolicy === 'None') {
    const dns = isRecord(spec.dnsConfig) ? spec.dnsConfig : undefined;
    if (!dns) out.push(required(`${at}.dnsConfig`));
    else if (list(dns.nameservers).length === 0)
      out.push(
        `${at}.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when \`dnsPolicy\` is None`,
      );
  }
  if (isRecord(spec.dnsConfig)) {
    const servers = list(spec.dnsConfig.nameservers);
    if (servers.length > 3)
      out.push(invalid(`${at}.dnsConfig.nameservers`, servers.length, 'must not have more than 3 nameservers'));
    servers.forEach((s, i) => {
      if (!isIP(String(s)))
        out.push(invalid(`${at}.dnsConfig.nameservers[${i}]`, String(s), 'must be a valid IP address'));
    });
    list(spec.dnsConfig.options).forEach((o, i) => {
      if (!isRecord(o) || str(o.name) === '')
        out.push(`${at}.dnsConfig.options[${i}]: Required value: must not be empty`);
    });
  }
  if (opts.podTemplate && list(spec.ephemeralContainers).length > 0)
    out.push(`${at}.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template`);
  return out;
}
