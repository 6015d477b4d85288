import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { CertModes, DEFAULT_CERT_DIR, Env, LabelValues, Labels, Names, Paths, Ports, RUNTIME_UID } from '../contract.js';
import { kplus } from './api.js';
import { ManagerImage } from './image.js';
import { checkDistinctPorts, renderManagerArgs, ResolvedLeaderElection, setEphemeralStorage } from './manager-args.js';
import { IMAGE_PULL_POLICY, ManagerPodOptions } from './options.js';
import { Rollout, ZoneSpread } from './scheduling.js';

/** What one manager Deployment runs. */
export enum ManagerRole {
  /** Webhook on every replica, controllers on the leader. */
  ALL = 'all',
  /** Webhook only, no leader election. */
  WEBHOOK = 'webhook',
  /** Leader-elected controllers only. */
  CONTROLLERS = 'controllers',
}

/** Props of {@link ManagerWorkload}. */
export interface ManagerWorkloadProps extends ManagerPodOptions {
  /** Namespace of the Deployment. */
  readonly namespace: string;
  /** Name of the Deployment. */
  readonly name: string;
  /** What the replicas run. */
  readonly role: ManagerRole;
  /** Image and flavor. */
  readonly image: ManagerImage;
  /** ServiceAccount of the pods. */
  readonly serviceAccount: kplus.IServiceAccount;
  /** Replica count (checked by the caller). */
  readonly replicas: number;
  /** Leader election, resolved. */
  readonly leaderElection: ResolvedLeaderElection;
  /**
   * Zone spread.
   * @default ZoneSpread.preferred()
   */
  readonly zoneSpread?: ZoneSpread;
  /**
   * Rollout strategy.
   * @default Rollout.fullSurge()
   */
  readonly rollout?: Rollout;
  /**
   * Whether the manager manages its own certificates (else cert-manager does).
   * @default true
   */
  readonly selfManagedCertificates?: boolean;
}

/** Resolved container ports. */
export interface ResolvedPorts {
  readonly webhook: number;
  readonly metrics: number;
  readonly health: number;
  /** Set only when pprof is on. */
  readonly pprof?: number;
}

/** Upstream kruise-manager's default pprof address (`--pprof-addr=:8090`). */
const DEFAULT_PPROF_PORT = 8090;

/** Fills port defaults and rejects collisions. */
export function resolvePorts(options: ManagerPodOptions): ResolvedPorts {
  const ports: ResolvedPorts = {
    webhook: options.ports?.webhook ?? Ports.webhook,
    metrics: options.ports?.metrics ?? Ports.metrics,
    health: options.ports?.health ?? Ports.health,
    ...(options.pprof ? { pprof: options.ports?.pprof ?? DEFAULT_PPROF_PORT } : {}),
  };
  checkDistinctPorts(ports, 'give every listener of the manager its own port');
  return ports;
}

/**
 * One kruise-manager Deployment with every HA property: host network with cluster DNS,
 * zone spread, one replica per node, surge rollouts, readiness that means "certificates ready
 * and my webhook answers over TLS", a liveness probe, and a locked-down security context.
 */
export class ManagerWorkload extends Construct {
  /** The Deployment (cdk8s-plus). */
  public readonly deployment: kplus.Deployment;
  /** The manager container. */
  public readonly container: kplus.Container;
  /** The Deployment's L1 object, for escape hatches. */
  public readonly apiObject: ApiObject;
  /** Labels selecting this Deployment's pods. */
  public readonly selectorLabels: { [key: string]: string };
  /** Resolved ports. */
  public readonly ports: ResolvedPorts;

  constructor(scope: Construct, id: string, props: ManagerWorkloadProps) {
    super(scope, id);
    const upstream = props.image.isUpstream;
    const uid = upstream ? 65534 : RUNTIME_UID;
    const hostNetwork = props.hostNetwork ?? true;
    const ports = (this.ports = resolvePorts(props));
    const spread = props.zoneSpread ?? ZoneSpread.preferred();
    const rollout = props.rollout ?? Rollout.fullSurge();
    this.selectorLabels = { [Labels.controlPlane]: LabelValues.controllerManager, [Labels.component]: props.role };

    this.deployment = new kplus.Deployment(this, 'Deployment', {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.labels, ...this.selectorLabels } },
      replicas: props.replicas,
      select: false,
      spread: false,
      minReady: Duration.seconds(3),
      strategy: kplus.DeploymentStrategy.rollingUpdate({
        maxSurge: typeof rollout.maxSurge === 'string'
          ? kplus.PercentOrAbsolute.percent(parseInt(rollout.maxSurge, 10))
          : kplus.PercentOrAbsolute.absolute(rollout.maxSurge),
        maxUnavailable: kplus.PercentOrAbsolute.absolute(rollout.maxUnavailable),
      }),
      serviceAccount: props.serviceAccount,
      automountServiceAccountToken: true,
      hostNetwork,
      // With host network, ClusterFirst would resolve through the node's resolv.conf and miss
      // cluster Service names; ClusterFirstWithHostNet keeps cluster DNS.
      dns: hostNetwork ? { policy: kplus.DnsPolicy.CLUSTER_FIRST_WITH_HOST_NET } : undefined,
      terminationGracePeriod: props.terminationGracePeriod ?? Duration.seconds(30),
      securityContext: { ensureNonRoot: true, user: uid, group: uid, fsGroup: uid },
      podMetadata: { labels: { ...props.labels, ...this.selectorLabels }, annotations: props.podAnnotations },
    });
    this.deployment.select(kplus.LabelSelector.of({ labels: this.selectorLabels }));
    this.apiObject = ApiObject.of(this.deployment);
    // Covers the /tmp (64Mi) and /log (256Mi) emptyDirs plus the kubelet-rotated logs.
    if (!props.resources) setEphemeralStorage(this.apiObject, sizeMi(64), sizeMi(512));

    const needsLowPort = [ports.webhook, ports.metrics, ports.health].some((p) => p < 1024);
    this.container = this.deployment.addContainer({
      name: Names.managerContainer,
      image: props.image.reference,
      imagePullPolicy: IMAGE_PULL_POLICY,
      command: upstream ? ['/manager'] : undefined,
      args: renderManagerArgs({
        upstream,
        role: props.role,
        leaderElection: props.leaderElection,
        metricsPort: ports.metrics,
        healthPort: ports.health,
        featureGates: props.featureGates ?? (upstream ? { ImagePullJobGate: true } : {}),
        controllerWorkers: props.controllerWorkers ?? {},
        certMode: props.selfManagedCertificates === false ? CertModes.external : CertModes.selfManaged,
        extraArgs: props.extraArgs ?? [],
        pprofPort: ports.pprof,
      }),
      envVariables: {
        [Env.podNamespace]: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
        [Env.podName]: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAME),
        [Env.webhookPort]: kplus.EnvValue.fromValue(String(ports.webhook)),
        [Env.webhookCertDir]: kplus.EnvValue.fromValue(DEFAULT_CERT_DIR),
        [Env.secretName]: kplus.EnvValue.fromValue(Names.webhookSecret),
        [Env.serviceName]: kplus.EnvValue.fromValue(Names.webhookService),
      },
      ports: [
        ...(props.role === ManagerRole.CONTROLLERS ? [] : [{ name: 'webhook-server', number: ports.webhook }]),
        { name: 'metrics', number: ports.metrics },
        { name: 'health', number: ports.health },
        ...(ports.pprof !== undefined ? [{ name: 'pprof', number: ports.pprof }] : []),
      ],
      readiness: kplus.Probe.fromHttpGet(Paths.readyz, {
        port: ports.health, periodSeconds: Duration.seconds(5), failureThreshold: 3, timeoutSeconds: Duration.seconds(3),
      }),
      // Upstream 1.7/1.8 register no healthz check (its /healthz answers 404), so the upstream
      // image gets a TCP check of its health listener; our runtime's /healthz fails when the
      // event loop stalls or a watch is stuck.
      liveness: upstream
        ? kplus.Probe.fromTcpSocket({ port: ports.health, initialDelaySeconds: Duration.seconds(10), periodSeconds: Duration.seconds(10), failureThreshold: 3 })
        : kplus.Probe.fromHttpGet(Paths.healthz, {
          port: ports.health, initialDelaySeconds: Duration.seconds(10), periodSeconds: Duration.seconds(10), failureThreshold: 3, timeoutSeconds: Duration.seconds(5),
        }),
      resources: props.resources ?? {
        cpu: { request: kplus.Cpu.millis(100), limit: kplus.Cpu.millis(500) },
        memory: { request: sizeMi(256), limit: sizeMi(512) },
      },
      securityContext: {
        ensureNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        privileged: false,
        capabilities: { drop: [kplus.Capability.ALL], add: needsLowPort ? [kplus.Capability.NET_BIND_SERVICE] : undefined },
        seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
      },
    });
    // The root filesystem is read-only: give the process the only paths it writes.
    this.container.mount('/tmp', kplus.Volume.fromEmptyDir(this, 'tmp', 'tmp', { sizeLimit: sizeMi(64) }));
    if (upstream) this.container.mount('/log', kplus.Volume.fromEmptyDir(this, 'log', 'log', { sizeLimit: sizeMi(256) }));

    // One replica per node: with host network the ports collide anyway; without it a node
    // failure must never take two replicas.
    this.deployment.scheduling.separate(this.deployment, { topology: kplus.Topology.HOSTNAME });
    for (const [key, value] of Object.entries(props.nodeSelector ?? {})) {
      this.deployment.scheduling.attract(kplus.Node.labeled(kplus.NodeLabelQuery.is(key, value)));
    }
    this.renderL1Only(props, spread);
  }

  /** Fields cdk8s-plus does not model: topology spread, priority class, several pull secrets. */
  private renderL1Only(props: ManagerWorkloadProps, spread: ZoneSpread): void {
    const pod = '/spec/template/spec';
    this.apiObject.addJsonPatch(JsonPatch.add(`${pod}/priorityClassName`, props.priorityClassName ?? 'system-cluster-critical'));
    if (spread.whenUnsatisfiable) {
      this.apiObject.addJsonPatch(JsonPatch.add(`${pod}/topologySpreadConstraints`, [{
        maxSkew: spread.maxSkew,
        topologyKey: spread.topologyKey,
        whenUnsatisfiable: spread.whenUnsatisfiable,
        labelSelector: { matchLabels: this.selectorLabels },
        matchLabelKeys: ['pod-template-hash'],
        ...(spread.minZones !== undefined ? { minDomains: spread.minZones } : {}),
      }]));
    }
    if (props.tolerations && props.tolerations.length > 0) {
      this.apiObject.addJsonPatch(JsonPatch.add(`${pod}/tolerations`, props.tolerations));
    }
    if (props.imagePullSecrets && props.imagePullSecrets.length > 0) {
      this.apiObject.addJsonPatch(JsonPatch.add(`${pod}/imagePullSecrets`, props.imagePullSecrets.map((name) => ({ name }))));
    }
  }
}

function sizeMi(n: number): Size {
  return Size.mebibytes(n);
}
