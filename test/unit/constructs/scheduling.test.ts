import { describe, expect, it } from '@jest/globals';
import { ManagerTopology, Rollout, ZoneSpread } from '../../../lib/index.js';

const POD = { app: 'm' };

describe('ZoneSpread', () => {
  it('defaults to a soft spread over zones with skew 1, per revision', () => {
    expect(ZoneSpread.preferred()._toKube(POD)).toEqual([
      {
        maxSkew: 1,
        topologyKey: 'topology.kubernetes.io/zone',
        whenUnsatisfiable: 'ScheduleAnyway',
        labelSelector: { matchLabels: POD },
        matchLabelKeys: ['pod-template-hash'],
      },
    ]);
  });

  it('is strict with required(), takes an on-prem topology key and renders minZones as minDomains', () => {
    expect(
      ZoneSpread.required({ topologyKey: 'example.com/rack', zones: 3, minZones: 2, maxSkew: 2 })._toKube(POD),
    ).toEqual([
      expect.objectContaining({
        topologyKey: 'example.com/rack',
        whenUnsatisfiable: 'DoNotSchedule',
        minDomains: 2,
        maxSkew: 2,
      }),
    ]);
    expect(ZoneSpread.required()._toKube(POD)[0]).not.toHaveProperty('minDomains');
  });

  it('renders no constraint with none()', () => {
    expect(ZoneSpread.none()._toKube(POD)).toEqual([]);
  });

  it('rejects impossible numbers, naming the prop and the fix', () => {
    expect(() => ZoneSpread.required({ zones: 2, minZones: 3 })).toThrow(
      /zoneSpread.minZones: exceeds zoneSpread.zones \(2\).*got 3.*Fix: lower minZones/,
    );
    expect(() => ZoneSpread.preferred({ maxSkew: 0 })).toThrow(/zoneSpread.maxSkew: must be an integer >= 1 \(got 0\)/);
    expect(() => ZoneSpread.required({ zones: 0 })).toThrow(/zoneSpread.zones/);
    expect(() => ZoneSpread.preferred({ topologyKey: ' ' })).toThrow(/zoneSpread.topologyKey: is empty/);
  });
});

describe('Rollout', () => {
  const rollingUpdate = (rollout: Rollout) => rollout._toKube()._toKube().rollingUpdate;

  it('defaults to a full surge that never lowers capacity', () => {
    const rollout = Rollout.fullSurge();
    expect(rollingUpdate(rollout)).toEqual({ maxSurge: { value: '100%' }, maxUnavailable: { value: 0 } });
    expect(rollout.surgePods(3)).toBe(3);
  });

  it('computes surge pods like Kubernetes (percentages round up) and renders counts as numbers', () => {
    expect(Rollout.surgePercent(50).surgePods(3)).toBe(2);
    expect(Rollout.surge(1).surgePods(5)).toBe(1);
    expect(rollingUpdate(Rollout.surge(1))).toEqual({ maxSurge: { value: 1 }, maxUnavailable: { value: 0 } });
  });

  it('rejects a rollout that can never progress', () => {
    expect(() => Rollout.custom({ maxSurge: 0, maxUnavailable: 0 })).toThrow(
      /rollout: can never make progress.*Fix: set maxSurge >= 1/,
    );
    expect(() => Rollout.custom({ maxSurgePercent: 0 })).toThrow(/can never make progress/);
    expect(rollingUpdate(Rollout.custom({ maxSurge: 0, maxUnavailable: 1 }))).toEqual({
      maxSurge: { value: 0 },
      maxUnavailable: { value: 1 },
    });
  });

  it('rejects malformed numbers', () => {
    expect(() => Rollout.surge(0)).toThrow(/rollout.surge: must be an integer >= 1 \(got 0\)/);
    expect(() => Rollout.surgePercent(150)).toThrow(/rollout.surgePercent.*got 150/);
    expect(() => Rollout.custom({ maxSurge: 1, maxSurgePercent: 10 })).toThrow(
      /sets both maxSurge and maxSurgePercent/,
    );
    expect(() => Rollout.custom({ maxSurge: 1, maxUnavailable: -1 })).toThrow(/rollout.maxUnavailable/);
  });
});

describe('ManagerTopology', () => {
  it('is colocated by default and split on request', () => {
    expect(ManagerTopology.colocated().isSplit).toBe(false);
    const split = ManagerTopology.split({ webhookReplicas: 3, controllerReplicas: 2 });
    expect([split.isSplit, split.webhookReplicas, split.controllerReplicas]).toEqual([true, 3, 2]);
  });
});
