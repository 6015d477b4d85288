/** Runs every check: read the cluster, work out what the install should be, judge. */
import type { KubeConfig } from '@kubernetes/client-node';
import { reviewPermissions } from './access-review.js';
import { checkCaBundles, checkCertificate } from './checks/certificates.js';
import { checkDisruptionBudget, checkEndpoints, checkLeader, checkReplicas } from './checks/control-plane.js';
import { checkCrds } from './checks/crds.js';
import { checkRolloutCapacity, checkSpread, checkZoneLabels } from './checks/nodes.js';
import { checkRbac } from './checks/rbac.js';
import { checkNamespaceExclusion, checkWebhookConfigurations } from './checks/webhooks.js';
import { collect } from './collect.js';
import { expectations, type Expectations } from './expectations.js';
import type { CheckResult, ClusterSnapshot, PermissionResult } from './model.js';

export interface DoctorReport {
  readonly namespace: string;
  readonly flavour?: string;
  readonly image?: string;
  /** False when any check failed. */
  readonly ok: boolean;
  readonly checks: CheckResult[];
  /** Reads the doctor's own user was not allowed to make. */
  readonly readErrors: string[];
}

/** Judges a snapshot (pure: the same for a live cluster and a test fixture). */
export function evaluate(
  s: ClusterSnapshot,
  permissions: PermissionResult[] | undefined,
  e: Expectations | undefined = expectations(s.namespace, s.deployments),
): DoctorReport {
  const checks = [
    checkReplicas(s, e),
    checkEndpoints(s),
    checkLeader(s, e),
    checkCertificate(s, e),
    checkCaBundles(s, e),
    checkWebhookConfigurations(s, e),
    checkNamespaceExclusion(s),
    checkZoneLabels(s),
    checkSpread(s),
    checkRolloutCapacity(s),
    checkCrds(s, e),
    checkDisruptionBudget(s),
    checkRbac(s, e, permissions),
  ];
  return {
    namespace: s.namespace,
    flavour: e?.flavour,
    image: e?.image,
    ok: checks.every((c) => c.status !== 'fail'),
    checks,
    readErrors: s.readErrors,
  };
}

export interface DoctorOptions {
  readonly kubeConfig: KubeConfig;
  readonly namespace: string;
  readonly now?: () => number;
}

/** Reads the cluster (gets, lists and SubjectAccessReviews only) and judges it. */
export async function runDoctor(o: DoctorOptions): Promise<DoctorReport> {
  const snapshot = await collect(o.kubeConfig, o.namespace, o.now);
  const e = expectations(snapshot.namespace, snapshot.deployments);
  const permissions = e
    ? await reviewPermissions(o.kubeConfig, o.namespace, e.serviceAccount, e.permissions)
    : undefined;
  return evaluate(snapshot, permissions, e);
}
