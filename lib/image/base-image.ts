/**
 * Resolves the base image: tag → digest, an index → the manifest of each wanted platform,
 * and each platform's config. Nothing but manifests and configs is downloaded: the base's
 * layers are mounted or streamed registry to registry later, never unpacked.
 */
import type { ImageConfig } from './image-config.js';
import {
  type Descriptor,
  type ImageIndex,
  type ImageManifest,
  type Platform,
  formatPlatform,
  isIndex,
  isManifest,
  selectPlatform,
} from './oci.js';
import { type ImageReference, formatReference } from './reference.js';
import type { RegistryClient } from './registry.js';
import { RegistryError } from './registry-http.js';

export interface BasePlatformImage {
  /** As the base's index lists it (with variant and os.version), else from its config. */
  readonly platform: Platform;
  readonly manifestDigest: string;
  readonly manifestMediaType: string;
  readonly manifest: ImageManifest;
  readonly config: ImageConfig;
}

export interface ResolvedBase {
  readonly reference: ImageReference;
  /** What the reference points at: an index or a single manifest. */
  readonly digest: string;
  readonly images: BasePlatformImage[];
}

export async function resolveBase(
  client: RegistryClient,
  ref: ImageReference,
  platforms: readonly Platform[],
): Promise<ResolvedBase> {
  const name = formatReference(ref);
  const action = `pulling the base image ${name}`;
  const top = await client.getManifest(ref.repository, ref.digest ?? ref.tag!, action);
  if (!top) {
    throw new RegistryError(
      `base image ${name} was not found in registry ${ref.registry} (manifest unknown) while ${action}. ` +
        `Fix: check that the tag exists and that you may pull it (docker pull ${name}), or change baseImage`,
      404,
    );
  }
  const parsed = JSON.parse(Buffer.from(top.bytes).toString('utf8')) as ImageIndex & ImageManifest;
  const wanted: { platform: Platform; descriptor: Descriptor | undefined }[] = [];
  if (isIndex(top.mediaType)) {
    for (const platform of platforms) {
      const descriptor = selectPlatform(parsed, platform);
      if (!descriptor) {
        const available = parsed.manifests
          .filter((m) => m.platform)
          .map((m) => formatPlatform(m.platform!))
          .join(', ');
        throw new Error(
          `base image ${name} has no ${formatPlatform(platform)} image (it has ${available}). Fix: choose --platform from that list`,
        );
      }
      wanted.push({ platform, descriptor });
    }
  } else if (isManifest(top.mediaType)) {
    if (platforms.length > 1) {
      throw new Error(
        `base image ${name} is a single-platform image, so it cannot give ${platforms.map(formatPlatform).join(', ')}. Fix: use a multi-platform base or one --platform`,
      );
    }
    wanted.push({ platform: platforms[0], descriptor: undefined });
  } else {
    throw new Error(
      `base image ${name} has manifest type "${top.mediaType}", which publish cannot build on. Fix: use an OCI or Docker schema 2 image`,
    );
  }
  const images: BasePlatformImage[] = [];
  for (const { platform, descriptor } of wanted) {
    const manifestFetched = descriptor ? await client.getManifest(ref.repository, descriptor.digest, action) : top;
    if (!manifestFetched)
      throw new RegistryError(
        `registry ${ref.registry} lists ${descriptor!.digest} in ${name} but does not serve it`,
        404,
      );
    const manifest = JSON.parse(Buffer.from(manifestFetched.bytes).toString('utf8')) as ImageManifest;
    const config = JSON.parse(
      Buffer.from(await client.getBlob(ref.repository, manifest.config.digest, action)).toString('utf8'),
    ) as ImageConfig;
    const actual = { os: config.os ?? '', architecture: config.architecture ?? '' };
    if (actual.os !== platform.os || actual.architecture !== platform.architecture) {
      throw new Error(
        `base image ${name} is ${formatPlatform(actual)}, not ${formatPlatform(platform)}. Fix: pass --platform ${formatPlatform(actual)} or use a base built for ${formatPlatform(platform)}`,
      );
    }
    images.push({
      platform: descriptor?.platform ?? actual,
      manifestDigest: manifestFetched.digest,
      manifestMediaType: manifestFetched.mediaType,
      manifest,
      config,
    });
  }
  return { reference: ref, digest: top.digest, images };
}
