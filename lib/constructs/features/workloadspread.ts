import { ApiObject, ApiObjectMetadata, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import {
  KRUISE_APPS_GROUP,
  withoutUndefined,
  workloadSpreadConflict,
  workloadSpreadSpecProblems,
  WORKLOADSPREAD_TARGETS,
} from '../../contract.js';
import { k8s } from '../core/api.js';
import { checkDnsLabel, checkDnsSubdomain, propError } from '../core/errors.js';
import { kruiseAppsObject, peersInApp } from '../core/app-peers.js';
import { IntOrPercent } from './sidecarset-update.js';
import { checkCustomWorkload } from './workloadspread-custom.js';

/** A kind between a custom workload and its pods (the owner of its pods), for {@link WorkloadSpreadCustomWorkload}. */
export interface WorkloadSpreadCustomWorkloadOwner {
  /** Its group and version, e.g. `game.kruise.io/v1alpha1` (a custom resource: a group is required). */
  readonly apiVersion: string;
  /** Its kind, e.g. `GameServer`. */
  readonly kind: string;
  /** Its resource name (plural), e.g. `gameservers`: what the manager is allowed to read. */
  readonly plural: string;
}

/**
 * A custom workload kind WorkloadSpread may target (upstream's
 * `WorkloadSpread_Watch_Custom_Workload_WhiteList` in ConfigMap kruise-configuration): listed in
 * {@link KruiseManagerProps.workloadSpreadCustomWorkloads}, which renders the whitelist and the
 * manager's read access, and targeted with {@link WorkloadSpreadTarget.custom}.
 */
export interface WorkloadSpreadCustomWorkload extends WorkloadSpreadCustomWorkloadOwner {
  /**
   * Where its objects keep their replicas (dot-separated, e.g. `spec.replicas`): percentages of
   * maxReplicas are of this number.
   * @default - none: the replicas of its scale subresource (the manager's controller), 0 (its webhook)
   */
  readonly replicasPath?: string;
  /**
   * Kinds between it and its pods (pods owned by one of these, itself owned by the workload, are
   * its pods).
   * @default - none: its pods are owned by it
   */
  readonly subResources?: WorkloadSpreadCustomWorkloadOwner[];
}

/** The workload a {@link WorkloadSpread} spreads (upstream supports these kinds). */
export class WorkloadSpreadTarget {
  public static deployment(name: string): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget('apps/v1', 'Deployment', name);
  }
  public static replicaSet(name: string): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget('apps/v1', 'ReplicaSet', name);
  }
  public static job(name: string): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget('batch/v1', 'Job', name);
  }
  public static statefulSet(name: string): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget('apps/v1', 'StatefulSet', name);
  }
  /** An OpenKruise CloneSet (its CRD must be installed; the runtime flavour does not serve CloneSets). */
  public static cloneSet(name: string): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget(`${KRUISE_APPS_GROUP}/v1alpha1`, 'CloneSet', name);
  }
  /** An OpenKruise Advanced StatefulSet (its CRD must be installed; the runtime flavour does not serve it). */
  public static advancedStatefulSet(name: string): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget(`${KRUISE_APPS_GROUP}/v1beta1`, 'StatefulSet', name);
  }
  /** The workload of this chart that `resource` renders (its apiVersion, kind and name). */
  public static of(resource: ApiObject): WorkloadSpreadTarget {
    return new WorkloadSpreadTarget(resource.apiVersion, resource.kind, resource.name);
  }
  /**
   * A workload of a custom kind: list the same `workload` in the manager's
   * {@link KruiseManagerProps.workloadSpreadCustomWorkloads} (the manager refuses a kind its
   * whitelist does not name).
   */
  public static custom(workload: WorkloadSpreadCustomWorkload, name: string): WorkloadSpreadTarget {
    checkCustomWorkload('target', workload);
    return new WorkloadSpreadTarget(workload.apiVersion, workload.kind, name, workload);
  }

  private constructor(
    public readonly apiVersion: string,
    public readonly kind: string,
    public readonly name: string,
    /** The custom kind's whitelist entry, for a custom target. */
    public readonly customWorkload?: WorkloadSpreadCustomWorkload,
  ) {
    if (!WORKLOADSPREAD_TARGETS[kind] && !customWorkload)
      throw propError(
        'target',
        `${apiVersion}/${kind}`,
        'is not a kind WorkloadSpread spreads',
        `target a ${Object.keys(WORKLOADSPREAD_TARGETS).join(', ')}, or a custom kind with WorkloadSpreadTarget.custom()`,
      );
  }
}

/** One subset: where its pods go, how many, and what they get. */
export interface WorkloadSpreadSubset {
  /** Unique within the WorkloadSpread; recorded on each pod it places. */
  readonly name: string;
  /**
   * The nodes of this subset, added to each pod's required node affinity.
   * @default - any node
   */
  readonly requiredNodeSelectorTerm?: k8s.NodeSelectorTerm;
  /**
   * Nodes this subset prefers, added to each pod's preferred node affinity.
   * @default - none
   */
  readonly preferredNodeSelectorTerms?: k8s.PreferredSchedulingTerm[];
  /**
   * Tolerations added to each pod (for example of a tainted node pool).
   * @default - none
   */
  readonly tolerations?: k8s.Toleration[];
  /**
   * At most this many pods: IntOrPercent.count(n), or IntOrPercent.percent(p) of the workload's
   * replicas (rounded up); all subsets' limits are of one kind.
   * @default - no limit (typically the last subset, which takes the rest)
   */
  readonly maxReplicas?: IntOrPercent;
  /**
   * A strategic merge patch applied to each pod of the subset, e.g.
   * `{ metadata: { labels: { zone: 'a' } } }` or a container's env by name.
   * @default - none
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly patch?: { [key: string]: any };
}

/** Options of {@link WorkloadSpreadScheduleStrategy.adaptive}. */
export interface AdaptiveScheduleOptions {
  /**
   * How long a pod may stay unschedulable in its subset before it is recreated in the next one
   * (whole seconds; at most 295 s over the subsets before the last).
   * @default - pods are never rescheduled (as with fixed())
   */
  readonly rescheduleCritical?: Duration;
}

/** How pods go to subsets. */
export class WorkloadSpreadScheduleStrategy {
  /** Subsets in order; a pod that cannot be scheduled in its subset stays pending (upstream's default). */
  public static fixed(): WorkloadSpreadScheduleStrategy {
    return new WorkloadSpreadScheduleStrategy({ type: 'Fixed' });
  }
  /**
   * A pod still unschedulable after `rescheduleCritical` is deleted and recreated in the next subset,
   * and its subset skipped for 5 minutes. The last subset must have no maxReplicas.
   */
  public static adaptive(options: AdaptiveScheduleOptions = {}): WorkloadSpreadScheduleStrategy {
    const ms = options.rescheduleCritical?.toMilliseconds();
    if (ms !== undefined && (!Number.isInteger(ms / 1000) || ms < 0))
      throw propError(
        'scheduleStrategy.rescheduleCritical',
        `${ms}ms`,
        'must be a whole number of seconds >= 0',
        'use Duration.seconds(n)',
      );
    return new WorkloadSpreadScheduleStrategy({
      type: 'Adaptive',
      adaptive: withoutUndefined({ rescheduleCriticalSeconds: ms === undefined ? undefined : ms / 1000 }),
    });
  }

  private constructor(private readonly value: Record<string, unknown>) {}

  /** @internal */
  public _toKube(): Record<string, unknown> {
    return this.value;
  }
}

/** Props of {@link WorkloadSpread}. */
export interface WorkloadSpreadProps {
  /**
   * Metadata; the namespace must be the workload's.
   * @default - a name generated by the chart, the chart's namespace
   */
  readonly metadata?: ApiObjectMetadata;
  /** The workload whose pods are spread. One WorkloadSpread per workload. */
  readonly target: WorkloadSpreadTarget;
  /** The subsets, in the order pods fill them. */
  readonly subsets: WorkloadSpreadSubset[];
  /** @default WorkloadSpreadScheduleStrategy.fixed() */
  readonly scheduleStrategy?: WorkloadSpreadScheduleStrategy;
  /**
   * Only the workload's pods with these labels are spread.
   * @default - every pod of the workload
   */
  readonly targetSelector?: k8s.LabelSelector;
  /**
   * Where the replicas of the selected pods are read from (dot paths summed, e.g. `spec.replicas`),
   * when `targetSelector` selects a part of the workload.
   * @default - the workload's replicas
   */
  readonly targetReplicasPaths?: string[];
}

/**
 * An OpenKruise WorkloadSpread (apps.kruise.io/v1alpha1): spreads a workload's pods over subsets of
 * nodes (zones, node pools) with per-subset limits and patches, and sets pod deletion costs so a
 * scale-in removes pods from the right subsets. Served by both flavours. Checked at synth by the
 * rules the manager's webhook applies (lib/contract/workloadspread.ts), so what synthesizes is
 * admitted; the patch is checked against the workload's pod template by the manager, at apply.
 */
export class WorkloadSpread extends Construct {
  public readonly apiObject: ApiObject;
  /** @internal */
  public readonly _spec: Record<string, unknown>;

  constructor(scope: Construct, id: string, props: WorkloadSpreadProps) {
    super(scope, id);
    if (props.metadata?.name !== undefined) checkDnsSubdomain('metadata.name', props.metadata.name);
    if (props.metadata?.namespace !== undefined) checkDnsLabel('metadata.namespace', props.metadata.namespace);
    const spec = withoutUndefined({
      targetRef: { apiVersion: props.target.apiVersion, kind: props.target.kind, name: props.target.name },
      subsets: (props.subsets ?? []).map((s) =>
        withoutUndefined({
          name: s.name,
          requiredNodeSelectorTerm: s.requiredNodeSelectorTerm
            ? k8s.toJson_NodeSelectorTerm(s.requiredNodeSelectorTerm)
            : undefined,
          preferredNodeSelectorTerms: s.preferredNodeSelectorTerms?.map((t) => k8s.toJson_PreferredSchedulingTerm(t)),
          tolerations: s.tolerations?.map((t) => k8s.toJson_Toleration(t)),
          maxReplicas: s.maxReplicas
            ? s.maxReplicas.isPercent
              ? `${s.maxReplicas.value}%`
              : s.maxReplicas.value
            : undefined,
          patch: s.patch,
        }),
      ),
      scheduleStrategy: props.scheduleStrategy?._toKube(),
      targetFilter:
        props.targetSelector || props.targetReplicasPaths
          ? withoutUndefined({
              selector: props.targetSelector ? k8s.toJson_LabelSelector(props.targetSelector) : undefined,
              replicasPathList: props.targetReplicasPaths,
            })
          : undefined,
    });
    const custom = props.target.customWorkload;
    const [problem] = workloadSpreadSpecProblems(
      spec,
      custom ? [{ group: custom.apiVersion.split('/')[0], kind: custom.kind }] : [],
    );
    if (problem) {
      const [field, message] = problem;
      throw propError(field.replace(/^spec\./, ''), valueAt(spec, field), message, fixFor(field));
    }
    if (props.subsets.some((s) => s.patch !== undefined && (typeof s.patch !== 'object' || s.patch === null)))
      throw propError(
        'subsets[].patch',
        'not an object',
        'must be an object',
        'e.g. { metadata: { labels: { zone: "a" } } }',
      );
    this._spec = spec;
    this.apiObject = kruiseAppsObject(this, 'WorkloadSpread', props.metadata, spec, () => this.conflicts());
  }

  public get name(): string {
    return this.apiObject.name;
  }

  /** Another WorkloadSpread of this app in the same namespace on the same workload: the manager refuses the second. */
  private conflicts(): string[] {
    const namespace = this.apiObject.metadata.namespace;
    const others = peersInApp<WorkloadSpread>(this, WorkloadSpread)
      .filter((c) => c.apiObject.metadata.namespace === namespace)
      .map((c) => ({ name: c.node.path, targetRef: c._spec.targetRef }));
    const other = workloadSpreadConflict({ name: this.node.path, targetRef: this._spec.targetRef }, others);
    return other
      ? [
          `target: WorkloadSpread ${this.node.path} and ${other} spread the same workload; the manager refuses the second. ` +
            'Fix: one WorkloadSpread per workload (put all subsets in one)',
        ]
      : [];
  }
}

function valueAt(spec: Record<string, unknown>, field: string): unknown {
  let v: unknown = { spec };
  for (const part of field.split(/\.|\[(\d+)\]/).filter(Boolean)) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function fixFor(field: string): string {
  if (field.includes('maxReplicas'))
    return 'give every limited subset the same kind of limit (IntOrPercent.count or IntOrPercent.percent), percentages adding up to 100 unless the last subset has none';
  if (field.includes('scheduleStrategy'))
    return 'leave the last subset without maxReplicas under WorkloadSpreadScheduleStrategy.adaptive(), and keep rescheduleCritical within the limit';
  if (field.includes('name')) return 'give every subset its own non-empty name';
  if (field.includes('tolerations'))
    return 'use a valid key, operator Equal or Exists, and effect NoSchedule, PreferNoSchedule or NoExecute';
  if (field.includes('NodeSelector'))
    return 'use a valid label key, an operator In, NotIn, Exists, DoesNotExist, Gt or Lt, and values as it needs';
  if (field.includes('targetRef')) return 'use a WorkloadSpreadTarget factory';
  if (field === 'spec.subsets') return 'add at least one subset';
  return 'see the message';
}
