import { DNS_LABEL, DNS_SUBDOMAIN } from '../../contract.js';
import { KRUISE_AND_BUILT_IN_ACCESS, type GroupResource, type ResourceAccess } from '../../upstream/permissions.js';
import { propError } from '../core/errors.js';

/**
 * Cluster-wide reads that upstream grants with wildcards, narrowed by default.
 *
 * Upstream's manager role allows `get/list/watch` on `*` / `* /scale` (PodUnavailableBudget
 * and WorkloadSpread read the scale of any workload they target) and `list` on `*` / `*`
 * (the CRD deletion-protection webhook counts the objects of any CRD being deleted). That
 * reads every custom resource in the cluster, Secrets-like payloads included. By default the
 * manager gets these reads only for the built-in workloads and Kruise's own resources.
 */
export class CustomResourceAccess {
  /**
   * Built-in workloads and Kruise resources only. A PodUnavailableBudget or WorkloadSpread
   * that targets a custom workload then cannot read its scale, and deleting a custom CRD
   * labelled for deletion protection cannot be checked (the webhook denies or, with
   * failurePolicy Ignore, lets it through).
   */
  public static kruiseAndBuiltIn(): CustomResourceAccess {
    return new CustomResourceAccess(KRUISE_AND_BUILT_IN_ACCESS);
  }

  /** Also these custom resources: scale reads for workloads, lists for deletion protection. */
  public static including(resources: GroupResource[]): CustomResourceAccess {
    resources.forEach((r, i) => {
      if (!DNS_LABEL.test(r.resource)) {
        throw propError(
          `customResourceAccess[${i}].resource`,
          r.resource,
          'is not a plural resource name',
          "use the lower-case plural, e.g. 'widgets'",
        );
      }
      if (r.apiGroup !== '' && !DNS_SUBDOMAIN.test(r.apiGroup)) {
        throw propError(
          `customResourceAccess[${i}].apiGroup`,
          r.apiGroup,
          'is not an API group',
          "use a DNS name like 'example.com', or '' for the core group",
        );
      }
    });
    return new CustomResourceAccess({ wildcard: false, extra: resources });
  }

  /** Upstream's wildcards, unchanged: every resource of every group. */
  public static all(): CustomResourceAccess {
    return new CustomResourceAccess({ wildcard: true, extra: [] });
  }

  private constructor(private readonly access: ResourceAccess) {}

  /** @internal */
  public _toResourceAccess(): ResourceAccess {
    return this.access;
  }
}
