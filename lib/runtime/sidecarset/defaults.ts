import { isRecord, SidecarSetAnnotations, SidecarSetLabels } from '../../contract.js';
import { NAMESPACE_NAME_LABEL } from './inject.js';
import { canonicalQuantity, encode, GoEncodingError, upstreamSidecarSetHash } from './gojson.js';
import { GO_ROOT } from './gojson.generated.js';
import type { SidecarContainer, SidecarSet } from './types.js';

/**
 * Upstream's defaults for the fields this runtime carries (apis/apps/defaults/v1alpha1.go
 * SetDefaultsSidecarSet), then upstream's two revision annotations on the SidecarSet
 * (`kruise.io/sidecarset-hash[-without-image]`, pkg/webhook/sidecarset/mutating), computed with
 * upstream's algorithm: pods either side injected read the same revision. The defaulting
 * webhook runs before the API server checks the CRD schema, so fields of the wrong type are left
 * as they are for the schema to name (never a failed webhook call).
 */
export function defaultSidecarSet(original: SidecarSet): SidecarSet {
  const s = structuredClone(original);
  s.spec.updateStrategy ??= {};
  if (isRecord(s.spec.updateStrategy)) {
    s.spec.updateStrategy.type ||= 'RollingUpdate';
    s.spec.updateStrategy.maxUnavailable ??= 1;
    s.spec.updateStrategy.partition ??= 0;
  }
  s.spec.revisionHistoryLimit ??= 10;
  if (Array.isArray(s.spec.patchPodMetadata))
    s.spec.patchPodMetadata.forEach((p) => {
      if (isRecord(p)) p.patchPolicy ||= 'Retain';
    });
  const revision = isRecord(s.spec.injectionStrategy) ? s.spec.injectionStrategy.revision : undefined;
  if (isRecord(revision)) revision.policy ||= 'Always';
  // Upstream: containers go before the app containers unless told otherwise; init containers are appended.
  if (Array.isArray(s.spec.containers)) s.spec.containers.forEach((c) => defaultContainer(c, 'BeforeAppContainer'));
  if (Array.isArray(s.spec.initContainers))
    s.spec.initContainers.forEach((c) => defaultContainer(c, 'AfterAppContainer'));
  if (Array.isArray(s.spec.volumes)) s.spec.volumes.forEach(defaultVolume);
  storeAsUpstream(s);
  try {
    const annotations = (s.metadata.annotations ??= {});
    annotations[SidecarSetAnnotations.hash] = upstreamSidecarSetHash(s.spec);
    annotations[SidecarSetAnnotations.hashWithoutImage] = upstreamSidecarSetHash(s.spec, true);
  } catch (err) {
    // A shape upstream's types cannot hold: the validating webhook names it.
    if (!(err instanceof GoEncodingError)) throw err;
  }
  return s;
}

/**
 * The spec as upstream's webhook stores it: its patch turns the request into Go's encoding of the
 * decoded object, so empty `omitempty` lists vanish, `injectionStrategy` (a struct, never
 * omitted) reads `{}`, and every sidecar reads as Go encodes a SidecarContainer (e.g.
 * `resources: {}`). Found by test/integration/sidecarset-differential.test.ts.
 */
function storeAsUpstream(s: SidecarSet): void {
  const spec = s.spec as Record<string, unknown>;
  // Upstream v1.9.1 stores a SidecarSet as v1beta1 and serves v1alpha1 through its conversion (ConvertTo, then
  // ConvertFrom), so a v1alpha1 client reads back `namespace` as the namespace selector
  // `kubernetes.io/metadata.name: <namespace>` (replacing any namespaceSelector beside it), and the custom-version
  // label only when it is not empty. The runtime stores v1alpha1, written here as upstream reads it back.
  if (typeof spec.namespace === 'string') {
    if (spec.namespace !== '') spec.namespaceSelector = { matchLabels: { [NAMESPACE_NAME_LABEL]: spec.namespace } };
    delete spec.namespace;
  }
  const labels = s.metadata.labels;
  if (isRecord(labels) && labels[SidecarSetLabels.customVersion] === '') {
    delete labels[SidecarSetLabels.customVersion];
    if (Object.keys(labels).length === 0) delete s.metadata.labels;
  }
  for (const list of ['containers', 'initContainers', 'volumes', 'imagePullSecrets']) {
    if (Array.isArray(spec[list]) && (spec[list] as unknown[]).length === 0) delete spec[list];
  }
  s.spec.injectionStrategy ??= {};
  // LocalObjectReference's name is omitempty: an empty one is stored as {}.
  if (Array.isArray(s.spec.imagePullSecrets))
    s.spec.imagePullSecrets = s.spec.imagePullSecrets.map((r) => (isRecord(r) && r.name === '' ? {} : r));
  for (const list of ['containers', 'initContainers'] as const) {
    const value = s.spec[list];
    if (!Array.isArray(value)) continue;
    try {
      s.spec[list] = JSON.parse(encode(value, `[]${GO_ROOT}`, `spec.${list}`)) as SidecarContainer[];
    } catch (err) {
      if (!(err instanceof GoEncodingError)) throw err; // a shape upstream cannot hold: the validator names it
    }
  }
}

/** core/v1 defaults upstream applies to a pod's volumes (apis/apps/defaults/pod.go SetDefaultPodVolumes). */
export function defaultVolume(v: unknown): void {
  if (!isRecord(v)) return;
  if (Object.keys(v).every((k) => k === 'name')) v.emptyDir = {}; // SetDefaults_Volume
  if (isRecord(v.hostPath)) v.hostPath.type ??= '';
  for (const source of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    if (isRecord(v[source])) (v[source] as Record<string, unknown>).defaultMode ??= 420; // 0644
  }
  const fieldRefs = (items: unknown) =>
    (Array.isArray(items) ? items : []).forEach((i) => {
      if (isRecord(i?.fieldRef)) i.fieldRef.apiVersion ||= 'v1';
    });
  if (isRecord(v.downwardAPI)) fieldRefs(v.downwardAPI.items);
  if (isRecord(v.projected) && Array.isArray(v.projected.sources)) {
    for (const src of v.projected.sources) {
      if (isRecord(src?.downwardAPI)) fieldRefs(src.downwardAPI.items);
      if (isRecord(src?.serviceAccountToken)) src.serviceAccountToken.expirationSeconds ??= 3600;
    }
  }
}

function defaultContainer(c: SidecarContainer, injectPolicy: SidecarContainer['podInjectPolicy']): void {
  if (!isRecord(c)) return;
  c.podInjectPolicy ||= injectPolicy;
  if (c.upgradeStrategy === undefined || isRecord(c.upgradeStrategy))
    (c.upgradeStrategy ??= {}).upgradeType ||= 'ColdUpgrade';
  if (c.shareVolumePolicy === undefined || isRecord(c.shareVolumePolicy))
    (c.shareVolumePolicy ??= {}).type ||= 'disabled';
  // core/v1 SetDefaults_Container and the parts of a container upstream defaults explicitly.
  c.terminationMessagePath ||= '/dev/termination-log';
  c.terminationMessagePolicy ||= 'File';
  c.imagePullPolicy ||= pullsAlways(c.image) ? 'Always' : 'IfNotPresent';
  defaultContainerFields(c);
}

/**
 * The core/v1 defaults upstream's SetDefaultPodSpec applies inside any container (init and ephemeral
 * ones too): port protocols, fieldRef API versions, quantities rounded up to milli units and
 * written canonically, probe thresholds, HTTP GET path and scheme.
 */
export function defaultContainerFields(c: Record<string, unknown>): void {
  if (Array.isArray(c.ports))
    c.ports.forEach((p) => {
      if (isRecord(p)) p.protocol ||= 'TCP';
    });
  if (Array.isArray(c.env))
    c.env.forEach((e) => {
      if (isRecord(e?.valueFrom?.fieldRef)) e.valueFrom.fieldRef.apiVersion ||= 'v1';
    });
  if (isRecord(c.resources)) {
    for (const list of ['limits', 'requests'] as const) {
      const resources = c.resources[list] as Record<string, unknown> | undefined;
      if (!isRecord(resources)) continue;
      for (const [k, v] of Object.entries(resources)) {
        try {
          resources[k] = canonicalQuantity(v, `resources.${list}.${k}`, true);
        } catch {
          /* the schema names it */
        }
      }
    }
  }
  for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) {
    if (!isRecord(probe)) continue;
    probe.timeoutSeconds ||= 1;
    probe.periodSeconds ||= 10;
    probe.successThreshold ||= 1;
    probe.failureThreshold ||= 3;
    defaultHttpGet(probe.httpGet);
  }
  if (isRecord(c.lifecycle)) {
    defaultHttpGet((c.lifecycle.postStart as Record<string, unknown> | undefined)?.httpGet);
    defaultHttpGet((c.lifecycle.preStop as Record<string, unknown> | undefined)?.httpGet);
  }
}

function defaultHttpGet(h: unknown): void {
  if (!isRecord(h)) return;
  h.path ||= '/';
  h.scheme ||= 'HTTP';
}

/** Kubernetes' rule: a `latest` tag (or none, and no digest) means Always. */
export function pullsAlways(image: unknown): boolean {
  if (typeof image !== 'string' || !image || image.includes('@')) return false;
  const last = image.slice(image.lastIndexOf('/') + 1);
  return !last.includes(':') || last.endsWith(':latest');
}
