import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { DisruptionBudget, ManagerDisruptionBudget } from '../../../lib/index.js';

function synth(replicas: number, budget?: DisruptionBudget) {
  const chart = new Chart(Testing.app(), 'test');
  ManagerDisruptionBudget._create(chart, 'p', {
    name: 'mgr',
    namespace: 'ns',
    selectorLabels: { app: 'm' },
    replicas,
    budget,
  });
  return Testing.synth(chart);
}

describe('ManagerDisruptionBudget', () => {
  it('defaults to maxUnavailable 1 with AlwaysAllow for unhealthy pods', () => {
    expect(synth(2)).toEqual([
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'mgr', namespace: 'ns' },
        spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'm' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
      },
    ]);
  });

  it('accepts minAvailable below the replica count', () => {
    expect(synth(3, DisruptionBudget.minAvailable(2))[0].spec.minAvailable).toBe(2);
  });

  it('rejects budgets that block node drains', () => {
    expect(() => synth(2, DisruptionBudget.maxUnavailable(0))).toThrow(
      /allows no eviction.*Fix: use DisruptionBudget.maxUnavailable\(1\)/,
    );
    expect(() => synth(3, DisruptionBudget.minAvailable(3))).toThrow(
      /is not below replicas \(3\).*minAvailable of at most 2/,
    );
    expect(() => DisruptionBudget.maxUnavailable(-1)).toThrow(
      /disruptionBudget.maxUnavailable: must be a whole number/,
    );
  });
});
