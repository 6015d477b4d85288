/**
 * Upstream's custom workload whitelist (ConfigMap kruise-configuration,
 * WorkloadSpread_Watch_Custom_Workload_WhiteList; OpenKruise v1.8.3 pkg/util/configuration,
 * pkg/webhook/workloadspread/validating, pkg/util/workloadspread): how it decodes, which targets
 * it admits, which pod owners it lets the pod webhook walk, and the replicas it reads; and the
 * constructs that render it with the manager's access.
 */
import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import {
  KruiseManager,
  ManagerImage,
  WorkloadSpread,
  WorkloadSpreadCustomWorkload,
  WorkloadSpreadTarget,
} from '../../../../lib/index.js';
import {
  parseWorkloadSpreadWhitelist,
  workloadSpreadSpecProblems,
  WORKLOADSPREAD_WHITELIST_KEY,
} from '../../../../lib/contract.js';
import { matchesSelector, parseSelectorString } from '../../../../lib/contract/selector.js';
import { validateWorkloadSpread } from '../../../../lib/runtime/workloadspread/validate.js';
import { customWorkloadReplicas, isSpreadableOwner } from '../../../../lib/runtime/workloadspread/webhooks.js';
import { find, type Manifest } from '../../constructs/synth.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const WHITELIST = JSON.stringify({
  workloads: [
    {
      Group: 'game.kruise.io',
      Version: 'v1alpha1',
      Kind: 'GameServerSet',
      subResources: [{ Group: 'game.kruise.io', Version: 'v1alpha1', Kind: 'GameServer' }],
      replicasPath: 'spec.replicas',
    },
  ],
});
const custom = parseWorkloadSpreadWhitelist(WHITELIST);
const spec = (apiVersion: string, kind: string) => ({
  targetRef: { apiVersion, kind, name: 'gss' },
  subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }],
});

describe('the whitelist as upstream decodes it', () => {
  it('reads Go field names case-insensitively, sub-resources and the replicas path', () => {
    expect(custom).toEqual([
      {
        group: 'game.kruise.io',
        version: 'v1alpha1',
        kind: 'GameServerSet',
        subResources: [{ group: 'game.kruise.io', version: 'v1alpha1', kind: 'GameServer' }],
        replicasPath: 'spec.replicas',
      },
    ]);
    expect(parseWorkloadSpreadWhitelist('{"WORKLOADS":[{"group":"x.io","kind":"K"}]}')).toEqual([
      { group: 'x.io', version: '', kind: 'K', subResources: [], replicasPath: '' },
    ]);
  });

  it('is empty when absent, null or without workloads', () => {
    expect(parseWorkloadSpreadWhitelist(undefined)).toEqual([]);
    expect(parseWorkloadSpreadWhitelist('null')).toEqual([]);
    expect(parseWorkloadSpreadWhitelist('{}')).toEqual([]);
  });

  it('refuses what json.Unmarshal refuses, naming where', () => {
    expect(() => parseWorkloadSpreadWhitelist('{')).toThrow(`${WORKLOADSPREAD_WHITELIST_KEY}: not JSON`);
    expect(() => parseWorkloadSpreadWhitelist('{"workloads":{}}')).toThrow('.workloads: is not a list');
    expect(() => parseWorkloadSpreadWhitelist('{"workloads":[{"Kind":3}]}')).toThrow('.workloads[0].Kind: 3');
    expect(() => parseWorkloadSpreadWhitelist('[]')).toThrow('is not an object');
  });
});

describe('WorkloadSpread validation with the whitelist (validateWorkloadSpreadSpec default branch)', () => {
  it('admits a whitelisted group and kind, whatever the version', () => {
    expect(workloadSpreadSpecProblems(spec('game.kruise.io/v1alpha1', 'GameServerSet'), custom)).toEqual([]);
    expect(workloadSpreadSpecProblems(spec('game.kruise.io/v2', 'GameServerSet'), custom)).toEqual([]);
  });

  it('refuses another group, a kind not listed, or no whitelist, naming the ConfigMap key', () => {
    for (const [apiVersion, kind, list] of [
      ['other.io/v1alpha1', 'GameServerSet', custom],
      ['game.kruise.io/v1alpha1', 'GameServer', custom],
      ['game.kruise.io/v1alpha1', 'GameServerSet', []],
      ['a/b/c', 'GameServerSet', custom],
    ] as const) {
      const problems = workloadSpreadSpecProblems(spec(apiVersion, kind), list);
      expect(problems.map(([f]) => f)).toEqual(['spec.targetRef']);
      expect(problems[0][1]).toContain(WORKLOADSPREAD_WHITELIST_KEY);
    }
  });

  it('never whitelists a built-in kind of another group (upstream switches on the kind first)', () => {
    const list = [{ group: 'foo.io', kind: 'Deployment' }];
    expect(workloadSpreadSpecProblems(spec('foo.io/v1', 'Deployment'), list).map(([f]) => f)).toEqual([
      'spec.targetRef.apiVersion',
    ]);
  });

  it('answers an internal error when the whitelist does not decode, only for a custom kind', () => {
    const broken = () => parseWorkloadSpreadWhitelist('{');
    const ws = (s: object) => ({ metadata: { name: 'w' }, spec: s });
    expect(
      validateWorkloadSpread(ws(spec('game.kruise.io/v1alpha1', 'GameServerSet')), { customWorkloads: broken }),
    ).toEqual([`spec.targetRef: Internal error: ${WORKLOADSPREAD_WHITELIST_KEY}: not JSON (${errorOf('{')})`]);
    expect(validateWorkloadSpread(ws(spec('apps/v1', 'Deployment')), { customWorkloads: broken })).toEqual([]);
  });
});

function errorOf(text: string): string {
  try {
    JSON.parse(text);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
}

describe('the pod webhook with the whitelist (matchReference, GetReplicasFromCustomWorkload)', () => {
  it('walks pods owned by a whitelisted kind or one of its sub-resources', () => {
    expect(isSpreadableOwner({ apiVersion: 'game.kruise.io/v1alpha1', kind: 'GameServer' }, custom)).toBe(true);
    expect(isSpreadableOwner({ apiVersion: 'game.kruise.io/v9', kind: 'GameServerSet' }, custom)).toBe(true);
    expect(isSpreadableOwner({ apiVersion: 'other.io/v1alpha1', kind: 'GameServer' }, custom)).toBe(false);
    expect(isSpreadableOwner({ apiVersion: 'game.kruise.io/v1alpha1', kind: 'GameServer' }, [])).toBe(false);
    expect(isSpreadableOwner({ apiVersion: 'apps/v1', kind: 'ReplicaSet' }, [])).toBe(true);
  });

  it('reads the replicas at the entry path; 0 without an entry or an integer there', () => {
    const gss = { spec: { replicas: 6 } };
    expect(customWorkloadReplicas(gss, 'game.kruise.io/v1alpha1', 'GameServerSet', custom)).toBe(6);
    expect(customWorkloadReplicas(gss, 'other.io/v1alpha1', 'GameServerSet', custom)).toBe(0);
    expect(customWorkloadReplicas({ spec: { replicas: 'six' } }, 'game.kruise.io/v1', 'GameServerSet', custom)).toBe(0);
  });
});

describe("a scale's selector string (metav1.ParseToLabelSelector)", () => {
  it('parses equality and set-based requirements', () => {
    const s = parseSelectorString('app=web, tier!=db,zone in (a, b),env notin (dev),canary,!legacy')!;
    expect(s).toEqual({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'NotIn', values: ['db'] },
        { key: 'zone', operator: 'In', values: ['a', 'b'] },
        { key: 'env', operator: 'NotIn', values: ['dev'] },
        { key: 'canary', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(matchesSelector(s, { app: 'web', zone: 'b', canary: '' })).toBe(true);
    expect(matchesSelector(s, { app: 'web', zone: 'c', canary: '' })).toBe(false);
    expect(parseSelectorString('')).toEqual({ matchLabels: {}, matchExpressions: [] });
    expect(parseSelectorString('a in (b')).toBeUndefined();
    expect(parseSelectorString('a b c')).toBeUndefined();
  });
});

const gameServerSet: WorkloadSpreadCustomWorkload = {
  apiVersion: 'game.kruise.io/v1alpha1',
  kind: 'GameServerSet',
  plural: 'gameserversets',
  replicasPath: 'spec.replicas',
  subResources: [{ apiVersion: 'game.kruise.io/v1alpha1', kind: 'GameServer', plural: 'gameservers' }],
};

function synthManager(props: object): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new KruiseManager(chart, 'kruise', { image: ManagerImage.runtime('registry.example.com/kruise-ha:0.1.0'), ...props });
  return Testing.synth(chart);
}

describe('constructs: KruiseManagerProps.workloadSpreadCustomWorkloads and WorkloadSpreadTarget.custom', () => {
  it('renders the whitelist the runtime decodes, and read access to the kinds, their scale and sub-resources', () => {
    const objects = synthManager({ workloadSpreadCustomWorkloads: [gameServerSet] });
    const cm = find(objects, 'ConfigMap', 'kruise-configuration');
    expect(cm.metadata.namespace).toBe('kruise-system');
    expect(parseWorkloadSpreadWhitelist(cm.data[WORKLOADSPREAD_WHITELIST_KEY])).toEqual(custom);
    const rules: Json[] = find(objects, 'ClusterRole', 'kruise-manager-role').rules;
    const grants = (resource: string) =>
      rules
        .filter((r) => r.apiGroups.includes('game.kruise.io') && r.resources.includes(resource))
        .flatMap((r) => r.verbs);
    expect(grants('gameserversets').sort()).toEqual(['get', 'list', 'watch']);
    expect(grants('gameserversets/scale')).toEqual(['get']);
    expect(grants('gameservers').sort()).toEqual(['get', 'list', 'watch']);
  });

  it('renders no ConfigMap and no extra rule by default', () => {
    const objects = synthManager({});
    expect(objects.some((o) => o.kind === 'ConfigMap' && o.metadata.name === 'kruise-configuration')).toBe(false);
  });

  it('refuses a bad entry, naming the prop, the value and the fix', () => {
    expect(() => synthManager({ workloadSpreadCustomWorkloads: [{ ...gameServerSet, apiVersion: 'v1' }] })).toThrow(
      /workloadSpreadCustomWorkloads\[0\]\.apiVersion.*"v1".*game\.kruise\.io\/v1alpha1/s,
    );
    expect(() => synthManager({ workloadSpreadCustomWorkloads: [{ ...gameServerSet, kind: 'Deployment' }] })).toThrow(
      /workloadSpreadCustomWorkloads\[0\]\.kind.*built-in/s,
    );
    expect(() => synthManager({ workloadSpreadCustomWorkloads: [gameServerSet, gameServerSet] })).toThrow(
      /workloadSpreadCustomWorkloads\[1\]\.kind.*twice/s,
    );
    expect(() =>
      synthManager({
        workloadSpreadCustomWorkloads: [{ ...gameServerSet, subResources: [{ ...gameServerSet, plural: 'Bad' }] }],
      }),
    ).toThrow(/subResources\[0\]\.plural/);
  });

  it('spreads a custom workload: the WorkloadSpread the manager admits with that whitelist', () => {
    const chart = new Chart(Testing.app(), 'test', { namespace: 'games' });
    new WorkloadSpread(chart, 'spread', {
      target: WorkloadSpreadTarget.custom(gameServerSet, 'gss'),
      subsets: [{ name: 'zone-a' }],
    });
    const [ws] = Testing.synth(chart);
    expect(ws.spec.targetRef).toEqual({ apiVersion: 'game.kruise.io/v1alpha1', kind: 'GameServerSet', name: 'gss' });
    expect(validateWorkloadSpread(ws, { customWorkloads: () => custom })).toEqual([]);
    expect(validateWorkloadSpread(ws, { customWorkloads: () => [] })).toHaveLength(1);
  });
});
