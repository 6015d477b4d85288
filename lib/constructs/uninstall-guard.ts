import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { kplus } from './api.js';
import { bindRole } from './binding.js';
import { ManagerImage } from './image.js';

/** Props of {@link UninstallGuard}. */
export interface UninstallGuardProps {
  readonly namespace: string;
  /** The manager image; the guard image is taken from the same registry. */
  readonly image: ManagerImage;
  /** @default - none */
  readonly imagePullSecrets?: string[];
}

/**
 * Deleting the Kruise CRDs deletes every CloneSet, Advanced StatefulSet and Advanced DaemonSet
 * with its pods. This Job lists them cluster-wide and fails while any exist. It is an Argo CD
 * PreDelete hook; with plain kubectl, run it (or `kubectl get clonesets,...`) before deleting.
 */
export class UninstallGuard extends Construct {
  public readonly job: kplus.Job;
  public readonly apiObjects: ApiObject[];

  constructor(scope: Construct, id: string, props: UninstallGuardProps) {
    super(scope, id);
    const sa = new kplus.ServiceAccount(this, 'ServiceAccount', { metadata: { name: 'kruise-helm-hook', namespace: props.namespace }, automountToken: false });
    const role = new kplus.ClusterRole(this, 'Role', { metadata: { name: 'kruise-helm-hook' } });
    role.allow(['get', 'list'], ...['clonesets', 'statefulsets', 'daemonsets'].map((p) => kplus.ApiResource.custom({ apiGroup: 'apps.kruise.io', resourceType: p })));
    const binding = bindRole(this, role, sa);
    const registry = props.image.reference.slice(0, props.image.reference.lastIndexOf('/'));
    this.job = new kplus.Job(this, 'Job', {
      metadata: {
        name: 'kruise-uninstall-guard',
        namespace: props.namespace,
        annotations: { 'argocd.argoproj.io/hook': 'PreDelete', 'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation' },
      },
      serviceAccount: sa,
      automountServiceAccountToken: true,
      backoffLimit: 0,
      ttlAfterFinished: Duration.hours(1),
      securityContext: { ensureNonRoot: true, user: 65534, group: 65534 },
    });
    this.job.addContainer({
      name: 'guard',
      image: `${registry}/kruise-helm-hook:v0.1.0`,
      resources: { cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(100) } },
      securityContext: { ensureNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: [kplus.Capability.ALL] },
        seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT } },
    });
    if (props.imagePullSecrets?.length) {
      ApiObject.of(this.job).addJsonPatch(JsonPatch.add('/spec/template/spec/imagePullSecrets', props.imagePullSecrets.map((name) => ({ name }))));
    }
    this.apiObjects = [ApiObject.of(sa), ApiObject.of(role), binding, ApiObject.of(this.job)];
  }
}
