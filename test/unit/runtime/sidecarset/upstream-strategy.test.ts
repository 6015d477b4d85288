/**
 * Upstream's rollout-decision tables, ported as facts: pkg/controller/sidecarset/sidecarset_strategy_test.go
 * (OpenKruise v1.8.3). Each case names the upstream test and case.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { notUpgradablePods, planUpdates, podState } from '../../../../lib/runtime/sidecarset/rollout.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../../../lib/runtime/sidecarset/types.js';
import { expandScatterTerms } from '../../../../lib/runtime/sidecarset/updatesort.js';
import { factoryPods, factorySidecarSet, shuffled } from './upstream-fixtures.js';

const withStrategy = (strategy: SidecarSetUpdateStrategy, s = factorySidecarSet()): SidecarSet => ({
  ...s,
  spec: { ...s.spec, updateStrategy: strategy },
});
const next = (s: SidecarSet, pods: V1Pod[]) => {
  const states = pods.map((p) => podState(s, p));
  return {
    upgrade: planUpdates(s, states).map((p) => p.metadata!.name!),
    notUpgradable: notUpgradablePods(s, states).length,
  };
};

describe('TestGetNextUpgradePods (sidecarset_strategy_test.go)', () => {
  const selected = () => {
    const pods = factoryPods(1000, 0, 0);
    for (let i = 0; i < 30; i++) pods[i].metadata!.labels!.app = 'test';
    return pods;
  };
  const cases: Array<[string, () => V1Pod[], SidecarSet, number, number]> = [
    [
      'only maxUnavailable(int=10), and pods(count=100, upgraded=30, upgradedAndReady=26)',
      () => factoryPods(100, 30, 26),
      withStrategy({ maxUnavailable: 10 }),
      6,
      0,
    ],
    [
      'only maxUnavailable(string=10%), and pods(count=1000, upgraded=300, upgradedAndReady=260)',
      () => factoryPods(1000, 300, 260),
      withStrategy({ maxUnavailable: '10%' }),
      60,
      0,
    ],
    [
      'only maxUnavailable(string=5%), and pods(count=1000, upgraded=300, upgradedAndReady=250)',
      () => factoryPods(1000, 300, 250),
      withStrategy({ maxUnavailable: '5%' }),
      0,
      0,
    ],
    [
      'only maxUnavailable(int=100), and pods(count=100, upgraded=30, upgradedAndReady=27)',
      () => factoryPods(100, 30, 27),
      withStrategy({ maxUnavailable: 100 }),
      70,
      0,
    ],
    [
      'partition(int=180) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)',
      () => factoryPods(1000, 800, 760),
      withStrategy({ maxUnavailable: 100, partition: 180 }),
      20,
      0,
    ],
    [
      'partition(int=100) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)',
      () => factoryPods(1000, 800, 760),
      withStrategy({ maxUnavailable: 100, partition: 100 }),
      60,
      0,
    ],
    [
      'partition(string=18%) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)',
      () => factoryPods(1000, 800, 760),
      withStrategy({ maxUnavailable: 100, partition: '18%' }),
      20,
      0,
    ],
    [
      'partition(string=10%) maxUnavailable(int=100), and pods(count=1000, upgraded=800, upgradedAndReady=760)',
      () => factoryPods(1000, 800, 760),
      withStrategy({ maxUnavailable: 100, partition: '10%' }),
      60,
      0,
    ],
    [
      'selector(app=test, count=30) maxUnavailable(int=100), and pods(count=1000, upgraded=0, upgradedAndReady=0)',
      selected,
      withStrategy({ maxUnavailable: 100, selector: { matchLabels: { app: 'test' } } }),
      30,
      0,
    ],
    [
      'not upgradable sidecarset, maxUnavailable(int=100), and pods(count=100, upgraded=0, upgradedAndReady=0)',
      () => factoryPods(100, 0, 0),
      withStrategy({ maxUnavailable: 100 }, factorySidecarSet('bbb', 'without-bbb')),
      0,
      100,
    ],
    [
      'only maxUnavailable(5%), and pods(count=5, upgraded=0, upgradedAndReady=0)',
      () => factoryPods(5, 0, 0),
      withStrategy({ maxUnavailable: '5%' }),
      1,
      0,
    ],
    [
      'maxUnavailable(5) partition(99%), and pods(count=5, upgraded=0, upgradedAndReady=0)',
      () => factoryPods(5, 0, 0),
      withStrategy({ maxUnavailable: 5, partition: '99%' }),
      1,
      0,
    ],
    [
      'maxUnavailable(5) partition(1%), and pods(count=5, upgraded=0, upgradedAndReady=0)',
      () => factoryPods(5, 0, 0),
      withStrategy({ maxUnavailable: 5, partition: '1%' }),
      4,
      0,
    ],
  ];
  it.each(cases)('%s', (_name, pods, s, upgrade, notUpgradable) => {
    const got = next(s, shuffled(pods()));
    expect([got.upgrade.length, got.notUpgradable]).toEqual([upgrade, notUpgradable]);
  });
});

describe('TestSortNextUpgradePods (sidecarset_strategy_test.go)', () => {
  const notReady = () => {
    const pods = factoryPods(20, 10, 5);
    for (const i of [10, 13]) pods[i].status!.conditions![0].status = 'False';
    return pods;
  };
  const weighted = () => {
    const pods = factoryPods(20, 10, 2);
    pods[15].metadata!.labels!['test-key'] = 'bar';
    pods[16].metadata!.labels!['test-key'] = 'foo';
    return pods;
  };
  const ordered = () => {
    const pods = factoryPods(20, 10, 2);
    for (const p of pods) p.metadata!.labels!.key1 = '5';
    pods[17].metadata!.labels!.key1 = '10';
    pods[18].metadata!.labels!.key1 = '20';
    return pods;
  };
  const cases: Array<[string, () => V1Pod[], SidecarSet, string[]]> = [
    [
      'sort by pod.CreationTimestamp, maxUnavailable(int=10) and pods(count=20, upgraded=10, upgradedAndReady=5)',
      () => factoryPods(20, 10, 5),
      withStrategy({ maxUnavailable: 10 }),
      ['pod-19', 'pod-18', 'pod-17', 'pod-16', 'pod-15'],
    ],
    [
      'not ready priority, maxUnavailable(int=10) and pods(count=20, upgraded=10, upgradedAndReady=5)',
      notReady,
      withStrategy({ maxUnavailable: 10 }),
      ['pod-13', 'pod-10', 'pod-19', 'pod-18', 'pod-17', 'pod-16', 'pod-15'],
    ],
    [
      'with weight priority strategy, maxUnavailable(int=10) and pods(count=20, upgraded=10, upgradedAndReady=2)',
      weighted,
      withStrategy({
        maxUnavailable: 10,
        priorityStrategy: {
          weightPriority: [
            { weight: 50, matchSelector: { matchLabels: { 'test-key': 'foo' } } },
            { weight: 30, matchSelector: { matchLabels: { 'test-key': 'bar' } } },
          ],
        },
      }),
      ['pod-16', 'pod-15'],
    ],
    [
      'with order priority strategy, maxUnavailable(int=10) and pods(count=20, upgraded=10, upgradedAndReady=2)',
      ordered,
      withStrategy({
        maxUnavailable: 10,
        priorityStrategy: { orderPriority: [{ orderedKey: 'key1' }] },
      }),
      ['pod-18', 'pod-17'],
    ],
  ];
  it.each(cases)('%s', (_name, pods, s, expected) => {
    expect(next(s, shuffled(pods())).upgrade).toEqual(expected);
  });
});

describe('TestParseUpdateScatterTerms (sidecarset_strategy_test.go)', () => {
  const terms = [
    { key: 'key-1', value: 'value-1' },
    { key: 'key-2', value: 'value-2' },
    { key: 'key-3', value: 'value-3' },
  ];
  it('only scatter terms', () => {
    expect(expandScatterTerms(terms, factoryPods(100, 0, 0))).toEqual(terms);
  });
  it('regular and scatter terms', () => {
    const pods = factoryPods(100, 0, 0);
    ['value-4-0', 'value-4-1', 'value-4-2', 'value-4', 'value-4', 'value-4'].forEach((v, i) => {
      pods[i].metadata!.labels!['key-4'] = v;
    });
    expect(expandScatterTerms([...terms, { key: 'key-4', value: '*' }], pods)).toEqual([
      ...terms,
      ...['value-4-0', 'value-4-1', 'value-4-2', 'value-4'].map((value) => ({ key: 'key-4', value })),
    ]);
  });
});
