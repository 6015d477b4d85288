import { describe, expect, it } from '@jest/globals';
import { findConflicts, validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';

const valid = () => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'SidecarSet',
  metadata: { name: 's' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [{ name: 'proxy', image: 'proxy:1' }],
    updateStrategy: { type: 'RollingUpdate', maxUnavailable: '20%', partition: 1 },
  },
});

describe('validateSidecarSet', () => {
  it('accepts an upstream manifest inside the subset', () => {
    expect(validateSidecarSet(valid())).toEqual([]);
  });

  it('names every missing or bad field', () => {
    const bad = {
      metadata: {},
      spec: {
        containers: [
          { name: 'Proxy', image: '' },
          { name: 'dup', image: 'x', podInjectPolicy: 'First', shareVolumePolicy: { type: 'yes' } },
        ],
        initContainers: [{ name: 'dup', image: 'x' }],
        volumes: [{ name: 'v' }, { name: 'v' }],
        updateStrategy: { type: 'OnDelete', maxUnavailable: -1, partition: '120%', paused: 'no' },
        namespace: 'a',
        namespaceSelector: {},
        revisionHistoryLimit: 1.5,
      },
    };
    expect(validateSidecarSet(bad)).toEqual([
      'metadata.name: is required',
      'spec.selector: is required; select the pods to inject, e.g. { matchLabels: { app: "web" } }; an empty selector selects no pod (upstream refuses it)',
      'spec.containers[0].name: "Proxy" is not a valid container name (DNS label)',
      'spec.containers[0].image: is required',
      'spec.containers[1].podInjectPolicy: "First" must be BeforeAppContainer or AfterAppContainer',
      'spec.containers[1].shareVolumePolicy.type: must be enabled or disabled',
      'spec.initContainers[0].name: "dup" is already used by spec.containers[1]; container names must be unique',
      'spec.volumes[0]: has no volume source; set one, e.g. emptyDir: {}',
      'spec.volumes[1].name: "v" is duplicated',
      'spec.volumes[1]: has no volume source; set one, e.g. emptyDir: {}',
      'spec.updateStrategy.type: "OnDelete" must be RollingUpdate or NotUpdate',
      'spec.updateStrategy.maxUnavailable: -1 must be a whole number >= 0 or a percentage like "20%"',
      'spec.updateStrategy.paused: must be true or false',
      'spec.revisionHistoryLimit: must be a whole number',
    ]);
  });

  it('rejects upstream-only features by name instead of dropping them', () => {
    const s = valid() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    s.spec.containers[0].upgradeStrategy = { upgradeType: 'HotUpgrade' };
    s.spec.containers[0].shareVolumeDevicePolicy = { type: 'enabled' };
    expect(validateSidecarSet(s)).toEqual([
      'spec.containers[0].upgradeStrategy.upgradeType: HotUpgrade is not supported by this runtime; use ColdUpgrade or remove it',
      'spec.containers[0].shareVolumeDevicePolicy: is not supported by this runtime; remove it',
    ]);
  });

  it('reads namespace and namespaceSelector as upstream v1.9.1: a plain label selector, the namespace winning', () => {
    const withSpec = (spec: object) => {
      const s = valid() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
      Object.assign(s.spec, spec);
      return validateSidecarSet(s);
    };
    expect(withSpec({ namespaceSelector: { matchLabels: { team: 'a' } } })).toEqual([]);
    expect(
      withSpec({ namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['a'] }] } }),
    ).toEqual([]);
    // No `namespaces` member in upstream's LabelSelector: what is left is empty, and refused as upstream refuses it.
    const empty = [
      'spec.namespaceSelector: is empty; upstream refuses an empty selector. Fix: remove it to inject in every namespace, or give it matchLabels',
    ];
    expect(withSpec({ namespaceSelector: { namespaces: ['apps'] } })).toEqual(empty);
    expect(withSpec({ namespaceSelector: {} })).toEqual(empty);
    expect(withSpec({ namespaceSelector: { matchLabels: { 'bad key!': 'a' } } })).toEqual([
      expect.stringMatching(/^spec\.namespaceSelector\.matchLabels.*bad key!/),
    ]);
    // Both: v1.8.3 refused the pair; v1.9.1 converts `namespace` to a selector that replaces the other, unread.
    expect(withSpec({ namespace: 'apps', namespaceSelector: {} })).toEqual([]);
    expect(withSpec({ namespace: 'apps', namespaceSelector: { matchLabels: { 'bad key!': 'a' } } })).toEqual([]);
    // The namespace becomes a label value, so it must be one.
    expect(withSpec({ namespace: 'not a name' })).toEqual([
      'spec.namespace: "not a name" is not a valid label value, which upstream requires of it (it matches the namespace by its kubernetes.io/metadata.name label); use the name of an existing namespace',
    ]);
    expect(withSpec({ namespace: '' })).toEqual([]);
  });

  it("accepts upstream's priority and scatter strategies, maxUnavailable 0, partitions above 100% and any history limit, and checks them as upstream", () => {
    const s = valid() as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    Object.assign(s.spec.updateStrategy, {
      maxUnavailable: 0,
      partition: '150%',
      priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] },
      scatterStrategy: [{ key: 'zone', value: '*' }],
    });
    s.spec.revisionHistoryLimit = -3;
    expect(validateSidecarSet(s)).toEqual([]);
    s.spec.updateStrategy.priorityStrategy = {
      weightPriority: [{ weight: 101, matchSelector: {} }],
      orderPriority: [{ orderedKey: '' }],
    };
    s.spec.updateStrategy.scatterStrategy = [{ key: 'zone', value: 'a' }, { key: 'zone', value: 'a' }, { value: 'b' }];
    expect(validateSidecarSet(s)).toEqual([
      'spec.updateStrategy.priorityStrategy: only one of weightPriority and orderPriority can be used',
      'spec.updateStrategy.priorityStrategy.weightPriority[0].weight: must be a whole number from 0 to 100',
      'spec.updateStrategy.priorityStrategy.weightPriority[0].matchSelector: can not be empty',
      'spec.updateStrategy.priorityStrategy.orderPriority[0].orderedKey: can not be empty',
      'spec.updateStrategy.scatterStrategy[1]: duplicated key=zone value=a',
      'spec.updateStrategy.scatterStrategy[2].key: should not be empty',
    ]);
  });

  it('never throws on garbage', () => {
    for (const garbage of [
      null,
      3,
      'x',
      [],
      { spec: [] },
      { metadata: { name: 's' }, spec: { selector: 'x', containers: 'y' } },
    ]) {
      expect(Array.isArray(validateSidecarSet(garbage))).toBe(true);
      expect(validateSidecarSet(garbage).length).toBeGreaterThan(0);
    }
  });
});

describe('findConflicts', () => {
  const s = (name: string, labels: Record<string, string>, container: string, namespace?: string): SidecarSet => ({
    metadata: { name },
    spec: { selector: { matchLabels: labels }, namespace, containers: [{ name: container, image: 'i' }] },
  });

  it('rejects the same container name injected into overlapping pods', () => {
    expect(findConflicts(s('new', { app: 'web' }, 'proxy'), [s('old', { tier: 'front' }, 'proxy')])).toEqual([
      'spec.containers: container "proxy" is also injected by SidecarSet "old" into pods both select; rename the container or make the selectors disjoint',
    ]);
  });

  it('allows disjoint selectors, other namespaces, other names, and updates of itself', () => {
    expect(findConflicts(s('new', { app: 'web' }, 'proxy'), [s('old', { app: 'db' }, 'proxy')])).toEqual([]);
    expect(findConflicts(s('new', { app: 'web' }, 'proxy', 'a'), [s('old', { app: 'web' }, 'proxy', 'b')])).toEqual([]);
    expect(findConflicts(s('new', { app: 'web' }, 'proxy'), [s('old', { app: 'web' }, 'logger')])).toEqual([]);
    expect(findConflicts(s('same', { app: 'web' }, 'proxy'), [s('same', { app: 'web' }, 'proxy')])).toEqual([]);
  });
});

describe("rules of upstream's validating webhook (pkg/webhook/sidecarset/validating/sidecarset_create_update_handler.go)", () => {
  const base = (spec: Record<string, unknown>) => ({
    metadata: { name: 's' },
    spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }], ...spec },
  });
  it.each([
    ['an empty selector', { selector: {} }, /^spec\.selector: is empty; /],
    [
      'partition with an update selector',
      { updateStrategy: { partition: 1, selector: { matchLabels: { canary: 'true' } } } },
      /^spec\.updateStrategy: partition and selector cannot be used together/,
    ],
    [
      'a native sidecar with RollingUpdate (the default)',
      { initContainers: [{ name: 'native', image: 'x:1', restartPolicy: 'Always' }] },
      /^spec\.initContainers\[0\]\.restartPolicy: is a native sidecar/,
    ],
    [
      'a mount of a missing volume',
      { containers: [{ name: 'proxy', image: 'proxy:1', volumeMounts: [{ name: 'nowhere', mountPath: '/x' }] }] },
      /^spec\.containers\[0\]\.volumeMounts\[0\]\.name: "nowhere" is not a volume of the SidecarSet/,
    ],
  ])('refuses %s, naming the field', (_name, spec, message) => {
    expect(validateSidecarSet(base(spec))).toEqual([expect.stringMatching(message)]);
  });
  it.each([
    [
      'partition 0 with an update selector',
      { updateStrategy: { partition: 0, selector: { matchLabels: { canary: 'true' } } } },
    ],
    [
      'a native sidecar with NotUpdate',
      {
        initContainers: [{ name: 'native', image: 'x:1', restartPolicy: 'Always' }],
        updateStrategy: { type: 'NotUpdate' },
      },
    ],
  ])('accepts %s, as upstream', (_name, spec) => {
    expect(validateSidecarSet(base(spec))).toEqual([]);
  });
});
