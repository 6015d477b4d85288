/**
 * What a program on the runtime renders, derived from its registrations: the runtime's container (flags, probes,
 * writable paths), the RBAC of the kinds its controllers and webhooks declare, and one webhook configuration entry per
 * binding. No Kruise CRD, webhook or gate.
 */
import {
  MANAGER_CLUSTER_RULES,
  RUNTIME_LEADER_ELECTION_RULES,
  runtimeFlagProblems,
  registrationsAccess,
  resourceKey,
  webhookNamespaceSelector,
  workersFlag,
  type PolicyRule,
  type Registrations,
} from '../../contract.js';
import { propError } from '../core/errors.js';
import { RUNTIME_FLAVOUR, type ManagerFlavourProfile } from '../manager/flavour.js';
import { UninstallProtection } from '../manager/uninstall-guard.js';
import { FailurePolicy, WebhookGroup, type WebhookDefinition } from '../webhooks/webhooks.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'patch', 'update'];

/** The cluster-wide rules of a program: the manager's own, then each kind it reads, then each it writes. */
export function operatorClusterRules(r: Registrations): PolicyRule[] {
  const access = registrationsAccess(r);
  const writes = new Set(access.write.map(resourceKey));
  return [
    ...MANAGER_CLUSTER_RULES.map((rule) => ({ ...rule })),
    ...access.read
      .filter((k) => !writes.has(resourceKey(k)))
      .map((k) => ({ apiGroups: [k.group], resources: [k.plural], verbs: [...READ] })),
    ...access.write.flatMap((k) => [
      { apiGroups: [k.group], resources: [k.plural], verbs: [...WRITE, ...READ] },
      { apiGroups: [k.group], resources: [`${k.plural}/status`], verbs: ['get', 'patch', 'update'] },
    ]),
  ];
}

/** One webhook configuration entry per binding, in its own namespace and object filters. */
export function operatorWebhooks(r: Registrations, namespace: string): WebhookDefinition[] {
  return r.webhooks.map((w) => ({
    type: w.type,
    name: w.name,
    path: w.path,
    group: WebhookGroup.RESOURCES,
    rules: [
      {
        apiGroups: [w.resource.group],
        apiVersions: [w.resource.version],
        resources: [w.resource.plural],
        operations: [...w.operations],
        scope: w.resource.namespaced ? 'Namespaced' : 'Cluster',
      },
    ],
    ...(Object.keys(w.labels).length > 0 ? { objectSelector: { matchLabels: { ...w.labels } } } : {}),
    failurePolicy: w.failurePolicy === 'Ignore' ? FailurePolicy.IGNORE : FailurePolicy.FAIL,
    timeoutSeconds: w.timeoutSeconds,
    // A cluster-scoped kind has no namespace: a namespaceSelector would match nothing but the object itself.
    ...(w.resource.namespaced
      ? {
          namespaceSelector: webhookNamespaceSelector(w, [
            'kube-system',
            namespace,
          ]) as WebhookDefinition['namespaceSelector'],
        }
      : {}),
  }));
}

/** The flavour profile of the program `r` describes: the runtime's container, the program's API. */
export function operatorFlavour(r: Registrations): ManagerFlavourProfile {
  const controllers = [...r.declaredControllers];
  return {
    ...RUNTIME_FLAVOUR,
    _check(input) {
      if (Object.keys(input.featureGates ?? {}).length > 0)
        throw propError(
          'featureGates',
          input.featureGates,
          "are Kruise's gates; your program on the runtime reads none",
          'remove featureGates (use a flag of your own program, given in extraArgs)',
        );
      if (input.split)
        throw propError(
          'topology',
          'split',
          'is not rendered for Operator yet: the webhook replicas would run no controller and the RBAC of each role is the same',
          'use ManagerTopology.colocated() (the default)',
        );
    },
    _resolve(input) {
      return {
        featureGates: {},
        crds: [],
        clusterRules: operatorClusterRules(r),
        leaderElectionRules: [...RUNTIME_LEADER_ELECTION_RULES],
        conversionCrds: [],
        aggregated: [],
        webhooks: operatorWebhooks(r, input.namespace),
        uninstallProtection: UninstallProtection.none(),
        daemon: false,
      };
    },
    // The program refuses any flag that is neither the runtime's nor its own (exit 2).
    _flagProblem(flag) {
      if (r.flags.includes(flag)) return undefined;
      const [refused] = runtimeFlagProblems(flag, flag, controllers);
      if (!refused) return undefined;
      const own = r.flags.length > 0 ? `; the program's own: ${r.flags.join(', ')}` : '';
      const workers = flag.endsWith(workersFlag(''));
      return {
        problem: workers
          ? `is not a worker flag of ${r.name}, whose controllers are ${controllers.join(', ') || 'none'}`
          : `is not a flag of ${r.name}, which refuses to start with it`,
        fix: workers ? `use one of: ${controllers.join(', ') || '(none: remove it)'}` : `${refused.fix}${own}`,
      };
    },
  };
}
