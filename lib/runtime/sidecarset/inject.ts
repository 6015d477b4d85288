import type { V1Container, V1EnvVar, V1Pod, V1VolumeMount } from '@kubernetes/client-node';
import { SidecarSetAnnotations } from '../../contract.js';
import { matchesSelector } from '../selector.js';
import { readHashAnnotation, sidecarSetHash, sidecarSetHashWithoutImage } from './hash.js';
import { SIDECAR_ONLY_FIELDS, type SidecarContainer, type SidecarSet, type SidecarSetHashEntry } from './types.js';

/** True when `sidecarSet` selects `pod` (selector, namespace, namespaceSelector). */
export function sidecarSetMatchesPod(s: SidecarSet, pod: V1Pod, namespaceLabels: Record<string, string> | undefined): boolean {
  const ns = pod.metadata?.namespace;
  if (s.spec.namespace && s.spec.namespace !== ns) return false;
  if (s.spec.namespaceSelector && !matchesSelector(s.spec.namespaceSelector, namespaceLabels)) return false;
  return matchesSelector(s.spec.selector, pod.metadata?.labels);
}

/** A pod-ready Container from a sidecar: SidecarSet-only fields stripped. */
export function toPodContainer(c: SidecarContainer): V1Container {
  const copy = structuredClone(c) as unknown as Record<string, unknown>;
  for (const field of SIDECAR_ONLY_FIELDS) delete copy[field];
  return copy as unknown as V1Container;
}

/** Volume mounts of the app containers the sidecar does not already have (shareVolumePolicy). */
function sharedMounts(sidecar: V1Container, apps: V1Container[]): V1VolumeMount[] {
  const have = new Set((sidecar.volumeMounts ?? []).flatMap((m) => [m.name, m.mountPath]));
  const shared: V1VolumeMount[] = [];
  for (const mount of apps.flatMap((c) => c.volumeMounts ?? [])) {
    if (have.has(mount.name) || have.has(mount.mountPath)) continue;
    have.add(mount.name).add(mount.mountPath);
    shared.push(mount);
  }
  return shared;
}

/** Env vars copied from app containers (transferEnv). */
function transferredEnv(c: SidecarContainer, apps: V1Container[]): V1EnvVar[] {
  const out: V1EnvVar[] = [];
  for (const rule of c.transferEnv ?? []) {
    const source = apps.find((a) => a.name === rule.sourceContainerName);
    const names = rule.envNames ?? (rule.envName ? [rule.envName] : []);
    for (const name of names) {
      const env = source?.env?.find((e) => e.name === name);
      if (env && !(c.env ?? []).some((e) => e.name === name) && !out.some((e) => e.name === name)) out.push(env);
    }
  }
  return out;
}

/** Result of {@link injectSidecars}: the new pod and which SidecarSets were applied. */
export interface Injection {
  pod: V1Pod;
  injected: string[];
}

/**
 * Injects every SidecarSet into `pod` (a copy). SidecarSets already recorded in the pod's hash
 * annotation are skipped, so a reinvoked webhook never injects twice; a sidecar whose name the
 * pod already uses is skipped, as upstream does. SidecarSets are applied in name order so the
 * result does not depend on list order.
 */
export function injectSidecars(original: V1Pod, sidecarSets: SidecarSet[], now: Date): Injection {
  const pod = structuredClone(original);
  const spec = (pod.spec ??= { containers: [] });
  const meta = (pod.metadata ??= {});
  const annotations = (meta.annotations ??= {});
  const hashes = readHashAnnotation(annotations, SidecarSetAnnotations.hash);
  const hashesWithoutImage = readHashAnnotation(annotations, SidecarSetAnnotations.hashWithoutImage);
  const apps = [...spec.containers];
  const before: V1Container[] = [];
  const after: V1Container[] = [];
  const injected: string[] = [];

  for (const s of [...sidecarSets].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
    const name = s.metadata.name;
    if (hashes[name]) continue;
    const taken = new Set([...spec.containers, ...before, ...after, ...(spec.initContainers ?? [])].map((c) => c.name));
    const sidecars: string[] = [];
    for (const c of s.spec.containers ?? []) {
      if (taken.has(c.name)) continue;
      const container = toPodContainer(c);
      if (c.shareVolumePolicy?.type === 'enabled') container.volumeMounts = [...(container.volumeMounts ?? []), ...sharedMounts(container, apps)];
      const env = transferredEnv(c, apps);
      if (env.length) container.env = [...(container.env ?? []), ...env];
      (c.podInjectPolicy === 'BeforeAppContainer' ? before : after).push(container);
      sidecars.push(c.name);
      taken.add(c.name);
    }
    for (const c of s.spec.initContainers ?? []) {
      if (taken.has(c.name)) continue;
      (spec.initContainers ??= []).push(toPodContainer(c));
      taken.add(c.name);
    }
    for (const v of s.spec.volumes ?? []) {
      if (!(spec.volumes ?? []).some((existing) => existing.name === v.name)) (spec.volumes ??= []).push(structuredClone(v));
    }
    for (const secret of s.spec.imagePullSecrets ?? []) {
      if (!(spec.imagePullSecrets ?? []).some((existing) => existing.name === secret.name)) (spec.imagePullSecrets ??= []).push({ name: secret.name });
    }
    const entry = (hash: string): SidecarSetHashEntry => ({ updateTimestamp: now.toISOString(), hash, sidecarSetName: name, sidecarList: sidecars });
    hashes[name] = entry(sidecarSetHash(s));
    hashesWithoutImage[name] = entry(sidecarSetHashWithoutImage(s));
    injected.push(name);
  }
  if (injected.length === 0) return { pod: structuredClone(original), injected };
  spec.containers = [...before, ...apps, ...after];
  annotations[SidecarSetAnnotations.hash] = JSON.stringify(hashes);
  annotations[SidecarSetAnnotations.hashWithoutImage] = JSON.stringify(hashesWithoutImage);
  const list = new Set((annotations[SidecarSetAnnotations.injectedList] ?? '').split(',').filter(Boolean));
  injected.forEach((n) => list.add(n));
  annotations[SidecarSetAnnotations.injectedList] = [...list].sort().join(',');
  return { pod, injected };
}

/** Pods that opted out of injection. */
export function injectionIgnored(pod: V1Pod): boolean {
  return pod.metadata?.annotations?.[SidecarSetAnnotations.injectIgnore] === 'true';
}
