import { Construct } from 'constructs';
import { k8s } from '../core/api.js';
import { propError } from '../core/errors.js';

/** How many manager replicas a voluntary disruption (drain, eviction) may take at once. */
export class DisruptionBudget {
  /** At most `count` replicas down at once. `maxUnavailable(1)` is the default. */
  public static maxUnavailable(count: number): DisruptionBudget {
    if (!Number.isInteger(count) || count < 0) {
      throw propError(
        'disruptionBudget.maxUnavailable',
        count,
        'must be a whole number',
        'use DisruptionBudget.maxUnavailable(1)',
      );
    }
    return new DisruptionBudget(count, undefined);
  }

  /** At least `count` replicas up. Follows replica changes less well than maxUnavailable. */
  public static minAvailable(count: number): DisruptionBudget {
    if (!Number.isInteger(count) || count < 0) {
      throw propError(
        'disruptionBudget.minAvailable',
        count,
        'must be a whole number',
        'prefer DisruptionBudget.maxUnavailable(1)',
      );
    }
    return new DisruptionBudget(undefined, count);
  }

  /** No PodDisruptionBudget. */
  public static none(): DisruptionBudget {
    return new DisruptionBudget(undefined, undefined, true);
  }

  private constructor(
    public readonly maxUnavailableCount: number | undefined,
    public readonly minAvailableCount: number | undefined,
    public readonly disabled = false,
  ) {}

  /** Throws when the budget could never allow an eviction, so node drains would hang forever. */
  public checkDrainable(replicas: number): void {
    if (this.maxUnavailableCount === 0) {
      throw propError(
        'disruptionBudget',
        'maxUnavailable: 0',
        'allows no eviction, so draining any node that runs a replica blocks forever',
        'use DisruptionBudget.maxUnavailable(1)',
      );
    }
    if (this.minAvailableCount !== undefined && this.minAvailableCount >= replicas) {
      throw propError(
        'disruptionBudget',
        `minAvailable: ${this.minAvailableCount}`,
        `is not below replicas (${replicas}), so no eviction is ever allowed and node drains block forever`,
        `use DisruptionBudget.maxUnavailable(1) or minAvailable of at most ${replicas - 1}`,
      );
    }
  }
}

/** Props of {@link ManagerDisruptionBudget}. */
export interface ManagerDisruptionBudgetProps {
  readonly name: string;
  readonly namespace: string;
  readonly selectorLabels: { [key: string]: string };
  readonly replicas: number;
  /** @default DisruptionBudget.maxUnavailable(1) */
  readonly budget?: DisruptionBudget;
}

/**
 * A PodDisruptionBudget with `unhealthyPodEvictionPolicy: AlwaysAllow`, so a crash-looping
 * replica never blocks a drain. It limits evictions only; the Deployment's own surge rollout
 * is governed by its strategy.
 */
export class ManagerDisruptionBudget extends Construct {
  public readonly pdb: k8s.KubePodDisruptionBudget;

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: ManagerDisruptionBudgetProps): ManagerDisruptionBudget {
    return new ManagerDisruptionBudget(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: ManagerDisruptionBudgetProps) {
    super(scope, id);
    const budget = props.budget ?? DisruptionBudget.maxUnavailable(1);
    budget.checkDrainable(props.replicas);
    this.pdb = new k8s.KubePodDisruptionBudget(this, 'Resource', {
      metadata: { name: props.name, namespace: props.namespace },
      spec: {
        ...(budget.minAvailableCount !== undefined
          ? { minAvailable: k8s.IntOrString.fromNumber(budget.minAvailableCount) }
          : { maxUnavailable: k8s.IntOrString.fromNumber(budget.maxUnavailableCount ?? 1) }),
        selector: { matchLabels: props.selectorLabels },
        unhealthyPodEvictionPolicy: 'AlwaysAllow',
      },
    });
  }
}
