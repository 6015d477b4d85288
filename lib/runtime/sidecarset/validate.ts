import type { V1Pod } from '@kubernetes/client-node';
import {
  DNS_LABEL,
  isRecord,
  isEmptySelector,
  patchPodMetadataProblems,
  SIDECARSET_SELECTOR_FIX,
  sidecarSetConflicts,
  SidecarSetRules,
  sourceContainerFieldRefProblem,
  updateOrderProblems,
  volumeSourceProblem,
  type SidecarSetConflictView,
} from '../../contract.js';
import { isValidLabelValue, validateSelector } from '../../contract/selector.js';
import { checkJsonShape, createPatch, validatePatch } from '../webhook/index.js';
import { coreSidecarErrors, coreVolumeErrors } from './core-container.js';
import { GoEncodingError, upstreamSidecarSetHash } from './gojson.js';
import { injectionStrategyErrors, type SidecarSetRevisionSource } from './injection-revision.js';
import { injectSidecars, NAMESPACE_NAME_LABEL } from './inject.js';
import { patchMetadataWhitelistError, type PatchMetadataPolicy } from './metadata.js';
import type { SidecarSet } from './types.js';

/**
 * Nesting a SidecarSet spec may have, counted from `spec`. Real ones stay under 10 (a container's
 * `lifecycle.preStop.exec.command[0]` is 7 from spec); what is injected lands at the same depth in
 * every matching pod, so this keeps injected pods far inside every limit the pod path has.
 */
export const MAX_SIDECARSET_DEPTH = 32;
/** Bytes of a SidecarSet spec as JSON: all of it is copied into every matching pod (etcd takes 1.5 MiB per object). */
const MAX_SIDECARSET_SPEC_BYTES = 256 * 1024;

/** core/v1 Container's fields, plus SidecarSet's sidecar-only ones (some rejected below by name). */
const CONTAINER_FIELDS = new Set([
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'resizePolicy',
  'restartPolicy',
  'restartPolicyRules',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
  'podInjectPolicy',
  'shareVolumePolicy',
  'transferEnv',
  'upgradeStrategy',
  'shareVolumeDevicePolicy',
  'resourcesPolicy',
]);

/** Spec fields of the upstream API this runtime implements; anything else is rejected by name. */
const SPEC_FIELDS = new Set([
  'selector',
  'namespace',
  'namespaceSelector',
  'containers',
  'initContainers',
  'volumes',
  'imagePullSecrets',
  'updateStrategy',
  'injectionStrategy',
  'revisionHistoryLimit',
  'patchPodMetadata',
]);
const STRATEGY_FIELDS = new Set([
  'type',
  'partition',
  'maxUnavailable',
  'paused',
  'selector',
  'priorityStrategy',
  'scatterStrategy',
]);
const INT_OR_PERCENT = /^(\d+)%$/;

/**
 * Upstream's ValidatePositiveIntOrPercent: a whole number >= 0 or a percentage. As upstream, 0 and
 * percentages above 100 are accepted: a partition is clamped to the pods, maxUnavailable 0 updates
 * only pods that are not ready anyway; neither makes a pod unavailable that the user did not allow.
 */
function checkIntOrPercent(value: unknown, path: string, errors: string[]): void {
  if (value === undefined) return;
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && INT_OR_PERCENT.test(value)
        ? Number(INT_OR_PERCENT.exec(value)![1])
        : NaN;
  if (!(Number.isInteger(n) && n >= 0))
    errors.push(`${path}: ${JSON.stringify(value)} must be a whole number >= 0 or a percentage like "20%"`);
}

/** Upstream's UpdatePriorityStrategy and UpdateScatterStrategy FieldsValidation (rules in the contract). */
function checkUpdateOrder(strategy: Record<string, unknown>, errors: string[]): void {
  errors.push(...updateOrderProblems(strategy).map(([at, message]) => `spec.updateStrategy.${at}: ${message}`));
  const priority = strategy.priorityStrategy;
  const weights = isRecord(priority) && Array.isArray(priority.weightPriority) ? priority.weightPriority : [];
  weights.forEach((w: unknown, i) => {
    if (isRecord(w) && isRecord(w.matchSelector) && Object.keys(w.matchSelector).length > 0) {
      errors.push(
        ...validateSelector(w.matchSelector, `spec.updateStrategy.priorityStrategy.weightPriority[${i}].matchSelector`),
      );
    }
  });
}

function checkContainers(list: unknown, path: string, names: Map<string, string>, errors: string[]): void {
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    errors.push(`${path}: must be a list`);
    return;
  }
  list.forEach((c: unknown, i) => {
    const at = `${path}[${i}]`;
    if (!isRecord(c)) {
      errors.push(`${at}: must be an object`);
      return;
    }
    for (const key of Object.keys(c)) {
      if (!CONTAINER_FIELDS.has(key))
        errors.push(`${at}.${key}: is not a field of a container (core/v1 Container or a sidecar field); remove it`);
    }
    if (typeof c.name !== 'string' || c.name.length > 63 || !DNS_LABEL.test(c.name))
      errors.push(`${at}.name: ${JSON.stringify(c.name)} is not a valid container name (DNS label)`);
    else if (names.has(c.name))
      errors.push(`${at}.name: "${c.name}" is already used by ${names.get(c.name)}; container names must be unique`);
    else names.set(c.name, at);
    if (typeof c.image !== 'string' || c.image.trim() === '') errors.push(`${at}.image: is required`);
    if (
      c.podInjectPolicy !== undefined &&
      c.podInjectPolicy !== 'BeforeAppContainer' &&
      c.podInjectPolicy !== 'AfterAppContainer'
    ) {
      errors.push(
        `${at}.podInjectPolicy: ${JSON.stringify(c.podInjectPolicy)} must be BeforeAppContainer or AfterAppContainer`,
      );
    }
    const share = c.shareVolumePolicy as Record<string, unknown> | undefined;
    if (share !== undefined && (!isRecord(share) || !['enabled', 'disabled'].includes(share.type as string))) {
      errors.push(`${at}.shareVolumePolicy.type: must be enabled or disabled`);
    }
    const transfer = c.transferEnv;
    if (transfer !== undefined) {
      if (!Array.isArray(transfer)) errors.push(`${at}.transferEnv: must be a list`);
      else
        transfer.forEach((t: Record<string, unknown>, j) => {
          const from = isRecord(t) ? t.sourceContainerNameFrom : undefined;
          if (from !== undefined) {
            const fieldRef = isRecord(from) ? from.fieldRef : undefined;
            // Upstream checks the fieldRef of containers only (validateDownwardAPI); an init container's bad one is
            // skipped at injection.
            const problem = isRecord(fieldRef) ? sourceContainerFieldRefProblem(fieldRef) : undefined;
            const field = `${at}.transferEnv[${j}].sourceContainerNameFrom.fieldRef`;
            if (!isRecord(fieldRef))
              errors.push(
                `${field}: is required, e.g. { apiVersion: v1, fieldPath: "metadata.labels['sidecar-source']" }`,
              );
            else if (problem && path === 'spec.containers') errors.push(`${field}.${problem}`);
          }
          if (
            !isRecord(t) ||
            (typeof t.sourceContainerName !== 'string' && from === undefined) ||
            (typeof t.envName !== 'string' && !Array.isArray(t.envNames))
          ) {
            errors.push(
              `${at}.transferEnv[${j}]: needs sourceContainerName (or sourceContainerNameFrom) and envName (or envNames)`,
            );
          }
        });
    }
    const upgrade = c.upgradeStrategy as Record<string, unknown> | undefined;
    if (isRecord(upgrade) && upgrade.upgradeType === 'HotUpgrade')
      errors.push(
        `${at}.upgradeStrategy.upgradeType: HotUpgrade is not supported by this runtime; use ColdUpgrade or remove it`,
      );
    for (const field of ['shareVolumeDevicePolicy', 'resourcesPolicy']) {
      if (c[field] !== undefined) errors.push(`${at}.${field}: is not supported by this runtime; remove it`);
    }
  });
}

/** Upstream's validateSidecarSetName (over name and generateName): letters, digits and '-', at most 63 characters. */
function nameErrors(meta: Record<string, unknown>): string[] {
  return (['name', 'generateName'] as const).flatMap((key) => {
    const value = meta[key];
    if (typeof value !== 'string' || (key === 'generateName' && value === '')) return [];
    const out: string[] = [];
    if (!/^[a-zA-Z0-9-]+$/.test(value))
      out.push(
        `metadata.${key}: ${JSON.stringify(value)} must consist of alphanumeric characters or '-' (upstream's SidecarSet name rule), e.g. "example-com"`,
      );
    if (value.length > 63)
      out.push(
        `metadata.${key}: ${JSON.stringify(value)} is ${value.length} characters; a SidecarSet name may have at most 63 (it becomes a label value)`,
      );
    return out;
  });
}

/** What validation reads besides the SidecarSet: the webhook passes its caches and configuration. */
export interface SidecarSetValidationContext {
  /** ControllerRevisions, to check that injectionStrategy.revision names one; unchecked when absent. */
  revisions?: SidecarSetRevisionSource;
  /** The patchPodMetadata whitelist; absent means none (and upstream's gate off): patchPodMetadata is refused. */
  patchMetadata?: PatchMetadataPolicy;
  /** On UPDATE, the stored SidecarSet: upstream refuses new containers and upgradeType changes. */
  previous?: unknown;
}

/**
 * Upstream's validateSidecarContainerConflict (UPDATE): every container must already be in the
 * stored SidecarSet (upstream cannot add a sidecar to running pods), with the same upgradeType.
 */
function updateErrors(spec: Record<string, unknown>, previous: unknown): string[] {
  if (!isRecord(previous) || !isRecord(previous.spec) || !Array.isArray(spec.containers)) return [];
  // A stored SidecarSet with init containers only has no containers: every container is then new.
  const old = Array.isArray(previous.spec.containers) ? previous.spec.containers : [];
  const upgradeType = (c: unknown) =>
    isRecord(c) && isRecord(c.upgradeStrategy) ? c.upgradeStrategy.upgradeType : undefined;
  const before = new Map(old.filter(isRecord).map((c) => [c.name, upgradeType(c)]));
  return spec.containers.flatMap((c: unknown, i) => {
    if (!isRecord(c)) return [];
    if (!before.has(c.name)) {
      return [
        `spec.containers[${i}].name: container ${JSON.stringify(c.name)} is not in the stored SidecarSet; upstream refuses adding a sidecar on update. Fix: create another SidecarSet for it`,
      ];
    }
    const was = before.get(c.name);
    return was && upgradeType(c) !== was
      ? [`spec.containers[${i}].upgradeStrategy.upgradeType: is immutable (was ${JSON.stringify(was)})`]
      : [];
  });
}

/** Every problem with a SidecarSet on its own, each naming the field and the fix. */
export function validateSidecarSet(s: unknown, context: SidecarSetValidationContext = {}): string[] {
  if (!isRecord(s)) return ['SidecarSet: must be an object'];
  const meta = s.metadata as Record<string, unknown> | undefined;
  const errors: string[] = [];
  if (!isRecord(meta) || (typeof meta.name !== 'string' && typeof meta.generateName !== 'string'))
    errors.push('metadata.name: is required');
  else errors.push(...nameErrors(meta));
  const spec = s.spec;
  if (!isRecord(spec)) return [...errors, 'spec: is required'];
  // First, and alone: the checks below and the injection itself assume a bounded shape.
  const shape = shapeError(spec);
  if (shape) return [...errors, shape];
  for (const key of Object.keys(spec))
    if (!SPEC_FIELDS.has(key))
      errors.push(`spec.${key}: is not supported by this runtime (upstream-only feature); remove it`);
  if (spec.selector === undefined) errors.push(`spec.selector: is required; ${SIDECARSET_SELECTOR_FIX}`);
  else {
    errors.push(...validateSelector(spec.selector, 'spec.selector'));
    if (isRecord(spec.selector) && isEmptySelector(spec.selector))
      errors.push(`spec.selector: is empty; ${SIDECARSET_SELECTOR_FIX}`);
  }
  // Upstream v1.9.1 validates the v1beta1 form of a v1alpha1 SidecarSet (ConvertTo): a non-empty `namespace` becomes
  // the namespace selector `kubernetes.io/metadata.name: <namespace>` and wins, so a namespaceSelector beside it is
  // dropped unread (v1.8.3 refused the pair); the name must then be a valid label value.
  if (spec.namespace !== undefined && typeof spec.namespace !== 'string')
    errors.push(`spec.namespace: ${JSON.stringify(spec.namespace)} must be a string`);
  else if (typeof spec.namespace === 'string' && spec.namespace !== '') {
    if (!isValidLabelValue(spec.namespace))
      errors.push(
        `spec.namespace: ${JSON.stringify(spec.namespace)} is not a valid label value, which upstream requires of it ` +
          `(it matches the namespace by its ${NAMESPACE_NAME_LABEL} label); use the name of an existing namespace`,
      );
  } else if (spec.namespaceSelector !== undefined) {
    errors.push(...validateSelector(spec.namespaceSelector, 'spec.namespaceSelector'));
    // Upstream's validateSelector refuses an empty one ({} would select every namespace). A member a label selector
    // does not have counts as absent, as in upstream's decoding (and the CRD prunes it before).
    if (isRecord(spec.namespaceSelector) && isEmptySelector(spec.namespaceSelector))
      errors.push(
        'spec.namespaceSelector: is empty; upstream refuses an empty selector. Fix: remove it to inject in every namespace, or give it matchLabels',
      );
  }
  const names = new Map<string, string>();
  checkContainers(spec.containers, 'spec.containers', names, errors);
  checkContainers(spec.initContainers, 'spec.initContainers', names, errors);
  errors.push(
    ...coreSidecarErrors(spec.containers, spec.initContainers, {
      volumes: spec.volumes,
      terminationGracePeriodSeconds: FAKE_POD_GRACE_SECONDS,
    }),
  );
  errors.push(...coreVolumeErrors(spec.volumes));
  if (names.size === 0 && !errors.some((e) => e.startsWith('spec.containers') || e.startsWith('spec.initContainers'))) {
    errors.push('spec.containers: at least one container or init container is required');
  }
  if (spec.volumes !== undefined) {
    const seen = new Set<string>();
    if (!Array.isArray(spec.volumes)) errors.push('spec.volumes: must be a list');
    else
      spec.volumes.forEach((v: Record<string, unknown>, i) => {
        if (!isRecord(v) || typeof v.name !== 'string' || !DNS_LABEL.test(v.name))
          errors.push(`spec.volumes[${i}].name: is not a valid volume name`);
        else if (seen.has(v.name)) errors.push(`spec.volumes[${i}].name: "${v.name}" is duplicated`);
        else seen.add(v.name);
        const problem = isRecord(v) ? volumeSourceProblem(v) : undefined;
        if (problem) errors.push(`spec.volumes[${i}]: ${problem}`);
      });
  }
  // Upstream validates the sidecars as a pod spec with spec.volumes (core ValidatePodSpec): a
  // mount must name one of them (upstream's injection would otherwise fail on every pod).
  const volumeNames = new Set(
    Array.isArray(spec.volumes)
      ? spec.volumes.map((v: Record<string, unknown>) => (isRecord(v) ? v.name : undefined))
      : [],
  );
  for (const list of ['containers', 'initContainers'] as const) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((c: unknown, i) => {
      const mounts = isRecord(c) ? c.volumeMounts : undefined;
      if (!Array.isArray(mounts)) return;
      mounts.forEach((m: unknown, j) => {
        if (isRecord(m) && typeof m.name === 'string' && !volumeNames.has(m.name)) {
          errors.push(`spec.${list}[${i}].volumeMounts[${j}].name: "${m.name}" ${SidecarSetRules.mountWithoutVolume}`);
        }
      });
    });
  }
  const strategy = spec.updateStrategy;
  if (strategy !== undefined) {
    if (!isRecord(strategy)) errors.push('spec.updateStrategy: must be an object');
    else {
      for (const key of Object.keys(strategy))
        if (!STRATEGY_FIELDS.has(key))
          errors.push(`spec.updateStrategy.${key}: is not supported by this runtime; remove it`);
      if (strategy.type !== undefined && strategy.type !== 'RollingUpdate' && strategy.type !== 'NotUpdate')
        errors.push(`spec.updateStrategy.type: ${JSON.stringify(strategy.type)} must be RollingUpdate or NotUpdate`);
      // Upstream (validateSidecarSetUpdateStrategy) checks these under RollingUpdate (the default) only: a NotUpdate
      // SidecarSet never rolls, and switching it to RollingUpdate is an update that checks them again.
      if (strategy.type !== 'NotUpdate') {
        checkIntOrPercent(strategy.partition, 'spec.updateStrategy.partition', errors);
        checkIntOrPercent(strategy.maxUnavailable, 'spec.updateStrategy.maxUnavailable', errors);
        checkUpdateOrder(strategy, errors);
        if (strategy.selector !== undefined) {
          errors.push(...validateSelector(strategy.selector, 'spec.updateStrategy.selector'));
          if (isRecord(strategy.selector) && isEmptySelector(strategy.selector))
            errors.push(
              'spec.updateStrategy.selector: is empty; upstream refuses an empty selector. Fix: remove it to update every pod, or give it matchLabels',
            );
        }
      }
      if (strategy.paused !== undefined && typeof strategy.paused !== 'boolean')
        errors.push('spec.updateStrategy.paused: must be true or false');
      // Upstream (validateSidecarSetUpdateStrategy): a non-zero partition and a selector exclude each other under
      // RollingUpdate.
      const partitionSet =
        typeof strategy.partition === 'string' || (typeof strategy.partition === 'number' && strategy.partition !== 0);
      if (strategy.type !== 'NotUpdate' && partitionSet && strategy.selector !== undefined) {
        errors.push(`spec.updateStrategy: ${SidecarSetRules.partitionWithSelector}`);
      }
    }
  }
  // Upstream (validateSidecarSetSpec): native sidecar init containers cannot be updated in place, so
  // with one the update strategy must not be RollingUpdate (the default).
  const rolling = !isRecord(strategy) || strategy.type === undefined || strategy.type === 'RollingUpdate';
  if (rolling && Array.isArray(spec.initContainers)) {
    spec.initContainers.forEach((c: unknown, i) => {
      if (isRecord(c) && c.restartPolicy === 'Always') {
        errors.push(`spec.initContainers[${i}].restartPolicy: ${SidecarSetRules.nativeSidecarRolling}`);
      }
    });
  }
  errors.push(...injectionStrategyErrors(s as unknown as SidecarSet, context.revisions));
  if (context.previous !== undefined) errors.push(...updateErrors(spec, context.previous));
  if (spec.patchPodMetadata !== undefined) {
    if (!Array.isArray(spec.patchPodMetadata) || !spec.patchPodMetadata.every(isRecord))
      errors.push('spec.patchPodMetadata: must be a list of { annotations, patchPolicy }');
    else {
      errors.push(...patchPodMetadataProblems(spec.patchPodMetadata).map(([at, message]) => `${at}: ${message}`));
      const notAllowed = patchMetadataWhitelistError(s as unknown as SidecarSet, context.patchMetadata ?? {});
      if (notAllowed) errors.push(notAllowed);
    }
  }
  // Any whole number, as upstream: the controller keeps at least one revision (the latest) whatever it says.
  if (spec.revisionHistoryLimit !== undefined && !Number.isInteger(spec.revisionHistoryLimit)) {
    errors.push('spec.revisionHistoryLimit: must be a whole number');
  }
  if (errors.length === 0) {
    try {
      upstreamSidecarSetHash(spec);
    } catch (err) {
      if (!(err instanceof GoEncodingError)) throw err;
      errors.push(`${err.message} (the revision hash is upstream's, over upstream's container types)`);
    }
  }
  if (errors.length === 0) {
    const injection = injectionError(s as unknown as SidecarSet);
    if (injection) errors.push(injection);
  }
  return errors;
}

/** Depth, out-of-range numbers and size of a spec; the first problem, naming the field. */
function shapeError(spec: Record<string, unknown>): string | undefined {
  const shape = checkJsonShape(spec, 'spec', MAX_SIDECARSET_DEPTH);
  if (shape)
    return `${shape.field}: ${shape.message.replace(/; no Kubernetes object.*$/, '')}; a SidecarSet is copied into every pod it matches, so it may nest at most ${MAX_SIDECARSET_DEPTH} levels below spec`;
  const bytes = Buffer.byteLength(JSON.stringify(spec));
  if (bytes > MAX_SIDECARSET_SPEC_BYTES) {
    return `spec: is ${bytes} bytes as JSON, over the ${MAX_SIDECARSET_SPEC_BYTES}-byte limit; every matching pod would carry it. Fix: move large data into a ConfigMap volume`;
  }
  return undefined;
}

/** A pod as small as the API server accepts, to inject into as a dry run. */
const PROBE_POD: V1Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'probe', namespace: 'probe', labels: {} },
  spec: { containers: [{ name: 'app', image: 'app' }] },
};

/**
 * Injects into a probe pod: a SidecarSet whose injection throws or yields an invalid patch is refused now, not at every
 * pod CREATE.
 */
function injectionError(s: SidecarSet): string | undefined {
  try {
    const { pod } = injectSidecars(PROBE_POD, [s], new Date(0));
    const invalid = validatePatch(createPatch(PROBE_POD, pod));
    return invalid ? `spec: injecting this SidecarSet would produce an invalid pod patch (${invalid})` : undefined;
  } catch (err) {
    return `spec: injecting this SidecarSet fails (${(err as Error).message})`;
  }
}

/** The grace period (s) of the pod upstream v1.9.1 validates sidecars in (DefaultTerminationGracePeriodSeconds). */
const FAKE_POD_GRACE_SECONDS = 30;

const unservable = new WeakMap<object, string | false>();

/**
 * Why a stored SidecarSet cannot be injected (too deep, too big, an injection that fails), or
 * undefined. The pod webhook skips such a SidecarSet with a warning instead of failing every pod
 * it matches: one object must never block pod creation. The admission webhook refuses them when
 * written; this covers those stored while it was bypassed. Memoized per (frozen) cache object.
 */
export function unservableReason(s: SidecarSet): string | undefined {
  const known = unservable.get(s);
  if (known !== undefined) return known || undefined;
  const reason = isRecord(s?.spec)
    ? (shapeError(s.spec as unknown as Record<string, unknown>) ?? injectionError(s))
    : 'spec: is required';
  unservable.set(s, reason ?? false);
  return reason;
}

/** The parts of a SidecarSet that {@link sidecarSetConflicts} compares. */
export function conflictView(s: SidecarSet): SidecarSetConflictView {
  return {
    namespace: s.spec.namespace,
    namespaceSelector: s.spec.namespaceSelector,
    selector: s.spec.selector,
    containers: (s.spec.containers ?? []).map((c) => c.name),
    initContainers: (s.spec.initContainers ?? []).map((c) => c.name),
    volumes: s.spec.volumes ?? [],
    patchPodMetadata: s.spec.patchPodMetadata,
  };
}

/**
 * Conflicts with existing SidecarSets whose pods may overlap (upstream validateSidecarConflict; rules in the contract).
 */
export function findConflicts(candidate: SidecarSet, others: SidecarSet[]): string[] {
  return others
    .filter((o) => o.metadata.name !== candidate.metadata.name)
    .flatMap((other) =>
      sidecarSetConflicts(conflictView(candidate), conflictView(other)).map(({ field, names }) => {
        const list = names.map((n) => `"${n}"`).join(', ');
        if (field === 'patchPodMetadata')
          return `spec.patchPodMetadata: annotation ${list} is also patched by SidecarSet "${other.metadata.name}" in pods both select, one of them with Overwrite; ${SidecarSetRules.patchConflictFix}`;
        return field === 'volumes'
          ? `spec.volumes: volume ${list} differs from the volume of that name in SidecarSet "${other.metadata.name}", which injects into pods both select; make them identical or rename one`
          : `spec.${field}: container ${list} is also injected by SidecarSet "${other.metadata.name}" into pods both select; rename the container or make the selectors disjoint`;
      }),
    );
}
