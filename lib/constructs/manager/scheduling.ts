import { k8s, kplus } from '../core/api.js';
import { propError, checkPositiveInt } from '../core/errors.js';

/** Options for {@link ZoneSpread}. */
export interface ZoneSpreadOptions {
  /**
   * Node label that names the failure domain. Override for on-prem clusters that label racks
   * or rooms instead of cloud zones.
   * @default 'topology.kubernetes.io/zone'
   */
  readonly topologyKey?: string;
  /**
   * Largest allowed difference in replica count between two domains.
   * @default 1
   */
  readonly maxSkew?: number;
}

/** Options for a strict {@link ZoneSpread}. */
export interface RequiredZoneSpreadOptions extends ZoneSpreadOptions {
  /**
   * How many domains the cluster has. Not rendered; checked at synth against `minZones`
   * (a `minZones` above it could never be met).
   * @default - unknown, not checked
   */
  readonly zones?: number;
  /**
   * Rendered as `minDomains`: below this many domains the scheduler treats the global minimum
   * as 0, so each domain holds at most `maxSkew` replicas.
   * @default - not set
   */
  readonly minZones?: number;
}

/**
 * How manager replicas spread over failure domains. Always rendered with
 * `matchLabelKeys: [pod-template-hash]` so a surge rollout spreads the new ReplicaSet on its own.
 */
export class ZoneSpread {
  /** Spread when possible, schedule anyway when not (`ScheduleAnyway`). The default. */
  public static preferred(options: ZoneSpreadOptions = {}): ZoneSpread {
    return new ZoneSpread('ScheduleAnyway', options);
  }

  /** Never schedule a replica that would break the spread (`DoNotSchedule`). */
  public static required(options: RequiredZoneSpreadOptions = {}): ZoneSpread {
    const spread = new ZoneSpread('DoNotSchedule', options, options.minZones);
    if (options.zones !== undefined) checkPositiveInt('zoneSpread.zones', options.zones);
    if (options.minZones !== undefined) checkPositiveInt('zoneSpread.minZones', options.minZones);
    if (options.zones !== undefined && options.minZones !== undefined && options.minZones > options.zones) {
      throw propError(
        'zoneSpread.minZones',
        options.minZones,
        `exceeds zoneSpread.zones (${options.zones}), so the spread can never be met`,
        'lower minZones to at most the number of zones, or correct zones',
      );
    }
    return spread;
  }

  /** No topology spread constraint (single-zone clusters). */
  public static none(): ZoneSpread {
    return new ZoneSpread(undefined, {});
  }

  private readonly topologyKey: string;
  private readonly maxSkew: number;

  private constructor(
    /** `ScheduleAnyway`, `DoNotSchedule`, or undefined for no constraint. */
    private readonly whenUnsatisfiable: string | undefined,
    options: ZoneSpreadOptions,
    /** Rendered as `minDomains`. */
    private readonly minZones?: number,
  ) {
    this.topologyKey = options.topologyKey ?? 'topology.kubernetes.io/zone';
    this.maxSkew = options.maxSkew ?? 1;
    checkPositiveInt('zoneSpread.maxSkew', this.maxSkew);
    if (this.topologyKey.trim() === '') {
      throw propError(
        'zoneSpread.topologyKey',
        this.topologyKey,
        'is empty',
        'name a node label, e.g. "topology.kubernetes.io/zone"',
      );
    }
  }

  /**
   * The pod's topology spread constraints over the pods `selectorLabels` select (none for
   * {@link ZoneSpread.none}). cdk8s-plus does not model them, hence the L1 shape.
   * @internal
   */
  public _toKube(selectorLabels: { readonly [key: string]: string }): k8s.TopologySpreadConstraint[] {
    if (!this.whenUnsatisfiable) return [];
    return [
      {
        maxSkew: this.maxSkew,
        topologyKey: this.topologyKey,
        whenUnsatisfiable: this.whenUnsatisfiable,
        labelSelector: { matchLabels: { ...selectorLabels } },
        matchLabelKeys: ['pod-template-hash'],
        ...(this.minZones !== undefined ? { minDomains: this.minZones } : {}),
      },
    ];
  }
}

/** Options for {@link Rollout.custom}. */
export interface CustomRolloutOptions {
  /** Extra replicas started above the desired count during a rollout, as a percentage. */
  readonly maxSurgePercent?: number;
  /** Extra replicas started above the desired count during a rollout, as a count. */
  readonly maxSurge?: number;
  /**
   * Replicas that may be unavailable during a rollout.
   * @default 0
   */
  readonly maxUnavailable?: number;
}

/**
 * The Deployment's RollingUpdate. The default starts 100% new replicas before removing old
 * ones, so webhook capacity never drops. With host network every replica owns its ports on
 * its node, so a surge of S needs S extra free nodes (see `expectedNodes`).
 */
export class Rollout {
  /** maxSurge 100%, maxUnavailable 0: the upstream default. */
  public static fullSurge(): Rollout {
    return new Rollout({ percent: 100 }, 0);
  }

  /** Start `count` new replicas at a time, never dropping below full capacity (maxUnavailable 0). */
  public static surge(count: number): Rollout {
    checkPositiveInt('rollout.surge', count);
    return new Rollout({ count }, 0);
  }

  /** Start `percent`% new replicas at a time (rounded up), maxUnavailable 0. */
  public static surgePercent(percent: number): Rollout {
    if (!Number.isInteger(percent) || percent < 1 || percent > 100) {
      throw propError(
        'rollout.surgePercent',
        percent,
        'must be a whole percentage from 1 to 100',
        'e.g. Rollout.surgePercent(50)',
      );
    }
    return new Rollout({ percent }, 0);
  }

  /** Any combination; at least one of maxSurge / maxUnavailable must be above 0. */
  public static custom(options: CustomRolloutOptions): Rollout {
    if (options.maxSurge !== undefined && options.maxSurgePercent !== undefined) {
      throw propError('rollout.maxSurge', options, 'sets both maxSurge and maxSurgePercent', 'set only one of them');
    }
    const unavailable = options.maxUnavailable ?? 0;
    checkPositiveInt('rollout.maxUnavailable', unavailable, 0);
    const surge =
      options.maxSurgePercent !== undefined ? { percent: options.maxSurgePercent } : { count: options.maxSurge ?? 0 };
    if (surge.percent !== undefined && (!Number.isInteger(surge.percent) || surge.percent < 0 || surge.percent > 100)) {
      throw propError('rollout.maxSurgePercent', surge.percent, 'must be a whole percentage from 0 to 100', 'e.g. 25');
    }
    if (surge.count !== undefined) checkPositiveInt('rollout.maxSurge', surge.count, 0);
    if ((surge.count ?? surge.percent) === 0 && unavailable === 0) {
      throw propError(
        'rollout',
        { maxSurge: 0, maxUnavailable: 0 },
        'can never make progress: no replica may be added or removed',
        'set maxSurge >= 1 (recommended: keeps webhook capacity) or maxUnavailable >= 1',
      );
    }
    return new Rollout(surge, unavailable);
  }

  private constructor(
    private readonly surgeValue: { readonly percent?: number; readonly count?: number },
    /** Replicas that may be unavailable during the rollout. */
    private readonly maxUnavailable: number,
  ) {}

  /** The Deployment strategy (cdk8s-plus renders the percentage or the count). @internal */
  public _toKube(): kplus.DeploymentStrategy {
    const { percent, count } = this.surgeValue;
    return kplus.DeploymentStrategy.rollingUpdate({
      maxSurge:
        percent !== undefined ? kplus.PercentOrAbsolute.percent(percent) : kplus.PercentOrAbsolute.absolute(count!),
      maxUnavailable: kplus.PercentOrAbsolute.absolute(this.maxUnavailable),
    });
  }

  /** How many extra pods the rollout starts for `replicas` (Kubernetes rounds surge up). */
  public surgePods(replicas: number): number {
    if (this.surgeValue.percent !== undefined) return Math.ceil((replicas * this.surgeValue.percent) / 100);
    return this.surgeValue.count!;
  }
}

/** How the two halves of kruise-manager are deployed. */
export class ManagerTopology {
  /** Webhook and controllers in one Deployment; controllers run in the leader. The default. */
  public static colocated(): ManagerTopology {
    return new ManagerTopology(false);
  }

  /**
   * Two Deployments: the webhook on every replica with no leader election, and the
   * leader-elected controllers, each with its own probes and disruption budget.
   */
  public static split(options: SplitTopologyOptions = {}): ManagerTopology {
    return new ManagerTopology(true, options.webhookReplicas, options.controllerReplicas, options.controllerPorts);
  }

  private constructor(
    /** True when webhook and controllers run in separate Deployments. */
    public readonly isSplit: boolean,
    /** Webhook replicas in split mode. */
    public readonly webhookReplicas?: number,
    /** Controller replicas in split mode. */
    public readonly controllerReplicas?: number,
    /** Ports of the controller pods in split mode. */
    public readonly controllerPorts?: ControllerPorts,
  ) {}
}

/**
 * Ports of the controller pods in split mode. They differ from the webhook pods' ports so that,
 * with host network, one node can hold a pod of each role.
 */
export interface ControllerPorts {
  /**
   * Prometheus metrics port.
   * @default 8081
   */
  readonly metrics?: number;
  /**
   * Health port serving `/readyz` and `/healthz`.
   * @default 8001
   */
  readonly health?: number;
  /**
   * pprof listener, bound only when `pprof` is true.
   * @default 8091
   */
  readonly pprof?: number;
}

/** Options for {@link ManagerTopology.split}. */
export interface SplitTopologyOptions {
  /**
   * Webhook replicas.
   * @default - the `replicas` prop
   */
  readonly webhookReplicas?: number;
  /**
   * Controller replicas (one leads, the others stand by).
   * @default 2
   */
  readonly controllerReplicas?: number;
  /**
   * Ports of the controller pods. With host network they must differ from every port of the
   * webhook pods (`ports`), so that a node holds one pod of each role: 3 webhook and 2 controller
   * replicas start on 3 nodes, not 5.
   * @default - metrics 8081, health 8001, pprof 8091
   */
  readonly controllerPorts?: ControllerPorts;
}
