import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { kplus } from './api.js';

/**
 * Binds a Role or ClusterRole to a subject under a stable name (`<role>binding`), so upgrades
 * update bindings in place instead of leaving hashed duplicates behind.
 */
export function bindRole(scope: Construct, role: kplus.Role | kplus.ClusterRole, subject: kplus.ISubject): ApiObject {
  const name = `${role.name}binding`;
  if (role instanceof kplus.Role) {
    const binding = new kplus.RoleBinding(scope, `${role.node.id}Binding`, {
      metadata: { name, namespace: role.metadata.namespace },
      role,
    });
    binding.addSubjects(subject);
    return ApiObject.of(binding);
  }
  const binding = new kplus.ClusterRoleBinding(scope, `${role.node.id}Binding`, { metadata: { name }, role });
  binding.addSubjects(subject);
  return ApiObject.of(binding);
}
