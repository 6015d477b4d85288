import { ApiObject, type ApiObjectMetadata } from 'cdk8s';
import type { Construct, IConstruct } from 'constructs';
import { KRUISE_APPS_GROUP } from '../../contract.js';

/**
 * The other constructs of `self`'s class in `self`'s App (the whole tree, not only `self`'s scope): what one cluster
 * holds once (KruiseManager's cluster-scoped names, a RuntimeImage's build context) or what two objects may not both
 * claim (a SidecarSet's containers, a WorkloadSpread's workload) is checked against them.
 */
export function peersInApp<T extends IConstruct>(self: T, type: abstract new (...args: never[]) => T): T[] {
  return self.node.root.node.findAll().filter((c): c is T => c instanceof type && c !== self);
}

/**
 * The apps.kruise.io/v1alpha1 object a feature construct (SidecarSet, WorkloadSpread) renders as its `Resource`
 * child; `conflicts` runs at synth and names what the manager's validating webhook would refuse between this object
 * and its peers in the App.
 */
export function kruiseAppsObject(
  scope: Construct,
  kind: string,
  metadata: ApiObjectMetadata | undefined,
  spec: object,
  conflicts: () => string[],
): ApiObject {
  const apiObject = new ApiObject(scope, 'Resource', {
    apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
    kind,
    metadata,
    spec,
  });
  scope.node.addValidation({ validate: conflicts });
  return apiObject;
}
