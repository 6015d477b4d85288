/**
 * The doctor's data: what it read from the cluster (a snapshot, read-only), what it expects of
 * the install (from the manager's flavour), and what each check concludes. Checks are pure
 * functions of the snapshot, so the same code judges a live cluster and a test fixture.
 */
import type {
  CoreV1Event,
  V1CustomResourceDefinition,
  V1Deployment,
  V1EndpointSlice,
  V1Lease,
  V1MutatingWebhookConfiguration,
  V1Namespace,
  V1Node,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
  V1Service,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';

export type Status = 'pass' | 'warn' | 'fail' | 'skip';

/** One line of the report. */
export interface CheckResult {
  /** Stable id, e.g. `webhook-endpoints`. */
  readonly id: string;
  readonly status: Status;
  /** What was found, in one sentence. */
  readonly message: string;
  /** For `fail` and `warn`: what to do, in plain words. */
  readonly fix?: string;
  /** Supporting facts (names, counts) for `--json` and for the detail lines. */
  readonly details?: string[];
}

/** Everything the checks read, gathered once. Absent objects are `undefined`, never thrown. */
export interface ClusterSnapshot {
  readonly namespace: string;
  /** Epoch ms at which the snapshot was taken (lease and certificate ages are judged against it). */
  readonly now: number;
  /** Manager Deployments (label `control-plane=controller-manager`) in the namespace. */
  readonly deployments: V1Deployment[];
  /** Pods in the namespace (the manager's are picked by each Deployment's selector). */
  readonly pods: V1Pod[];
  /** Every pod on the cluster's nodes that uses host ports or host network (rollout capacity). */
  readonly hostPortPods: V1Pod[];
  readonly nodes: V1Node[] | undefined;
  readonly webhookService: V1Service | undefined;
  readonly endpointSlices: V1EndpointSlice[];
  readonly lease: V1Lease | undefined;
  /** `LeaderElection` events on the Lease (client-go records them; the runtime does not). */
  readonly leaderEvents: CoreV1Event[];
  readonly secret: V1Secret | undefined;
  readonly mutating: V1MutatingWebhookConfiguration | undefined;
  readonly validating: V1ValidatingWebhookConfiguration | undefined;
  readonly crds: V1CustomResourceDefinition[];
  readonly pdbs: V1PodDisruptionBudget[];
  /** `kube-system` and the install namespace, as they are labelled now. */
  readonly namespaces: V1Namespace[];
  /** Reads the doctor was not allowed to make, e.g. `nodes: forbidden`. */
  readonly readErrors: string[];
}

/** A permission the manager needs, asked of the API server as its ServiceAccount. */
export interface Permission {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly subresource?: string;
  readonly name?: string;
  /** Undefined: cluster-wide. */
  readonly namespace?: string;
}

export interface PermissionResult {
  readonly permission: Permission;
  readonly allowed: boolean;
  /** The authorizer's reason or evaluation error, when it gave one. */
  readonly reason?: string;
}

/** Render a permission as a person would say it: `patch pods (cluster-wide)`. */
export function describePermission(p: Permission): string {
  const resource = `${p.resource}${p.subresource ? `/${p.subresource}` : ''}${p.group ? `.${p.group}` : ''}`;
  return `${p.verb} ${resource}${p.name ? ` "${p.name}"` : ''} ${p.namespace ? `in ${p.namespace}` : '(cluster-wide)'}`;
}
