import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chart, Testing } from 'cdk8s';
import { sidecarSetCrd } from '../../../lib/constructs/crds/runtime-crds.js';
import { CrdSource, KruiseCrds } from '../../../lib/index.js';

function synth(source: CrdSource) {
  const chart = new Chart(Testing.app(), 'test');
  new KruiseCrds(chart, 'c', source);
  return Testing.synth(chart);
}

describe('KruiseCrds', () => {
  it('renders manifests given as objects', () => {
    expect(synth(CrdSource.fromManifests([sidecarSetCrd()])).map((o) => o.metadata.name)).toEqual([
      'sidecarsets.apps.kruise.io',
    ]);
  });

  it('includes CRDs from a local file and refuses files with other kinds', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crds-'));
    const good = join(dir, 'crds.yaml');
    writeFileSync(
      good,
      'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: foos.example.com\nspec: {}\n',
    );
    expect(synth(CrdSource.fromFile(good))[0].metadata.name).toBe('foos.example.com');
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n');
    expect(() => synth(CrdSource.fromFile(bad))).toThrow(
      /crds: contains a ConfigMap "x", not only CustomResourceDefinitions/,
    );
  });

  it('validates sources', () => {
    expect(() => CrdSource.fromFile('crds.json')).toThrow(/crds: is not a .yaml\/.yml file/);
    expect(() => CrdSource.fromUrl('http://example.com/crds.yaml')).toThrow(/crds: is not an https URL/);
    expect(synth(CrdSource.none())).toEqual([]);
    expect(() => synth(CrdSource.fromManifests([{ manifest: { kind: 'ConfigMap' } }]))).toThrow(
      /crds\[0\].kind: is not CustomResourceDefinition/,
    );
  });
});
