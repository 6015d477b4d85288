// A tiny two-platform base image the tests build and push themselves with the publish
// client: per platform a config (PATH, CMD ["node"] like the node images) and one layer.
import { createHash } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../../lib/image/build-context.js';
import { buildLayer } from '../../lib/image/layer.js';
import { MediaTypes } from '../../lib/image/oci.js';
import type { RegistryClient } from '../../lib/image/registry.js';

export interface TestBase {
  /** Digest of the index under the tag. */
  readonly digest: string;
  readonly manifests: Record<'amd64' | 'arm64', { digest: string; layerDigest: string; layerSize: number }>;
}

/** Incompressible, deterministic filler, so copying the layer takes several upload chunks. */
function filler(bytes: number, seed: string): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; parts.length * 32 < bytes; i++) parts.push(createHash('sha256').update(`${seed}${i}`).digest());
  return Buffer.concat(parts).subarray(0, bytes);
}

/** `seed` changes the layer content: the same tag pushed again with another seed is a "moved" base tag. */
export async function pushTestBase(
  client: RegistryClient,
  repository: string,
  tag: string,
  seed = 'base',
): Promise<TestBase> {
  const manifests = {} as TestBase['manifests'];
  const descriptors = [];
  for (const arch of ['amd64', 'arm64'] as const) {
    const layer = await buildLayer(
      [
        { path: 'usr/local/bin/node', content: Buffer.from(`#!/bin/sh\necho fake node for ${arch}\n`), mode: 0o755 },
        { path: 'usr/share/base/filler.bin', content: filler(300 * 1024, `${seed}-${arch}`), mode: 0o644 },
      ],
      0,
    );
    const config = Buffer.from(
      canonicalJson({
        architecture: arch,
        os: 'linux',
        config: {
          Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=development'],
          Entrypoint: ['docker-entrypoint.sh'],
          Cmd: ['node'],
        },
        rootfs: { type: 'layers', diff_ids: [layer.diffId] },
        history: [{ created_by: 'test base layer' }],
      }),
    );
    const configDigest = `sha256:${sha256Hex(config)}`;
    await client.uploadBlob(repository, layer.digest, [layer.blob], 'pushing the test base layer');
    await client.uploadBlob(repository, configDigest, [config], 'pushing the test base config');
    const manifest = Buffer.from(
      canonicalJson({
        schemaVersion: 2,
        mediaType: MediaTypes.ociManifest,
        config: { mediaType: MediaTypes.ociConfig, digest: configDigest, size: config.byteLength },
        layers: [{ mediaType: MediaTypes.ociLayerGzip, digest: layer.digest, size: layer.blob.byteLength }],
      }),
    );
    const digest = `sha256:${sha256Hex(manifest)}`;
    await client.putManifest(repository, digest, MediaTypes.ociManifest, manifest, 'pushing the test base manifest');
    manifests[arch] = { digest, layerDigest: layer.digest, layerSize: layer.blob.byteLength };
    descriptors.push({
      mediaType: MediaTypes.ociManifest,
      digest,
      size: manifest.byteLength,
      platform: { os: 'linux', architecture: arch },
    });
  }
  const index = Buffer.from(
    canonicalJson({ schemaVersion: 2, mediaType: MediaTypes.ociIndex, manifests: descriptors }),
  );
  const digest = await client.putManifest(repository, tag, MediaTypes.ociIndex, index, 'pushing the test base index');
  return { digest, manifests };
}
