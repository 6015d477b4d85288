import { describe, expect, it } from '@jest/globals';
import { UPSTREAM_VERSION, UPSTREAM_VERSIONS } from '../../../lib/constructs/manager/image.js';
import { ManagerFlavor, ManagerImage } from '../../../lib/index.js';

describe('ManagerImage', () => {
  it('defaults to the upstream release on Docker Hub', () => {
    const image = ManagerImage.upstream();
    expect(image.reference).toBe(`openkruise/kruise-manager:${UPSTREAM_VERSION}`);
    expect(image.flavor).toBe(ManagerFlavor.UPSTREAM);
  });

  it('pulls from a mirror registry for offline clusters', () => {
    expect(ManagerImage.upstream({ registry: 'registry.local:5000/mirror/', version: 'v1.8.3' }).reference).toBe(
      'registry.local:5000/mirror/kruise-manager:v1.8.3',
    );
  });

  it('defaults to the newest stable release and selects any release it has definitions for', () => {
    expect(UPSTREAM_VERSION).toBe('v1.9.1');
    expect(UPSTREAM_VERSIONS).toEqual(['v1.7.0', 'v1.8.3', 'v1.9.1']);
    for (const version of UPSTREAM_VERSIONS) {
      const image = ManagerImage.upstream({ version });
      expect(image.reference).toBe(`openkruise/kruise-manager:${version}`);
      expect(image.upstreamVersion).toBe(version);
    }
    expect(ManagerImage.runtime('r.example.com/x:1').upstreamVersion).toBeUndefined();
  });

  it('refuses a release it has no definitions for, naming the releases and how to add one', () => {
    expect(() => ManagerImage.upstream({ version: 'v1.8.2' })).toThrow(
      /^image.version: is not a release this library has upstream's own definitions .* \(got "v1\.8\.2"\)\. Fix: use one of v1\.7\.0, v1\.8\.3, v1\.9\.1 \(default v1\.9\.1\), or add v1\.8\.2 with `npm run upstream:generate -- --version v1\.8\.2` and its real-binary test \(docs\/upstream-releases\.md\)/,
    );
  });

  it('takes a pinned runtime image, directly or from a builder', () => {
    expect(ManagerImage.runtime('r.example.com/kruise-ha:1.0').flavor).toBe(ManagerFlavor.RUNTIME);
    const digest = `r.example.com/kruise-ha@sha256:${'a'.repeat(64)}`;
    expect(ManagerImage.fromRuntime({ imageReference: digest }).reference).toBe(digest);
  });

  it('rejects unpinned or malformed references with the fix', () => {
    expect(() => ManagerImage.runtime('r.example.com/kruise-ha')).toThrow(
      /image: has no tag or digest.*Fix: pin the image/,
    );
    expect(() => ManagerImage.runtime('has space:1')).toThrow(/image: is not a valid image reference/);
    expect(() => ManagerImage.upstream({ version: 'v1 8' })).toThrow(
      /image.version: is not a valid image tag \(got "v1 8"\)/,
    );
    expect(() => ManagerImage.upstream({ registry: 'UPPER/x' })).toThrow(/image.registry/);
  });
});
