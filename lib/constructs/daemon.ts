import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { LabelValues, Labels, Names } from '../contract.js';
import { kplus } from './api.js';
import { bindRole } from './binding.js';
import { ManagerImage } from './image.js';

/** Props of {@link KruiseDaemon}. */
export interface KruiseDaemonProps {
  readonly namespace: string;
  /** The upstream manager image (the daemon ships in it as `/kruise-daemon`). */
  readonly image: ManagerImage;
  /**
   * Port of the daemon's health/metrics listener on the node.
   * @default 10221
   */
  readonly port?: number;
  /**
   * Host directory holding the container runtime's socket.
   * @default '/var/run'
   */
  readonly socketLocation?: string;
  /**
   * Feature gates (same string as the manager's).
   * @default - none
   */
  readonly featureGates?: { [gate: string]: boolean };
  /** @default - none */
  readonly imagePullSecrets?: string[];
}

/**
 * kruise-daemon: one pod per node (host network, the runtime socket mounted) that pulls
 * images and recreates containers for the manager's controllers. Upstream image only.
 * The `kruise-daemon-config` Namespace it reads Secrets from is rendered by the caller,
 * first in the stream.
 */
export class KruiseDaemon extends Construct {
  public readonly daemonSet: kplus.DaemonSet;
  public readonly serviceAccount: kplus.ServiceAccount;
  /** Every object rendered, for ordering. */
  public readonly apiObjects: ApiObject[];

  constructor(scope: Construct, id: string, props: KruiseDaemonProps) {
    super(scope, id);
    const port = props.port ?? 10221;
    const labels = { [Labels.controlPlane]: LabelValues.daemon };
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', { metadata: { name: Names.daemonServiceAccount, namespace: props.namespace }, automountToken: false });
    const role = new kplus.ClusterRole(this, 'Role', { metadata: { name: 'kruise-daemon-role' } });
    const r = (apiGroup: string, resourceType: string) => kplus.ApiResource.custom({ apiGroup, resourceType });
    role.allow(['get', 'list', 'watch', 'patch', 'update'], r('apps.kruise.io', 'nodeimages'), r('', 'pods'));
    role.allow(['get', 'list', 'watch'], r('apps.kruise.io', 'containerrecreaterequests'), r('apps.kruise.io', 'nodepodprobes'));
    role.allow(['get', 'patch', 'update'], r('apps.kruise.io', 'nodeimages/status'), r('apps.kruise.io', 'containerrecreaterequests/status'),
      r('apps.kruise.io', 'nodepodprobes/status'), r('', 'pods/status'));
    role.allow(['create', 'update', 'patch'], r('', 'events'));
    const secrets = new kplus.Role(this, 'SecretRole', { metadata: { name: 'kruise-daemon-secret-role', namespace: Names.daemonConfigNamespace } });
    secrets.allow(['get', 'list', 'watch'], r('', 'secrets'));

    this.daemonSet = new kplus.DaemonSet(this, 'DaemonSet', {
      metadata: { name: 'kruise-daemon', namespace: props.namespace, labels },
      select: false,
      serviceAccount: this.serviceAccount,
      automountServiceAccountToken: true,
      hostNetwork: true,
      dns: { policy: kplus.DnsPolicy.CLUSTER_FIRST_WITH_HOST_NET },
      terminationGracePeriod: Duration.seconds(10),
      // The daemon talks to the container runtime socket, which is root-owned on the node.
      securityContext: { ensureNonRoot: false },
      podMetadata: { labels },
    });
    this.daemonSet.select(kplus.LabelSelector.of({ labels }));
    const gates = Object.keys(props.featureGates ?? {}).sort().map((g) => `${g}=${props.featureGates![g]}`).join(',');
    const container = this.daemonSet.addContainer({
      name: 'daemon',
      image: props.image.reference,
      command: ['/kruise-daemon'],
      args: ['--logtostderr=true', '--v=4', `--addr=:${port}`, ...(gates ? [`--feature-gates=${gates}`] : [])],
      envVariables: { NODE_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_NAME) },
      ports: [{ name: 'http', number: port }],
      liveness: kplus.Probe.fromTcpSocket({ port, initialDelaySeconds: Duration.seconds(60), periodSeconds: Duration.seconds(10) }),
      resources: { cpu: { limit: kplus.Cpu.millis(50) }, memory: { request: Size.mebibytes(64), limit: Size.mebibytes(128) } },
      securityContext: { ensureNonRoot: false, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false,
        capabilities: { drop: [kplus.Capability.ALL] }, seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT } },
    });
    container.mount('/hostvarrun', kplus.Volume.fromHostPath(this, 'runtime-socket', 'runtime-socket', { path: props.socketLocation ?? '/var/run' }));
    const ds = ApiObject.of(this.daemonSet);
    ds.addJsonPatch(JsonPatch.add('/spec/template/spec/tolerations', [{ operator: 'Exists' }]));
    ds.addJsonPatch(JsonPatch.add('/spec/updateStrategy', { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } }));
    // Virtual nodes have no container runtime to manage.
    ds.addJsonPatch(JsonPatch.add('/spec/template/spec/affinity', { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] }] }] } } }));
    if (props.imagePullSecrets?.length) {
      ds.addJsonPatch(JsonPatch.add('/spec/template/spec/imagePullSecrets', props.imagePullSecrets.map((name) => ({ name }))));
    }
    this.apiObjects = [ApiObject.of(this.serviceAccount), ApiObject.of(role), bindRole(this, role, this.serviceAccount), ApiObject.of(secrets),
      bindRole(this, secrets, this.serviceAccount), ApiObject.of(this.daemonSet)];
  }
}
