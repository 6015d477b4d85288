import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { LabelValues, Labels, Names } from '../contract.js';
import { k8s, kplus } from './api.js';
import { bindRole } from './binding.js';
import { pprofArgs } from './flavour.js';
import type { ManagerImage } from './image.js';
import { checkDistinctPorts, setEphemeralStorage } from './manager-args.js';
import { IMAGE_PULL_POLICY } from './options.js';
import { setRules } from './rbac.js';
import { upstreamRelease } from './upstream/releases.js';

/** The daemon's health endpoint: 200 once its informers (NodeImage, CRR, NodePodProbe) have synced. */
const HEALTHZ = '/healthz';

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
   * Serve Go's pprof endpoints. kruise-daemon serves them by default on every interface of
   * `:10222`, an undeclared port on every node (host network); this library renders
   * `--enable-pprof=false` unless asked. `true` binds `--pprof-addr=:<pprofPort>` and declares it.
   * @default false
   */
  readonly pprof?: boolean;
  /**
   * Port of the pprof listener when `pprof` is true.
   * @default 10222
   */
  readonly pprofPort?: number;
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
    const pprofPort = props.pprof ? (props.pprofPort ?? 10222) : undefined;
    checkDistinctPorts({ port, pprofPort }, 'give the health/metrics and pprof listeners different ports', '');
    const labels = { [Labels.controlPlane]: LabelValues.daemon };
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', {
      metadata: { name: Names.daemonServiceAccount, namespace: props.namespace },
      automountToken: false,
    });
    // Upstream's own daemon role (config/rbac/daemon_role.yaml, from the generated release data).
    const role = new kplus.ClusterRole(this, 'Role', { metadata: { name: 'kruise-daemon-role' } });
    setRules(role, upstreamRelease(props.image.upstreamVersion).daemonRbac);
    const r = (apiGroup: string, resourceType: string) => kplus.ApiResource.custom({ apiGroup, resourceType });
    const secrets = new kplus.Role(this, 'SecretRole', {
      metadata: { name: 'kruise-daemon-secret-role', namespace: Names.daemonConfigNamespace },
    });
    secrets.allow(['get', 'list', 'watch'], r('', 'secrets'));

    this.daemonSet = new kplus.DaemonSet(this, 'DaemonSet', {
      metadata: { name: 'kruise-daemon', namespace: props.namespace, labels },
      select: false,
      serviceAccount: this.serviceAccount,
      automountServiceAccountToken: true,
      hostNetwork: true,
      dns: { policy: kplus.DnsPolicy.CLUSTER_FIRST_WITH_HOST_NET },
      // As upstream: a new pod counts as available 3 s after its informers synced (readiness).
      minReadySeconds: 3,
      terminationGracePeriod: Duration.seconds(10),
      // The daemon talks to the container runtime socket, which is root-owned on the node.
      securityContext: { ensureNonRoot: false },
      podMetadata: { labels },
    });
    this.daemonSet.select(kplus.LabelSelector.of({ labels }));
    const gates = Object.keys(props.featureGates ?? {})
      .sort()
      .map((g) => `${g}=${props.featureGates![g]}`)
      .join(',');
    const container = this.daemonSet.addContainer({
      name: 'daemon',
      image: props.image.reference,
      imagePullPolicy: IMAGE_PULL_POLICY,
      command: ['/kruise-daemon'],
      args: [
        '--logtostderr=true',
        '--v=4',
        `--addr=:${port}`,
        ...pprofArgs(pprofPort),
        ...(gates ? [`--feature-gates=${gates}`] : []),
      ],
      envVariables: { NODE_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_NAME) },
      ports: [
        { name: 'http', number: port },
        ...(pprofPort !== undefined ? [{ name: 'pprof', number: pprofPort }] : []),
      ],
      // Upstream's HTTP check, not just an open port: /healthz fails until the informers sync.
      // Readiness paces the rollout (maxUnavailable 10%, minReadySeconds 3); liveness is slower
      // to give up, so a slow first sync on a large node is not a restart loop.
      readiness: kplus.Probe.fromHttpGet(HEALTHZ, {
        port,
        periodSeconds: Duration.seconds(5),
        failureThreshold: 3,
        timeoutSeconds: Duration.seconds(3),
      }),
      liveness: kplus.Probe.fromHttpGet(HEALTHZ, {
        port,
        initialDelaySeconds: Duration.seconds(60),
        periodSeconds: Duration.seconds(10),
        failureThreshold: 3,
        timeoutSeconds: Duration.seconds(5),
      }),
      resources: {
        cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(50) },
        memory: { request: Size.mebibytes(64), limit: Size.mebibytes(128) },
      },
      securityContext: {
        ensureNonRoot: false,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        privileged: false,
        capabilities: { drop: [kplus.Capability.ALL] },
        seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
      },
    });
    // Read-only, as upstream: connecting to the runtime socket needs no write access to the mount.
    container.mount(
      '/hostvarrun',
      kplus.Volume.fromHostPath(this, 'runtime-socket', 'runtime-socket', { path: props.socketLocation ?? '/var/run' }),
      { readOnly: true },
    );
    const ds = ApiObject.of(this.daemonSet);
    // Read-only root filesystem and no emptyDir: only its kubelet-rotated logs count.
    setEphemeralStorage(ds, Size.mebibytes(32), Size.mebibytes(128));
    ds.addJsonPatch(JsonPatch.add('/spec/template/spec/tolerations', [{ operator: 'Exists' }]));
    // The L1 KubeDaemonSet re-serializes the patched spec through its typed toJson, which reads
    // an IntOrString's `.value`: a bare '10%' here renders `rollingUpdate: {}` (the API then
    // defaults to one node at a time), so the value must be an IntOrString.
    ds.addJsonPatch(
      JsonPatch.add('/spec/updateStrategy', {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: k8s.IntOrString.fromString('10%') },
      }),
    );
    // Virtual nodes have no container runtime to manage.
    ds.addJsonPatch(
      JsonPatch.add('/spec/template/spec/affinity', {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] }] },
            ],
          },
        },
      }),
    );
    if (props.imagePullSecrets?.length) {
      ds.addJsonPatch(
        JsonPatch.add(
          '/spec/template/spec/imagePullSecrets',
          props.imagePullSecrets.map((name) => ({ name })),
        ),
      );
    }
    this.apiObjects = [
      ApiObject.of(this.serviceAccount),
      ApiObject.of(role),
      bindRole(this, role, this.serviceAccount),
      ApiObject.of(secrets),
      bindRole(this, secrets, this.serviceAccount),
      ApiObject.of(this.daemonSet),
    ];
  }
}
