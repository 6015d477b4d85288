/**
 * Upstream OpenKruise v1.9.1's SidecarSet validating and defaulting webhook tests, ported as facts:
 * pkg/webhook/sidecarset/validating/sidecarset_validating_test.go and
 * pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go. Upstream counts field errors; this
 * runtime words them differently, so a case asserts rejection and the field named, or acceptance.
 * Out of this runtime's subset, with the reason:
 * - TestValidateSidecarSet "wrong-updateStrategy": updateStrategy.scatterStrategy is refused by name.
 * - sidecarset_hotupgrade_test.go TestSidecarSetUpdateConflict turns a container HotUpgrade, which is
 *   refused by name; its rule (upgradeType immutable on update) is ported below all the same.
 */
import { describe, expect, it } from '@jest/globals';
import { upstreamSelectorsOverlap } from '../../../../lib/contract.js';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import type { SidecarContainer, SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { findConflicts, validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';

/** The container most TestValidateSidecarSet cases carry (already defaulted, as upstream writes it). */
const testSidecar = (extra: Partial<SidecarContainer> = {}): SidecarContainer => ({
  name: 'test-sidecar',
  image: 'test-image',
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePolicy: 'File',
  podInjectPolicy: 'BeforeAppContainer',
  shareVolumePolicy: { type: 'disabled' },
  upgradeStrategy: { upgradeType: 'ColdUpgrade' },
  ...extra,
});
const set = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
  metadata: { name: 'test-sidecarset' },
  spec: { selector: { matchLabels: { a: 'b' } }, ...spec },
});
const notIn = (...values: string[]) => ({
  matchLabels: { a: 'b' },
  matchExpressions: [{ key: 'app-name', operator: 'NotIn' as const, values }],
});

describe('TestValidateSidecarSet', () => {
  it.each<[string, SidecarSet, string]>([
    [
      'missing-selector',
      {
        metadata: { name: 'test-sidecarset' },
        spec: { updateStrategy: { type: 'NotUpdate' }, containers: [testSidecar()] },
      },
      'spec.selector',
    ],
    [
      'wrong-selector',
      set({
        selector: notIn('app-group', 'app-risk-'),
        containers: [testSidecar({ shareVolumePolicy: { type: 'enabled' } })],
      }),
      'spec.selector',
    ],
    [
      'wrong-namespaceSelector',
      set({
        selector: notIn('app-group', 'app-risk'),
        namespaceSelector: notIn('app-group', 'app-risk-'),
        containers: [testSidecar({ shareVolumePolicy: { type: 'enabled' } })],
      }),
      'spec.namespaceSelector',
    ],
    [
      'wrong-volumeDevice-volumes',
      set({
        updateStrategy: { type: 'NotUpdate' },
        containers: [testSidecar({ volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme1' }] })],
      }),
      'spec.containers[0].volumeDevices',
    ],
    [
      'volumeDevice-volumeMount-path-conflict',
      set({
        updateStrategy: { type: 'NotUpdate' },
        containers: [
          testSidecar({
            volumeDevices: [{ name: 'disk0', devicePath: '/home/admin/log' }],
            volumeMounts: [{ name: 'log', mountPath: '/home/admin/log' }],
          }),
        ],
        volumes: [
          { name: 'disk0', persistentVolumeClaim: { claimName: 'pvc-0' } },
          { name: 'log', emptyDir: {} },
        ],
      }),
      'spec.containers[0].volume',
    ],
    [
      'wrong-initContainer',
      set({
        updateStrategy: { type: 'NotUpdate' },
        initContainers: [{ name: 'test-sidecar', imagePullPolicy: 'IfNotPresent', terminationMessagePolicy: 'File' }],
      }),
      'spec.initContainers[0].image',
    ],
    ['missing-container', set({ updateStrategy: { type: 'NotUpdate' } }), 'spec.containers'],
    // Go's zero ShareVolumePolicy serializes as {"type":""}: neither enabled nor disabled.
    [
      'wrong-containers',
      set({
        updateStrategy: { type: 'NotUpdate' },
        containers: [testSidecar({ shareVolumePolicy: { type: '' as 'enabled' } })],
      }),
      'spec.containers[0].shareVolumePolicy',
    ],
    [
      'wrong-volumes',
      set({
        updateStrategy: { type: 'NotUpdate' },
        containers: [testSidecar()],
        volumes: [
          { name: 'test-volume' },
          {
            name: 'istio-token',
            projected: {
              defaultMode: 420,
              sources: [
                { serviceAccountToken: { audience: 'istio-ca', expirationSeconds: 43200, path: 'istio-token' } },
              ],
            },
          },
        ],
      }),
      'spec.volumes[0]',
    ],
    [
      'The initContainer in-place upgrade is not currently supported.',
      set({ updateStrategy: { type: 'RollingUpdate' }, initContainers: [testSidecar({ restartPolicy: 'Always' })] }),
      'spec.initContainers[0].restartPolicy',
    ],
  ])('%s: rejected, naming the field', (_name, s, field) => {
    const errors = validateSidecarSet(s);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.some((e) => e.startsWith(field))).toBe(true);
  });

  it.each<[string, SidecarSet]>([
    // v1.9.1 has no spec.namespace (v1beta1) and no longer refuses it beside a namespaceSelector.
    [
      'wrong-namespace-selector',
      set({
        selector: notIn('app-group', 'app-risk'),
        namespaceSelector: { matchLabels: { a: 'b' } },
        containers: [testSidecar({ shareVolumePolicy: { type: 'enabled' } })],
      }),
    ],
    [
      'right-volumeDevice-volumes',
      set({
        updateStrategy: { type: 'NotUpdate' },
        containers: [testSidecar({ volumeDevices: [{ name: 'disk0', devicePath: '/dev/nvme1' }] })],
        volumes: [{ name: 'disk0', persistentVolumeClaim: { claimName: 'pvc-0' } }],
      }),
    ],
  ])('%s: accepted', (_name, s) => {
    expect(validateSidecarSet(s)).toEqual([]);
  });
});

describe('TestSidecarSetNameConflict', () => {
  const other = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
    metadata: { name: 'sidecarset1' },
    spec: { selector: { matchLabels: { a: 'b' } }, ...spec },
  });
  const mine = (spec: Partial<SidecarSet['spec']>): SidecarSet => ({
    metadata: { name: 'sidecarset2' },
    spec: { selector: { matchLabels: { a: 'b' } }, ...spec },
  });
  const full = {
    containers: [{ name: 'container-name' }],
    initContainers: [{ name: 'init-name' }],
    volumes: [{ name: 'volume-name' }],
  };
  it.each<[string, SidecarSet, SidecarSet, number]>([
    ['test1', mine(full), other(full), 2],
    [
      'test2',
      mine({ namespaceSelector: { matchLabels: { app: 'nginx' } }, containers: [{ name: 'container-name' }] }),
      other({ namespaceSelector: { matchLabels: { app: 'nginx' } }, containers: [{ name: 'container-name' }] }),
      1,
    ],
    [
      'test3',
      mine({ namespaceSelector: { matchLabels: { app: 'nginx' } }, containers: [{ name: 'container-name' }] }),
      other({ namespaceSelector: { matchLabels: { app: 'redis' } }, containers: [{ name: 'container-name' }] }),
      0,
    ],
  ])('%s', (_name, candidate, existing, expected) => {
    expect(findConflicts(candidate, [existing])).toHaveLength(expected);
  });
});

describe('TestSelectorConflict', () => {
  const ml = (matchLabels: Record<string, string>) => ({ matchLabels });
  const expr = (operator: string, values?: string[]) => ({
    matchExpressions: [{ key: 'a', operator, ...(values ? { values } : {}) }],
  });
  it.each<[number, object, object, boolean]>([
    [0, ml({ a: 'h' }), ml({ a: 'h' }), true],
    [1, ml({ a: 'h' }), ml({ a: 'i' }), false],
    [2, ml({ a: 'h' }), ml({ b: 'i' }), true],
    [3, ml({ a: 'h', b: 'i', c: 'j' }), ml({ a: 'h', b: 'x', c: 'j' }), false],
    [4, ml({ a: 'h' }), expr('In', ['h', 'i', 'j']), true],
    [5, ml({ a: 'h' }), expr('In', ['i', 'j']), false],
    [6, expr('NotIn', ['h', 'i']), ml({ a: 'h' }), false],
    [7, ml({ a: 'h' }), expr('Exists'), true],
    [8, expr('DoesNotExist'), ml({ a: 'h' }), false],
  ])('case %i', (_i, a, b, expected) => {
    expect(upstreamSelectorsOverlap(a, b)).toBe(expected);
  });
});

describe('TestSidecarSetVolumeConflict', () => {
  const pair = (mine: SidecarSet['spec']['volumes'], theirs: SidecarSet['spec']['volumes']) =>
    findConflicts(
      { metadata: { name: 'sidecarset2' }, spec: { selector: { matchLabels: { a: 'b' } }, volumes: mine } },
      [{ metadata: { name: 'sidecarset1' }, spec: { selector: { matchLabels: { a: 'b' } }, volumes: theirs } }],
    );
  it('sidecarset volume name different', () => {
    expect(
      pair([{ name: 'volume-1' }, { name: 'volume-2' }], [{ name: 'volume-3' }, { name: 'volume-4' }]),
    ).toHaveLength(0);
  });
  it('sidecarset volume name same and equal', () => {
    expect(
      pair(
        [{ name: 'volume-1' }, { name: 'volume-2', hostPath: { path: '/home/work' } }],
        [{ hostPath: { path: '/home/work' }, name: 'volume-2' }, { name: 'volume-3' }],
      ),
    ).toHaveLength(0);
  });
  it('sidecarset volume name same, but not equal', () => {
    expect(
      pair(
        [{ name: 'volume-1' }, { name: 'volume-2', hostPath: { path: '/home/work-1' } }],
        [{ name: 'volume-2', hostPath: { path: '/home/work-2' } }, { name: 'volume-3' }],
      ),
    ).toHaveLength(1);
  });
});

describe('TestSidecarSetDefault (pkg/webhook/sidecarset/mutating/sidecarset_mutating_test.go)', () => {
  it("fills upstream defaults and upstream's two hash annotations", () => {
    const s = defaultSidecarSet({
      metadata: { name: 'sidecarset-test', resourceVersion: '123' },
      spec: { containers: [{ name: 'dns-f', image: 'dns:1.0' }] },
    });
    expect(s.spec.updateStrategy).toEqual({ type: 'RollingUpdate', partition: 0, maxUnavailable: 1 });
    expect(s.spec.containers![0]).toMatchObject({
      podInjectPolicy: 'BeforeAppContainer',
      shareVolumePolicy: { type: 'disabled' },
      upgradeStrategy: { upgradeType: 'ColdUpgrade' },
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
      terminationMessagePolicy: 'File',
    });
  });
});

describe('TestSidecarSetUpdateConflict (pkg/webhook/sidecarset/validating/sidecarset_hotupgrade_test.go) and its rule', () => {
  const withContainers = (containers: SidecarContainer[]): SidecarSet => ({
    metadata: { name: 's' },
    spec: { selector: { matchLabels: { a: 'b' } }, containers },
  });
  const cold = withContainers([{ name: 'test', image: 'i:1', upgradeStrategy: { upgradeType: 'ColdUpgrade' } }]);
  it("refuses changing a container's upgradeType on update", () => {
    const hot = withContainers([{ name: 'test', image: 'i:1', upgradeStrategy: { upgradeType: 'HotUpgrade' } }]);
    expect(validateSidecarSet(hot, { previous: cold })).toContain(
      'spec.containers[0].upgradeStrategy.upgradeType: is immutable (was "ColdUpgrade")',
    );
  });
  it('refuses adding a container on update (upstream: "container ... is not found"), accepts an image change', () => {
    const added = withContainers([...cold.spec.containers!, { name: 'extra', image: 'e:1' }]);
    expect(validateSidecarSet(added, { previous: cold })).toEqual([
      expect.stringMatching(
        /^spec\.containers\[1\]\.name: container "extra" is not in the stored SidecarSet; upstream refuses/,
      ),
    ]);
    expect(
      validateSidecarSet(
        withContainers([{ name: 'test', image: 'i:2', upgradeStrategy: { upgradeType: 'ColdUpgrade' } }]),
        { previous: cold },
      ),
    ).toEqual([]);
  });
});
