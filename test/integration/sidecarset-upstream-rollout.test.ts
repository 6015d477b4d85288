/**
 * Differential test of the rollout decisions against upstream's own SidecarSet controller
 * (github.com/openkruise/kruise v1.9.1 pkg/controller/sidecarset Processor.UpdateSidecarSet, one
 * reconcile run in-process by tools/upstream/sidecarset-oracle `rollout` on a fake client). For
 * generated SidecarSet update strategies and pod fleets (ready or not, Pending or Running, updated
 * and restarted or not, an earlier update in flight, changed beyond images, not selected, not
 * injected), this runtime must compute the same status and revision name, update the same pods,
 * and write the same annotations, modulo INTENDED_DIFFERENCES.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1ControllerRevision, V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { upstreamSidecarSetHash } from '../../lib/runtime/sidecarset/gojson.js';
import { sidecarSetMatchesPod } from '../../lib/runtime/sidecarset/inject.js';
import { inPlaceUpdatePatch } from '../../lib/runtime/sidecarset/podupdate.js';
import { newRevision } from '../../lib/runtime/sidecarset/revisions.js';
import {
  computeStatus,
  isPodInjectedAndConsistent,
  planUpdates,
  podState,
} from '../../lib/runtime/sidecarset/rollout.js';
import type { SidecarSet, SidecarSetUpdateStrategy } from '../../lib/runtime/sidecarset/types.js';
import { applyPatch } from '../unit/runtime/sidecarset/upstream-fixtures.js';
import { APPS_NAMESPACE, APPS_NAMESPACE_LABELS } from './support/sidecarset-oracle.js';

/**
 * Upstream also writes a `SidecarSetUpgradable` pod condition (True on every pod it updates,
 * False on pods that differ beyond images); this runtime does not (one status write per pod fewer).
 */
const INTENDED_DIFFERENCES = ['the SidecarSetUpgradable pod condition'];
const CASES = 500;
const NOW = new Date('2026-11-21T00:00:00Z');
const REVISION_NS = 'kruise-system';
const BUILD = fileURLToPath(new URL('../../tools/upstream/sidecarset-oracle/build.sh', import.meta.url));

interface OracleRollout {
  status?: Record<string, unknown>;
  pods?: V1Pod[];
  revisions?: V1ControllerRevision[];
  error?: string;
}

function upstreamRollout(
  cases: Array<{ sidecarSet: SidecarSet; pods: V1Pod[]; namespaces: object[] }>,
): OracleRollout[] {
  const binary = execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const run = spawnSync(binary, ['rollout'], {
    input: cases.map((c) => JSON.stringify(c)).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 512 << 20,
  });
  if (run.status !== 0)
    throw new Error(
      `sidecarset-oracle rollout failed (${run.status ?? run.signal}): ${(run.stderr ?? '').slice(0, 2000)}`,
    );
  return run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as OracleRollout);
}

/**
 * What a revision records besides containers, in forms whose Go encoding differs from the stored
 * one (empty omitempty fields, non-canonical quantities, unsorted keys, a volume source upstream's
 * types lack): the revision name must still be upstream's.
 */
const EXTRAS: Array<Partial<SidecarSet['spec']> & { patchPodMetadata?: unknown[] }> = [
  {},
  { volumes: [{ name: 'cache', emptyDir: {} }], imagePullSecrets: [{ name: 'regcred' }] },
  {
    volumes: [
      { name: 'cache', emptyDir: { sizeLimit: '2048Mi', medium: '' } },
      { name: 'logs', hostPath: { path: '/var/log', type: '' } },
    ] as never,
    imagePullSecrets: [{ name: '' }],
  },
  {
    volumes: [
      { name: 'conf', configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }], defaultMode: 420 } },
      { name: 'sec', secret: { secretName: 's', optional: false } },
      {
        name: 'down',
        downwardAPI: { items: [{ path: 'cpu', resourceFieldRef: { resource: 'limits.cpu', divisor: '1000m' } }] },
      },
    ] as never,
  },
  {
    volumes: [
      { name: 'tok', projected: { sources: [{ serviceAccountToken: { path: 't' } }] } },
      { name: 'eph', ephemeral: { volumeClaimTemplate: { spec: { resources: { requests: { storage: '1000Mi' } } } } } },
      { name: 'img', image: { reference: 'data:1' } },
    ] as never,
    patchPodMetadata: [{ annotations: { z: '1', 'a/b': '<x>' } }, { annotations: {}, patchPolicy: 'Overwrite' }],
  },
];

const sidecarSet = (
  image: string,
  strategy: SidecarSetUpdateStrategy,
  args?: string[],
  extras: (typeof EXTRAS)[number] = {},
): SidecarSet => {
  const spec: SidecarSet['spec'] = {
    selector: { matchLabels: { app: 'web' } },
    containers: [
      { name: 'proxy', image, ...(args ? { args } : {}) },
      { name: 'agent', image: 'agent:1' },
    ],
    updateStrategy: strategy,
    ...extras,
  };
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: {
      name: 'fleet',
      uid: 'fleet-uid',
      generation: 1,
      annotations: {
        'kruise.io/sidecarset-hash': upstreamSidecarSetHash(spec),
        'kruise.io/sidecarset-hash-without-image': upstreamSidecarSetHash(spec, true),
      },
    },
    spec,
  };
};
const imageID = (image: string) =>
  `docker-pullable://${image.split(':')[0]}@sha256:${Buffer.from(image).toString('hex').padEnd(64, '0').slice(0, 64)}`;

type Kind = 'old' | 'updated' | 'restarted' | 'inFlight' | 'otherFields' | 'notSelected' | 'notInjected';
interface PodSpec {
  kind: Kind;
  ready: boolean;
  pending: boolean;
  restarts: number;
  group: string;
  zone: string;
}

/** A pod of the fleet: injected at proxy:1, then brought to `kind`. */
function makePod(i: number, p: PodSpec, v2: SidecarSet): V1Pod {
  const v1 = sidecarSet('proxy:1', {});
  const base: V1Pod = {
    metadata: {
      name: `pod-${i}`,
      namespace: 'apps',
      resourceVersion: '1',
      creationTimestamp: new Date(NOW.getTime() - ((i * 7919) % 1000) * 1000),
      labels: {
        app: p.kind === 'notSelected' ? 'db' : 'web',
        group: p.group,
        zone: p.zone,
        prio: `p-${(i * 31) % 97}`,
      },
      annotations: {
        ...(p.kind === 'notInjected' ? {} : { 'kruise.io/sidecarset-injected-list': 'fleet' }),
        'kruise.io/sidecarset-hash': JSON.stringify({
          fleet: {
            updateTimestamp: '2026-11-20T00:00:00Z',
            hash: v1.metadata.annotations!['kruise.io/sidecarset-hash'],
            sidecarSetName: 'fleet',
            sidecarList: ['agent', 'proxy'],
          },
        }),
        'kruise.io/sidecarset-hash-without-image': JSON.stringify({
          fleet: {
            updateTimestamp: '2026-11-20T00:00:00Z',
            hash:
              p.kind === 'otherFields'
                ? 'changed'
                : v1.metadata.annotations!['kruise.io/sidecarset-hash-without-image'],
            sidecarSetName: 'fleet',
            sidecarList: ['agent', 'proxy'],
          },
        }),
      },
    },
    spec: {
      containers: [
        { name: 'proxy', image: 'proxy:1' },
        { name: 'agent', image: 'agent:1' },
        { name: 'app', image: 'shop:1' },
      ],
    },
    status: {
      phase: p.pending ? 'Pending' : 'Running',
      conditions: [
        {
          type: 'Ready',
          status: p.ready ? 'True' : 'False',
          lastTransitionTime: new Date(NOW.getTime() - ((i * 104729) % 1000) * 1000),
        },
      ],
      containerStatuses: ['proxy', 'agent', 'app'].map((name) => ({
        name,
        image: name === 'app' ? 'shop:1' : `${name}:1`,
        imageID: imageID(name === 'app' ? 'shop:1' : `${name}:1`),
        ready: p.ready,
        restartCount: name === 'proxy' ? p.restarts : 0,
      })),
    },
  };
  if (p.kind === 'updated' || p.kind === 'restarted') {
    const pod = applyPatch(base, inPlaceUpdatePatch(v2, base, NOW, 'fleet-earlier'));
    if (p.kind === 'restarted')
      Object.assign(pod.status!.containerStatuses![0], {
        image: v2.spec.containers![0].image,
        imageID: imageID(v2.spec.containers![0].image!),
      });
    return pod;
  }
  // Patched to an intermediate image the kubelet has not run yet.
  if (p.kind === 'inFlight')
    return applyPatch(base, inPlaceUpdatePatch(sidecarSet('proxy:1b', {}), base, NOW, 'fleet-mid'));
  return base;
}

const podSpec = fc.record({
  kind: fc.constantFrom<Kind>(
    'old',
    'old',
    'old',
    'updated',
    'restarted',
    'restarted',
    'inFlight',
    'otherFields',
    'notSelected',
    'notInjected',
  ),
  ready: fc.boolean(),
  pending: fc.constantFrom(false, false, false, true),
  restarts: fc.integer({ min: 0, max: 2 }),
  group: fc.constantFrom('a', 'b'),
  zone: fc.constantFrom('z1', 'z2', 'z3'),
});
const intOrPercent = (max: number) =>
  fc.oneof(
    fc.integer({ min: 0, max }),
    fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`),
  );
const strategy = fc.record(
  {
    maxUnavailable: intOrPercent(12),
    partition: fc.option(
      fc.oneof(
        fc.integer({ min: 0, max: 6 }),
        fc.integer({ min: 0, max: 60 }).map((n) => `${n}%`),
      ),
      { nil: undefined, freq: 2 },
    ),
    paused: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
    type: fc.constantFrom<'RollingUpdate' | 'NotUpdate'>(
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'RollingUpdate',
      'NotUpdate',
    ),
    selector: fc.integer({ min: 0, max: 3 }).map((n) => (n === 0 ? { matchLabels: { group: 'a' } } : undefined)),
    priorityStrategy: fc.constantFrom(
      { orderPriority: [{ orderedKey: 'prio' }] },
      {
        weightPriority: [
          { weight: 10, matchSelector: { matchLabels: { zone: 'z1' } } },
          { weight: 5, matchSelector: { matchLabels: { group: 'b' } } },
        ],
      },
    ),
    scatterStrategy: fc.constantFrom(
      [{ key: 'zone', value: '*' }],
      [{ key: 'zone', value: 'z2' }],
      [
        { key: 'group', value: 'a' },
        { key: 'zone', value: 'z3' },
      ],
    ),
  },
  { requiredKeys: ['maxUnavailable', 'partition', 'selector'] },
);

const key = (p: V1Pod) => `${p.metadata!.namespace}/${p.metadata!.name}`;
/** An annotation's entry for the SidecarSet, without the write time (the two runs write at different times). */
const entry = (p: V1Pod | undefined, annotation: string) => {
  const e = JSON.parse(p?.metadata?.annotations?.[annotation] ?? '{}').fleet as Record<string, unknown> | undefined;
  if (e) delete e.updateTimestamp;
  return e;
};

describe("SidecarSet rollout decisions: this runtime against upstream's controller", () => {
  const samples = fc.sample(
    fc.record({
      strategy,
      pods: fc.array(podSpec, { minLength: 1, maxLength: 24 }),
      image: fc.integer({ min: 0, max: 9 }).map((n) => (n === 0 ? 'proxy:1' : 'proxy:2')),
      args: fc.integer({ min: 0, max: 9 }).map((n) => (n === 0 ? ['--v'] : undefined)),
      extras: fc.constantFrom(...EXTRAS),
    }),
    { numRuns: CASES, seed: 11 },
  );
  const cases = samples.map(({ strategy: st, pods, image, args, extras }) => {
    const s = sidecarSet(image, st as SidecarSetUpdateStrategy, args, extras);
    return {
      sidecarSet: s,
      pods: pods.map((p, i) => makePod(i, p, s)).sort((a, b) => key(a).localeCompare(key(b))),
      namespaces: [APPS_NAMESPACE],
    };
  });
  const upstream = upstreamRollout(cases);

  it(`computes the same status and revision, updates the same pods and writes the same annotations (${CASES} cases; intended: ${INTENDED_DIFFERENCES.join(', ')})`, () => {
    const problems: string[] = [];
    let updatesCompared = 0;
    cases.forEach(({ sidecarSet: s, pods }, i) => {
      const up = upstream[i];
      if (up.error) {
        problems.push(`case ${i}: upstream failed: ${up.error}`);
        return;
      }
      const matched = pods.filter(
        (p) => isPodInjectedAndConsistent(s, p) && sidecarSetMatchesPod(s, p, APPS_NAMESPACE_LABELS),
      );
      const states = matched.map((p) => podState(s, p));
      const revision = newRevision(s, REVISION_NS, 1, 0);
      const status = computeStatus(s, states, revision.metadata!.name!);
      const upStatus = up.status ?? {};
      const ours = {
        matchedPods: status.matchedPods,
        updatedPods: status.updatedPods,
        readyPods: status.readyPods,
        updatedReadyPods: status.updatedReadyPods,
        latestRevision: status.latestRevision,
      };
      const theirs = {
        matchedPods: upStatus.matchedPods ?? 0,
        updatedPods: upStatus.updatedPods ?? 0,
        readyPods: upStatus.readyPods ?? 0,
        updatedReadyPods: upStatus.updatedReadyPods ?? 0,
        latestRevision: upStatus.latestRevision,
      };
      if (JSON.stringify(ours) !== JSON.stringify(theirs))
        problems.push(`case ${i}: status ${JSON.stringify(ours)} vs upstream ${JSON.stringify(theirs)}`);
      if (JSON.stringify(up.revisions?.[0]?.data) !== JSON.stringify(revision.data))
        problems.push(
          `case ${i}: revision data ${JSON.stringify(revision.data)} vs upstream ${JSON.stringify(up.revisions?.[0]?.data)}`,
        );
      const before = new Map(pods.map((p) => [key(p), p]));
      const upAfter = new Map((up.pods ?? []).map((p) => [key(p), p]));
      const upUpdated = [...upAfter.values()]
        .filter(
          (p) =>
            p.spec!.containers[0].image !== before.get(key(p))!.spec!.containers[0].image ||
            entry(p, 'kruise.io/sidecarset-hash')?.hash !==
              entry(before.get(key(p)), 'kruise.io/sidecarset-hash')?.hash,
        )
        .map(key)
        .sort();
      const plan = planUpdates({ ...s, status }, states);
      const ourUpdated = plan.map(key).sort();
      if (JSON.stringify(ourUpdated) !== JSON.stringify(upUpdated))
        problems.push(`case ${i}: updates ${ourUpdated.join(',')} vs upstream ${upUpdated.join(',')}`);
      for (const pod of plan) {
        const after = applyPatch(pod, inPlaceUpdatePatch(s, pod, NOW, status.latestRevision));
        const theirsPod = upAfter.get(key(pod));
        for (const a of [
          'kruise.io/sidecarset-hash',
          'kruise.io/sidecarset-hash-without-image',
          'kruise.io/sidecarset-inplace-update-state',
        ]) {
          if (JSON.stringify(entry(after, a)) !== JSON.stringify(entry(theirsPod, a)))
            problems.push(
              `case ${i} ${key(pod)}: ${a} ${JSON.stringify(entry(after, a))} vs upstream ${JSON.stringify(entry(theirsPod, a))}`,
            );
        }
        // Every other annotation too: upstream re-applies patchPodMetadata on the in-place update (issue 24).
        const others = (p?: V1Pod) =>
          JSON.stringify(
            Object.entries(p?.metadata?.annotations ?? {})
              .filter(([k]) => !k.startsWith('kruise.io/sidecarset-'))
              .sort(([a], [b]) => (a < b ? -1 : 1)),
          );
        if (others(after) !== others(theirsPod))
          problems.push(`case ${i} ${key(pod)}: annotations ${others(after)} vs upstream ${others(theirsPod)}`);
        const images = (p?: V1Pod) => JSON.stringify(p?.spec?.containers.map((c) => [c.name, c.image]));
        if (images(after) !== images(theirsPod))
          problems.push(`case ${i} ${key(pod)}: images ${images(after)} vs upstream ${images(theirsPod)}`);
        updatesCompared++;
      }
    });
    expect(problems.slice(0, 8)).toEqual([]);
    // The generator reaches the interesting region: hundreds of pod updates compared.
    expect(updatesCompared).toBeGreaterThan(CASES / 2);
  });
});
