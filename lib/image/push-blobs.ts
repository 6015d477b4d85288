/**
 * Gets every blob of the new image into the target repository, cheapest way first: already
 * there (HEAD) → skip; base in the same registry → cross-repository mount; else upload (our
 * blobs from memory, base layers streamed from the base registry in chunks).
 */
import { RegistryClient } from './registry.js';

export interface BlobToPush {
  readonly digest: string;
  readonly size: number;
  /** Our own blob (config, app layer)... */
  readonly bytes?: Uint8Array;
  /** ...or a base layer, read from here. */
  readonly from?: { readonly client: RegistryClient; readonly repository: string };
}

export interface BlobStats {
  skipped: number;
  mounted: number;
  uploaded: number;
  uploadedBytes: number;
}

export async function pushBlobs(
  target: RegistryClient,
  repository: string,
  blobs: readonly BlobToPush[],
  reference: string,
  log: (line: string) => void,
  concurrency = 4,
): Promise<BlobStats> {
  const stats: BlobStats = { skipped: 0, mounted: 0, uploaded: 0, uploadedBytes: 0 };
  const unique = [...new Map(blobs.map((b) => [b.digest, b])).values()];
  await pool(unique, concurrency, async (blob) => {
    const action = `pushing blob ${blob.digest} (${blob.size} bytes) of ${reference}`;
    if (await target.blobExists(repository, blob.digest, action)) {
      stats.skipped++;
      return;
    }
    const from = blob.from;
    if (
      from &&
      from.client.registry === target.registry &&
      (await target.mountBlob(repository, blob.digest, from.repository, action))
    ) {
      stats.mounted++;
      log(`mounted ${short(blob.digest)} from ${from.repository}`);
      return;
    }
    const chunks = blob.bytes
      ? sliceChunks(blob.bytes, target.chunkSize)
      : from!.client.streamBlob(from!.repository, blob.digest, `copying base layer ${blob.digest} for ${reference}`);
    await target.uploadBlob(repository, blob.digest, chunks, action);
    stats.uploaded++;
    stats.uploadedBytes += blob.size;
    log(`uploaded ${short(blob.digest)} (${blob.size} bytes)`);
  });
  return stats;
}

/** Every blob present, checked after the uploads: the manifest goes up only then. */
export async function missingBlobs(
  target: RegistryClient,
  repository: string,
  digests: readonly string[],
  reference: string,
): Promise<string[]> {
  const missing: string[] = [];
  await pool([...new Set(digests)], 8, async (d) => {
    if (!(await target.blobExists(repository, d, `verifying blob ${d} of ${reference}`))) missing.push(d);
  });
  return missing.sort();
}

function* sliceChunks(bytes: Uint8Array, size: number): Generator<Uint8Array> {
  if (bytes.byteLength === 0) yield bytes;
  for (let i = 0; i < bytes.byteLength; i += size) yield bytes.subarray(i, i + size);
}

export function short(digest: string): string {
  return digest.slice(0, 19);
}

/** Runs `work` over `items`, at most `size` at a time; the first failure fails the whole. */
async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (next < items.length) {
      try {
        await work(items[next++]);
      } catch (e) {
        next = items.length; // the others finish their current item and start no new one
        throw e;
      }
    }
  });
  await Promise.all(runners);
}
