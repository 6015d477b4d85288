import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { Labels, Names, Paths, Ports } from '../contract.js';
import { k8s } from './api.js';
import { checkDnsLabel, propError, wholeSeconds } from './errors.js';
import { DELETE_PROTECTED, KRUISE_RESOURCES, KruiseResource, RUNTIME_RESOURCES, webhookPath } from './kruise-api.js';

/** What the API server does when the webhook cannot be reached. */
export enum FailurePolicy {
  /** Reject the request: policy is never skipped, but an outage blocks the matching writes. */
  FAIL = 'Fail',
  /** Admit the request unchanged: writes go on, but sidecars/validation are silently skipped. */
  IGNORE = 'Ignore',
}

/** Settings of one group of webhooks. */
export interface WebhookGroupOptions {
  /**
   * What the API server does when the webhook is down or times out.
   * @default - FAIL for pods and Kruise resources, IGNORE for delete protection
   */
  readonly failurePolicy?: FailurePolicy;
  /**
   * How long the API server waits (1-30 s). Mutating webhooks run in sequence, so this adds
   * up on every pod create when a replica hangs.
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
}

/** Props of {@link WebhookConfigurations}. */
export interface WebhookConfigurationsProps {
  /** Install namespace (where the webhook Service lives). */
  readonly namespace: string;
  /** Render upstream's webhook set (true) or the runtime's (false). */
  readonly upstream: boolean;
  /**
   * Namespaces the pod webhooks never intercept, matched on the immutable
   * `kubernetes.io/metadata.name` label. Must contain `kube-system` and the install namespace,
   * or the manager can deadlock on its own pods.
   * @default ['kube-system', <namespace>]
   */
  readonly podExcludedNamespaces?: string[];
  /** @default - FAIL, 10 s */
  readonly pods?: WebhookGroupOptions;
  /** @default - FAIL, 10 s */
  readonly resources?: WebhookGroupOptions;
  /** @default - IGNORE, 10 s */
  readonly deleteProtection?: WebhookGroupOptions;
  /**
   * Annotations for both configurations (for example cert-manager's `inject-ca-from`).
   * @default - none
   */
  readonly annotations?: { [key: string]: string };
}

type Group = 'pods' | 'resources' | 'deleteProtection';
const DEFAULT_POLICY: Record<Group, FailurePolicy> = { pods: FailurePolicy.FAIL, resources: FailurePolicy.FAIL, deleteProtection: FailurePolicy.IGNORE };

/**
 * The mutating and validating webhook configurations. Every entry has `sideEffects: None`,
 * v1 and v1beta1 reviews, and the Service as its client; the manager fills `caBundle`.
 */
export class WebhookConfigurations extends Construct {
  public readonly mutating: k8s.KubeMutatingWebhookConfiguration;
  public readonly validating: k8s.KubeValidatingWebhookConfiguration;
  /** Namespaces the pod webhooks skip. */
  public readonly podExcludedNamespaces: string[];

  constructor(scope: Construct, id: string, props: WebhookConfigurationsProps) {
    super(scope, id);
    this.podExcludedNamespaces = resolveExcluded(props);
    const entry = (group: Group, name: string, path: string, rules: k8s.RuleWithOperations[], extra: object = {}) => {
      const options = props[group] ?? {};
      const timeout = options.timeout ? wholeSeconds(`webhooks.${group}.timeout`, options.timeout) : 10;
      if (!Number.isInteger(timeout) || timeout < 1 || timeout > 30) {
        throw propError(`webhooks.${group}.timeout`, `${timeout}s`, 'must be 1-30 whole seconds (API server limit)', 'use Duration.seconds(n) with n from 1 to 30; keep it small (e.g. 5-10)');
      }
      return {
        name,
        admissionReviewVersions: ['v1', 'v1beta1'],
        sideEffects: 'None',
        failurePolicy: options.failurePolicy ?? DEFAULT_POLICY[group],
        timeoutSeconds: timeout,
        clientConfig: { service: { name: Names.webhookService, namespace: props.namespace, path, port: Ports.webhookService } },
        rules,
        ...extra,
      };
    };
    const podScope = {
      namespaceSelector: { matchExpressions: [{ key: Labels.namespaceName, operator: 'NotIn', values: this.podExcludedNamespaces }] },
    };
    const resourceRule = (r: KruiseResource, operations: string[]) => ({
      apiGroups: [r.group], apiVersions: r.versions, resources: [r.plural], operations, scope: r.namespaced ? 'Namespaced' : 'Cluster',
    });
    const resources = props.upstream ? KRUISE_RESOURCES : RUNTIME_RESOURCES;

    const mutating = [
      entry('pods', 'mpod.kb.io', Paths.mutatePod, [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] }], podScope),
      ...resources.map((r) => entry('resources', `m${r.kind.toLowerCase()}.kb.io`, webhookPath('mutate', r), [resourceRule(r, ['CREATE', 'UPDATE'])])),
    ];
    const validating = [
      ...(props.upstream ? [
        entry('pods', 'vpod.kb.io', Paths.validatePod, [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['UPDATE', 'DELETE'] }], podScope),
        entry('pods', 'vpodeviction.kb.io', Paths.validatePod, [{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], operations: ['CREATE'] }], podScope),
      ] : []),
      ...resources.map((r) => entry('resources', `v${r.kind.toLowerCase()}.kb.io`, webhookPath('validate', r), [resourceRule(r, ['CREATE', 'UPDATE'])])),
      ...(props.upstream ? DELETE_PROTECTED.map((w) => entry('deleteProtection', `v${w.short}deletion.kb.io`, `/validate-${w.short}`,
        [{ apiGroups: [w.group], apiVersions: [w.version], resources: [w.plural], operations: ['DELETE'] }],
        { objectSelector: { matchExpressions: [{ key: Labels.deleteProtection, operator: 'Exists' }] } })) : []),
    ];
    for (const [kind, list] of [['mutating', mutating], ['validating', validating]] as const) {
      const names = list.map((w) => w.name);
      const duplicate = names.find((n, i) => names.indexOf(n) !== i);
      // The API server rejects a configuration with two webhooks of one name (server-side apply).
      if (duplicate) throw new Error(`internal error: two ${kind} webhooks are named "${duplicate}"`);
    }
    // Upstream rebuilds its configurations from the `template` annotation; an empty one makes
    // it snapshot what we rendered instead of reviving a stale copy (kruise #374).
    const annotations = { ...(props.upstream ? { [Labels.webhookTemplate]: '' } : {}), ...props.annotations };
    this.mutating = new k8s.KubeMutatingWebhookConfiguration(this, 'Mutating', {
      metadata: { name: Names.mutatingWebhookConfiguration, annotations },
      webhooks: mutating.map((w) => ({ ...w, reinvocationPolicy: 'Never', matchPolicy: 'Equivalent' })),
    });
    this.validating = new k8s.KubeValidatingWebhookConfiguration(this, 'Validating', {
      metadata: { name: Names.validatingWebhookConfiguration, annotations },
      webhooks: validating.map((w) => ({ ...w, matchPolicy: 'Equivalent' })),
    });
  }

  /** Both configurations, for ordering and sync waves. */
  public get apiObjects(): ApiObject[] {
    return [this.mutating, this.validating];
  }
}

function resolveExcluded(props: WebhookConfigurationsProps): string[] {
  const list = props.podExcludedNamespaces ?? ['kube-system', props.namespace];
  list.forEach((ns, i) => checkDnsLabel(`webhooks.podExcludedNamespaces[${i}]`, ns));
  for (const required of ['kube-system', props.namespace]) {
    if (!list.includes(required)) {
      throw propError('webhooks.podExcludedNamespaces', list, `is missing "${required}": the pod webhook would intercept ${required === 'kube-system' ? 'system pods' : "the manager's own pods"} and can deadlock the cluster`,
        `add "${required}" to the list`);
    }
  }
  return [...new Set(list)];
}
