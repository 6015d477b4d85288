import { Paths, RuntimeApi, servedRuntimeWebhooks } from '../contract.js';
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
export const RUNTIME_RESOURCES: KruiseResource[] = [...RuntimeApi.resources];

/**
 * The webhooks the runtime serves under `gates` (names, paths and gates from the contract, which
 * the runtime registers): with PodWebhook=false no pod webhook, as the runtime registers none.
 */
export function runtimeWebhooks(gates: { readonly [gate: string]: boolean } = {}): WebhookDefinition[] {
  const [sidecarSet] = RUNTIME_RESOURCES;
  const sidecarSetRules = [
    {
      apiGroups: [sidecarSet.group],
      apiVersions: sidecarSet.versions,
      resources: [sidecarSet.plural],
      operations: ['CREATE', 'UPDATE'],
      scope: 'Cluster',
    },
  ];
  const podRules = [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }];
  return servedRuntimeWebhooks(gates).map((w) =>
    w.path === Paths.mutatePod
      ? { ...w, group: WebhookGroup.PODS, rules: podRules }
      : { ...w, group: WebhookGroup.RESOURCES, rules: sidecarSetRules },
  );
}
