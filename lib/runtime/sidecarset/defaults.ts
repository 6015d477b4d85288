import type { SidecarContainer, SidecarSet } from './types.js';

const isObject = (v: unknown): v is object => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Upstream's defaults for the fields this runtime carries. The defaulting webhook runs before
 * the API server checks the CRD schema, so fields of the wrong type are left as they are for
 * the schema to name (never a failed webhook call).
 */
export function defaultSidecarSet(original: SidecarSet): SidecarSet {
  const s = structuredClone(original);
  s.spec.updateStrategy ??= {};
  if (isObject(s.spec.updateStrategy)) {
    s.spec.updateStrategy.type ??= 'RollingUpdate';
    s.spec.updateStrategy.maxUnavailable ??= 1;
  }
  s.spec.revisionHistoryLimit ??= 10;
  // Upstream (apis/apps/defaults): containers go before the app containers unless told
  // otherwise; init containers are appended.
  const container = (c: SidecarContainer, injectPolicy: SidecarContainer['podInjectPolicy']) => {
    if (!isObject(c)) return;
    c.podInjectPolicy ??= injectPolicy;
    c.shareVolumePolicy ??= { type: 'disabled' };
    c.upgradeStrategy ??= { upgradeType: 'ColdUpgrade' };
    c.imagePullPolicy ??= pullsAlways(c.image) ? 'Always' : 'IfNotPresent';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
  };
  if (Array.isArray(s.spec.containers)) s.spec.containers.forEach((c) => container(c, 'BeforeAppContainer'));
  if (Array.isArray(s.spec.initContainers)) s.spec.initContainers.forEach((c) => container(c, 'AfterAppContainer'));
  return s;
}

/** Kubernetes' rule: no tag or `:latest` (and no digest) means Always. */
function pullsAlways(image: unknown): boolean {
  if (typeof image !== 'string' || !image || image.includes('@')) return false;
  const last = image.slice(image.lastIndexOf('/') + 1);
  return !last.includes(':') || last.endsWith(':latest');
}
