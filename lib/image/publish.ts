/**
 * `image publish`: base image + the synthesized bundle → one reproducible layer on top →
 * pushed under the content-addressed tag, without Docker. The manifest goes up last, only
 * after every blob is verified present, so a failure never leaves a half-pushed image
 * under the tag; and a tag that already holds this content is left alone ("up to date").
 */
import { type AssembledImage, type Document, assembleImage, assembleIndex } from './assemble.js';
import { resolveBase } from './base-image.js';
import { readBuildContext } from './context-files.js';
import { type Credentials, dockerConfigCredentials, dockerConfigPath, staticCredentials } from './docker-config.js';
import { buildLayer } from './layer.js';
import { isIndex, parsePlatform } from './oci.js';
import { type BlobStats, type BlobToPush, missingBlobs, pushBlobs } from './push-blobs.js';
import { parseReference } from './reference.js';
import { RegistryClient } from './registry.js';
import { RegistryError, RegistryHttp } from './registry-http.js';
import { describeTagConflict, existingConfigDigests } from './tag-state.js';

export interface PublishOptions {
  /** The build context folder (with image.json), as `RuntimeImage` wrote it. */
  readonly context: string;
  /** Credentials per registry host, tried before the Docker config. */
  readonly registryAuth?: Record<string, Credentials>;
  /** @default $DOCKER_CONFIG/config.json, else ~/.docker/config.json */
  readonly dockerConfig?: string;
  /** Platforms to build (`linux/arm64`); several need a multi-platform base. @default ['linux/amd64'] */
  readonly platforms?: readonly string[];
  /** Push an index even for one platform. @default - only for several platforms */
  readonly index?: boolean;
  /** Move the tag when it holds another image (a moved base tag). @default false */
  readonly force?: boolean;
  /** Registries to reach over plain HTTP besides loopback ones. */
  readonly plainHttp?: readonly string[];
  /** Upload chunk size in bytes. @default 8 MiB */
  readonly chunkSize?: number;
  readonly log?: (line: string) => void;
  /** For tests that simulate network failures. */
  readonly fetch?: typeof fetch;
}

export interface PublishedPlatform {
  readonly platform: string;
  readonly digest: string;
  readonly configDigest: string;
  /** Sum of the compressed layers: what a node pulls on a cold start. */
  readonly compressedSize: number;
  readonly baseManifestDigest: string;
  readonly baseCompressedSize: number;
}

export interface PublishResult {
  readonly reference: string;
  /** Digest under the tag (manifest, or index when several platforms). */
  readonly digest: string;
  /** The tag already held this content; nothing was written. */
  readonly upToDate: boolean;
  readonly base: string;
  /** What the base reference resolved to: pin `baseImage: '<base>@<baseDigest>'` to freeze it. */
  readonly baseDigest: string;
  readonly appLayer: { readonly digest: string; readonly size: number };
  readonly platforms: PublishedPlatform[];
  readonly blobs: BlobStats;
}

export async function publishImage(options: PublishOptions): Promise<PublishResult> {
  const log = options.log ?? (() => undefined);
  const { image, entries } = readBuildContext(options.context);
  const target = parseReference(image.reference);
  const baseRef = parseReference(image.base);
  const credentials = staticCredentials(
    options.registryAuth ?? {},
    dockerConfigCredentials(options.dockerConfig ?? dockerConfigPath()),
  );
  const clients = new Map<string, RegistryClient>();
  const client = (registry: string) =>
    clients.get(registry) ??
    clients
      .set(
        registry,
        new RegistryClient(
          new RegistryHttp(registry, { credentials, plainHttp: options.plainHttp, fetch: options.fetch }),
          options.chunkSize,
        ),
      )
      .get(registry)!;
  const to = client(target.registry);

  const base = await resolveBase(
    client(baseRef.registry),
    baseRef,
    (options.platforms?.length ? options.platforms : ['linux/amd64']).map(parsePlatform),
  );
  log(`base ${image.base} resolved to ${base.digest}`);
  const layer = await buildLayer(entries, Date.parse(image.config.created) / 1000);
  const images = base.images.map((b) => assembleImage(b, layer, image));
  const top: Document = images.length > 1 || options.index ? assembleIndex(images) : images[0];
  const blobs = images.flatMap((i): BlobToPush[] => [
    ...i.base.manifest.layers.map((l) => ({
      digest: l.digest,
      size: l.size,
      from: { client: client(baseRef.registry), repository: baseRef.repository },
    })),
    { digest: i.config.digest, size: i.config.bytes.byteLength, bytes: i.config.bytes },
    { digest: layer.digest, size: layer.blob.byteLength, bytes: layer.blob },
  ]);
  const result = (digest: string, noop: boolean, stats: BlobStats): PublishResult => ({
    reference: image.reference,
    digest,
    upToDate: noop,
    base: image.base,
    baseDigest: base.digest,
    appLayer: { digest: layer.digest, size: layer.blob.byteLength },
    platforms: images.map(summary),
    blobs: stats,
  });
  const upToDate = (digest: string): PublishResult => {
    log(`${image.reference} is up to date (${digest})`);
    return result(digest, true, {
      skipped: new Set(blobs.map((b) => b.digest)).size,
      mounted: 0,
      uploaded: 0,
      uploadedBytes: 0,
    });
  };

  const existing = await to.getManifest(target.repository, target.tag!, `checking the tag ${image.reference}`);
  if (existing?.digest === top.digest) {
    // Same bytes under the tag: a no-op, unless the registry lost blobs (then repair below).
    if (
      (
        await missingBlobs(
          to,
          target.repository,
          blobs.map((b) => b.digest),
          image.reference,
        )
      ).length === 0
    )
      return upToDate(existing.digest);
  } else if (existing) {
    // Same configs = same layer contents (diff_ids), even if another zlib compressed them.
    if (
      isIndex(existing.mediaType) === isIndex(top.mediaType) &&
      sameList(
        await existingConfigDigests(to, target.repository, existing),
        images.map((i) => i.config.digest),
      )
    )
      return upToDate(existing.digest);
    if (!options.force)
      throw new Error(
        await describeTagConflict(
          to,
          target.repository,
          existing,
          image.reference,
          top.digest,
          images[0].base.manifestDigest,
        ),
      );
  }

  let stats: BlobStats;
  try {
    stats = await pushBlobs(to, target.repository, blobs, image.reference, log);
    const missing = await missingBlobs(
      to,
      target.repository,
      blobs.map((b) => b.digest),
      image.reference,
    );
    if (missing.length)
      throw new RegistryError(
        `registry ${target.registry} still lacks ${missing.join(', ')} after uploading them for ${image.reference}`,
      );
  } catch (e) {
    throw new RegistryError(
      `${(e as Error).message}. Nothing was tagged: ${image.reference} is unchanged; re-run publish to finish (blobs already pushed are kept)`,
      (e as RegistryError).status,
    );
  }
  if (isIndex(top.mediaType)) {
    // Children first, by digest: the index must never name a manifest the registry lacks.
    for (const i of images)
      await to.putManifest(
        target.repository,
        i.digest,
        i.mediaType,
        i.bytes,
        `pushing the ${i.platform.architecture} manifest of ${image.reference}`,
      );
  }
  const digest = await to.putManifest(
    target.repository,
    target.tag!,
    top.mediaType,
    top.bytes,
    `tagging ${image.reference}`,
  );
  log(`pushed ${image.reference}@${digest}`);
  return result(digest, false, stats);
}

function summary(i: AssembledImage): PublishedPlatform {
  const sum = (layers: { size: number }[]) => layers.reduce((n, l) => n + l.size, 0);
  return {
    platform: [i.platform.os, i.platform.architecture, i.platform.variant].filter(Boolean).join('/'),
    digest: i.digest,
    configDigest: i.config.digest,
    compressedSize: sum(i.manifest.layers),
    baseManifestDigest: i.base.manifestDigest,
    baseCompressedSize: sum(i.base.manifest.layers),
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && [...a].sort().join() === [...b].sort().join();
}
