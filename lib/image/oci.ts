/**
 * The manifest formats publish reads and writes: OCI and Docker schema 2, single images and
 * indexes (manifest lists), and picking one platform out of an index.
 */

export const MediaTypes = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

/** Sent as Accept on every manifest GET: we can read all four. */
export const MANIFEST_ACCEPT = [
  MediaTypes.ociIndex,
  MediaTypes.ociManifest,
  MediaTypes.dockerList,
  MediaTypes.dockerManifest,
].join(', ');

export interface Platform {
  readonly os: string;
  readonly architecture: string;
  readonly variant?: string;
}

export interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly size: number;
  readonly platform?: Platform;
  readonly annotations?: Record<string, string>;
}

export interface ImageManifest {
  readonly schemaVersion: 2;
  readonly mediaType?: string;
  readonly config: Descriptor;
  readonly layers: Descriptor[];
  readonly annotations?: Record<string, string>;
}

export interface ImageIndex {
  readonly schemaVersion: 2;
  readonly mediaType?: string;
  readonly manifests: Descriptor[];
  readonly annotations?: Record<string, string>;
}

export function isIndex(mediaType: string): boolean {
  return mediaType === MediaTypes.ociIndex || mediaType === MediaTypes.dockerList;
}

export function isManifest(mediaType: string): boolean {
  return mediaType === MediaTypes.ociManifest || mediaType === MediaTypes.dockerManifest;
}

/** Media types of an image built on a base: keep the base's family, so tools that read it read ours. */
export function familyOf(manifestMediaType: string): {
  manifest: string;
  index: string;
  config: string;
  layer: string;
} {
  return manifestMediaType === MediaTypes.dockerManifest
    ? {
        manifest: MediaTypes.dockerManifest,
        index: MediaTypes.dockerList,
        config: MediaTypes.dockerConfig,
        layer: MediaTypes.dockerLayerGzip,
      }
    : {
        manifest: MediaTypes.ociManifest,
        index: MediaTypes.ociIndex,
        config: MediaTypes.ociConfig,
        layer: MediaTypes.ociLayerGzip,
      };
}

/** `linux/amd64`, `linux/arm64/v8`. */
export function parsePlatform(text: string): Platform {
  const [os, architecture, variant, extra] = text.split('/');
  if (!os || !architecture || extra !== undefined) {
    throw new Error(`platform "${text}" is not os/architecture[/variant]. Fix: use e.g. linux/amd64 or linux/arm64`);
  }
  return { os, architecture, ...(variant ? { variant } : {}) };
}

export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, p.variant].filter(Boolean).join('/');
}

/** The index entry for `want`; an unspecified variant matches any (arm64 is usually v8). */
export function selectPlatform(index: ImageIndex, want: Platform): Descriptor | undefined {
  const candidates = index.manifests.filter(
    (m) =>
      m.platform &&
      isManifest(m.mediaType) &&
      m.platform.os === want.os &&
      m.platform.architecture === want.architecture &&
      (want.variant === undefined || m.platform.variant === want.variant),
  );
  return candidates[0];
}
