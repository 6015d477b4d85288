import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { LabelValues, Labels, Names } from '../../contract.js';
import { k8s, kplus } from '../core/api.js';
import { bindRole } from '../core/binding.js';
import { checkDnsSubdomain, propError } from '../core/errors.js';
import { pprofArgs } from '../manager/flavour.js';
import type { ManagerImage } from '../manager/image.js';
import { LogLevel, UPSTREAM_DEFAULT_VERBOSITY } from '../manager/logging.js';
import { checkDistinctPorts, setEphemeralStorage } from '../manager/manager-args.js';
import { labelEveryObject } from '../core/labels.js';
import { IMAGE_PULL_POLICY, KUBE_CACHE_MUTATION_DETECTOR } from '../manager/options.js';
import { setRules } from '../manager/rbac.js';
import { upstreamRelease } from '../../upstream/releases.js';

/** The daemon's health endpoint: 200 once its informers (NodeImage, CRR, NodePodProbe) have synced. */
const HEALTHZ = '/healthz';

/**
 * Where kruise-daemon finds plugins that fetch registry credentials (ECR, GCR, ACR and the
 * like) for image pre-pulls, as kubelet's image credential providers do.
 */
export interface DaemonCredentialProvider {
  /**
   * ConfigMap in the install namespace whose key `CredentialProviderPlugin.yaml` holds the
   * plugin configuration (kubelet's `CredentialProviderConfig`).
   */
  readonly configMap: string;
  /** Host directory holding the plugin binaries. */
  readonly pluginHostPath: string;
  /**
   * Host directory of AWS credentials, mounted at `/root/.aws` (ECR plugins read it).
   * @default - not mounted
   */
  readonly awsCredentialsHostPath?: string;
}

/** What a user sets on kruise-daemon (the chart's `daemon.*` values). */
export interface DaemonOptions {
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
   * Host directory holding the container runtime's socket (k3s: `/run/k3s/containerd`).
   * @default '/var/run'
   */
  readonly socketLocation?: string;
  /**
   * File name of the runtime's socket inside `socketLocation` (`--socket-file`).
   * @default - the daemon looks for containerd, CRI-O and other known sockets there
   */
  readonly socketFile?: string;
  /**
   * Labels a node must carry to run the daemon.
   * @default - every node
   */
  readonly nodeSelector?: { [label: string]: string };
  /**
   * Node affinity of the daemon pods. Replaces the default, as the chart's `daemon.affinity` does.
   * @default - every node not labelled `type=virtual-kubelet` (virtual nodes have no container runtime)
   */
  readonly nodeAffinity?: k8s.NodeAffinity;
  /**
   * Tolerations of the daemon pods.
   * @default - every taint (`operator: Exists`), so tainted nodes can pre-pull too
   */
  readonly tolerations?: k8s.Toleration[];
  /**
   * Resources of the daemon container.
   * @default - requests 10m CPU / 64Mi memory, limits 50m CPU / 128Mi memory
   */
  readonly resources?: kplus.ContainerResources;
  /**
   * Extra environment variables, e.g. `HTTP_PROXY`, `HTTPS_PROXY` and `NO_PROXY` for image pulls
   * behind a proxy.
   * @default - none
   */
  readonly extraEnv?: { [name: string]: kplus.EnvValue };
  /**
   * klog verbosity of the daemon.
   * @default LogLevel.verbosity(4)
   */
  readonly logLevel?: LogLevel;
  /**
   * Registry credential plugins for image pre-pulls.
   * @default - none
   */
  readonly credentialProvider?: DaemonCredentialProvider;
  /**
   * Annotations on the daemon's ServiceAccount (IRSA's `eks.amazonaws.com/role-arn`, GKE
   * Workload Identity's `iam.gke.io/gcp-service-account`).
   * @default - none
   */
  readonly serviceAccountAnnotations?: { [key: string]: string };
}

/** Props of {@link KruiseDaemon}. */
export interface KruiseDaemonProps extends DaemonOptions {
  readonly namespace: string;
  /** The upstream manager image (the daemon ships in it as `/kruise-daemon`). */
  readonly image: ManagerImage;
  /**
   * Feature gates (same string as the manager's).
   * @default - none
   */
  readonly featureGates?: { [gate: string]: boolean };
  /** @default - none */
  readonly imagePullSecrets?: string[];
  /**
   * client-go's cache mutation detector (debugging; memory doubles).
   * @default false
   */
  readonly kubeCacheMutationDetector?: boolean;
  /**
   * Extra labels on every object and pod.
   * @default - none
   */
  readonly labels?: { [key: string]: string };
}

/** Where the credential plugin's config and binaries are mounted (the chart's paths). */
const CREDENTIAL_CONFIG_DIR = '/credential-provider-config';
const CREDENTIAL_PLUGIN_DIR = '/credential-provider-plugin';

/** Checks the options a user sets, each error naming `daemonOptions.<field>`. */
export function checkDaemonOptions(o: DaemonOptions, prefix = 'daemonOptions.'): void {
  checkDistinctPorts(
    { port: o.port ?? 10221, pprofPort: o.pprof ? (o.pprofPort ?? 10222) : undefined },
    'give the health/metrics and pprof listeners different ports',
    prefix,
  );
  o.logLevel?._upstreamArgs(`${prefix}logLevel`);
  const absolute = (field: string, value: string | undefined) => {
    if (value !== undefined && !value.startsWith('/'))
      throw propError(`${prefix}${field}`, value, 'is not an absolute host path', `give a path starting with /`);
  };
  absolute('socketLocation', o.socketLocation);
  if (o.socketFile !== undefined && (o.socketFile === '' || o.socketFile.includes('/')))
    throw propError(
      `${prefix}socketFile`,
      o.socketFile,
      'must be a file name inside socketLocation',
      'give the socket file name only (e.g. containerd.sock), and its directory as socketLocation',
    );
  if (o.credentialProvider) {
    checkDnsSubdomain(`${prefix}credentialProvider.configMap`, o.credentialProvider.configMap);
    absolute('credentialProvider.pluginHostPath', o.credentialProvider.pluginHostPath);
    absolute('credentialProvider.awsCredentialsHostPath', o.credentialProvider.awsCredentialsHostPath);
  }
  for (const name of Object.keys(o.extraEnv ?? {}))
    if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(name))
      throw propError(
        `${prefix}extraEnv`,
        name,
        'is not a valid environment variable name',
        'use letters, digits, _, - and ., not starting with a digit',
      );
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

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: KruiseDaemonProps): KruiseDaemon {
    return new KruiseDaemon(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: KruiseDaemonProps) {
    super(scope, id);
    checkDaemonOptions(props, '');
    const port = props.port ?? 10221;
    const pprofPort = props.pprof ? (props.pprofPort ?? 10222) : undefined;
    const labels = { [Labels.controlPlane]: LabelValues.daemon };
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', {
      metadata: {
        name: Names.daemonServiceAccount,
        namespace: props.namespace,
        annotations: props.serviceAccountAnnotations,
      },
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
      podMetadata: { labels: { ...props.labels, ...labels } },
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
        ...(props.logLevel ?? LogLevel.verbosity(UPSTREAM_DEFAULT_VERBOSITY))._upstreamArgs(),
        `--addr=:${port}`,
        ...pprofArgs(pprofPort),
        ...(gates ? [`--feature-gates=${gates}`] : []),
        ...(props.socketFile ? [`--socket-file=${props.socketFile}`] : []),
        ...(props.credentialProvider
          ? [
              `--plugin-config-file=${CREDENTIAL_CONFIG_DIR}/CredentialProviderPlugin.yaml`,
              `--plugin-bin-dir=${CREDENTIAL_PLUGIN_DIR}`,
            ]
          : []),
      ],
      envVariables: {
        ...props.extraEnv,
        ...(props.kubeCacheMutationDetector
          ? { [KUBE_CACHE_MUTATION_DETECTOR]: kplus.EnvValue.fromValue('true') }
          : {}),
        NODE_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_NAME),
      },
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
      resources: props.resources ?? {
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
    const cp = props.credentialProvider;
    if (cp) {
      const config = kplus.ConfigMap.fromConfigMapName(this, 'CredentialProviderConfig', cp.configMap);
      container.mount(
        CREDENTIAL_CONFIG_DIR,
        kplus.Volume.fromConfigMap(this, 'credential-provider-config', config, {
          name: 'credential-provider-config',
        }),
        { readOnly: true },
      );
      container.mount(
        CREDENTIAL_PLUGIN_DIR,
        kplus.Volume.fromHostPath(this, 'credential-provider-plugin', 'credential-provider-plugin', {
          path: cp.pluginHostPath,
        }),
        { readOnly: true },
      );
      if (cp.awsCredentialsHostPath)
        container.mount(
          '/root/.aws',
          kplus.Volume.fromHostPath(this, 'aws-credentials', 'aws-credentials', { path: cp.awsCredentialsHostPath }),
          { readOnly: true },
        );
    }
    const ds = ApiObject.of(this.daemonSet);
    // Read-only root filesystem and no emptyDir: only its kubelet-rotated logs count.
    if (!props.resources) setEphemeralStorage(ds, Size.mebibytes(32), Size.mebibytes(128));
    ds.addJsonPatch(JsonPatch.add('/spec/template/spec/tolerations', props.tolerations ?? [{ operator: 'Exists' }]));
    if (props.nodeSelector && Object.keys(props.nodeSelector).length > 0)
      ds.addJsonPatch(JsonPatch.add('/spec/template/spec/nodeSelector', { ...props.nodeSelector }));
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
        nodeAffinity: props.nodeAffinity ?? {
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
    labelEveryObject(this, props.labels);
  }
}
