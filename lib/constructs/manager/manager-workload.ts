import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { CertModes, DEFAULT_CERT_DIR, Env, Labels, Names, Paths, Ports, Roles } from '../../contract.js';
import type { ManagerNames } from '../core/names.js';
import { kplus } from '../core/api.js';
import type { ManagerImage } from './image.js';
import { checkDistinctPorts, renderFlavourArgs, ResolvedLeaderElection, setEphemeralStorage } from './manager-args.js';
import { IMAGE_PULL_POLICY, KUBE_CACHE_MUTATION_DETECTOR, ManagerPodOptions, ManagerPorts } from './options.js';
import { ControllerPorts, Rollout, ZoneSpread } from './scheduling.js';

/** What one manager Deployment runs: the contract's `Roles` (`--role`), as an enum for jsii's languages. */
export enum ManagerRole {
  /** Webhook on every replica, controllers on the leader. */
  ALL = 'all',
  /** Webhook only, no leader election. */
  WEBHOOK = 'webhook',
  /** Leader-elected controllers only. */
  CONTROLLERS = 'controllers',
}
// jsii wants the enum's values as literals; the compiler holds them to the contract's.
ManagerRole.ALL satisfies typeof Roles.all;
ManagerRole.WEBHOOK satisfies typeof Roles.webhook;
ManagerRole.CONTROLLERS satisfies typeof Roles.controllers;

/** The pod settings a workload takes as given; ports, gates, pprof, host network and grace arrive resolved. */
export type ManagerWorkloadPodOptions = Omit<
  ManagerPodOptions,
  'ports' | 'featureGates' | 'pprof' | 'hostNetwork' | 'terminationGracePeriod'
>;

/**
 * Props of {@link ManagerWorkload}: every value resolved (KruiseManager resolves each default
 * once and passes the result down).
 */
export interface ManagerWorkloadProps {
  /** Namespace of the Deployment. */
  readonly namespace: string;
  /** @internal */
  readonly names: ManagerNames;
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
  /** Container ports, defaults filled and collisions checked. */
  readonly ports: ResolvedPorts;
  /**
   * Feature gates as rendered: the flavour's defaults, the gates other choices need
   * (certificates, uninstall protection), then the user's.
   */
  readonly featureGates: { readonly [gate: string]: boolean };
  readonly zoneSpread: ZoneSpread;
  readonly rollout: Rollout;
  /** Whether the manager manages its own certificates (else cert-manager does). */
  readonly selfManagedCertificates: boolean;
  /** Whether the pods use the node's network. */
  readonly hostNetwork: boolean;
  /** How long the kubelet waits after SIGTERM. */
  readonly terminationGracePeriod: Duration;
  /** Pod settings. @default - see ManagerPodOptions */
  readonly pod?: ManagerWorkloadPodOptions;
  /** Upstream image only: client-go's cache mutation detector. @default false */
  readonly kubeCacheMutationDetector?: boolean;
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
export function resolvePorts(options: Pick<ManagerPodOptions, 'ports' | 'pprof'>): ResolvedPorts {
  const ports: ResolvedPorts = {
    webhook: options.ports?.webhook ?? Ports.webhook,
    metrics: options.ports?.metrics ?? Ports.metrics,
    health: options.ports?.health ?? Ports.health,
    ...(options.pprof ? { pprof: options.ports?.pprof ?? DEFAULT_PPROF_PORT } : {}),
  };
  checkDistinctPorts(ports, 'give every listener of the manager its own port');
  return ports;
}

/** Default ports of the controller pods in split mode: next to the webhook pods', never on them. */
const CONTROLLER_PORTS = { metrics: 8081, health: 8001, pprof: 8091 } as const;

/**
 * Ports of the controller pods in split mode. With host network a node holds one pod of each
 * role only if no port is shared, so every controller port must differ from every webhook-pod
 * port. `webhook` stays the webhook pods' (the controllers neither bind nor declare it).
 */
export function resolveControllerPorts(
  webhookPods: ResolvedPorts,
  options: { readonly controllerPorts?: ControllerPorts; readonly pprof?: boolean; readonly hostNetwork: boolean },
): ResolvedPorts {
  const own = options.controllerPorts ?? {};
  const ports: ResolvedPorts = {
    webhook: webhookPods.webhook,
    metrics: own.metrics ?? CONTROLLER_PORTS.metrics,
    health: own.health ?? CONTROLLER_PORTS.health,
    ...(options.pprof ? { pprof: own.pprof ?? CONTROLLER_PORTS.pprof } : {}),
  };
  const named = (prefix: string, p: ResolvedPorts, withWebhook: boolean) =>
    Object.fromEntries(
      Object.entries(p)
        .filter(([key, value]) => value !== undefined && (withWebhook || key !== 'webhook'))
        .map(([key, value]) => [`${prefix}${key}`, value as number]),
    );
  checkDistinctPorts(
    {
      ...(options.hostNetwork ? named('ports.', webhookPods, true) : {}),
      ...named('topology.controllerPorts.', ports, false),
    },
    options.hostNetwork
      ? 'give the controller pods ports of their own (topology: ManagerTopology.split({ controllerPorts })): with host network a node holds a webhook pod and a controller pod only if they share no port'
      : 'give every listener of the controller pods its own port',
    '',
  );
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
  /** The ports its pods listen on, every default filled (`pprof` only when pprof is on). */
  public readonly ports: ManagerPorts;

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: ManagerWorkloadProps): ManagerWorkload {
    return new ManagerWorkload(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: ManagerWorkloadProps) {
    super(scope, id);
    const flavour = props.image._flavorProfile();
    const pod = props.pod ?? {};
    const hostNetwork = props.hostNetwork;
    const ports = (this.ports = props.ports);
    this.selectorLabels = { [props.names.podLabel.key]: props.names.podLabel.value, [Labels.component]: props.role };

    this.deployment = new kplus.Deployment(this, 'Deployment', {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...pod.labels, ...this.selectorLabels } },
      replicas: props.replicas,
      select: false,
      spread: false,
      minReady: Duration.seconds(3),
      strategy: props.rollout._toKube(),
      serviceAccount: props.serviceAccount,
      automountServiceAccountToken: true,
      hostNetwork,
      // With host network, ClusterFirst would resolve through the node's resolv.conf and miss
      // cluster Service names; ClusterFirstWithHostNet keeps cluster DNS.
      dns: hostNetwork ? { policy: kplus.DnsPolicy.CLUSTER_FIRST_WITH_HOST_NET } : undefined,
      terminationGracePeriod: props.terminationGracePeriod,
      securityContext: { ensureNonRoot: true, user: flavour.uid, group: flavour.uid, fsGroup: flavour.uid },
      podMetadata: { labels: { ...pod.labels, ...this.selectorLabels }, annotations: pod.podAnnotations },
    });
    this.deployment.select(kplus.LabelSelector.of({ labels: this.selectorLabels }));
    this.apiObject = ApiObject.of(this.deployment);
    // Covers the /tmp (64Mi) and /log (256Mi) emptyDirs plus the kubelet-rotated logs.
    if (!pod.resources) setEphemeralStorage(this.apiObject, sizeMi(64), sizeMi(512));

    const needsLowPort = [ports.webhook, ports.metrics, ports.health].some((p) => p < 1024);
    this.container = this.deployment.addContainer({
      name: Names.managerContainer,
      image: props.image.reference,
      imagePullPolicy: IMAGE_PULL_POLICY,
      command: flavour.command,
      args: renderFlavourArgs(flavour, {
        role: props.role,
        leaderElection: props.leaderElection,
        metricsPort: ports.metrics,
        healthPort: ports.health,
        featureGates: props.featureGates,
        controllerWorkers: pod.controllerWorkers ?? {},
        certMode: props.selfManagedCertificates ? CertModes.selfManaged : CertModes.external,
        extraArgs: pod.extraArgs ?? [],
        pprofPort: ports.pprof,
        logLevel: pod.logLevel,
        logFormat: pod.logFormat,
        resyncPeriod: pod.resyncPeriod,
      }),
      envVariables: {
        [Env.podNamespace]: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
        [Env.podName]: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAME),
        [Env.webhookPort]: kplus.EnvValue.fromValue(String(ports.webhook)),
        [Env.webhookCertDir]: kplus.EnvValue.fromValue(DEFAULT_CERT_DIR),
        [Env.secretName]: kplus.EnvValue.fromValue(props.names.webhookSecret),
        [Env.serviceName]: kplus.EnvValue.fromValue(props.names.webhookService),
        ...(props.kubeCacheMutationDetector
          ? { [KUBE_CACHE_MUTATION_DETECTOR]: kplus.EnvValue.fromValue('true') }
          : {}),
      },
      ports: [
        ...(props.role === ManagerRole.CONTROLLERS ? [] : [{ name: 'webhook-server', number: ports.webhook }]),
        { name: 'metrics', number: ports.metrics },
        { name: 'health', number: ports.health },
        ...(ports.pprof !== undefined ? [{ name: 'pprof', number: ports.pprof }] : []),
      ],
      readiness: kplus.Probe.fromHttpGet(Paths.readyz, {
        port: ports.health,
        periodSeconds: Duration.seconds(5),
        failureThreshold: 3,
        timeoutSeconds: Duration.seconds(3),
      }),
      liveness: flavour._liveness(ports.health),
      resources: pod.resources ?? {
        cpu: { request: kplus.Cpu.millis(100), limit: kplus.Cpu.millis(500) },
        memory: { request: sizeMi(256), limit: sizeMi(512) },
      },
      securityContext: {
        ensureNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        privileged: false,
        capabilities: {
          drop: [kplus.Capability.ALL],
          add: needsLowPort ? [kplus.Capability.NET_BIND_SERVICE] : undefined,
        },
        seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
      },
    });
    // The root filesystem is read-only: give the process the only paths it writes.
    for (const w of flavour.writablePaths) {
      this.container.mount(w.path, kplus.Volume.fromEmptyDir(this, w.name, w.name, { sizeLimit: sizeMi(w.sizeMi) }));
    }

    // One replica per node: with host network the ports collide anyway; without it a node
    // failure must never take two replicas.
    this.deployment.scheduling.separate(this.deployment, { topology: kplus.Topology.HOSTNAME });
    this.renderL1Only(pod, props.zoneSpread);
    if (flavour.preStopSleepSeconds !== undefined) this.renderPreStopSleep(flavour.preStopSleepSeconds);
  }

  /**
   * The kubelet's preStop sleep action. cdk8s-plus-28's Kubernetes 1.28 types predate it and drop
   * it from any JSON patch (the typed L1 object re-serializes the patched spec), so it is added to
   * the rendered object.
   */
  private renderPreStopSleep(seconds: number): void {
    const render = this.apiObject.toJson.bind(this.apiObject);
    this.apiObject.toJson = () => {
      const json = render();
      json.spec.template.spec.containers[0].lifecycle = { preStop: { sleep: { seconds } } };
      return json;
    };
  }

  /**
   * Fields cdk8s-plus does not model: topology spread, priority class, several pull secrets, node
   * affinity beside its own anti-affinity, and the plain `nodeSelector` (cdk8s-plus's `attract`
   * would render it as a required node affinity, which a user's `nodeAffinity` would replace).
   */
  private renderL1Only(pod: ManagerWorkloadPodOptions, spread: ZoneSpread): void {
    const path = '/spec/template/spec';
    if (pod.nodeSelector && Object.keys(pod.nodeSelector).length > 0)
      this.apiObject.addJsonPatch(JsonPatch.add(`${path}/nodeSelector`, { ...pod.nodeSelector }));
    if (pod.nodeAffinity) this.apiObject.addJsonPatch(JsonPatch.add(`${path}/affinity/nodeAffinity`, pod.nodeAffinity));
    this.apiObject.addJsonPatch(
      JsonPatch.add(`${path}/priorityClassName`, pod.priorityClassName ?? 'system-cluster-critical'),
    );
    const constraints = spread._toKube(this.selectorLabels);
    if (constraints.length > 0)
      this.apiObject.addJsonPatch(JsonPatch.add(`${path}/topologySpreadConstraints`, constraints));
    if (pod.tolerations && pod.tolerations.length > 0) {
      this.apiObject.addJsonPatch(JsonPatch.add(`${path}/tolerations`, pod.tolerations));
    }
    if (pod.imagePullSecrets && pod.imagePullSecrets.length > 0) {
      this.apiObject.addJsonPatch(
        JsonPatch.add(
          `${path}/imagePullSecrets`,
          pod.imagePullSecrets.map((name) => ({ name })),
        ),
      );
    }
  }
}

function sizeMi(n: number): Size {
  return Size.mebibytes(n);
}
