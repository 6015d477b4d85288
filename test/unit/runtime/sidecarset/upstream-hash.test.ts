/**
 * Upstream's SidecarSet hash, ported as facts from its own test tables. Each case cites the
 * upstream file (github.com/openkruise/kruise v1.9.1, whose tables are v1.8.3's) it comes from; the differential test
 * against upstream's own code is test/integration/sidecarset-upstream-hash.test.ts.
 */
import { describe, expect, it } from '@jest/globals';
import {
  canonicalQuantity,
  GoEncodingError,
  upstreamSidecarSetHash,
} from '../../../../lib/runtime/sidecarset/gojson.js';

const always = 'Always';
const c1 = { name: 'container1', image: 'test-image' };

// pkg/control/sidecarcontrol/hash_test.go TestSidecarSetHash
const HASH_TABLE = [
  {
    name: 'containers',
    spec: { containers: [c1] },
    expect: 'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
  },
  {
    name: 'containers and initContainers',
    spec: { containers: [c1], initContainers: [c1] },
    expect: 'w26c4x8fz245642fdv499b464248f974xddx4x55z5dw55bc6x66464fxz77dc78',
  },
  {
    name: 'containers and initContainers with restartPolicy=Always',
    spec: { containers: [c1], initContainers: [{ ...c1, restartPolicy: always }] },
    expect: '4xwx4d4844vd4v9x79wb4xbxf4xb29475cc4446v8cz2c2f2f5c5bw448vd42z8w',
  },
];
// pkg/control/sidecarcontrol/hash_test.go TestSidecarSetHashWithoutImage
const WITHOUT_IMAGE_TABLE = [
  {
    name: 'containers and initContainers',
    spec: { containers: [c1], initContainers: [c1] },
    expect: '8wzddb4dvv9c6x8zdc77z4z75987424f457dfv6724ddw6zbdx467wz5x24fc759',
  },
  {
    name: 'containers and initContainers with restartPolicy=Always',
    spec: { containers: [c1], initContainers: [{ ...c1, restartPolicy: always }] },
    expect: '5725fw8bwbx249bw57v5892c847dzf48bww9zb7c86xb95264fdz26654847b2c8',
  },
];

describe('upstreamSidecarSetHash (upstream hash_test.go)', () => {
  it.each(HASH_TABLE)('SidecarSetHash: $name', ({ spec, expect: want }) => {
    expect(upstreamSidecarSetHash(spec)).toBe(want);
    // upstream: changing an image changes the hash
    expect(upstreamSidecarSetHash({ ...spec, containers: [{ ...c1, image: 'new-image' }] })).not.toBe(want);
  });
  it.each(WITHOUT_IMAGE_TABLE)('SidecarSetHashWithoutImage: $name', ({ spec, expect: want }) => {
    expect(upstreamSidecarSetHash(spec, true)).toBe(want);
    // upstream: changing only images keeps the hash without image
    const images = {
      containers: [{ ...c1, image: 'new-image' }],
      initContainers: spec.initContainers.map((c) => ({ ...c, image: 'new-image' })),
    };
    expect(upstreamSidecarSetHash(images, true)).toBe(want);
  });
  // v1.9.1's two new SidecarContainer pointers: absent, the hash is v1.8.3's (above); set, even to {}, it changes.
  // The values are what upstream v1.9.1's own SidecarSetHash and SidecarSetHashWithoutImage give (sidecarset-oracle
  // hash, 2026-11-29); this runtime refuses both fields at admission but hashes them as upstream does.
  it.each([
    [
      'shareVolumeDevicePolicy enabled',
      { shareVolumeDevicePolicy: { type: 'enabled' } },
      'd4f44vdd6db928c2844x45v48f96427d4d44v5569967dd7w8fc694fb8wwbv494',
      '6z5cdxw55dzc42b964d68w68wz9cv2zxw77c9z4894v7x4w6z4x89c6x7298zcxc',
    ],
    [
      'shareVolumeDevicePolicy {}',
      { shareVolumeDevicePolicy: {} },
      'fb4fzc6w2cxcvwdddbzzbzxx864c44fcc464f544vwzvb29vvfw9x6vzd42xwcfc',
      'ff4bz4d952d28z77w4zdc848v4w9w44xx9xfwd8c98v84782zwv62z8bx62f9c5d',
    ],
    [
      'resourcesPolicy',
      {
        resourcesPolicy: {
          targetContainersMode: 'sum',
          targetContainersNameRegex: '.*',
          resourcesExpr: { limits: { cpu: 'cpu*50%' } },
        },
      },
      'bd8644d7ddz67cv8bzzwwzw2z2f87w5zf44w674x8bc47z2xc27z4zz489f85w25',
      '494wz4224ccfc4d46wx9w866ff42854xfdx79c549d8vfb4c95xvd7xx98w25b4b',
    ],
  ])('v1.9.1 field %s changes both hashes', (_name, extra, hash, withoutImage) => {
    const spec = { containers: [{ ...c1, ...extra }] };
    expect(upstreamSidecarSetHash(spec)).toBe(hash);
    expect(upstreamSidecarSetHash(spec, true)).toBe(withoutImage);
  });
  it('names a field upstream does not have instead of hashing it', () => {
    expect(() => upstreamSidecarSetHash({ containers: [{ ...c1, bogus: 1 }] })).toThrow(
      new GoEncodingError(
        "spec.containers[0].bogus: is not a field of upstream's v1alpha1.SidecarContainer; remove it",
      ),
    );
  });
});

describe('canonicalQuantity (resource.Quantity String(), k8s.io/apimachinery quantity_test.go)', () => {
  it.each([
    ['100m', '100m'],
    ['0.1', '100m'],
    ['1000m', '1'],
    ['1024Mi', '1Gi'],
    ['1536Mi', '1536Mi'],
    ['1Gi', '1Gi'],
    ['1000k', '1M'],
    ['0', '0'],
    ['512', '512'],
    ['1.5Gi', '1536Mi'],
    ['100Ki', '100Ki'],
    ['0.5Ki', '512'],
    ['1e3', '1e3'],
    ['1000', '1k'],
    [1, '1'],
    [0.25, '250m'],
    ['1n', '1n'],
    ['0.0000000001', '1n'],
  ])('%j -> %s', (input, want) => {
    expect(canonicalQuantity(input, 'q')).toBe(want);
  });
  it('names a value that is not a quantity', () => {
    expect(() => canonicalQuantity('lots', 'spec.containers[0].resources.limits.cpu')).toThrow(
      'spec.containers[0].resources.limits.cpu: "lots" is not a quantity like "100m" or "128Mi"',
    );
  });
});
