import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { Names } from '../contract.js';
import { kplus } from './api.js';
import { bindRole } from './binding.js';
import { KRUISE_RESOURCES, KruiseResource, RUNTIME_RESOURCES } from './kruise-api.js';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const STATUS = ['get', 'patch', 'update'];

/** An RBAC resource reference that cdk8s-plus accepts for Roles and ClusterRoles. */
function res(apiGroup: string, resourceType: string, resourceName?: string): kplus.IApiResource & kplus.IApiEndpoint {
  const resource = { apiGroup, resourceType, resourceName };
  return { ...resource, asApiResource: () => resource, asNonApiResource: () => undefined };
}

/** Props of {@link ManagerRbac}. */
export interface ManagerRbacProps {
  readonly namespace: string;
  /** Namespace of the leader-election Lease. */
  readonly leaseNamespace: string;
  /** Upstream (all Kruise controllers) or runtime (the features it carries). */
  readonly upstream: boolean;
  /** Whether the manager writes its certificates (and so needs Secret and caBundle writes). */
  readonly selfManagedCertificates: boolean;
  /** Feature gates, to grant what gated controllers need. */
  readonly featureGates: { [gate: string]: boolean };
}

/**
 * Least-privilege RBAC of the manager: explicit verbs on explicit resources (no `*`), the
 * leader-election Role on Leases, the webhook-cert Role on Secrets, caBundle writes limited
 * by resourceNames, and aggregate roles so users can read and edit Kruise resources.
 */
export class ManagerRbac extends Construct {
  public readonly serviceAccount: kplus.ServiceAccount;
  public readonly clusterRole: kplus.ClusterRole;
  /** Every RBAC object, for ordering and sync waves. */
  public readonly apiObjects: ApiObject[] = [];

  constructor(scope: Construct, id: string, props: ManagerRbacProps) {
    super(scope, id);
    const ns = props.namespace;
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', {
      metadata: { name: Names.managerServiceAccount, namespace: ns },
      automountToken: false, // mounted by the pod spec only where needed
    });
    const kruise = props.upstream ? KRUISE_RESOURCES : RUNTIME_RESOURCES;

    const leader = new kplus.Role(this, 'LeaderElection', { metadata: { name: 'kruise-leader-election-role', namespace: props.leaseNamespace } });
    leader.allow(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], res('coordination.k8s.io', 'leases'));
    leader.allow(['create', 'patch'], res('', 'events'));
    const webhook = new kplus.Role(this, 'Webhook', { metadata: { name: 'kruise-webhook-role', namespace: ns } });
    webhook.allow(props.selfManagedCertificates ? WRITE : READ, res('', 'secrets'));
    this.clusterRole = new kplus.ClusterRole(this, 'Manager', { metadata: { name: 'kruise-manager-role' } });
    (props.upstream ? upstreamRules : runtimeRules)(this.clusterRole, kruise, props.featureGates);

    const bound: ApiObject[] = [leader, webhook, this.clusterRole].flatMap((role) => [ApiObject.of(role), bindRole(this, role, this.serviceAccount)]);
    if (props.selfManagedCertificates) {
      const certs = new kplus.ClusterRole(this, 'Certs', { metadata: { name: 'kruise-certs-role' } });
      certs.allow(['get', 'patch', 'update'],
        res('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', Names.mutatingWebhookConfiguration),
        res('admissionregistration.k8s.io', 'validatingwebhookconfigurations', Names.validatingWebhookConfiguration));
      if (props.upstream) certs.allow(['get', 'update', 'watch'], res('apiextensions.k8s.io', 'customresourcedefinitions', 'statefulsets.apps.kruise.io'));
      bound.push(ApiObject.of(certs), bindRole(this, certs, this.serviceAccount));
    }
    this.apiObjects.push(ApiObject.of(this.serviceAccount), ...bound, ...this.aggregateRoles(kruise));
  }

  /** aggregate-kruise-{view,edit,admin}: give the built-in view/edit/admin roles Kruise resources. */
  private aggregateRoles(kruise: KruiseResource[]): ApiObject[] {
    return (['view', 'edit', 'admin'] as const).map((level) => {
      // The label (not kplus' aggregate(), which collects other roles) merges these rules into
      // the built-in view/edit/admin ClusterRoles.
      const role = new kplus.ClusterRole(this, `Aggregate-${level}`, {
        metadata: { name: `aggregate-kruise-${level}`, labels: { [`rbac.authorization.k8s.io/aggregate-to-${level}`]: 'true' } },
      });
      const verbs = level === 'view' ? READ : ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
      for (const r of kruise) role.allow(verbs, res(r.group, r.plural));
      for (const r of kruise) role.allow(READ, res(r.group, `${r.plural}/status`));
      return ApiObject.of(role);
    });
  }
}

/** What the upstream controllers need (kruise 1.8 chart inventory) minus its `*` rules. */
function upstreamRules(role: kplus.ClusterRole, kruise: KruiseResource[], gates: { [gate: string]: boolean }): void {
  role.allow(['create', 'delete', 'get', 'list', 'update', 'watch'], res('', 'secrets'));
  role.allow(WRITE, res('', 'configmaps'), res('', 'events'), res('', 'persistentvolumeclaims'), res('', 'pods'));
  role.allow(STATUS, res('', 'pods/status'), res('', 'pods/ephemeralcontainers'));
  role.allow(READ, res('', 'namespaces'), res('', 'nodes'));
  role.allow(READ, res('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'), res('admissionregistration.k8s.io', 'validatingwebhookconfigurations'));
  role.allow(READ, res('apiextensions.k8s.io', 'customresourcedefinitions'));
  role.allow(WRITE, res('apps', 'controllerrevisions'), res('apps', 'deployments'), res('apps', 'statefulsets'));
  role.allow(STATUS, res('apps', 'deployments/status'), res('apps', 'statefulsets/status'));
  role.allow(READ, res('apps', 'replicasets'), res('apps', 'daemonsets'));
  role.allow(['get'], res('apps', 'replicasets/status'));
  role.allow(WRITE, res('batch', 'jobs'));
  role.allow(STATUS, res('batch', 'jobs/status'));
  // Upstream grants get/list/watch on */scale of every group; WorkloadSpread and
  // PodUnavailableBudget only target these workloads.
  role.allow(READ, ...['deployments', 'replicasets', 'statefulsets'].map((p) => res('apps', `${p}/scale`)), res('apps.kruise.io', 'clonesets/scale'), res('apps.kruise.io', 'statefulsets/scale'));
  for (const r of kruise) {
    role.allow(r.managerCreates ? WRITE : ['get', 'list', 'patch', 'update', 'watch'], res(r.group, r.plural));
    role.allow(['update'], res(r.group, `${r.plural}/finalizers`));
    role.allow(STATUS, res(r.group, `${r.plural}/status`));
  }
  if (gates.StatefulSetAutoResizePVCGate) role.allow(READ, res('storage.k8s.io', 'storageclasses'));
}

/** What the TypeScript runtime's controllers and webhooks touch. */
function runtimeRules(role: kplus.ClusterRole, kruise: KruiseResource[]): void {
  // In-place sidecar updates patch pod images; status counts read pods.
  role.allow(['get', 'list', 'watch', 'patch', 'update'], res('', 'pods'));
  role.allow(READ, res('', 'namespaces'));
  role.allow(['create', 'patch'], res('', 'events'));
  role.allow(READ, res('admissionregistration.k8s.io', 'mutatingwebhookconfigurations'), res('admissionregistration.k8s.io', 'validatingwebhookconfigurations'));
  role.allow(WRITE, res('apps', 'controllerrevisions'));
  for (const r of kruise) {
    role.allow(['get', 'list', 'watch', 'patch', 'update'], res(r.group, r.plural));
    role.allow(['update'], res(r.group, `${r.plural}/finalizers`));
    role.allow(STATUS, res(r.group, `${r.plural}/status`));
  }
}
