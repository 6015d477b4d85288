/** Every permission the manager needs, asked of the API server as its ServiceAccount. */
import type { Expectations } from '../expectations.js';
import { describePermission, type CheckResult, type ClusterSnapshot, type PermissionResult } from '../model.js';
import { list } from './common.js';

export function checkRbac(
  s: ClusterSnapshot,
  e: Expectations | undefined,
  results: PermissionResult[] | undefined,
): CheckResult {
  const id = 'rbac';
  if (!e) return { id, status: 'skip', message: 'no manager Deployment, so no ServiceAccount to check' };
  const who = `ServiceAccount ${s.namespace}/${e.serviceAccount}`;
  if (!results)
    return {
      id,
      status: 'skip',
      message: `could not ask the API server about ${who}'s permissions (SubjectAccessReview not allowed?)`,
    };
  const denied = results.filter((r) => !r.allowed);
  if (denied.length > 0) {
    const lines = denied.map((r) => describePermission(r.permission) + (r.reason ? ` (${r.reason})` : ''));
    return {
      id,
      status: 'fail',
      message: `${who} is missing ${denied.length} of ${results.length} permissions the manager needs: ${list(
        denied.map((r) => describePermission(r.permission)),
        4,
      )}`,
      fix: 're-apply the rendered RBAC (ClusterRole kruise-manager-role, kruise-certs-role, Roles kruise-leader-election-role and kruise-webhook-role, the upstream manager Role in kruise-daemon-config, and their bindings to the ServiceAccount); if you narrowed them by hand, grant exactly the permissions listed',
      details: lines,
    };
  }
  return { id, status: 'pass', message: `${who} has all ${results.length} permissions the ${e.flavour} manager needs` };
}
