import { RuntimeApi, servedRuntimeWebhooks, type RuntimeResource } from '../../contract.js';
import { WebhookDefinition, WebhookGroup } from './webhooks.js';

/**
 * Kruise resources our TypeScript runtime serves today. (The upstream flavour's resources
 * come from upstream's own definitions: lib/upstream/kruise.generated.ts.)
 */
export const RUNTIME_RESOURCES: RuntimeResource[] = [...RuntimeApi.resources];

/**
 * The webhooks the runtime serves under `gates` (names, paths and gates from the contract, which
 * the runtime registers): with PodWebhook=false no pod webhook, as the runtime registers none.
 */
export function runtimeWebhooks(gates: { readonly [gate: string]: boolean } = {}): WebhookDefinition[] {
  const rulesOf = (kind: string) => {
    const r = RUNTIME_RESOURCES.find((x) => x.kind === kind)!;
    return [
      {
        apiGroups: [r.group],
        apiVersions: r.versions,
        resources: [r.plural],
        operations: ['CREATE', 'UPDATE'],
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
      },
    ];
  };
  const pods = (operations: string[], resource = 'pods') => [
    { apiGroups: [''], apiVersions: ['v1'], resources: [resource], operations },
  ];
  const byName: Record<string, Pick<WebhookDefinition, 'group' | 'rules'>> = {
    'mpod.kb.io': { group: WebhookGroup.PODS, rules: pods(['CREATE']) },
    // Upstream's entry also names UPDATE (for PodUnavailableBudget, which this runtime does not carry).
    'vpod.kb.io': { group: WebhookGroup.PODS, rules: pods(['DELETE']) },
    'vpodeviction.kb.io': { group: WebhookGroup.PODS, rules: pods(['CREATE'], 'pods/eviction') },
    'msidecarset.kb.io': { group: WebhookGroup.RESOURCES, rules: rulesOf('SidecarSet') },
    'vsidecarset.kb.io': { group: WebhookGroup.RESOURCES, rules: rulesOf('SidecarSet') },
    'vworkloadspread.kb.io': { group: WebhookGroup.RESOURCES, rules: rulesOf('WorkloadSpread') },
  };
  return servedRuntimeWebhooks(gates).map((w) => {
    const entry = byName[w.name];
    if (!entry)
      throw new Error(`runtime webhook ${w.name} has no rules here (lib/constructs/webhooks/runtime-webhooks.ts)`);
    return { ...w, ...entry };
  });
}
