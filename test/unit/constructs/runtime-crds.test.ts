import { describe, expect, it } from '@jest/globals';
import { runtimeCrds, sidecarSetCrd } from '../../../lib/constructs/crds/runtime-crds.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const version = (): any => (sidecarSetCrd().manifest.spec as any).versions[0];

describe('runtime CRDs', () => {
  it('matches the snapshot', () => {
    expect(runtimeCrds()).toMatchSnapshot();
  });

  it('declares a cluster-scoped SidecarSet with status subresource and printer columns', () => {
    const crd = sidecarSetCrd().manifest as { spec: { scope: string; group: string } };
    expect([crd.spec.scope, crd.spec.group]).toEqual(['Cluster', 'apps.kruise.io']);
    expect(version().subresources).toEqual({ status: {} });
    expect(version().additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual([
      'MATCHED',
      'UPDATED',
      'READY',
      'AGE',
    ]);
  });

  it('keeps upstream-only fields (never pruned) and rejects them by name', () => {
    const spec = version().schema.openAPIV3Schema.properties.spec;
    expect(spec['x-kubernetes-preserve-unknown-fields']).toBe(true);
    // priorityStrategy and scatterStrategy are served now (upstream semantics): no longer refused by the schema.
    expect(spec.properties.updateStrategy['x-kubernetes-validations']).toBeUndefined();
    expect(spec.properties.updateStrategy.properties.scatterStrategy.type).toBe('array');
    const container = spec.properties.containers.items;
    expect(container['x-kubernetes-validations'].map((v: { message: string }) => v.message)).toEqual([
      expect.stringMatching(/HotUpgrade is not supported/),
      expect.stringMatching(/^containers\[\]\.shareVolumeDevicePolicy is not supported/),
      expect.stringMatching(/^containers\[\]\.resourcesPolicy is not supported/),
    ]);
  });

  it("types namespaceSelector as upstream's plain label selector, and lets namespace stand beside it (v1.9.1)", () => {
    const spec = version().schema.openAPIV3Schema.properties.spec;
    expect(Object.keys(spec.properties.namespaceSelector.properties)).toEqual(['matchLabels', 'matchExpressions']);
    expect(spec.properties.namespaceSelector['x-kubernetes-validations']).toBeUndefined();
    expect(spec.properties.namespaceSelector['x-kubernetes-preserve-unknown-fields']).toBeUndefined();
    expect(spec.properties.namespace.type).toBe('string');
    expect(spec['x-kubernetes-validations']).toBeUndefined();
  });

  it('types the supported injection features: injectionStrategy.revision, transferEnv.sourceContainerNameFrom, patchPodMetadata', () => {
    const spec = version().schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.injectionStrategy.properties.revision.properties.policy.enum).toEqual(['Always', 'Partial']);
    expect(spec.properties.injectionStrategy['x-kubernetes-validations']).toBeUndefined();
    expect(
      spec.properties.containers.items.properties.transferEnv.items.properties.sourceContainerNameFrom.properties
        .fieldRef.required,
    ).toEqual(['fieldPath']);
    expect(spec.properties.patchPodMetadata.items.properties.patchPolicy.enum).toEqual([
      'Retain',
      'Overwrite',
      'MergePatchJson',
    ]);
  });

  it('types upstream list fields it refuses as lists', () => {
    const spec = version().schema.openAPIV3Schema.properties.spec;
    // Upstream's scatterStrategy is a list: typed so, an upstream manifest gets "not supported", not a type error.
    expect(spec.properties.updateStrategy.properties.scatterStrategy.type).toBe('array');
  });
});
