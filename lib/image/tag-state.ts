/**
 * What the target tag holds already. A content-addressed tag should never change meaning,
 * so publish compares before it writes and explains a mismatch instead of overwriting.
 */
import { BASE_DIGEST_LABEL, type ImageConfig } from './image-config.js';
import { type ImageIndex, type ImageManifest, isIndex } from './oci.js';
import type { FetchedManifest, RegistryClient } from './registry.js';

function parse<T>(m: FetchedManifest): T {
  return JSON.parse(Buffer.from(m.bytes).toString('utf8')) as T;
}

/** Config digests of the image(s) under the tag: one for a manifest, one per child for an index. */
export async function existingConfigDigests(
  client: RegistryClient,
  repository: string,
  existing: FetchedManifest,
): Promise<string[]> {
  if (!isIndex(existing.mediaType)) return [parse<ImageManifest>(existing).config.digest];
  const digests: string[] = [];
  for (const child of parse<ImageIndex>(existing).manifests) {
    const m = await client.getManifest(repository, child.digest, `reading ${repository}@${child.digest}`);
    if (m && !isIndex(m.mediaType)) digests.push(parse<ImageManifest>(m).config.digest);
  }
  return digests;
}

export async function describeTagConflict(
  client: RegistryClient,
  repository: string,
  existing: FetchedManifest,
  reference: string,
  built: string,
  baseDigest: string,
): Promise<string> {
  let previousBase = '';
  if (!isIndex(existing.mediaType)) {
    const configDigest = parse<ImageManifest>(existing).config.digest;
    const config = await client.getBlob(repository, configDigest, `reading the config of ${reference}`).then(
      (b) => JSON.parse(Buffer.from(b).toString('utf8')) as ImageConfig,
      () => undefined,
    );
    const label = config?.config?.Labels?.[BASE_DIGEST_LABEL];
    if (label) previousBase = ` on base ${label}`;
  }
  return (
    `${reference} already holds another image (${existing.digest}${previousBase}); this build is ${built} on base ${baseDigest}. ` +
    'The tag hashes the bundle and the base reference, so the base tag has most likely moved since the first publish ' +
    '(or a different platform was chosen). Nothing was pushed. Fix: pin baseImage by digest (...@sha256:<digest>) ' +
    'so the tag covers the base too, or pass --force to move the tag'
  );
}
