/**
 * Asks the API server, one SubjectAccessReview per permission, whether the manager's
 * ServiceAccount may do what the manager needs. A review is a create that persists nothing:
 * the only kind of write the doctor makes.
 */
import { ApiException, AuthorizationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Permission, PermissionResult } from './model.js';

const CONCURRENCY = 8;

/** Undefined when the doctor's user may not create SubjectAccessReviews. */
export async function reviewPermissions(
  kc: KubeConfig,
  namespace: string,
  serviceAccount: string,
  permissions: Permission[],
): Promise<PermissionResult[] | undefined> {
  const api = kc.makeApiClient(AuthorizationV1Api);
  const user = `system:serviceaccount:${namespace}:${serviceAccount}`;
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'];
  const results: PermissionResult[] = new Array(permissions.length);
  let next = 0;
  let forbidden = false;
  const worker = async () => {
    while (!forbidden && next < permissions.length) {
      const i = next++;
      const p = permissions[i];
      try {
        const review = await api.createSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SubjectAccessReview',
            spec: {
              user,
              groups,
              resourceAttributes: {
                verb: p.verb,
                group: p.group,
                resource: p.resource,
                subresource: p.subresource,
                name: p.name,
                namespace: p.namespace,
              },
            },
          },
        });
        results[i] = {
          permission: p,
          allowed: review.status?.allowed === true,
          reason: review.status?.evaluationError || undefined,
        };
      } catch (e) {
        if (e instanceof ApiException && e.code === 403) {
          forbidden = true;
          return;
        }
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return forbidden ? undefined : results;
}
