import { ApiObject, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { CERTIFICATE_RULES } from '../../contract.js';
import type { ManagerNames } from '../core/names.js';
import { kplus } from '../core/api.js';
import { bindRole } from '../core/binding.js';
import { mergeRules } from '../../upstream/permissions.js';
import type { PolicyRule } from '../../upstream/release.js';

const READ = ['get', 'list', 'watch'];

/** An RBAC resource reference that cdk8s-plus accepts for Roles and ClusterRoles. */
function res(apiGroup: string, resourceType: string, resourceName?: string): kplus.IApiResource & kplus.IApiEndpoint {
  const resource = { apiGroup, resourceType, resourceName };
  return { ...resource, asApiResource: () => resource, asNonApiResource: () => undefined };
}

/** A Kruise resource the built-in view/edit/admin roles are extended with. */
export interface AggregatedResource {
  readonly apiGroup: string;
  /** Plural resource name. */
  readonly resource: string;
  /**
   * Its objects can carry Secret payloads inline (ResourceDistribution), so only `admin`
   * gets it: with cluster-wide `view` anyone could read the secrets.
   */
  readonly adminOnly: boolean;
}

/** Props of {@link ManagerRbac}. */
export interface ManagerRbacProps {
  readonly namespace: string;
  /** @internal */
  readonly names: ManagerNames;
  /** Namespace of the leader-election Lease. */
  readonly leaseNamespace: string;
  /** The manager's cluster-wide rules (what its controllers and webhooks need). */
  readonly clusterRules: PolicyRule[];
  /**
   * Rules the manager needs only in one namespace, by namespace: a Role and binding each.
   * @default - none
   */
  readonly namespacedRules?: { readonly [namespace: string]: PolicyRule[] };
  /** Rules of the leader-election Role in the Lease namespace. */
  readonly leaderElectionRules: PolicyRule[];
  /** Whether the manager writes its certificates (and so needs Secret and caBundle writes). */
  readonly selfManagedCertificates: boolean;
  /** CRDs whose conversion-webhook caBundle the manager patches. */
  readonly conversionCrds: string[];
  /** Resources for the aggregate view/edit/admin roles. */
  readonly aggregated: AggregatedResource[];
  /**
   * Annotations on the manager's ServiceAccount (IRSA, Workload Identity).
   * @default - none
   */
  readonly serviceAccountAnnotations?: { [key: string]: string };
}

/**
 * Least-privilege RBAC of the manager: the rules its flavour needs, the leader-election Role
 * on Leases, the webhook-cert Role on Secrets, caBundle writes limited by resourceNames, and
 * aggregate roles so users can read and edit Kruise resources.
 */
export class ManagerRbac extends Construct {
  public readonly serviceAccount: kplus.ServiceAccount;
  /**
   * The manager's ClusterRole (`kruise-manager-role`), bound to its ServiceAccount. Rules added
   * with `allow()` (or `allowRead()`, ...) are rendered after the manager's own.
   */
  public readonly clusterRole: kplus.ClusterRole;
  /** Every RBAC object, for ordering and sync waves. */
  public readonly apiObjects: ApiObject[] = [];

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: ManagerRbacProps): ManagerRbac {
    return new ManagerRbac(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: ManagerRbacProps) {
    super(scope, id);
    const ns = props.namespace;
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', {
      metadata: { name: props.names.serviceAccount, namespace: ns, annotations: props.serviceAccountAnnotations },
      automountToken: false, // mounted by the pod spec only where needed
    });

    const leader = new kplus.Role(this, 'LeaderElection', {
      metadata: { name: props.names.leaderElectionRole, namespace: props.leaseNamespace },
    });
    setRules(leader, props.leaderElectionRules);
    const webhook = new kplus.Role(this, 'Webhook', {
      metadata: { name: props.names.webhookRole, namespace: ns },
    });
    webhook.allow(
      [...(props.selfManagedCertificates ? CERTIFICATE_RULES.secretVerbs : CERTIFICATE_RULES.externalSecretVerbs)],
      res('', 'secrets'),
    );
    this.clusterRole = new kplus.ClusterRole(this, 'Manager', { metadata: { name: props.names.managerRole } });
    setRules(this.clusterRole, props.clusterRules);

    const scoped = Object.entries(props.namespacedRules ?? {}).map(([namespace, rules]) => {
      const role = new kplus.Role(this, `Namespaced-${namespace}`, {
        metadata: { name: props.names.managerRole, namespace },
      });
      setRules(role, rules);
      return role;
    });
    const bound: ApiObject[] = [leader, webhook, this.clusterRole, ...scoped].flatMap((role) => [
      ApiObject.of(role),
      bindRole(this, role, this.serviceAccount),
    ]);
    if (props.selfManagedCertificates) {
      const certs = new kplus.ClusterRole(this, 'Certs', { metadata: { name: props.names.certsRole } });
      certs.allow(
        [...CERTIFICATE_RULES.caBundleVerbs],
        res('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', props.names.mutatingWebhookConfiguration),
        res(
          'admissionregistration.k8s.io',
          'validatingwebhookconfigurations',
          props.names.validatingWebhookConfiguration,
        ),
      );
      for (const crd of props.conversionCrds)
        certs.allow(
          [...CERTIFICATE_RULES.caBundleVerbs],
          res('apiextensions.k8s.io', 'customresourcedefinitions', crd),
        );
      bound.push(ApiObject.of(certs), bindRole(this, certs, this.serviceAccount));
    }
    this.apiObjects.push(ApiObject.of(this.serviceAccount), ...bound, ...this.aggregateRoles(props.aggregated));
  }

  /** aggregate-kruise-{view,edit,admin}: give the built-in view/edit/admin roles Kruise resources. */
  private aggregateRoles(resources: AggregatedResource[]): ApiObject[] {
    // An operator serving no resource of its own extends no built-in role (and must not render Kruise's names).
    if (resources.length === 0) return [];
    return (['view', 'edit', 'admin'] as const).map((level) => {
      // The label (not kplus' aggregate(), which collects other roles) merges these rules into
      // the built-in view/edit/admin ClusterRoles.
      const role = new kplus.ClusterRole(this, `Aggregate-${level}`, {
        metadata: {
          name: `aggregate-kruise-${level}`,
          labels: { [`rbac.authorization.k8s.io/aggregate-to-${level}`]: 'true' },
        },
      });
      const granted = resources.filter((r) => level === 'admin' || !r.adminOnly);
      const verbs =
        level === 'view' ? READ : ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
      for (const r of granted) role.allow(verbs, res(r.apiGroup, r.resource));
      for (const r of granted) role.allow(READ, res(r.apiGroup, `${r.resource}/status`));
      return ApiObject.of(role);
    });
  }
}

/**
 * Renders the rules as given: cdk8s-plus would split them into one rule per resource with an
 * empty `resourceNames`, which hides the grouping an auditor compares with upstream's role. They
 * are inserted before the rules cdk8s-plus renders, so what a user adds with the role's `allow()`
 * (and `allowRead()`, ...) is rendered after them.
 */
export function setRules(role: kplus.Role | kplus.ClusterRole, rules: PolicyRule[]): void {
  ApiObject.of(role).addJsonPatch(...mergeRules(rules).map((rule, i) => JsonPatch.add(`/rules/${i}`, rule)));
}
