import type {
  V1Container,
  V1EnvVar,
  V1LocalObjectReference,
  V1Pod,
  V1Volume,
  V1VolumeMount,
} from '@kubernetes/client-node';
import { isEmptySelector, isValidLabelKey, SidecarSetAnnotations } from '../../contract.js';
import { matchesSelector, type SelectorLike } from '../../contract/selector.js';
import { cloneJson } from '../webhook/jsonpatch.js';
import { readHashAnnotation, sidecarSetHash, sidecarSetHashWithoutImage } from './hash.js';
import { applyPodAnnotationPatches, type AnnotationAccess } from './metadata.js';
import {
  SIDECAR_ONLY_FIELDS,
  type SidecarContainer,
  type SidecarSet,
  type SidecarSetHashEntry,
  type TransferEnvVar,
} from './types.js';

/**
 * True when `sidecarSet` selects `pod`, as upstream v1.9.1 (sidecarcontrol.PodMatchedSidecarSet): its namespace
 * selector ({@link namespaceSelectorOf}) must select the pod's Namespace by that Namespace's labels (`namespaceLabels`:
 * undefined when the Namespace is not in the cache, which selects nothing), then its pod selector the pod.
 */
export function sidecarSetMatchesPod(
  s: SidecarSet,
  pod: V1Pod,
  namespaceLabels: Record<string, string> | undefined,
): boolean {
  const namespaceSelector = namespaceSelectorOf(s.spec);
  if (namespaceSelector && (namespaceLabels === undefined || !matchesSelector(namespaceSelector, namespaceLabels)))
    return false;
  // Upstream (sidecarcontrol.PodMatchedSidecarSet): an empty selector matches no pod.
  return !isEmptySelector(s.spec.selector) && matchesSelector(s.spec.selector, pod.metadata?.labels);
}

/**
 * The labels of the pod's Namespace as upstream's matching reads them (a Get of Namespace `namespace || "default"`):
 * undefined when `lookup` has no such Namespace, `{}` when it has no labels.
 */
export function podNamespaceLabels(
  pod: V1Pod,
  lookup: (ns: string) => { metadata?: { labels?: Record<string, string> } } | undefined,
): Record<string, string> | undefined {
  const ns = lookup(pod.metadata?.namespace || 'default');
  return ns ? (ns.metadata?.labels ?? {}) : undefined;
}

/** The label the API server sets on every Namespace to its name. */
export const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/**
 * The namespace selector upstream v1.9.1 reads from a v1alpha1 SidecarSet (its conversion to v1beta1, ConvertTo):
 * `spec.namespace: X` becomes `{ matchLabels: { "kubernetes.io/metadata.name": X } }` and wins over any
 * namespaceSelector; otherwise the namespaceSelector as it is; undefined: every namespace.
 */
export function namespaceSelectorOf(spec: {
  namespace?: unknown;
  namespaceSelector?: SelectorLike;
}): SelectorLike | undefined {
  if (typeof spec.namespace === 'string' && spec.namespace !== '')
    return { matchLabels: { [NAMESPACE_NAME_LABEL]: spec.namespace } };
  return spec.namespaceSelector;
}

/** A pod-ready Container from a sidecar: SidecarSet-only fields stripped. */
function toPodContainer(c: SidecarContainer): V1Container {
  const copy = cloneJson(c) as unknown as Record<string, unknown>;
  for (const field of SIDECAR_ONLY_FIELDS) delete copy[field];
  return copy as unknown as V1Container;
}

/** The env var upstream adds to every injected container (sidecarcontrol.SidecarEnvKey). */
const SIDECAR_INJECTED_ENV = 'IS_INJECTED';

/** Upstream's util.MergeEnvVar: `additional` entries whose name is not yet present, appended. */
function mergeEnv(original: V1EnvVar[], additional: V1EnvVar[]): V1EnvVar[] {
  const names = new Set(original.map((e) => e.name));
  return [...original, ...additional.filter((e) => !names.has(e.name) && names.add(e.name))];
}

/**
 * Upstream v1.9.1's util.MergeVolumeMounts(container, additional): `additional` mounts at a path neither the
 * container's own mounts nor its own volumeDevices use, appended.
 */
function mergeMounts(container: SidecarContainer, additional: V1VolumeMount[]): V1VolumeMount[] {
  const original = container.volumeMounts ?? [];
  const paths = new Set([
    ...original.map((m) => m.mountPath),
    ...(container.volumeDevices ?? []).map((d) => d.devicePath),
  ]);
  return [...original, ...additional.filter((m) => !paths.has(m.mountPath) && paths.add(m.mountPath))];
}

const SUBPATH_EXPR_ENV = /\$\(([-._a-zA-Z][-._a-zA-Z0-9]*)\)/g;

/**
 * shareVolumePolicy (upstream GetInjectedVolumeMountsAndEnvs): every mount of the pod's app
 * containers (not of containers already injected), and the env vars their `subPathExpr` uses.
 */
function sharedMountsAndEnv(c: SidecarContainer, pod: V1Pod): { mounts: V1VolumeMount[]; env: V1EnvVar[] } {
  if (c.shareVolumePolicy?.type !== 'enabled') return { mounts: [], env: [] };
  const mounts: V1VolumeMount[] = [];
  const env: V1EnvVar[] = [];
  for (const app of pod.spec?.containers ?? []) {
    if ((app.env ?? []).some((e) => e.name === SIDECAR_INJECTED_ENV && e.value === 'true')) continue;
    for (const mount of app.volumeMounts ?? []) {
      mounts.push(mount);
      for (const [, name] of (mount.subPathExpr ?? '').matchAll(SUBPATH_EXPR_ENV)) {
        const e = (app.env ?? []).find((x) => x.name === name);
        if (e) env.push(e);
      }
    }
  }
  return { mounts, env };
}

/**
 * The pod container a transferEnv rule reads (upstream ExtractContainerNameFromFieldPath): named,
 * or the value of the pod label/annotation `sourceContainerNameFrom.fieldRef` points at. A rule
 * whose fieldRef is unusable is skipped, as upstream does (validation refuses such SidecarSets).
 */
function sourceContainerName(rule: TransferEnvVar, pod: V1Pod, annotations: AnnotationAccess): string | undefined {
  const fieldPath = rule.sourceContainerNameFrom?.fieldRef?.fieldPath;
  if (fieldPath === undefined) return rule.sourceContainerName;
  const match = /^metadata\.(annotations|labels)\['(.*)'\]$/.exec(fieldPath);
  if (!match) return undefined;
  const key = match[1] === 'annotations' ? match[2].toLowerCase() : match[2];
  if (!isValidLabelKey(key)) return undefined;
  return (match[1] === 'annotations' ? annotations.get(match[2]) : pod.metadata?.labels?.[match[2]]) ?? '';
}

/**
 * transferEnv (upstream GetSidecarTransferEnvs): named env vars of named pod containers, in rule order, names sorted
 * per rule.
 */
function transferredEnv(c: SidecarContainer, pod: V1Pod, annotations: AnnotationAccess): V1EnvVar[] {
  const out: V1EnvVar[] = [];
  for (const rule of c.transferEnv ?? []) {
    const name = sourceContainerName(rule, pod, annotations);
    if (name === undefined) continue;
    const source = (pod.spec?.containers ?? []).find((a) => a.name === name);
    const names = [...new Set([...(rule.envName ? [rule.envName] : []), ...(rule.envNames ?? [])])].sort();
    for (const name of names) {
      const env = source?.env?.find((e) => e.name === name);
      if (env) out.push(env);
    }
  }
  return out;
}

/** Result of {@link injectSidecars}: the new pod and which SidecarSets injected containers. */
export interface Injection {
  pod: V1Pod;
  injected: string[];
  /**
   * The annotations injection set (patchPodMetadata, the hash and injected-list annotations). With
   * `annotationsApart`, `pod` keeps the original annotation map and these are the only changes.
   */
  annotationChanges: Record<string, string>;
}

export interface InjectOptions {
  /**
   * Leave `pod.metadata.annotations` the original map and report changes only in
   * `annotationChanges`: the webhook patches from them, so a pod with 200,000 annotations costs no
   * copy or walk of its map. Default false: `pod` carries the whole new map.
   */
  annotationsApart?: boolean;
  /**
   * Sort the containers injection adds by name (stably) before placing them, as upstream v1.9.1 does under its
   * EnableSortSidecarContainerByName gate. Default false, upstream's default: SidecarSets' order.
   */
  sortContainersByName?: boolean;
}

/**
 * Upstream v1.9.1's order of matched SidecarSets: those its cache indexes under a namespace, then cluster-wide ones
 * (fieldindex.IndexSidecarSetV1Beta1); by name within each.
 */
function injectionOrder(a: SidecarSet, b: SidecarSet): number {
  return (
    Number(!indexedUnderNamespace(a)) - Number(!indexedUnderNamespace(b)) ||
    a.metadata.name.localeCompare(b.metadata.name)
  );
}

/**
 * Whether upstream v1.9.1 indexes a SidecarSet under namespaces rather than cluster-wide: its namespace selector
 * ({@link namespaceSelectorOf}) names them by kubernetes.io/metadata.name, in matchLabels or an `In` expression.
 */
function indexedUnderNamespace(s: SidecarSet): boolean {
  const selector = namespaceSelectorOf(s.spec);
  return (
    selector !== undefined &&
    (selector.matchLabels?.[NAMESPACE_NAME_LABEL] !== undefined ||
      (selector.matchExpressions ?? []).some((e) => e.key === NAMESPACE_NAME_LABEL && e.operator === 'In'))
  );
}

/**
 * Injects every SidecarSet into `pod` (a copy sharing what it leaves unchanged) at pod CREATE, as
 * upstream's pod webhook does (pkg/webhook/pod/mutating/sidecarset.go): each sidecar gets the mounts it shares
 * (shareVolumePolicy), the env vars it takes (transferEnv, subPathExpr) and IS_INJECTED=true; a
 * pod container of the same name is replaced in place; only the SidecarSet volumes the sidecars
 * mount are added; image pull secrets are de-duplicated; init containers go after the pod's own,
 * sorted by name; patchPodMetadata is applied first. Re-running it on its own output changes
 * nothing but the annotation timestamps. Throws PatchPodMetadataError for a MergePatchJson
 * into an annotation that is not JSON (upstream refuses the pod).
 */
export function injectSidecars(
  original: V1Pod,
  sidecarSets: SidecarSet[],
  now: Date,
  options: InjectOptions = {},
): Injection {
  // Copy only what injection replaces (metadata, spec and the lists it rebuilds); the rest is shared with
  // `original`, read-only on both sides. A deep copy of a multi-megabyte pod held the event loop for 100+ ms.
  const pod: V1Pod = { ...original, spec: { ...(original.spec ?? { containers: [] }) } };
  if (original.metadata) pod.metadata = { ...original.metadata };
  const spec = pod.spec!;
  const ordered = [...sidecarSets].sort(injectionOrder);
  // patchPodMetadata first, as upstream: transferEnv's sourceContainerNameFrom reads the patched annotations.
  // The original annotations are read, never copied: what injection sets is recorded apart (a pod
  // may carry 200,000 annotations; a copy per SidecarSet held the event loop for seconds).
  const base = original.metadata?.annotations ?? {};
  const changes: Record<string, string> = {};
  const annotations: AnnotationAccess = {
    get: (k) => (Object.hasOwn(changes, k) ? changes[k] : Object.hasOwn(base, k) ? base[k] : undefined),
    has: (k) => Object.hasOwn(changes, k) || k in base,
    set: (k, v) => {
      if (k === '__proto__') Object.defineProperty(changes, k, { value: v, enumerable: true, writable: true });
      else changes[k] = v;
    },
  };
  for (const s of ordered) applyPodAnnotationPatches(annotations, s.spec.patchPodMetadata);
  const hashes = readHashAnnotation(
    { [SidecarSetAnnotations.hash]: annotations.get(SidecarSetAnnotations.hash) ?? '' },
    SidecarSetAnnotations.hash,
  );
  const hashesWithoutImage = readHashAnnotation(
    { [SidecarSetAnnotations.hashWithoutImage]: annotations.get(SidecarSetAnnotations.hashWithoutImage) ?? '' },
    SidecarSetAnnotations.hashWithoutImage,
  );
  const setNames = new Set((annotations.get(SidecarSetAnnotations.injectedList) ?? '').split(',').filter(Boolean));
  const containers: SidecarContainer[] = [];
  const inits: SidecarContainer[] = [];
  const volumes: V1Volume[] = [];
  const secrets: V1LocalObjectReference[] = [];
  const injected: string[] = [];

  for (const s of ordered) {
    const name = s.metadata.name;
    setNames.add(name);
    const sidecars = new Set<string>();
    const prepare = (c: SidecarContainer): SidecarContainer => {
      const out = cloneJson(c);
      const shared = sharedMountsAndEnv(c, pod);
      // The SidecarSet volumes its mounts and (v1.9.1) its own volumeDevices name; a missing one is skipped.
      for (const m of [...(c.volumeMounts ?? []), ...(c.volumeDevices ?? [])]) {
        const v = (s.spec.volumes ?? []).find((x) => x.name === m.name);
        if (v) volumes.push(cloneJson(v));
      }
      out.volumeMounts = mergeMounts(out, shared.mounts);
      if (out.volumeMounts.length === 0) delete out.volumeMounts;
      out.env = mergeEnv(
        [...(out.env ?? []), { name: SIDECAR_INJECTED_ENV, value: 'true' }],
        mergeEnv(transferredEnv(c, pod, annotations), shared.env),
      );
      return out;
    };
    for (const c of s.spec.initContainers ?? []) {
      if (c.restartPolicy === 'Always') sidecars.add(c.name);
      inits.push(prepare(c));
    }
    secrets.push(...(s.spec.imagePullSecrets ?? []));
    for (const c of s.spec.containers ?? []) {
      sidecars.add(c.name);
      containers.push(prepare(c));
    }
    if ((s.spec.initContainers ?? []).length + (s.spec.containers ?? []).length === 0) continue;
    const list = [...sidecars].sort();
    // Upstream records status.latestRevision, the ControllerRevision this pod got (a pinned one when
    // injectionStrategy.revision chose it).
    const controllerRevision = s.status?.latestRevision ? { controllerRevision: s.status.latestRevision } : {};
    // metav1.Time encodes as RFC 3339 in whole seconds.
    const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z');
    hashes[name] = {
      updateTimestamp: stamp,
      hash: sidecarSetHash(s),
      sidecarSetName: name,
      sidecarList: list,
      ...controllerRevision,
    };
    hashesWithoutImage[name] = {
      updateTimestamp: stamp,
      hash: sidecarSetHashWithoutImage(s),
      sidecarSetName: name,
      sidecarList: list,
    };
    injected.push(name);
  }
  if (containers.length === 0 && inits.length === 0)
    return { pod: { ...original }, injected: [], annotationChanges: {} };
  inits.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  spec.initContainers = mergeSidecarContainers(spec.initContainers ?? [], inits);
  if (spec.initContainers.length === 0) delete spec.initContainers;
  if (options.sortContainersByName) containers.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  spec.containers = mergeSidecarContainers(spec.containers, containers);
  const volumeNames = new Set((spec.volumes ?? []).map((v) => v.name));
  const newVolumes = volumes.filter((v) => !volumeNames.has(v.name) && volumeNames.add(v.name));
  if (newVolumes.length) spec.volumes = [...(spec.volumes ?? []), ...newVolumes];
  const secretNames = new Set<string | undefined>();
  const allSecrets = [...(spec.imagePullSecrets ?? []), ...secrets].filter(
    (x) => !secretNames.has(x.name) && secretNames.add(x.name),
  );
  if (allSecrets.length) spec.imagePullSecrets = allSecrets.map((x) => ({ ...x }));
  annotations.set(
    SidecarSetAnnotations.hash,
    goHashAnnotation(hashes, original.metadata?.annotations?.[SidecarSetAnnotations.hash]),
  );
  annotations.set(
    SidecarSetAnnotations.hashWithoutImage,
    goHashAnnotation(hashesWithoutImage, original.metadata?.annotations?.[SidecarSetAnnotations.hashWithoutImage]),
  );
  annotations.set(SidecarSetAnnotations.injectedList, [...setNames].sort().join(','));
  const metadata = (pod.metadata ??= {});
  if (options.annotationsApart) {
    if (original.metadata?.annotations) metadata.annotations = original.metadata.annotations;
  } else metadata.annotations = { ...base, ...changes };
  return { pod, injected, annotationChanges: changes };
}

/**
 * A hash annotation as upstream writes it: Go's encoding of map[string]SidecarSetUpgradeSpec
 * (pkg/control/sidecarcontrol/util.go), keys sorted, each entry's fields in struct order. Entries
 * upstream converted from the older flat form (`name: hash`, in `carried`) have a zero timestamp
 * and no list: both encode as null.
 */
function goHashAnnotation(entries: Record<string, SidecarSetHashEntry>, carried: string | undefined): string {
  const flat = new Set<string>();
  try {
    for (const [name, v] of Object.entries(JSON.parse(carried ?? '{}') as Record<string, unknown>))
      if (typeof v === 'string') flat.add(name);
  } catch {
    /* not JSON: read as empty, as readHashAnnotation does */
  }
  return JSON.stringify(
    Object.fromEntries(
      Object.keys(entries)
        .sort()
        .map((name) => {
          const e = entries[name];
          return [
            name,
            {
              updateTimestamp: e.updateTimestamp || null,
              hash: e.hash ?? '',
              sidecarSetName: e.sidecarSetName ?? '',
              sidecarList: flat.has(name) ? null : (e.sidecarList ?? null),
              ...(e.controllerRevision ? { controllerRevision: e.controllerRevision } : {}),
            },
          ];
        }),
    ),
  );
}

/**
 * Upstream's mergeSidecarContainers: a pod container of a sidecar's name is replaced where it is; others go
 * before/after by podInjectPolicy.
 */
export function mergeSidecarContainers(origins: V1Container[], sidecars: SidecarContainer[]): V1Container[] {
  const out = [...origins];
  const before: V1Container[] = [];
  const after: V1Container[] = [];
  for (const c of sidecars) {
    const at = out.findIndex((o) => o.name === c.name);
    if (at >= 0) out[at] = toPodContainer(c);
    else (c.podInjectPolicy === 'BeforeAppContainer' ? before : after).push(toPodContainer(c));
  }
  return [...before, ...out, ...after];
}

/** Pods that opted out of injection. */
export function injectionIgnored(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[SidecarSetAnnotations.injectIgnore] === 'true';
}
