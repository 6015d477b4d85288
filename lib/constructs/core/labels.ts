import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';

/**
 * Adds `labels` to the metadata of every object rendered under `scope`, keeping any label an
 * object already has: selectors and the ServiceMonitor's match depend on this library's own.
 */
export function labelEveryObject(scope: IConstruct, labels: { readonly [key: string]: string } | undefined): void {
  if (!labels) return;
  for (const child of scope.node.findAll()) {
    if (!ApiObject.isApiObject(child)) continue;
    for (const [key, value] of Object.entries(labels))
      if (child.metadata.getLabel(key) === undefined) child.metadata.addLabel(key, value);
  }
}
