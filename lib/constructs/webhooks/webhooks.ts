import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { Labels, Ports } from '../../contract.js';
import type { ManagerNames } from '../core/names.js';
import { k8s } from '../core/api.js';
import { checkDnsLabel, checkSelector, propError, wholeSeconds } from '../core/errors.js';

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
  /**
   * Namespaces this group's webhooks intercept, by their labels, on top of the namespaces the
   * group always skips (the pod webhooks' `podExcludedNamespaces`; `kube-system` for delete
   * protection, as the chart). For a Namespace object itself the API server matches its own
   * labels; other cluster-scoped objects are always intercepted.
   * @default - every namespace but the skipped ones
   */
  readonly namespaceSelector?: k8s.LabelSelector;
}

/**
 * The selectors the chart's `webhookConfiguration.aksIntegration` adds to every webhook, so
 * AKS's admissions enforcer leaves the configurations alone: namespaces AKS manages and its
 * control plane's are never intercepted.
 */
const AKS_EXCLUSIONS = [
  { key: 'control-plane', operator: 'NotIn', values: ['true'] },
  { key: 'kubernetes.azure.com/managedby', operator: 'NotIn', values: ['aks'] },
];

/** Which group's failure policy and timeout a webhook follows. */
export enum WebhookGroup {
  /** Pod admission (sidecar injection, pod validation); skips the excluded namespaces. */
  PODS = 'pods',
  /** Admission of Kruise resources. */
  RESOURCES = 'resources',
  /** Delete protection of labelled objects (upstream only). */
  DELETE_PROTECTION = 'deleteProtection',
}

/** One webhook to render, as the manager serves it. */
export interface WebhookDefinition {
  readonly type: 'mutating' | 'validating';
  readonly name: string;
  readonly path: string;
  readonly group: WebhookGroup;
  readonly rules: {
    readonly apiGroups: string[];
    readonly apiVersions: string[];
    readonly operations: string[];
    readonly resources: string[];
    readonly scope?: string;
  }[];
  /** @default - every object */
  readonly objectSelector?: {
    readonly matchLabels?: { readonly [key: string]: string };
    readonly matchExpressions?: { readonly key: string; readonly operator: string; readonly values?: string[] }[];
  };
  /**
   * This entry's own settings, over its group's (a program's binding carries its failure policy, timeout and
   * namespace filter).
   */
  readonly failurePolicy?: FailurePolicy;
  readonly timeoutSeconds?: number;
  readonly namespaceSelector?: k8s.LabelSelector;
}

/** Props of {@link WebhookConfigurations}. */
export interface WebhookConfigurationsProps {
  /** Install namespace (where the webhook Service lives). */
  readonly namespace: string;
  /** @internal */
  readonly names: ManagerNames;
  /** The webhooks the manager serves: nothing it would delete, nothing it lacks. */
  readonly definitions: WebhookDefinition[];
  /**
   * Record the rendered webhooks in the `template` annotation. Upstream rebuilds its
   * configurations from that annotation (or snapshots them into it when empty); rendering
   * it ourselves means the manager never writes it, so re-applies do not conflict with the
   * manager's field ownership and a changed output is never reverted to a stale snapshot.
   * @default false
   */
  readonly template?: boolean;
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
  /**
   * Add the AKS exclusions to every webhook (the `next` chart's
   * `webhookConfiguration.aksIntegration`): `control-plane NotIn [true]` and
   * `kubernetes.azure.com/managedby NotIn [aks]`. They are part of the rendered webhooks, so the
   * upstream manager's rebuild of its configurations (from the `template` annotation) keeps them.
   * @default false
   */
  readonly aksIntegration?: boolean;
}

const DEFAULT_POLICY: Record<WebhookGroup, FailurePolicy> = {
  [WebhookGroup.PODS]: FailurePolicy.FAIL,
  [WebhookGroup.RESOURCES]: FailurePolicy.FAIL,
  [WebhookGroup.DELETE_PROTECTION]: FailurePolicy.IGNORE,
};

/**
 * The mutating and validating webhook configurations. Every entry has `sideEffects: None`,
 * v1 and v1beta1 reviews, and the Service as its client; the manager fills `caBundle`.
 */
export class WebhookConfigurations extends Construct {
  public readonly mutating: k8s.KubeMutatingWebhookConfiguration;
  public readonly validating: k8s.KubeValidatingWebhookConfiguration;
  /** Namespaces the pod webhooks skip. */
  public readonly podExcludedNamespaces: string[];

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: WebhookConfigurationsProps): WebhookConfigurations {
    return new WebhookConfigurations(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: WebhookConfigurationsProps) {
    super(scope, id);
    this.podExcludedNamespaces = resolveExcluded(props);
    const groups = Object.values(WebhookGroup).map((group) => [group, resolveGroup(group, props[group])] as const);
    const settings = new Map(groups);
    const skipped: Record<WebhookGroup, string[]> = {
      [WebhookGroup.PODS]: this.podExcludedNamespaces,
      [WebhookGroup.RESOURCES]: [],
      [WebhookGroup.DELETE_PROTECTION]: ['kube-system'],
    };
    const namespaceSelectors = new Map(
      Object.values(WebhookGroup).map((group) => [
        group,
        namespaceSelector(group, skipped[group], props[group]?.namespaceSelector, props.aksIntegration ?? false),
      ]),
    );
    const entry = (d: WebhookDefinition) => {
      const group = settings.get(d.group)!;
      const failurePolicy = d.failurePolicy ?? group.failurePolicy;
      const timeoutSeconds = d.timeoutSeconds ?? group.timeoutSeconds;
      const namespaces = d.namespaceSelector ?? namespaceSelectors.get(d.group);
      return {
        name: d.name,
        admissionReviewVersions: ['v1', 'v1beta1'],
        sideEffects: 'None',
        failurePolicy,
        timeoutSeconds,
        matchPolicy: 'Equivalent',
        ...(d.type === 'mutating' ? { reinvocationPolicy: 'Never' } : {}),
        clientConfig: {
          service: {
            name: props.names.webhookService,
            namespace: props.namespace,
            path: d.path,
            port: Ports.webhookService,
          },
        },
        rules: d.rules.map((r) => ({ ...r })),
        ...(namespaces ? { namespaceSelector: namespaces } : {}),
        ...(d.objectSelector ? { objectSelector: d.objectSelector } : {}),
      };
    };
    const mutating = props.definitions.filter((d) => d.type === 'mutating').map(entry);
    const validating = props.definitions.filter((d) => d.type === 'validating').map(entry);
    for (const [kind, list] of [
      ['mutating', mutating],
      ['validating', validating],
    ] as const) {
      const names = list.map((w) => w.name);
      const duplicate = names.find((n, i) => names.indexOf(n) !== i);
      // The API server rejects a configuration with two webhooks of one name (server-side apply).
      if (duplicate) throw new Error(`internal error: two ${kind} webhooks are named "${duplicate}"`);
    }
    const annotations = (list: object[]) => ({
      ...(props.template ? { [Labels.webhookTemplate]: JSON.stringify(list) } : {}),
      ...props.annotations,
    });
    this.mutating = new k8s.KubeMutatingWebhookConfiguration(this, 'Mutating', {
      metadata: { name: props.names.mutatingWebhookConfiguration, annotations: annotations(mutating) },
      webhooks: mutating,
    });
    this.validating = new k8s.KubeValidatingWebhookConfiguration(this, 'Validating', {
      metadata: { name: props.names.validatingWebhookConfiguration, annotations: annotations(validating) },
      webhooks: validating,
    });
  }

  /** Both configurations, for ordering and sync waves. */
  public get apiObjects(): ApiObject[] {
    return [this.mutating, this.validating];
  }
}

/**
 * A group's namespace selector: the namespaces it always skips (by the immutable name label),
 * the AKS exclusions when asked, then the user's selector; undefined when all are empty.
 */
function namespaceSelector(
  group: WebhookGroup,
  skipped: string[],
  user: k8s.LabelSelector | undefined,
  aks: boolean,
): k8s.LabelSelector | undefined {
  if (user) checkSelector(`webhooks.${group}.namespaceSelector`, user);
  const expressions = [
    ...(skipped.length > 0 ? [{ key: Labels.namespaceName, operator: 'NotIn', values: skipped }] : []),
    ...(aks ? AKS_EXCLUSIONS : []),
    ...(user?.matchExpressions ?? []),
  ];
  if (expressions.length === 0 && !user?.matchLabels) return undefined;
  return {
    ...(user?.matchLabels ? { matchLabels: { ...user.matchLabels } } : {}),
    ...(expressions.length > 0 ? { matchExpressions: expressions.map((e) => ({ ...e })) } : {}),
  };
}

function resolveGroup(
  group: WebhookGroup,
  options: WebhookGroupOptions = {},
): { failurePolicy: FailurePolicy; timeoutSeconds: number } {
  const timeoutSeconds = options.timeout ? wholeSeconds(`webhooks.${group}.timeout`, options.timeout) : 10;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw propError(
      `webhooks.${group}.timeout`,
      `${timeoutSeconds}s`,
      'must be 1-30 whole seconds (API server limit)',
      'use Duration.seconds(n) with n from 1 to 30; keep it small (e.g. 5-10)',
    );
  }
  return { failurePolicy: options.failurePolicy ?? DEFAULT_POLICY[group], timeoutSeconds };
}

function resolveExcluded(props: WebhookConfigurationsProps): string[] {
  const list = props.podExcludedNamespaces ?? ['kube-system', props.namespace];
  list.forEach((ns, i) => checkDnsLabel(`webhooks.podExcludedNamespaces[${i}]`, ns));
  for (const required of ['kube-system', props.namespace]) {
    if (!list.includes(required)) {
      throw propError(
        'webhooks.podExcludedNamespaces',
        list,
        `is missing "${required}": the pod webhook would intercept ${required === 'kube-system' ? 'system pods' : "the manager's own pods"} and can deadlock the cluster`,
        `add "${required}" to the list`,
      );
    }
  }
  return [...new Set(list)];
}
