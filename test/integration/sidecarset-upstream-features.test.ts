/**
 * Differential test of the injection features patchPodMetadata and
 * transferEnv.sourceContainerNameFrom against upstream's own pod webhook code (v1.9.1
 * pkg/webhook/pod/mutating/sidecarset.go, run by tools/upstream/sidecarset-oracle): generated
 * pods (labels and annotations naming source containers, annotations holding JSON or not) and
 * SidecarSets patching annotations with every policy. The pod annotations (but the hash ones,
 * which carry timestamps) and every container's env must be identical, and a pod upstream
 * refuses (MergePatchJson into a value that is not JSON) must be refused here.
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import fc from 'fast-check';
import { SidecarSetAnnotations } from '../../lib/contract.js';
import { defaultSidecarSet } from '../../lib/runtime/sidecarset/defaults.js';
import { injectSidecars, sidecarSetMatchesPod } from '../../lib/runtime/sidecarset/inject.js';
import { PatchPodMetadataError } from '../../lib/runtime/sidecarset/metadata.js';
import type { SidecarSet } from '../../lib/runtime/sidecarset/types.js';
import { upstreamInjectionOracle, APPS_NAMESPACE_LABELS, APPS_NAMESPACE } from './support/sidecarset-oracle.js';

const CASES = 300;
const APP_ENV = ['APP_NAME', 'TZ'];
const VALUES = ['{"a":1}', '{"b":{"c":2},"a":null}', '{"a":"<x>"}', '[1,2]', 'plain', '"s"', 'null', ''];
const KEYS = ['k1', 'k2', 'mesh.io/conf'];

const fieldRef = fc.constantFrom(
  "metadata.labels['src']",
  "metadata.annotations['src']",
  "metadata.labels['missing']",
  "metadata.annotations['Src']",
);
const transfer = fc.oneof(
  fc.record({ sourceContainerName: fc.constantFrom('main', 'helper'), envName: fc.constantFrom(...APP_ENV) }),
  fc.record({
    sourceContainerNameFrom: fieldRef.map((fieldPath) => ({ fieldRef: { apiVersion: 'v1', fieldPath } })),
    envNames: fc.subarray(APP_ENV, { minLength: 1 }),
  }),
);
const patch = fc.record({
  patchPolicy: fc.constantFrom('Retain', 'Overwrite', 'MergePatchJson'),
  annotations: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES.filter((v) => v !== '')), {
    minKeys: 1,
    maxKeys: 2,
  }),
});
const sidecarSetArb = (name: string, container: string) =>
  fc
    .record({
      transferEnv: fc.array(transfer, { maxLength: 2 }),
      patchPodMetadata: fc.array(patch, { maxLength: 2 }),
    })
    .map(({ transferEnv, patchPodMetadata }): SidecarSet =>
      defaultSidecarSet({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name },
        spec: {
          selector: { matchLabels: { app: 'web' } },
          containers: [{ name: container, image: `${container}:1`, transferEnv }],
          patchPodMetadata,
        } as SidecarSet['spec'],
      }),
    );

const appContainer = (name: string) =>
  fc.record({
    name: fc.constant(name),
    image: fc.constant(`${name}:1`),
    env: fc.uniqueArray(fc.record({ name: fc.constantFrom(...APP_ENV), value: fc.constantFrom('x', 'y') }), {
      maxLength: 2,
      selector: (e) => e.name,
    }),
  });
const podArb = fc
  .record({
    src: fc.option(fc.constantFrom('main', 'helper', 'nope'), { nil: undefined }),
    annotations: fc.dictionary(fc.constantFrom('src', 'Src', ...KEYS), fc.constantFrom('main', 'helper', ...VALUES), {
      maxKeys: 3,
    }),
    containers: fc.oneof(fc.tuple(appContainer('main')), fc.tuple(appContainer('main'), appContainer('helper'))),
  })
  .map(({ src, annotations, containers }): V1Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'p',
      namespace: 'apps',
      labels: { app: 'web', ...(src ? { src } : {}) },
      ...(Object.keys(annotations).length ? { annotations } : {}),
    },
    spec: { containers },
  }));

/** What the features decide: annotations but the timestamped hash ones, and each container's env. */
function features(pod: V1Pod | Record<string, unknown> | undefined): unknown {
  const p = pod as V1Pod | undefined;
  const annotations = Object.entries(p?.metadata?.annotations ?? {})
    .filter(([k]) => k !== SidecarSetAnnotations.hash && k !== SidecarSetAnnotations.hashWithoutImage)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    annotations,
    env: (p?.spec?.containers ?? []).map((c) => [c.name, (c.env ?? []).map((e) => [e.name, e.value ?? ''])]),
  };
}

describe('patchPodMetadata and sourceContainerNameFrom = upstream v1.9.1 pod webhook, differentially', () => {
  const now = new Date('2026-11-23T00:00:00Z');
  const samples = fc
    .sample(
      fc.record({
        a: sidecarSetArb('s-a', 'proxy'),
        b: fc.option(sidecarSetArb('s-b', 'agent'), { nil: undefined }),
        pod: podArb,
      }),
      { numRuns: CASES, seed: 2311 },
    )
    .map(({ a, b, pod }) => ({ sets: b ? [a, b] : [a], pod }));
  const namespaces = [APPS_NAMESPACE];
  const upstream = upstreamInjectionOracle(samples.map(({ sets, pod }) => ({ sidecarSets: sets, namespaces, pod })));

  it(`reaches both outcomes: injected pods, and pods upstream refuses (${CASES} cases)`, () => {
    expect(upstream.filter((u) => u.error).length).toBeGreaterThan(CASES / 20);
    expect(upstream.filter((u) => u.pod && !u.skip).length).toBeGreaterThan(CASES / 2);
  });

  it('patches the same annotations, transfers the same env, and refuses the same pods', () => {
    const diffs = samples.flatMap(({ sets, pod }, i) => {
      let ours: unknown;
      try {
        ours = features(
          injectSidecars(
            pod,
            sets.filter((s) => sidecarSetMatchesPod(s, pod, APPS_NAMESPACE_LABELS)),
            now,
          ).pod,
        );
      } catch (err) {
        if (!(err instanceof PatchPodMetadataError)) throw err;
        ours = 'refused';
      }
      const theirs = upstream[i].error ? 'refused' : features(upstream[i].pod);
      return JSON.stringify(ours) === JSON.stringify(theirs)
        ? []
        : [`case ${i}: ours ${JSON.stringify(ours)}, upstream ${JSON.stringify(theirs)} (${upstream[i].error ?? ''})`];
    });
    expect(diffs.slice(0, 8)).toEqual([]);
  });
});
