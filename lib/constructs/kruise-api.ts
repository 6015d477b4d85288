import { KRUISE_APPS_GROUP, Paths } from '../contract.js';
import { WebhookDefinition, WebhookGroup } from './webhooks.js';

/** One Kruise custom resource, as the runtime's webhooks and RBAC need to know it. */
export interface KruiseResource {
  readonly group: string;
  readonly versions: string[];
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
}

/**
 * Kruise resources our TypeScript runtime serves today. (The upstream flavour's resources
 * come from upstream's own definitions: ./upstream/kruise.generated.ts.)
 */
export const RUNTIME_RESOURCES: KruiseResource[] = [
  { group: KRUISE_APPS_GROUP, versions: ['v1alpha1'], kind: 'SidecarSet', plural: 'sidecarsets', namespaced: false },
];

/** The webhooks the runtime serves (paths from the contract, which the runtime registers). */
export function runtimeWebhooks(): WebhookDefinition[] {
  const [sidecarSet] = RUNTIME_RESOURCES;
  const rules = [{ apiGroups: [sidecarSet.group], apiVersions: sidecarSet.versions, resources: [sidecarSet.plural], operations: ['CREATE', 'UPDATE'], scope: 'Cluster' }];
  return [
    { type: 'mutating', name: 'mpod.kb.io', path: Paths.mutatePod, group: WebhookGroup.PODS, rules: [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }] },
    { type: 'mutating', name: 'msidecarset.kb.io', path: Paths.mutateSidecarSet, group: WebhookGroup.RESOURCES, rules },
    { type: 'validating', name: 'vsidecarset.kb.io', path: Paths.validateSidecarSet, group: WebhookGroup.RESOURCES, rules },
  ];
}
