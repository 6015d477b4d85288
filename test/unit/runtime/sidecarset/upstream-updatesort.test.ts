/**
 * Upstream's update-order tables, ported as facts: pkg/util/updatesort/priority_sort_test.go (TestCompare, and
 * Test_prioritySort_Sort, new in v1.9.1) and scatter_sort_test.go (TestGenerateRules, TestScatterPodsByRule,
 * TestSort), OpenKruise v1.9.1.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import type { UpdatePriorityStrategy } from '../../../../lib/runtime/sidecarset/types.js';
import {
  prioritySort,
  scatterByTerm,
  scatterSort,
  scatterTerms,
} from '../../../../lib/runtime/sidecarset/updatesort.js';

type Labels = Record<string, string>;
const pod = (labels: Labels | null, i: number): V1Pod | undefined =>
  labels ? { metadata: { namespace: 'default', name: `${i}`, labels } } : undefined;
const A = { labelA: 'AAA' };
const B = { labelB: 'BBB' };
const C = { labelC: 'CCC' };
const AB = { ...A, ...B };

describe('TestCompare (priority_sort_test.go)', () => {
  const weights: UpdatePriorityStrategy = {
    weightPriority: [
      { weight: 20, matchSelector: { matchLabels: { key: 'foo' } } },
      { weight: 10, matchSelector: { matchLabels: { key: 'bar' } } },
    ],
  };
  const orders: UpdatePriorityStrategy = { orderPriority: [{ orderedKey: 'key1' }, { orderedKey: 'key2' }] };
  const cases: Array<[UpdatePriorityStrategy, Labels, Labels, boolean]> = [
    [weights, {}, {}, true],
    [weights, { key: 'foo' }, { key: 'foo' }, true],
    [weights, { key: 'bar' }, { key: 'foo' }, false],
    [weights, {}, { key: 'bar' }, false],
    [weights, {}, { key: 'foo' }, false],
    [
      {
        weightPriority: [
          { weight: 20, matchSelector: { matchLabels: { key1: 'foo' } } },
          { weight: 10, matchSelector: { matchLabels: { key2: 'bar' } } },
          { weight: 15, matchSelector: { matchLabels: { key3: 'baz' } } },
        ],
      },
      { key1: 'foo' },
      { key2: 'bar', key3: 'baz' },
      false,
    ],
    [
      {
        weightPriority: [
          { weight: 20, matchSelector: { matchLabels: { key1: 'foo' } } },
          { weight: 10, matchSelector: { matchLabels: { key2: 'bar' } } },
          { weight: 5, matchSelector: { matchLabels: { key3: 'baz' } } },
        ],
      },
      { key2: 'bar', key3: 'baz' },
      { key1: 'foo' },
      false,
    ],
    [orders, {}, {}, true],
    [orders, { key1: 'o-10' }, { key1: 'o-5' }, true],
    [orders, { key1: 'o-10' }, { key1: 'o-10' }, true],
    [orders, { key1: 'o-10' }, { key1: 'o-20' }, false],
    [orders, { key2: 'o-20' }, { key1: 'o-10' }, false],
    [orders, { key2: 'o-20' }, { key2: 'o-10' }, true],
  ];
  it.each(cases.map((c, i) => [i, ...c] as const))('case #%i', (_i, strategy, podI, podJ, iFirst) => {
    // Upstream's compare(podI, podJ, true): ties keep I first. v1.9.1's Sort keeps a tie in the order it came in,
    // so I is listed first.
    expect(prioritySort(strategy, [pod(podI, 0)!, pod(podJ, 1)!], [0, 1])[0] === 0).toBe(iFirst);
  });
});

describe('Test_prioritySort_Sort (priority_sort_test.go, v1.9.1)', () => {
  const weights: UpdatePriorityStrategy = {
    weightPriority: [
      { weight: 100, matchSelector: { matchLabels: { foo: 'bar' } } },
      { weight: 90, matchSelector: { matchLabels: { hello: 'world' } } },
    ],
  };
  const none: UpdatePriorityStrategy = {
    weightPriority: [
      { weight: 100, matchSelector: { matchLabels: { not: 'match' } } },
      { weight: 90, matchSelector: { matchLabels: { not1: 'match1' } } },
    ],
  };
  const four: Labels[] = [{ hello: 'world' }, {}, { foo: 'bar' }, {}];
  it.each([
    ['empty priority strategy', {}, [{}, {}, {}] as Labels[], [0, 1, 2]],
    ['priority strategy, keep original order if not match any priority rule', weights, four, [2, 0, 1, 3]],
    ['priority strategy, no Pods matched any priority rule, keep original order', none, four, [0, 1, 2, 3]],
  ] as const)('%s', (_d, strategy, labels, expected) => {
    const pods = labels.map((l, i) => pod({ ...l }, i)!);
    expect(
      prioritySort(
        strategy,
        pods,
        pods.map((_, i) => i),
      ),
    ).toEqual(expected);
  });

  it('ties keep the order they came in, whatever the pod list positions (v1.8.3 put the later position first)', () => {
    const pods = ([{ hello: 'world' }, {}, {}, { hello: 'world' }] as Labels[]).map((l, i) => pod(l, i)!);
    expect(prioritySort(weights, pods, [0, 3, 1, 2])).toEqual([0, 3, 1, 2]);
    expect(prioritySort(weights, pods, [2, 3, 1, 0])).toEqual([3, 0, 2, 1]);
  });
});

describe('TestGenerateRules (scatter_sort_test.go)', () => {
  it.each([
    ['one pod one label', [{}, {}, {}, {}, A, A], [{ key: 'labelA', value: 'AAA' }], [{ key: 'labelA', value: 'AAA' }]],
    [
      'same pods a label',
      [{}, {}, { labelB: 'B' }, B, A, A],
      [
        { key: 'labelA', value: 'AAA' },
        { key: 'labelB', value: 'BBB' },
      ],
      [
        { key: 'labelA', value: 'AAA' },
        { key: 'labelB', value: 'BBB' },
      ],
    ],
  ] as const)('%s', (_d, labels, strategy, expected) => {
    const pods = labels.map((l, i) => pod(l, i));
    expect(
      scatterTerms(
        [...strategy],
        pods,
        pods.map((_, i) => i),
      ),
    ).toEqual(expected);
  });
});

describe('TestScatterPodsByRule (scatter_sort_test.go)', () => {
  const cases: Array<[string, string[], number[]]> = [
    ['no label', [''], [0]],
    ['only one scattered pod', ['labelA=AAA'], [0]],
    ['odd scattered pod + odd ordinary pod', ['labelA=AAA', 'bbb'], [0, 1]],
    ['even scattered pods + even ordinary pods', ['', '', '', '', 'labelA=AAA', 'labelA=AAA'], [4, 0, 1, 2, 3, 5]],
    [
      'odd scattered pods + odd ordinary pods',
      ['', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'],
      [3, 0, 1, 4, 2, 5],
    ],
    [
      'even scattered pods + odd ordinary pods',
      ['', '', '', 'labelA=AAA', '', '', 'labelA=AAA'],
      [3, 0, 1, 2, 4, 5, 6],
    ],
    [
      'odd scattered pods + even ordinary pods',
      ['', '', '', '', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'],
      [6, 0, 1, 2, 7, 3, 4, 5, 8],
    ],
    [
      'even scattered pods + even ordinary pods + scattered pods more than ordinary pods',
      ['', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'],
      [2, 3, 0, 4, 1, 5],
    ],
    [
      'odd scattered pods + odd ordinary pods + scattered pods more than ordinary pods',
      ['', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'],
      [3, 0, 1, 4, 2, 5],
    ],
    [
      'even scattered pods + odd ordinary pods + scattered pods more than ordinary pods',
      ['', '', 'labelA=AAA', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'],
      [2, 4, 0, 5, 6, 1, 7, 3, 8],
    ],
    [
      'odd scattered pods + even ordinary pods + scattered pods more than ordinary pods',
      ['', 'labelA=AAA', '', 'labelA=AAA', '', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA'],
      [1, 0, 3, 2, 6, 4, 7, 5, 8],
    ],
    [
      'invalid label',
      ['', '', '', '', 'ee', 'a', '', 'labelA=AAA', 'labelA=AAA', 'labelA=AAA,labelB=BBB'],
      [7, 0, 1, 2, 3, 8, 4, 5, 6, 9],
    ],
  ];
  it.each(cases)('%s', (_d, labels, expected) => {
    // As upstream's test: as many pods as expected indexes, labels parsed from `k=v,k=v`.
    const pods = expected.map((_, i) =>
      pod(
        Object.fromEntries(
          labels[i]
            .split(',')
            .map((kv) => kv.split('='))
            .filter((kv) => kv.length === 2),
        ),
        i,
      ),
    );
    expect(
      scatterByTerm(
        { key: 'labelA', value: 'AAA' },
        pods,
        pods.map((_, i) => i),
      ),
    ).toEqual(expected);
  });
});

describe('TestSort (scatter_sort_test.go)', () => {
  const tA = { key: 'labelA', value: 'AAA' };
  const tB = { key: 'labelB', value: 'BBB' };
  const tC = { key: 'labelC', value: 'CCC' };
  const e = { sdfb: 'eee' };
  const same = { dsf: 'same' };
  const cases: Array<[string, Array<Labels | null>, Array<{ key: string; value: string }>, number[]]> = [
    ['a scattered pod + a ordinary pod', [{ ...A, ...B }], [tA], [0]],
    ['all ordinary pods', [{}, {}, {}, {}, {}, {}], [], [0, 1, 2, 3, 4, 5]],
    ['one pod one label', [{}, {}, {}, {}, A, A], [tA], [4, 0, 1, 2, 3, 5]],
    ['one pod more labels', [{}, {}, {}, {}, e, same, B, A, A, AB], [tB], [6, 0, 1, 2, 3, 4, 5, 7, 8, 9]],
    ['2 dimensions + one pod one label', [B, B, {}, {}, A, A], [tA, tB], [0, 4, 2, 3, 5, 1]],
    ['2 dimensions + one pod more labels', [{}, {}, {}, B, AB, A], [tA, tB], [4, 0, 1, 2, 5, 3]],
    [
      '2 dimensions + same label + sequence: A + B',
      [{}, {}, {}, {}, e, same, B, A, A, B],
      [tB, tA],
      [7, 6, 0, 1, 2, 3, 4, 5, 9, 8],
    ],
    [
      '2 dimensions + same label + sequence: B + A',
      [{}, {}, {}, {}, e, same, B, A, A, B],
      [tA, tB],
      [6, 7, 0, 1, 2, 3, 4, 5, 8, 9],
    ],
    [
      '2 dimensions + same pod same label + even scatter pods + even ordinary pods',
      [{}, {}, {}, {}, e, same, AB, {}, {}, AB],
      [tA, tB],
      [6, 0, 1, 2, 3, 4, 5, 7, 8, 9],
    ],
    [
      '2 dimensions + same pod same label + even scatter pods + odd ordinary pods',
      [{}, {}, {}, e, same, AB, {}, {}, AB],
      [tA, tB],
      [5, 0, 1, 2, 3, 4, 6, 7, 8],
    ],
    [
      '2 dimensions + same pod same label + odd scatter pods + odd ordinary pods (1)',
      [{}, {}, {}, A, e, same, AB, {}, {}, {}],
      [tA, tB],
      [3, 0, 1, 2, 4, 5, 7, 6],
    ],
    [
      '2 dimensions + same pod same label + odd scatter pods + odd ordinary pods (2)',
      [{}, {}, {}, A, {}, {}, e, same, AB, {}, {}, AB],
      [tA, tB],
      [0, 1, 2, 4, 3, 5, 6, 7, 9, 10, 8],
    ],
    [
      '2 dimensions + same pod same label + even scatter pods + even ordinary pods + scatter pods more than ordinary pods',
      [{}, {}, {}, A, { ...e, ...A }, same, AB, {}, {}, AB],
      [tA, tB],
      [6, 3, 0, 1, 4, 2, 5, 7, 8, 9],
    ],
    [
      '2 dimensions + same pod same label + even scatter pods + odd ordinary pods + scatter pods more than ordinary pods',
      [{}, A, A, e, same, AB, {}, {}, AB],
      [tA, tB],
      [5, 1, 0, 3, 2, 4, 6, 7, 8],
    ],
    [
      '2 dimensions + same pod same label + odd scatter pods + odd ordinary pods + scatter pods more than ordinary pods (1)',
      [A, {}, {}, A, { ...e, ...A }, same, AB, {}, {}, AB],
      [tA, tB],
      [1, 0, 2, 3, 5, 4, 7, 6],
    ],
    [
      '2 dimensions + same pod same label + odd scatter pods + odd ordinary pods + scatter pods more than ordinary pods (2)',
      [{}, {}, A, A, {}, A, e, same, AB, {}, {}, AB],
      [tA, tB],
      [0, 2, 1, 4, 3, 6, 7, 5, 9, 10, 8],
    ],
    ['3 dimensions + one pod one label', [{}, A, A, B, B, C, C, C, C, C], [tA, tB, tC], [3, 1, 5, 0, 6, 7, 8, 9, 2, 4]],
    [
      '3 dimensions + one pod more label',
      [{}, A, { ...A, ...C }, { ...B, ...C }, B, {}, {}, C, C, C],
      [tA, tB, tC],
      [3, 2, 0, 7, 8, 5, 6, 9, 1, 4],
    ],
    ['continuous sort 1', [{}, {}, {}, {}, A, A, A], [tA], [0, 1, 4, 2, 3, 5]],
    ['continuous sort 2', [A, A, {}, {}, {}, {}, {}, {}, {}, A], [tA], [2, 0, 3, 4, 5, 6, 1]],
    [
      'reserveOrdinals nil in slice',
      [{}, A, { ...A, ...C }, { ...B, ...C }, B, null, {}, {}, C, C, C],
      [tA, tB, tC],
      [3, 2, 0, 8, 9, 6, 7, 10, 1, 4],
    ],
  ];
  it.each(cases)('%s', (_d, labels, strategy, expected) => {
    // As upstream's test: the first expected.length (+ absent) pods are the ones to sort; the rest only count.
    const pods = labels.map((l, i) => pod(l, i));
    const absent = labels
      .slice(0, expected.length + labels.filter((l) => l === null).length)
      .filter((l) => l === null).length;
    const indexes = pods.slice(0, expected.length + absent).flatMap((p, i) => (p ? [i] : []));
    expect(scatterSort(strategy, pods, indexes)).toEqual(expected);
  });
});
