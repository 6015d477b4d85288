/**
 * The HA parts every manager deployment shares, whatever it runs (Kruise's manager, or your own operator on the
 * runtime): the Deployments with their spread, surge rollout, probes and disruption budgets, the webhook Service, the
 * metrics Service, the NetworkPolicy, and the checks on replicas and nodes. KruiseManager and Operator both render
 * them here, from resolved values and names, so an HA rule lives once.
 */
import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { Ports } from '../../contract.js';
import { kplus } from '../core/api.js';
import { checkPositiveInt, propError } from '../core/errors.js';
import type { ManagerNames } from '../core/names.js';
import { DisruptionBudget, ManagerDisruptionBudget } from './disruption-budget.js';
import type { ManagerImage } from './image.js';
import type { ResolvedLeaderElection } from './manager-args.js';
import {
  ManagerRole,
  ManagerWorkload,
  ResolvedPorts,
  resolveControllerPorts,
  resolvePorts,
} from './manager-workload.js';
import { ManagerMonitoring, MonitoringOptions } from '../monitoring/monitoring.js';
import type { LeaderElectionOptions, ManagerPodOptions } from './options.js';
import type { WebhookCertificates } from '../webhooks/certificates.js';
import { ManagerTopology, Rollout, ZoneSpread } from './scheduling.js';

/**
 * The HA deployment's props, the same for {@link KruiseManager} and {@link Operator}: replicas, their spread and
 * rollout, leader election, certificates, disruption budget, metrics and NetworkPolicy, beside the pod's own options.
 */
export interface ManagerDeploymentProps extends ManagerPodOptions {
  /** Replicas: each serves the webhooks, the Lease holder runs the controllers (split: the webhook's). @default 2 */
  readonly replicas?: number;
  /** Allow `replicas: 1` (no HA: admission stops while the pod restarts). @default false */
  readonly allowSingleReplica?: boolean;
  /**
   * Colocated webhooks and controllers, or split (KruiseManager with the runtime image).
   * @default ManagerTopology.colocated()
   */
  readonly topology?: ManagerTopology;
  /** Leader election timing and Lease. @default - 15s / 10s / 2s on the program's Lease (Kruise: kruise-manager) */
  readonly leaderElection?: LeaderElectionOptions;
  /** Zone spread. @default ZoneSpread.preferred() */
  readonly zoneSpread?: ZoneSpread;
  /** Rollout. @default Rollout.fullSurge() */
  readonly rollout?: Rollout;
  /**
   * Nodes available to the manager. With host network each pod owns its ports on its node,
   * so a rollout needs replicas + surge nodes; when set, synth fails if that cannot fit.
   * @default - not checked
   */
  readonly expectedNodes?: number;
  /** Certificates of the webhook server. @default WebhookCertificates.selfManaged() */
  readonly certificates?: WebhookCertificates;
  /** Disruption budget per Deployment. @default DisruptionBudget.maxUnavailable(1) */
  readonly disruptionBudget?: DisruptionBudget;
  /**
   * Metrics Service (always) and ServiceMonitor (optional); KruiseManager also renders the Grafana dashboard and alert
   * rules.
   * @default - Service only
   */
  readonly monitoring?: MonitoringOptions;
  /**
   * Render a NetworkPolicy admitting only the manager's ports. Host-network pods bypass most
   * CNIs' policies, so this only takes effect with `hostNetwork: false`.
   * @default false
   */
  readonly networkPolicy?: boolean;
}

/** The props above with every default filled, checked once. */
export interface ResolvedHa {
  readonly topology: ManagerTopology;
  readonly replicas: number;
  readonly rollout: Rollout;
  readonly zoneSpread: ZoneSpread;
  readonly hostNetwork: boolean;
  readonly terminationGracePeriod: Duration;
  readonly ports: ResolvedPorts;
  readonly controllerPorts?: ResolvedPorts;
  readonly webhookReplicas: number;
  readonly controllerReplicas: number;
}

/** Resolves and checks the shared props (replicas, topology, ports, nodes for a rollout). */
export function resolveHa(props: ManagerDeploymentProps, hostNetworkByDefault = true): ResolvedHa {
  const topology = props.topology ?? ManagerTopology.colocated();
  const replicas = props.replicas ?? 2;
  checkReplicas(props, topology, replicas);
  const rollout = props.rollout ?? Rollout.fullSurge();
  const hostNetwork = props.hostNetwork ?? hostNetworkByDefault;
  const webhookReplicas = topology.webhookReplicas ?? replicas;
  const controllerReplicas = topology.controllerReplicas ?? 2;
  const ports = resolvePorts(props);
  const controllerPorts = topology.isSplit
    ? resolveControllerPorts(ports, { controllerPorts: topology.controllerPorts, pprof: props.pprof, hostNetwork })
    : undefined;
  if (props.expectedNodes !== undefined)
    checkNodes(
      props.expectedNodes,
      hostNetwork,
      topology.isSplit ? [webhookReplicas, controllerReplicas] : [replicas],
      rollout,
    );
  return {
    topology,
    replicas,
    rollout,
    zoneSpread: props.zoneSpread ?? ZoneSpread.preferred(),
    hostNetwork,
    terminationGracePeriod: props.terminationGracePeriod ?? Duration.seconds(30),
    ports,
    controllerPorts,
    webhookReplicas,
    controllerReplicas,
  };
}

/** What renderWorkloads needs besides the resolved props. */
export interface WorkloadsInput {
  readonly namespace: string;
  readonly names: ManagerNames;
  readonly image: ManagerImage;
  readonly serviceAccount: kplus.ServiceAccount;
  readonly leaderElection: ResolvedLeaderElection;
  readonly featureGates: { readonly [gate: string]: boolean };
  readonly selfManagedCertificates: boolean;
  readonly kubeCacheMutationDetector?: boolean;
  /** The webhook configuration entries' names, for the monitoring's panels and alerts. */
  readonly webhookNames: string[];
}

/** The Deployments, their PDBs, the webhook Service and the metrics. */
export interface Workloads {
  readonly workloads: ManagerWorkload[];
  readonly disruptionBudgets: ManagerDisruptionBudget[];
  readonly webhookService: kplus.Service;
  readonly monitoring: ManagerMonitoring;
}

/** Renders the Deployments (one, or the split topology's two), with everything that keeps them available. */
export function renderWorkloads(
  scope: Construct,
  props: ManagerDeploymentProps,
  ha: ResolvedHa,
  input: WorkloadsInput,
): Workloads {
  const { namespace: ns, names } = input;
  const roles = ha.topology.isSplit ? [ManagerRole.WEBHOOK, ManagerRole.CONTROLLERS] : [ManagerRole.ALL];
  const workloads: ManagerWorkload[] = [];
  const disruptionBudgets: ManagerDisruptionBudget[] = [];
  for (const role of roles) {
    const count = role === ManagerRole.CONTROLLERS ? ha.controllerReplicas : ha.webhookReplicas;
    const name = role === ManagerRole.ALL ? names.deployment : `${names.splitPrefix}-${role}`;
    const workload = ManagerWorkload._create(scope, `Manager-${role}`, {
      namespace: ns,
      names,
      name,
      role,
      image: input.image,
      serviceAccount: input.serviceAccount,
      replicas: count,
      leaderElection: input.leaderElection,
      ports: role === ManagerRole.CONTROLLERS ? ha.controllerPorts! : ha.ports,
      featureGates: input.featureGates,
      zoneSpread: ha.zoneSpread,
      rollout: ha.rollout,
      selfManagedCertificates: input.selfManagedCertificates,
      hostNetwork: ha.hostNetwork,
      terminationGracePeriod: ha.terminationGracePeriod,
      pod: props,
      kubeCacheMutationDetector: input.kubeCacheMutationDetector,
    });
    workloads.push(workload);
    disruptionBudgets.push(
      ManagerDisruptionBudget._create(scope, `Pdb-${role}`, {
        name,
        namespace: ns,
        selectorLabels: workload.selectorLabels,
        replicas: count,
        budget: props.disruptionBudget,
      }),
    );
  }
  const webhookService = new kplus.Service(scope, 'WebhookService', {
    metadata: { name: names.webhookService, namespace: ns },
    type: kplus.ServiceType.CLUSTER_IP,
    ports: [{ name: 'https', port: Ports.webhookService, targetPort: ha.ports.webhook }],
  });
  for (const [key, value] of Object.entries(workloads[0].selectorLabels)) webhookService.selectLabel(key, value);
  const monitoring = ManagerMonitoring._create(scope, 'Monitoring', {
    ...props.monitoring,
    name: names.metricsService,
    namespace: ns,
    metricsPort: ha.ports.metrics,
    selectorLabels: { [names.podLabel.key]: names.podLabel.value },
    deployments: workloads.map((w) => w.deployment.name),
    replicas: Math.min(...workloads.map((w) => w.deployment.replicas ?? ha.replicas)),
    leaseName: input.leaderElection.id,
    webhookNames: input.webhookNames,
  });
  return { workloads, disruptionBudgets, webhookService, monitoring };
}

function checkReplicas(props: ManagerDeploymentProps, topology: ManagerTopology, replicas: number): void {
  checkPositiveInt('replicas', replicas);
  if (replicas < 2 && !props.allowSingleReplica) {
    throw propError(
      'replicas',
      replicas,
      'gives no high availability: admission fails cluster-wide while the only replica restarts',
      'use replicas >= 2, or set allowSingleReplica: true for a throwaway cluster',
    );
  }
  for (const [prop, value] of [
    ['topology.webhookReplicas', topology.webhookReplicas],
    ['topology.controllerReplicas', topology.controllerReplicas],
  ] as const) {
    if (value === undefined) continue;
    checkPositiveInt(prop, value);
    if (value < 2 && !props.allowSingleReplica) {
      throw propError(prop, value, 'gives no high availability', 'use at least 2, or set allowSingleReplica: true');
    }
  }
}

/**
 * Every pod of a Deployment repels the others (hostname anti-affinity), surge pods included,
 * and with host network they also collide on their ports. The roles of the split topology
 * share no port (resolveControllerPorts), so each Deployment needs its own replicas plus its
 * surge in nodes, and the largest of those is the cluster's need. `counts`: the replicas of
 * each manager Deployment (one, or the webhook's and the controllers').
 */
function checkNodes(nodes: number, hostNetwork: boolean, counts: number[], rollout: Rollout): void {
  checkPositiveInt('expectedNodes', nodes);
  const needed = Math.max(...counts.map((n) => n + rollout.surgePods(n)));
  if (nodes < needed) {
    throw propError(
      'expectedNodes',
      nodes,
      `cannot fit a rollout: ${needed} nodes are needed while surge pods run beside the old ones (one manager pod per node${hostNetwork ? ', host ports' : ''})`,
      `reduce the surge (rollout: Rollout.surge(1)), add nodes, or lower the replicas`,
    );
  }
}

/**
 * A NetworkPolicy admitting only the manager's ports (host-network pods bypass most CNIs' policies, so it takes
 * effect with `hostNetwork: false`).
 */
export function renderNetworkPolicy(
  scope: Construct,
  ns: string,
  names: ManagerNames,
  ha: ResolvedHa,
): kplus.NetworkPolicy {
  const resolved = ha.controllerPorts ? [ha.ports, ha.controllerPorts] : [ha.ports];
  const ports = [...new Set(resolved.flatMap((r) => [r.webhook, r.metrics, r.health]))];
  // The API server and Prometheus addresses are unknown to a manifest, and CNIs disagree on
  // whether an ipBlock matches node addresses (host-network API servers), so the manager's
  // ports are open to every source (no `from`) and every other port is denied.
  const policy = new kplus.NetworkPolicy(scope, 'NetworkPolicy', {
    metadata: { name: names.networkPolicy, namespace: ns },
    selector: kplus.Pods.select(scope, 'ManagerPods', {
      labels: { [names.podLabel.key]: names.podLabel.value },
      namespaces: kplus.Namespaces.select(scope, 'Own', { names: [ns] }),
    }),
    ingress: {
      default: kplus.NetworkPolicyTrafficDefault.DENY,
      rules: [
        {
          peer: kplus.NetworkPolicyIpBlock.anyIpv4(scope, 'Any4'),
          ports: ports.map((p) => kplus.NetworkPolicyPort.tcp(p)),
        },
      ],
    },
  });
  ApiObject.of(policy).addJsonPatch(JsonPatch.remove('/spec/ingress/0/from'));
  return policy;
}

/** The user's configuration annotations beside the certificates' (which must not be overridden). */
export function webhookAnnotations(
  user: { readonly [key: string]: string } | undefined,
  certificates: { readonly [key: string]: string } | undefined,
): { [key: string]: string } {
  for (const [key, value] of Object.entries(user ?? {})) {
    if (certificates?.[key] !== undefined && certificates[key] !== value) {
      throw propError(
        `webhooks.annotations.${key}`,
        value,
        `is set by the chosen certificates to "${certificates[key]}"`,
        `remove it, or change certificates`,
      );
    }
  }
  return { ...user, ...certificates };
}
