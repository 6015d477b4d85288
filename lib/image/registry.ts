/**
 * The distribution API operations publish needs: manifests, blob existence, streaming blob
 * copies, cross-repository mounts, monolithic and chunked uploads.
 */
import { createHash } from 'node:crypto';
import { sha256Hex } from './build-context.js';
import { MANIFEST_ACCEPT } from './oci.js';
import { RegistryError, RegistryHttp } from './registry-http.js';

export interface FetchedManifest {
  readonly mediaType: string;
  readonly digest: string;
  readonly bytes: Uint8Array;
}

/** Blobs up to this size go in one PUT; larger ones in PATCH chunks of this size. */
export const DEFAULT_CHUNK_SIZE = 8 * 1024 * 1024;

const pull = (repo: string) => [`repository:${repo}:pull`];
const push = (repo: string) => [`repository:${repo}:pull,push`];

export class RegistryClient {
  constructor(
    public readonly http: RegistryHttp,
    public readonly chunkSize = DEFAULT_CHUNK_SIZE,
  ) {}

  get registry(): string {
    return this.http.registry;
  }

  /** The manifest under a tag or digest, or undefined when the registry has none. */
  async getManifest(repo: string, ref: string, action: string): Promise<FetchedManifest | undefined> {
    const res = await this.http.request({
      method: 'GET',
      url: `/v2/${repo}/manifests/${ref}`,
      scopes: pull(repo),
      action,
      headers: { accept: MANIFEST_ACCEPT },
      accept: [200, 404],
    });
    if (res.status === 404) return void (await res.body?.cancel());
    const bytes = new Uint8Array(await res.arrayBuffer());
    const digest = `sha256:${sha256Hex(bytes)}`;
    if (ref.startsWith('sha256:') && ref !== digest) {
      throw new RegistryError(
        `registry ${this.registry} returned a manifest with digest ${digest} for ${repo}@${ref} while ${action}`,
      );
    }
    const mediaType =
      (JSON.parse(Buffer.from(bytes).toString('utf8')) as { mediaType?: string }).mediaType ??
      res.headers.get('content-type')?.split(';')[0].trim() ??
      '';
    return { mediaType, digest, bytes };
  }

  async blobExists(repo: string, digest: string, action: string): Promise<boolean> {
    const res = await this.http.request({
      method: 'HEAD',
      url: `/v2/${repo}/blobs/${digest}`,
      scopes: pull(repo),
      action,
      accept: [200, 404],
    });
    return res.status === 200;
  }

  /** A small blob (a config), checked against its digest. */
  async getBlob(repo: string, digest: string, action: string): Promise<Uint8Array> {
    const res = await this.http.request({
      method: 'GET',
      url: `/v2/${repo}/blobs/${digest}`,
      scopes: pull(repo),
      action,
      accept: [200],
    });
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (`sha256:${sha256Hex(bytes)}` !== digest)
      throw new RegistryError(`registry ${this.registry}: blob ${digest} of ${repo} has other content while ${action}`);
    return bytes;
  }

  /** A large blob as chunks, so a copy never holds a whole base layer in memory. */
  async *streamBlob(repo: string, digest: string, action: string): AsyncGenerator<Uint8Array> {
    const res = await this.http.request({
      method: 'GET',
      url: `/v2/${repo}/blobs/${digest}`,
      scopes: pull(repo),
      action,
      accept: [200],
    });
    if (!res.body)
      throw new RegistryError(`registry ${this.registry} sent no body for blob ${digest} of ${repo} while ${action}`);
    yield* rechunk(res.body, this.chunkSize);
  }

  /** Asks the registry to link a blob from another repository; false when it would rather receive it. */
  async mountBlob(repo: string, digest: string, from: string, action: string): Promise<boolean> {
    const query = new URLSearchParams({ mount: digest, from });
    const res = await this.http.request({
      method: 'POST',
      url: `/v2/${repo}/blobs/uploads/?${query}`,
      scopes: [...push(repo), ...pull(from)],
      action,
      accept: [201, 202],
    });
    await res.body?.cancel();
    if (res.status === 202) {
      // It opened an upload session instead; close it rather than leave it dangling.
      const location = res.headers.get('location');
      if (location)
        await this.http
          .request({ method: 'DELETE', url: location, scopes: push(repo), action, accept: [204, 404, 405] })
          .then((r) => r.body?.cancel());
    }
    return res.status === 201;
  }

  /**
   * Uploads a blob: one PUT when it fits one chunk, else PATCH chunks and a closing PUT.
   * The registry checks the digest at the PUT, so a truncated upload never becomes a blob.
   */
  async uploadBlob(
    repo: string,
    digest: string,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    action: string,
  ): Promise<void> {
    const start = await this.http.request({
      method: 'POST',
      url: `/v2/${repo}/blobs/uploads/`,
      scopes: push(repo),
      action,
      accept: [202],
    });
    await start.body?.cancel();
    let location = requireLocation(start, this.registry, action);
    const hash = createHash('sha256');
    let offset = 0;
    let pending: Uint8Array | undefined;
    for await (const chunk of chunks) {
      if (pending) location = await this.patch(repo, location, pending, offset - pending.byteLength, action);
      hash.update(chunk);
      offset += chunk.byteLength;
      pending = chunk;
    }
    if (`sha256:${hash.digest('hex')}` !== digest)
      throw new RegistryError(
        `blob ${digest} for ${repo} read back with other content while ${action}; nothing was tagged`,
      );
    const url = new URL(location, this.http.baseUrl);
    url.searchParams.set('digest', digest);
    const headers = { 'content-type': 'application/octet-stream' };
    const res = await this.http.request({
      method: 'PUT',
      url: url.href,
      scopes: push(repo),
      action,
      headers,
      body: pending ?? new Uint8Array(),
      accept: [201],
    });
    await res.body?.cancel();
  }

  private async patch(
    repo: string,
    location: string,
    chunk: Uint8Array,
    from: number,
    action: string,
  ): Promise<string> {
    const headers = {
      'content-type': 'application/octet-stream',
      'content-range': `${from}-${from + chunk.byteLength - 1}`,
    };
    const res = await this.http.request({
      method: 'PATCH',
      url: location,
      scopes: push(repo),
      action,
      headers,
      body: chunk,
      accept: [202],
    });
    await res.body?.cancel();
    return requireLocation(res, this.registry, action);
  }

  async putManifest(repo: string, ref: string, mediaType: string, bytes: Uint8Array, action: string): Promise<string> {
    const res = await this.http.request({
      method: 'PUT',
      url: `/v2/${repo}/manifests/${ref}`,
      scopes: push(repo),
      action,
      headers: { 'content-type': mediaType },
      body: bytes,
      accept: [201],
    });
    await res.body?.cancel();
    const digest = `sha256:${sha256Hex(bytes)}`;
    const stored = res.headers.get('docker-content-digest');
    if (stored && stored !== digest)
      throw new RegistryError(
        `registry ${this.registry} stored ${repo}:${ref} as ${stored}, expected ${digest}, while ${action}`,
      );
    return digest;
  }
}

function requireLocation(res: Response, registry: string, action: string): string {
  const location = res.headers.get('location');
  if (!location)
    throw new RegistryError(`registry ${registry} opened an upload without a Location header while ${action}`);
  return location;
}

/** Re-cuts a byte stream into chunks of `size` (the last one shorter). */
export async function* rechunk(stream: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Uint8Array> {
  let parts: Uint8Array[] = [];
  let length = 0;
  for await (const piece of stream) {
    let rest = piece;
    while (length + rest.byteLength >= size) {
      const take = size - length;
      parts.push(rest.subarray(0, take));
      yield Buffer.concat(parts);
      rest = rest.subarray(take);
      parts = [];
      length = 0;
    }
    if (rest.byteLength) {
      parts.push(rest);
      length += rest.byteLength;
    }
  }
  if (length) yield Buffer.concat(parts);
}
