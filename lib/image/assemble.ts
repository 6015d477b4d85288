/**
 * The new image's config and manifest (one per platform), and the index over them. Pure:
 * the same base, context and layer always give the same bytes, hence the same digests.
 */
import { type ImageJson, canonicalJson, sha256Hex } from './build-context.js';
import { BASE_DIGEST_LABEL, BASE_NAME_LABEL, appendAppLayer } from './image-config.js';
import type { BasePlatformImage } from './base-image.js';
import type { BuiltLayer } from './layer.js';
import { type Descriptor, type ImageIndex, type ImageManifest, type Platform, MediaTypes, familyOf } from './oci.js';

export interface Document {
  readonly mediaType: string;
  readonly bytes: Uint8Array;
  readonly digest: string;
}

export interface AssembledImage extends Document {
  readonly platform: Platform;
  readonly base: BasePlatformImage;
  readonly config: Document;
  readonly manifest: ImageManifest;
}

export function assembleImage(base: BasePlatformImage, layer: BuiltLayer, image: ImageJson): AssembledImage {
  const family = familyOf(base.manifestMediaType);
  const config = appendAppLayer(base.config, {
    fragment: image.config,
    diffId: layer.diffId,
    baseName: image.base,
    baseDigest: base.manifestDigest,
    files: image.files.map((f) => f.path),
  });
  const configDoc = document(family.config, config);
  const manifest: ImageManifest = {
    schemaVersion: 2,
    mediaType: family.manifest,
    config: { mediaType: family.config, digest: configDoc.digest, size: configDoc.bytes.byteLength },
    layers: [...base.manifest.layers, { mediaType: family.layer, digest: layer.digest, size: layer.blob.byteLength }],
    // Docker schema 2 has no annotations; OCI defines these two for exactly this.
    ...(family.manifest === MediaTypes.ociManifest
      ? { annotations: { [BASE_NAME_LABEL]: image.base, [BASE_DIGEST_LABEL]: base.manifestDigest } }
      : {}),
  };
  return { ...document(family.manifest, manifest), platform: base.platform, base, config: configDoc, manifest };
}

export function assembleIndex(images: readonly AssembledImage[]): Document {
  const family = familyOf(images[0].mediaType);
  const manifests: Descriptor[] = images.map((i) => ({
    mediaType: i.mediaType,
    digest: i.digest,
    size: i.bytes.byteLength,
    platform: i.platform,
  }));
  const index: ImageIndex = { schemaVersion: 2, mediaType: family.index, manifests };
  return document(family.index, index);
}

function document(mediaType: string, value: unknown): Document {
  const bytes = Buffer.from(canonicalJson(value), 'utf8');
  return { mediaType, bytes, digest: `sha256:${sha256Hex(bytes)}` };
}
