/**
 * Several upstream releases in one package: each rebuilt exactly from the stored base and its
 * difference, and the typed description of what changes between two of them that
 * `kruise-ha upgrade-diff` prints.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Writable } from 'node:stream';
import { applyPatch, diffJson, type Json } from '../../../lib/upstream/json-patch.js';
import { UPSTREAM_RELEASES, upstreamRelease } from '../../../lib/upstream/releases.js';
import { releaseDiff, renderReleaseDiff } from '../../../lib/upstream/upgrade.js';
import { main } from '../../../lib/doctor/cli.js';

const clone = (v: Json): Json => JSON.parse(JSON.stringify(v)) as Json;

describe('json patch of the stored releases', () => {
  it('turns any JSON value into any other', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        // As stored (JSON text): fast-check's values include -0, which JSON has no way to write.
        const from = clone({ root: a as Json });
        const to = clone({ root: b as Json });
        expect(applyPatch(clone(from), diffJson(from, to))).toEqual(to);
      }),
      { numRuns: 300 },
    );
  });

  it("treats keys named like Object.prototype's properties as data (valueOf, toString, __proto__)", () => {
    for (const [a, b] of [
      [{ root: 1 }, { root: { valueOf: false } }],
      [{ root: { valueOf: false } }, { root: {} }],
      [{ toString: 'x' }, { toString: 'y', constructor: [1] }],
      [JSON.parse('{"__proto__":{"a":1}}') as Json, JSON.parse('{"__proto__":{"a":2},"b":[]}') as Json],
    ] as Array<[Json, Json]>) {
      const patched = applyPatch(clone(a), diffJson(a, b));
      expect(patched).toEqual(b);
      expect(JSON.stringify(patched)).toBe(JSON.stringify(b));
    }
  });

  it('rebuilds arrays of named items by name (CRD versions, flags, gates)', () => {
    const schema = 'x'.repeat(2_000); // the part worth sharing
    const from = { versions: [{ name: 'v1alpha1', served: true, storage: true, schema }] };
    const to = {
      versions: [
        { name: 'v1beta1', served: true, storage: true, schema: 'new' },
        { name: 'v1alpha1', served: true, storage: false, schema },
      ],
    };
    const ops = diffJson(from, to);
    expect(ops).toEqual([
      [['versions'], null, [{ value: to.versions[0] }, 0]],
      [['versions', 1, 'storage'], false],
    ]);
    expect(applyPatch(clone(from), ops)).toEqual(to);
  });

  it('refuses a patch that does not fit, naming where', () => {
    expect(() => applyPatch({ a: 1 }, [[['b', 'c'], 2]])).toThrow(/no container at \/b\/c/);
    expect(() => applyPatch({ a: 1 }, [[[]]])).toThrow(/the root can only be replaced/);
  });

  it('gives every release its own version, checksum and inventory', () => {
    const sums = new Set(UPSTREAM_RELEASES.map((v) => upstreamRelease(v).sum));
    expect(sums.size).toBe(UPSTREAM_RELEASES.length);
    // Rebuilding twice gives the same object (cached), and a fresh parse of the base is not mutated by patches.
    expect(upstreamRelease('v1.8.3')).toBe(upstreamRelease('v1.8.3'));
    expect(upstreamRelease('v1.9.1').crds.find((c) => c.kind === 'SidecarSet')!.storageVersion).toBe('v1beta1');
    expect(upstreamRelease('v1.8.3').crds.find((c) => c.kind === 'SidecarSet')!.storageVersion).toBe('v1alpha1');
  });
});

describe('releaseDiff', () => {
  it('describes v1.8.3 -> v1.9.1: new stored versions, renamed ImagePullJob webhooks, new gates and flags', () => {
    const d = releaseDiff('v1.8.3', 'v1.9.1');
    expect(d.direction).toBe('upgrade');
    expect(d.blockers).toEqual([]);
    expect(d.crds.added).toEqual([]);
    expect(d.crds.changed.filter((c) => c.storageVersion).map((c) => c.name)).toEqual([
      'advancedcronjobs.apps.kruise.io',
      'broadcastjobs.apps.kruise.io',
      'daemonsets.apps.kruise.io',
      'imagelistpulljobs.apps.kruise.io',
      'imagepulljobs.apps.kruise.io',
      'nodeimages.apps.kruise.io',
      'sidecarsets.apps.kruise.io',
    ]);
    expect(d.crds.changed.find((c) => c.name === 'sidecarsets.apps.kruise.io')).toMatchObject({
      servedAdded: ['v1beta1'],
      storageVersion: { from: 'v1alpha1', to: 'v1beta1' },
      conversionWebhook: { from: false, to: true },
    });
    expect(d.webhooks.removed.map((w) => w.name)).toEqual([
      'mimagelistpulljob.kb.io',
      'mimagepulljob.kb.io',
      'vimagelistpulljob.kb.io',
      'vimagepulljob.kb.io',
    ]);
    expect(d.webhooks.added.map((w) => w.name)).toEqual([
      'mimagelistpulljob-v1beta1.kb.io',
      'mimagepulljob-v1beta1.kb.io',
      'vimagelistpulljob-v1beta1.kb.io',
      'vimagepulljob-v1beta1.kb.io',
    ]);
    expect(d.webhooks.changed.find((w) => w.name === 'msidecarset.kb.io')?.changes).toContain(
      'path /mutate-apps-kruise-io-v1alpha1-sidecarset -> /mutate-apps-kruise-io-sidecarset',
    );
    expect(d.featureGates.added).toEqual(['EnableSortSidecarContainerByName', 'InPlacePodVerticalScaling']);
    expect(d.flags.added).toEqual(['default-ttlseconds-for-always-nodeimage', 'webhook-initialize-timeout']);
    expect(d.managerRbac.added).toEqual(['core/pods/resize:get', 'core/pods/resize:patch', 'core/pods/resize:update']);
    expect(d.notes.join('\n')).toMatch(/storage version changes .*sidecarsets\.apps\.kruise\.io v1alpha1 -> v1beta1/);
    expect(d.notes.join('\n')).toMatch(/webhooks no longer in v1\.9\.1 \(mimagelistpulljob\.kb\.io/);
  });

  it('refuses the downgrade v1.9.1 -> v1.8.3: objects stored as v1beta1 could no longer be read', () => {
    const d = releaseDiff('v1.9.1', 'v1.8.3');
    expect(d.direction).toBe('downgrade');
    expect(d.blockers).toHaveLength(7);
    expect(d.blockers[0]).toMatch(
      /^advancedcronjobs\.apps\.kruise\.io: v1\.9\.1 stores objects as v1beta1, which v1\.8\.3 does not serve/,
    );
  });

  it('documents the downgrade v1.8.3 -> v1.7.0 and a changed gate default between v1.7.0 and v1.8.3', () => {
    const down = releaseDiff('v1.8.3', 'v1.7.0');
    expect(down.blockers).toEqual([]);
    expect(down.notes[0]).toMatch(/^a downgrade: v1\.8\.3 may already have written objects/);
    expect(down.featureGates.removed).toEqual([
      'EnablePodProbeMarkerOnServerless',
      'ForceDeleteTimeoutExpectationGate',
      'InPlaceWorkloadVerticalScaling',
      'StatefulSetAutoResizePVCGate',
    ]);
    expect(releaseDiff('v1.7.0', 'v1.8.3').featureGates.defaultChanged).toEqual([
      { name: 'ResourcesDeletionProtection', from: 'true', to: 'false' },
    ]);
    expect(releaseDiff('v1.9.1', 'v1.9.1')).toMatchObject({ direction: 'same', blockers: [], notes: [] });
  });

  it('refuses a release it has no data for', () => {
    expect(() => releaseDiff('v1.8.3', 'v2.0.0')).toThrow(/v2\.0\.0 is not a release this library renders/);
  });

  it('prints sections, blockers first', () => {
    const text = renderReleaseDiff(releaseDiff('v1.9.1', 'v1.8.3'));
    expect(text.split('\n')[0]).toBe('kruise-manager v1.9.1 -> v1.8.3 (downgrade)');
    expect(text.indexOf('Blockers')).toBeLessThan(text.indexOf('CRDs changed'));
  });
});

describe('kruise-ha upgrade-diff', () => {
  const capture = () => {
    let text = '';
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        text += chunk.toString();
        done();
      },
    });
    return { stream, text: () => text };
  };
  const cli = async (...argv: string[]) => {
    const out = capture();
    const err = capture();
    const code = await main(argv, { stdout: out.stream, stderr: err.stream, env: {} });
    return { code, stdout: out.text(), stderr: err.text() };
  };

  it('prints the upgrade and exits 0; a blocked downgrade exits 1; JSON on request', async () => {
    const up = await cli('upgrade-diff', 'v1.8.3', 'v1.9.1');
    expect(up.code).toBe(0);
    expect(up.stdout).toMatch(/^kruise-manager v1\.8\.3 -> v1\.9\.1 \(upgrade\)/);
    expect((await cli('upgrade-diff', 'v1.9.1', 'v1.8.3')).code).toBe(1);
    const json = await cli('upgrade-diff', 'v1.7.0', 'v1.9.1', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ from: 'v1.7.0', to: 'v1.9.1', direction: 'upgrade' });
  });

  it('names a bad release and the fix', async () => {
    const bad = await cli('upgrade-diff', 'v1.8.3', 'v1.9.0');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /v1\.9\.0 is not a release this library renders \(got "v1\.9\.0"\)\. Fix: use one of v1\.7\.0, v1\.8\.3, v1\.9\.1/,
    );
    expect((await cli('upgrade-diff', 'v1.8.3')).stderr).toMatch(/needs two releases \(got 1\)/);
  });
});
