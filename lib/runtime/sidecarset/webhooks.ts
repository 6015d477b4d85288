import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../clock.js';
import { allow, createPatch, deny, exemptSystemNamespaces, mutating, patch, validating, type MutatingWebhook, type ValidatingWebhook } from '../webhook/index.js';
import { defaultSidecarSet } from './defaults.js';
import { injectionIgnored, injectSidecars, sidecarSetMatchesPod } from './inject.js';
import type { SidecarSet } from './types.js';
import { findConflicts, validateSidecarSet } from './validate.js';

/** What the webhooks read: the informer caches of SidecarSets and Namespaces. */
export interface SidecarSetSource {
  sidecarSets(): SidecarSet[];
  namespaceLabels(namespace: string): Record<string, string> | undefined;
}

/**
 * Pod CREATE: inject every matching, unpaused SidecarSet. kube-system and the manager's own
 * namespace are skipped in code as well as by the webhook configuration.
 */
export function podInjectionWebhook(source: SidecarSetSource, managerNamespace: string, clock: Clock): MutatingWebhook {
  return exemptSystemNamespaces(mutating((request) => {
    if (request.operation !== 'CREATE' || request.kind.kind !== 'Pod' || request.subResource) return allow();
    const original = request.object as unknown as V1Pod;
    // The API server fills metadata.namespace after admission; match on the request's.
    const pod: V1Pod = { ...original, metadata: { ...original.metadata, namespace: request.namespace ?? original.metadata?.namespace } };
    if (injectionIgnored(pod)) return allow();
    const labels = source.namespaceLabels(pod.metadata!.namespace ?? '');
    const matching = source.sidecarSets().filter((s) => !s.spec.injectionStrategy?.paused && !s.metadata.deletionTimestamp && sidecarSetMatchesPod(s, pod, labels));
    if (matching.length === 0) return allow();
    const { pod: injected, injected: names } = injectSidecars(original, matching, new Date(clock.now()));
    return names.length === 0 ? allow() : patch(createPatch(original, injected));
  }), managerNamespace);
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
  return validating((request) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
    const errors = validateSidecarSet(request.object);
    if (errors.length === 0) errors.push(...findConflicts(request.object as unknown as SidecarSet, source.sidecarSets()));
    return errors.length === 0 ? allow() : deny(`SidecarSet ${request.name ?? ''} is invalid: ${errors.join('; ')}`, 422);
  });
}
