/**
 * Pushes an image made of cached layer files and a config with the project's registry client
 * (lib/image/registry.ts): blobs the registry already has are skipped, the others streamed from
 * disk in chunks, every blob checked present, and the manifest written last. A tag that already
 * holds the same manifest is left alone, so a warm run writes nothing.
 */
import { createReadStream } from 'node:fs';
import { canonicalJson, sha256Hex } from '../../../lib/image/build-context.js';
import type { ImageConfig } from '../../../lib/image/image-config.js';
import { type ImageManifest, MediaTypes } from '../../../lib/image/oci.js';
import { RegistryClient, rechunk } from '../../../lib/image/registry.js';
import { RegistryHttp } from '../../../lib/image/registry-http.js';
import type { LayerBlob } from './layer.js';

export interface ImageToPush {
  /** host:port of the registry. */
  readonly registry: string;
  /** Repository path in it (`openkruise/kruise-manager`). */
  readonly repository: string;
  readonly tag: string;
  readonly layers: readonly LayerBlob[];
  /** The config without rootfs, which is derived from the layers. */
  readonly config: Omit<ImageConfig, 'rootfs'>;
  /** Registries reached over plain HTTP besides loopback ones. */
  readonly plainHttp?: readonly string[];
}

export interface PushedImage {
  /** `registry/repository:tag`. */
  readonly reference: string;
  readonly digest: string;
  /** The tag already held this manifest and every blob: nothing was written. */
  readonly upToDate: boolean;
  /** Sum of the compressed layers (a cold pull), and of the unpacked tars. */
  readonly compressedSize: number;
  readonly uncompressedSize: number;
  readonly uploadedBlobs: number;
  readonly uploadedBytes: number;
}

export function registryClient(registry: string, plainHttp: readonly string[] = []): RegistryClient {
  return new RegistryClient(new RegistryHttp(registry, { plainHttp }));
}

/** The manifest and config bytes: a pure function of the layers and the config. */
export function imageDocuments(image: Pick<ImageToPush, 'layers' | 'config'>): {
  config: Buffer;
  manifest: Buffer;
  digest: string;
} {
  const configValue: ImageConfig = {
    ...image.config,
    rootfs: { type: 'layers', diff_ids: image.layers.map((l) => l.diffId) },
  };
  const config = Buffer.from(canonicalJson(configValue), 'utf8');
  const manifestValue: ImageManifest = {
    schemaVersion: 2,
    mediaType: MediaTypes.ociManifest,
    config: { mediaType: MediaTypes.ociConfig, digest: `sha256:${sha256Hex(config)}`, size: config.byteLength },
    layers: image.layers.map((l) => ({ mediaType: MediaTypes.ociLayerGzip, digest: l.digest, size: l.size })),
  };
  const manifest = Buffer.from(canonicalJson(manifestValue), 'utf8');
  return { config, manifest, digest: `sha256:${sha256Hex(manifest)}` };
}

export async function pushImage(image: ImageToPush, log: (line: string) => void): Promise<PushedImage> {
  const reference = `${image.registry}/${image.repository}:${image.tag}`;
  const client = registryClient(image.registry, image.plainHttp);
  const docs = imageDocuments(image);
  const configDigest = `sha256:${sha256Hex(docs.config)}`;
  const repo = image.repository;
  const sizes = {
    compressedSize: image.layers.reduce((n, l) => n + l.size, 0),
    uncompressedSize: image.layers.reduce((n, l) => n + l.tarSize, 0),
  };
  const blobs = [...image.layers.map((l) => l.digest), configDigest];
  const missing = async () => {
    const out: string[] = [];
    for (const d of blobs) if (!(await client.blobExists(repo, d, `checking blob ${d} of ${reference}`))) out.push(d);
    return out;
  };

  const existing = await client.getManifest(repo, image.tag, `checking the tag ${reference}`);
  if (existing?.digest === docs.digest && (await missing()).length === 0) {
    log(`${reference} is up to date (${docs.digest})`);
    return { reference, digest: docs.digest, upToDate: true, ...sizes, uploadedBlobs: 0, uploadedBytes: 0 };
  }
  let uploadedBlobs = 0;
  let uploadedBytes = 0;
  for (const layer of image.layers) {
    const action = `pushing layer ${layer.digest} (${layer.size} bytes) of ${reference}`;
    if (await client.blobExists(repo, layer.digest, action)) continue;
    await client.uploadBlob(repo, layer.digest, rechunk(createReadStream(layer.path), client.chunkSize), action);
    uploadedBlobs++;
    uploadedBytes += layer.size;
    log(`uploaded ${layer.digest.slice(0, 19)} (${layer.size} bytes) to ${repo}`);
  }
  if (!(await client.blobExists(repo, configDigest, `checking the config of ${reference}`))) {
    await client.uploadBlob(repo, configDigest, [docs.config], `pushing the config of ${reference}`);
    uploadedBlobs++;
    uploadedBytes += docs.config.byteLength;
  }
  const absent = await missing();
  if (absent.length)
    throw new Error(
      `registry ${image.registry} still lacks ${absent.join(', ')} after uploading them for ${reference}`,
    );
  await client.putManifest(repo, image.tag, MediaTypes.ociManifest, docs.manifest, `tagging ${reference}`);
  log(`pushed ${reference}@${docs.digest}`);
  return { reference, digest: docs.digest, upToDate: false, ...sizes, uploadedBlobs, uploadedBytes };
}
