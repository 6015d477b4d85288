import { describe, expect, it } from '@jest/globals';
import { ManagerFlavor, ManagerImage, UPSTREAM_VERSION } from '../../../lib/index.js';

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

  it('refuses a release other than the one whose definitions are rendered, naming the fix', () => {
    expect(() => ManagerImage.upstream({ version: 'v1.8.2' })).toThrow(
      /^image.version: is not v1\.8\.3, the release whose own definitions .* \(got "v1\.8\.2"\)\. Fix: use "v1\.8\.3", or regenerate the definitions for v1\.8\.2 with `npm run upstream:generate -- --version v1\.8\.2`/,
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
