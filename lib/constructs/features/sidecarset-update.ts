/** How a SidecarSet's running pods follow a change: update strategy, its order and its numbers. */
import { SidecarSetRules, updateOrderProblems, withoutUndefined } from '../../contract.js';
import { k8s } from '../core/api.js';
import { checkSelector, propError } from '../core/errors.js';

/** An int-or-percent value (`3` or `"25%"`), as Kubernetes rollouts use. */
export class IntOrPercent {
  /** A number of pods. */
  public static count(count: number): IntOrPercent {
    if (!Number.isInteger(count) || count < 0) {
      throw propError('IntOrPercent.count', count, 'must be a whole number >= 0', 'use e.g. IntOrPercent.count(1)');
    }
    return new IntOrPercent(count, false);
  }

  /** A percentage (0-100) of the matched pods. */
  public static percent(percent: number): IntOrPercent {
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
      throw propError(
        'IntOrPercent.percent',
        percent,
        'must be a whole percentage from 0 to 100',
        'use e.g. IntOrPercent.percent(25)',
      );
    }
    return new IntOrPercent(percent, true);
  }

  private constructor(
    /** The number, or the percentage when `isPercent`. */
    public readonly value: number,
    /** True for a percentage. */
    public readonly isPercent: boolean,
  ) {}

  /** `"3"` or `"25%"`. */
  public toString(): string {
    return this.isPercent ? `${this.value}%` : String(this.value);
  }

  /** True for `count(0)` and `percent(0)`. */
  public get isZero(): boolean {
    return this.value === 0;
  }

  /** As Kubernetes renders it: a number, or a string like `"25%"`. @internal */
  public _toKube(): unknown {
    return this.isPercent ? `${this.value}%` : this.value;
  }
}

/** Options for {@link SidecarSetUpdateStrategy.rollingUpdate}. */
export interface RollingUpdateOptions {
  /**
   * How many matched pods may be unavailable (not ready, or not yet running the new sidecar
   * image) at once. Percentages count the matched pods and round up (upstream's rounding).
   * @default IntOrPercent.count(1)
   */
  readonly maxUnavailable?: IntOrPercent;
  /**
   * How many matched pods stay on the old sidecar images (a canary: the rest are updated).
   * Percentages count the matched pods and round up; below 100% at least one pod is updated.
   * @default IntOrPercent.count(0)
   */
  readonly partition?: IntOrPercent;
  /**
   * Stop updating pods (injection into new pods goes on). Resume by setting it back to false.
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Update only the matched pods with these labels.
   * @default - every matched pod
   */
  readonly selector?: k8s.LabelSelector;
  /**
   * Which pods go first.
   * @default - not-ready pods first, then newer pods (upstream's order)
   */
  readonly priority?: UpdatePriority;
  /**
   * Spread each batch over these label values (e.g. `{ key: 'zone', value: 'a' }`), so one batch
   * does not take every pod of one zone; `value: '*'` spreads over every value of the key.
   * @default - no spreading
   */
  readonly scatter?: ScatterTerm[];
}

/** One term of {@link UpdatePriority.weighted}. */
export interface WeightedPriorityTerm {
  /** 0 to 100: pods with the highest total weight go first. */
  readonly weight: number;
  /** The pods that get this weight. */
  readonly selector: k8s.LabelSelector;
}

/** One term of {@link RollingUpdateOptions.scatter}: a pod label and value to spread. */
export interface ScatterTerm {
  readonly key: string;
  /** A label value, or `*` for every value of the key. */
  readonly value: string;
}

/** Which pods a rolling update takes first (upstream's `priorityStrategy`). */
export class UpdatePriority {
  /** Pods matching the terms' selectors go first, highest total weight first. */
  public static weighted(terms: WeightedPriorityTerm[]): UpdatePriority {
    const weightPriority = terms.map((t) => ({ weight: t.weight, matchSelector: t.selector }));
    const found = new UpdatePriority({ weightPriority });
    terms.forEach((t, i) => {
      if (t.selector) checkSelector(`updateStrategy.priority.weighted[${i}].selector`, t.selector);
    });
    return found;
  }

  /**
   * Pods carrying the first of `labelKeys` go first, ordered by the number the label value ends
   * with, higher first; then pods with the second key, and so on.
   */
  public static ordered(labelKeys: string[]): UpdatePriority {
    return new UpdatePriority({ orderPriority: labelKeys.map((orderedKey) => ({ orderedKey })) });
  }

  private constructor(
    private readonly strategy: {
      weightPriority?: Array<{ weight: number; matchSelector: k8s.LabelSelector }>;
      orderPriority?: Array<{ orderedKey: string }>;
    },
  ) {
    checkUpdateOrder({ priorityStrategy: strategy }, strategy);
  }

  /** @internal */
  public _toKube(): Record<string, unknown> {
    return withoutUndefined({
      weightPriority: this.strategy.weightPriority?.map((w) => ({
        weight: w.weight,
        matchSelector: k8s.toJson_LabelSelector(w.matchSelector),
      })),
      orderPriority: this.strategy.orderPriority,
    });
  }
}

/**
 * How running pods follow a change of the sidecar images. Only image changes are applied in
 * place; any other change reaches pods when they are recreated.
 */
export class SidecarSetUpdateStrategy {
  /** Update the sidecar images of running pods in place, in batches (upstream's default). */
  public static rollingUpdate(options: RollingUpdateOptions = {}): SidecarSetUpdateStrategy {
    if (options.maxUnavailable?.isZero) {
      throw propError(
        'updateStrategy.maxUnavailable',
        options.maxUnavailable.toString(),
        'would never let a ready pod be updated',
        'use at least IntOrPercent.count(1) (or a percentage above 0); use SidecarSetUpdateStrategy.notUpdate() to leave pods alone',
      );
    }
    if (options.selector) checkSelector('updateStrategy.selector', options.selector);
    checkUpdateOrder({ scatterStrategy: options.scatter }, options.scatter);
    if (options.selector && options.partition && !options.partition.isZero) {
      throw propError(
        'updateStrategy.partition',
        options.partition.toString(),
        SidecarSetRules.partitionWithSelector,
        'drop the partition or the selector',
      );
    }
    return new SidecarSetUpdateStrategy('RollingUpdate', options);
  }

  /** Never update running pods: new images reach only newly created pods. */
  public static notUpdate(): SidecarSetUpdateStrategy {
    return new SidecarSetUpdateStrategy('NotUpdate', {});
  }

  private constructor(
    /** `RollingUpdate` or `NotUpdate`. */
    public readonly type: string,
    private readonly options: RollingUpdateOptions,
  ) {}

  /** @internal */
  public _toKube(): Record<string, unknown> {
    const o = this.options;
    return withoutUndefined({
      type: this.type,
      partition: o.partition?._toKube(),
      maxUnavailable: o.maxUnavailable?._toKube(),
      paused: o.paused,
      selector: o.selector ? k8s.toJson_LabelSelector(o.selector) : undefined,
      priorityStrategy: o.priority?._toKube(),
      scatterStrategy: o.scatter?.map((t) => ({ key: t.key, value: t.value })),
    });
  }
}

/** Upstream's priority and scatter rules (the contract's), as a prop error. */
function checkUpdateOrder(strategy: { priorityStrategy?: unknown; scatterStrategy?: unknown }, value: unknown): void {
  const [first] = updateOrderProblems(strategy);
  if (!first) return;
  throw propError(
    `updateStrategy.${first[0]}`,
    value,
    first[1],
    'use UpdatePriority.weighted() with weights from 0 to 100 and non-empty selectors, or UpdatePriority.ordered() with non-empty label keys; list each scatter key and value once',
  );
}
