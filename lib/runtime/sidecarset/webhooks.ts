import type { V1Pod } from '@kubernetes/client-node';
import { isRecord } from '../../contract.js';
import type { Clock } from '../clock.js';
import {
  allow,
  createPatch,
  deny,
  exemptSystemNamespaces,
  mutating,
  patch,
  pointer,
  validating,
  type AdmissionRequest,
  type Denied,
  type JsonPatchOperation,
  type MutatingWebhook,
  type ValidatingWebhook,
} from '../webhook/index.js';
import { defaultSidecarSet } from './defaults.js';
import { InjectionRevisionError, revisionToInject, type SidecarSetRevisionSource } from './injection-revision.js';
import { injectionIgnored, injectSidecars, sidecarSetMatchesPod, type Injection } from './inject.js';
import { PatchPodMetadataError, type PatchMetadataPolicy } from './metadata.js';
import type { SidecarSet } from './types.js';
import { StaleCacheError } from '../informer/index.js';
import { findConflicts, unservableReason, validateSidecarSet } from './validate.js';

/** What the webhooks read: the informer caches of SidecarSets and Namespaces. */
export interface SidecarSetSource {
  sidecarSets(): SidecarSet[];
  /** --feature-gates=EnableSortSidecarContainerByName=true: injected containers sorted by name. */
  sortContainersByName?: boolean;
  /** The labels of Namespace `namespace`: undefined when it is not in the cache, {} when it has none. */
  namespaceLabels(namespace: string): Record<string, string> | undefined;
  /**
   * Settles once the caches are current enough to answer from (Informer.awaitFresh: at once within
   * the staleness bound, else after waiting for the relist); throws {@link StaleCacheError} when they stay stale.
   */
  assertFresh?(signal?: AbortSignal): void | Promise<void>;
  /** ControllerRevisions of SidecarSets, for injectionStrategy.revision; without it a pinned revision fails the pod. */
  revisions?: SidecarSetRevisionSource;
  /** The patchPodMetadata whitelist and gate; absent: none, patchPodMetadata refused (upstream's default). */
  patchMetadata?(): PatchMetadataPolicy;
}

/** 503 naming the stale cache: a replica never answers admission silently from a cache it cannot trust. */
async function freshnessDenial(source: SidecarSetSource, signal?: AbortSignal): Promise<Denied | undefined> {
  try {
    await source.assertFresh?.(signal);
    return undefined;
  } catch (err) {
    if (!(err instanceof StaleCacheError)) throw err;
    return {
      allowed: false,
      code: 503,
      reason: 'ServiceUnavailable',
      message: `${err.message}; retry shortly (another replica may answer)`,
    };
  }
}

function describe(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'a list' : `a ${typeof v}`;
}

/**
 * The parts of a pod that injection reads, checked before it reads them: a malformed pod gets a
 * 400 naming the field (the API server would reject it anyway), never a patch built from garbage.
 */
function podShapeError(pod: unknown): string | undefined {
  const at = 'request.object';
  if (!isRecord(pod)) return `${at}: must be a Pod object, got ${describe(pod)}`;
  const meta = pod.metadata;
  if (meta !== undefined && meta !== null) {
    if (!isRecord(meta)) return `${at}.metadata: must be an object, got ${describe(meta)}`;
    for (const field of ['labels', 'annotations']) {
      const map = meta[field];
      if (map === undefined || map === null) continue;
      if (!isRecord(map)) return `${at}.metadata.${field}: must be a map of strings, got ${describe(map)}`;
      for (const key in map) {
        if (!Object.hasOwn(map, key) || typeof map[key] === 'string') continue;
        const shown = key.length > 64 ? `${key.slice(0, 64)}… (${key.length} characters)` : key;
        return `${at}.metadata.${field}[${JSON.stringify(shown)}]: must be a string, got ${describe(map[key])}`;
      }
    }
  }
  const spec = pod.spec;
  if (!isRecord(spec)) return `${at}.spec: must be an object, got ${describe(spec)}`;
  for (const list of ['containers', 'initContainers', 'volumes', 'imagePullSecrets']) {
    const items = spec[list];
    if (items === undefined || (items === null && list !== 'containers')) continue;
    if (!Array.isArray(items)) return `${at}.spec.${list}: must be a list, got ${describe(items)}`;
    for (const [i, item] of items.entries()) {
      if (!isRecord(item)) return `${at}.spec.${list}[${i}]: must be an object, got ${describe(item)}`;
      if (list !== 'imagePullSecrets' && typeof item.name !== 'string')
        return `${at}.spec.${list}[${i}].name: must be a string, got ${describe(item.name)}`;
      if (list !== 'containers' && list !== 'initContainers') continue;
      for (const nested of ['env', 'volumeMounts']) {
        const value = item[nested];
        if (value !== undefined && value !== null && (!Array.isArray(value) || value.some((e) => !isRecord(e)))) {
          return `${at}.spec.${list}[${i}].${nested}: must be a list of objects`;
        }
      }
    }
  }
  return undefined;
}

/**
 * A step of pod CREATE that runs before SidecarSet injection (upstream's order: WorkloadSpread,
 * then SidecarSet): the pod it changed, undefined for no change, or a denial.
 */
export type PodCreateStep = (
  pod: V1Pod,
  request: AdmissionRequest,
  signal?: AbortSignal,
) => Promise<V1Pod | Denied | undefined>;

const isDenied = (r: V1Pod | Denied): r is Denied => (r as Denied).allowed === false;

/**
 * Pod CREATE: inject every matching, unpaused SidecarSet, at the revision its injectionStrategy
 * picks (`random` decides a Partial percentage), after the `before` step (WorkloadSpread). kube-system
 * and the manager's own namespace are skipped in code as well as by the webhook configuration.
 */
export function podInjectionWebhook(
  source: SidecarSetSource,
  managerNamespace: string,
  clock: Clock,
  random: () => number = Math.random,
  before?: PodCreateStep,
): MutatingWebhook {
  return exemptSystemNamespaces(
    mutating(async (request, ctx) => {
      if (request.operation !== 'CREATE' || request.kind.kind !== 'Pod' || request.subResource) return allow();
      const malformed = podShapeError(request.object);
      if (malformed) return deny(malformed, 400);
      const original = request.object as unknown as V1Pod;
      // The API server fills metadata.namespace after admission; match on the request's.
      const withNamespace = (p: V1Pod): V1Pod => ({
        ...p,
        metadata: { ...p.metadata, namespace: request.namespace ?? p.metadata?.namespace },
      });
      let base = original;
      let changedBefore = false;
      if (before) {
        const step = await before(withNamespace(original), request, ctx?.signal);
        if (step && isDenied(step)) return step;
        if (step) {
          // The step answers the pod with the request's namespace; the patch must not add it.
          base = { ...step, metadata: { ...step.metadata, namespace: original.metadata?.namespace } };
          if (base.metadata!.namespace === undefined) delete base.metadata!.namespace;
          changedBefore = true;
        }
      }
      const beforeOnly = () => (changedBefore ? patch(createPatch(original, base)) : allow());
      const pod = withNamespace(base);
      if (injectionIgnored(pod)) return beforeOnly();
      const stale = await freshnessDenial(source, ctx?.signal);
      if (stale) return stale;
      const labels = source.namespaceLabels(pod.metadata!.namespace || 'default');
      const warnings: string[] = [];
      const matching = source.sidecarSets().filter((s) => {
        if (s.spec.injectionStrategy?.paused || s.metadata.deletionTimestamp || !sidecarSetMatchesPod(s, pod, labels))
          return false;
        const reason = unservableReason(s);
        if (reason)
          warnings.push(
            `SidecarSet ${s.metadata.name} was not injected: it cannot be served (${reason}); fix or delete it`,
          );
        return !reason;
      });
      const warned = warnings.length ? warnings : undefined;
      if (matching.length === 0) return changedBefore ? patch(createPatch(original, base), warned) : allow(warned);
      let injection: Injection;
      try {
        // A pinned revision that cannot be read, or patchPodMetadata that cannot merge, fails the pod as upstream
        // (500).
        const chosen = matching.map((s) => revisionToInject(s, pod, source.revisions, random));
        injection = injectSidecars(base, chosen, new Date(clock.now()), {
          annotationsApart: !changedBefore,
          sortContainersByName: source.sortContainersByName,
        });
      } catch (err) {
        if (!(err instanceof InjectionRevisionError) && !(err instanceof PatchPodMetadataError)) throw err;
        return deny(`SidecarSet injection failed: ${err.message}`, 500);
      }
      const { pod: injected, injected: names, annotationChanges } = injection;
      if (names.length === 0) return changedBefore ? patch(createPatch(original, base), warned) : allow(warned);
      // After a step that changed the pod, the injected pod carries its whole annotation map: one diff.
      return changedBefore
        ? patch(createPatch(original, injected), warned)
        : patch(injectionPatch(original, injected, annotationChanges), warned);
    }),
    managerNamespace,
  );
}

/**
 * The patch of an injection: the pod's diff (its annotation map shared, so skipped) and an op per
 * annotation injection set, so the work is the size of the change, not of the pod's annotations.
 */
function injectionPatch(original: V1Pod, injected: V1Pod, changes: Record<string, string>): JsonPatchOperation[] {
  const ops = createPatch(original, injected);
  const base = original.metadata?.annotations;
  const annotationOps: JsonPatchOperation[] = [];
  if (!base) {
    if (Object.keys(changes).length)
      annotationOps.push({ op: 'add', path: pointer('metadata', 'annotations'), value: changes });
  } else {
    for (const key of Object.keys(changes)) {
      if (!Object.hasOwn(base, key))
        annotationOps.push({ op: 'add', path: pointer('metadata', 'annotations', key), value: changes[key] });
      else if (base[key] !== changes[key])
        annotationOps.push({ op: 'replace', path: pointer('metadata', 'annotations', key), value: changes[key] });
    }
  }
  // After an op that adds /metadata itself (a pod without metadata), before the spec's otherwise.
  return original.metadata ? [...annotationOps, ...ops] : [...ops, ...annotationOps];
}

/** SidecarSet CREATE/UPDATE: fill upstream's defaults, so stored objects read the same as upstream's. */
export function sidecarSetDefaultingWebhook(): MutatingWebhook {
  return mutating((request) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
    const original = request.object as unknown as SidecarSet;
    if (!original?.spec || typeof original.spec !== 'object') return allow(); // the validator names the problem
    return patch(createPatch(original, defaultSidecarSet(original)));
  });
}

/** SidecarSet CREATE/UPDATE: the upstream subset's rules and cross-SidecarSet conflicts. */
export function sidecarSetValidatingWebhook(source: SidecarSetSource): ValidatingWebhook {
  return validating(async (request, ctx) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
    const previous = request.operation === 'UPDATE' ? request.oldObject : undefined;
    const errors = validateSidecarSet(request.object, {
      revisions: source.revisions,
      patchMetadata: source.patchMetadata?.(),
      previous,
    });
    if (errors.length === 0) {
      // Conflicts are judged against the cache: a stale one could let a conflicting SidecarSet in.
      const stale = await freshnessDenial(source, ctx?.signal);
      if (stale) return stale;
      errors.push(...findConflicts(request.object as unknown as SidecarSet, source.sidecarSets()));
    }
    return errors.length === 0
      ? allow()
      : deny(`SidecarSet ${request.name ?? ''} is invalid: ${errors.join('; ')}`, 422);
  });
}
