import type { SidecarContainer, SidecarSet } from './types.js';

/** Upstream's defaults for the fields this runtime carries. */
export function defaultSidecarSet(original: SidecarSet): SidecarSet {
  const s = structuredClone(original);
  const strategy = (s.spec.updateStrategy ??= {});
  strategy.type ??= 'RollingUpdate';
  strategy.maxUnavailable ??= 1;
  s.spec.revisionHistoryLimit ??= 10;
  const container = (c: SidecarContainer) => {
    c.podInjectPolicy ??= 'AfterAppContainer';
    c.shareVolumePolicy ??= { type: 'disabled' };
    c.upgradeStrategy ??= { upgradeType: 'ColdUpgrade' };
    c.imagePullPolicy ??= pullsAlways(c.image) ? 'Always' : 'IfNotPresent';
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
  };
  if (Array.isArray(s.spec.containers)) s.spec.containers.forEach(container);
  if (Array.isArray(s.spec.initContainers)) s.spec.initContainers.forEach(container);
  return s;
}

/** Kubernetes' rule: no tag or `:latest` (and no digest) means Always. */
function pullsAlways(image: string | undefined): boolean {
  if (!image || image.includes('@')) return false;
  const last = image.slice(image.lastIndexOf('/') + 1);
  return !last.includes(':') || last.endsWith(':latest');
}
