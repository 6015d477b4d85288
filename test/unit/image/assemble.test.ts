import { describe, expect, it } from '@jest/globals';
import { assembleImage, assembleIndex } from '../../../lib/image/assemble.js';
import type { BasePlatformImage } from '../../../lib/image/base-image.js';
import type { ImageJson } from '../../../lib/image/build-context.js';
import { BASE_DIGEST_LABEL, appendAppLayer } from '../../../lib/image/image-config.js';
import { MediaTypes, parsePlatform, selectPlatform } from '../../../lib/image/oci.js';
import { rechunk } from '../../../lib/image/registry.js';

const digest = (c: string) => `sha256:${c.repeat(64)}`;
const fragment: ImageJson['config'] = {
  user: '65532:65532',
  entrypoint: ['node', '--enable-source-maps', '/app/main.mjs'],
  cmd: [],
  workingDir: '/app',
  env: ['NODE_ENV=production'],
  labels: { 'org.opencontainers.image.title': 't' },
  created: '1970-01-01T00:00:00Z',
};
const nodeBase: BasePlatformImage = {
  platform: { os: 'linux', architecture: 'amd64' },
  manifestDigest: digest('b'),
  manifestMediaType: MediaTypes.dockerManifest,
  manifest: {
    schemaVersion: 2,
    config: { mediaType: MediaTypes.dockerConfig, digest: digest('c'), size: 10 },
    layers: [{ mediaType: MediaTypes.dockerLayerGzip, digest: digest('d'), size: 1000 }],
  },
  config: {
    architecture: 'amd64',
    os: 'linux',
    config: {
      Env: ['PATH=/usr/local/bin:/usr/bin', 'NODE_ENV=development', 'NODE_VERSION=24.21.0'],
      Entrypoint: ['docker-entrypoint.sh'],
      Cmd: ['node'],
      Labels: { maintainer: 'x' },
    },
    rootfs: { type: 'layers', diff_ids: [digest('e')] },
    history: [{ created_by: 'base' }],
  },
};
const image = {
  base: 'docker.io/library/node:24',
  config: fragment,
  files: [{ path: 'app/main.mjs' }, { path: 'app/main.mjs.map' }],
} as ImageJson;
const layer = { blob: new Uint8Array(50), digest: digest('f'), diffId: digest('0') };

describe('the app layer on a base', () => {
  it('replaces user, entrypoint and workdir, drops the base CMD, and overrides env by name', () => {
    const config = appendAppLayer(nodeBase.config, {
      fragment,
      diffId: digest('0'),
      baseName: image.base,
      baseDigest: digest('b'),
      files: ['app/main.mjs'],
    });
    expect(config.config).toEqual({
      User: '65532:65532',
      Entrypoint: fragment.entrypoint,
      WorkingDir: '/app',
      Env: ['PATH=/usr/local/bin:/usr/bin', 'NODE_VERSION=24.21.0', 'NODE_ENV=production'],
      Labels: {
        maintainer: 'x',
        'org.opencontainers.image.title': 't',
        'org.opencontainers.image.base.name': image.base,
        [BASE_DIGEST_LABEL]: digest('b'),
      },
    });
    expect(config.rootfs.diff_ids).toEqual([digest('e'), digest('0')]);
    expect(config.history).toHaveLength(2);
    expect(config.created).toBe('1970-01-01T00:00:00Z');
  });

  it('keeps the base manifest family and appends exactly one layer, deterministically', () => {
    const a = assembleImage(nodeBase, layer, image);
    expect(a.mediaType).toBe(MediaTypes.dockerManifest);
    expect(a.manifest.config.mediaType).toBe(MediaTypes.dockerConfig);
    expect(a.manifest.layers.map((l) => l.digest)).toEqual([digest('d'), digest('f')]);
    expect(a.manifest.annotations).toBeUndefined(); // Docker schema 2 has none
    expect(assembleImage(nodeBase, layer, image).digest).toBe(a.digest);
    const oci = assembleImage({ ...nodeBase, manifestMediaType: MediaTypes.ociManifest }, layer, image);
    expect(oci.manifest.annotations?.[BASE_DIGEST_LABEL]).toBe(digest('b'));
    const index = JSON.parse(Buffer.from(assembleIndex([oci]).bytes).toString());
    expect(index).toMatchObject({
      mediaType: MediaTypes.ociIndex,
      manifests: [{ digest: oci.digest, platform: { os: 'linux', architecture: 'amd64' } }],
    });
  });

  it('picks a platform out of an index, any variant unless one is asked for', () => {
    const index = {
      schemaVersion: 2 as const,
      manifests: [
        {
          mediaType: MediaTypes.ociManifest,
          digest: digest('1'),
          size: 1,
          platform: { os: 'linux', architecture: 'amd64' },
        },
        {
          mediaType: MediaTypes.ociManifest,
          digest: digest('2'),
          size: 1,
          platform: { os: 'linux', architecture: 'arm64', variant: 'v8' },
        },
      ],
    };
    expect(selectPlatform(index, parsePlatform('linux/arm64'))?.digest).toBe(digest('2'));
    expect(selectPlatform(index, parsePlatform('linux/arm64/v7'))).toBeUndefined();
    expect(() => parsePlatform('amd64')).toThrow(/platform "amd64" is not os\/architecture/);
  });

  it('re-cuts a stream into upload chunks', async () => {
    async function* pieces() {
      yield Buffer.from('abc');
      yield Buffer.from('defgh');
      yield Buffer.from('i');
    }
    const out: string[] = [];
    for await (const c of rechunk(pieces(), 4)) out.push(Buffer.from(c).toString());
    expect(out).toEqual(['abcd', 'efgh', 'i']);
  });
});
