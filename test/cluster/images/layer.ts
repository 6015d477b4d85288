/**
 * Image layers for the real-cluster images, written straight to the cache: a tar stream
 * (tar-stream) → gzip → file, hashing both sides on the way (the config's diff_id is the tar's
 * sha256, the manifest's digest the gzip's). Unlike lib/image/layer.ts, which holds the small app
 * layer in memory, these carry root filesystems and 100 MB binaries, so nothing is buffered whole.
 *
 * Deterministic for the same input: entries in the order given, the gzip header without a time
 * and with the "unknown OS" byte, as lib/image/layer.ts writes it.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Header, type Pack, extract, pack } from 'tar-stream';

/** A tar header as written: the name and whatever else differs from tar-stream's defaults. */
export type EntryHeader = Partial<Omit<Header, 'pax'>> & { name: string; pax?: Record<string, string> };

export interface LayerBlob {
  /** The gzipped tar in the cache. */
  readonly path: string;
  /** `sha256:` of the blob. */
  readonly digest: string;
  /** `sha256:` of the uncompressed tar. */
  readonly diffId: string;
  /** Bytes of the blob (what a node pulls). */
  readonly size: number;
  /** Bytes of the uncompressed tar (what it unpacks). */
  readonly tarSize: number;
  /** Whether this call built it (false: taken from the cache). */
  readonly built: boolean;
}

type Producer = (tar: Pack) => Promise<void>;

/** Counts and hashes what flows through. */
class Hasher extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  private first = true;
  constructor(private readonly patchGzipHeader = false) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: (e?: Error | null, data?: Buffer) => void): void {
    if (this.first && this.patchGzipHeader) {
      this.first = false;
      chunk = Buffer.from(chunk);
      chunk.writeUInt32LE(0, 4); // MTIME
      chunk[9] = 0xff; // OS: unknown (outside the CRC)
    }
    this.hash.update(chunk);
    this.bytes += chunk.byteLength;
    done(null, chunk);
  }
}

/**
 * The layer under `<cacheDir>/<name>-<key>/`, built by `produce` when absent. `key` must cover
 * every input of `produce` (a hash of them), so a cached blob is never stale.
 */
export async function cachedLayer(cacheDir: string, name: string, key: string, produce: Producer): Promise<LayerBlob> {
  const dir = join(cacheDir, `${name}-${key.slice(0, 16)}`);
  const meta = join(dir, 'layer.json');
  const blob = join(dir, 'layer.tar.gz');
  if (existsSync(meta) && existsSync(blob))
    return { ...(JSON.parse(readFileSync(meta, 'utf8')) as LayerBlob), path: blob, built: false };
  mkdirSync(dir, { recursive: true });
  const tmp = `${blob}.tmp.${process.pid}`;
  try {
    const tar = pack();
    const raw = new Hasher();
    const gz = new Hasher(true);
    const written = pipeline(tar, raw, createGzip({ level: 6 }), gz, createWriteStream(tmp));
    // The producer writes entries; a failure there ends the pipeline too (and its rejection is ours to take).
    try {
      await produce(tar);
      tar.finalize();
    } catch (e) {
      tar.destroy(e as Error);
      await written.catch(() => undefined);
      throw e;
    }
    await written;
    const result = {
      digest: `sha256:${gz.hash.digest('hex')}`,
      diffId: `sha256:${raw.hash.digest('hex')}`,
      size: gz.bytes,
      tarSize: raw.bytes,
    };
    renameSync(tmp, blob);
    await writeFile(meta, `${JSON.stringify(result, null, 2)}\n`);
    return { ...result, path: blob, built: true };
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Adds one entry; a file's body is a Buffer or a path read as a stream. */
export async function addEntry(tar: Pack, header: EntryHeader, body?: Buffer | string): Promise<void> {
  if (header.type !== 'file' || body === undefined) {
    await new Promise<void>((resolve, reject) => tar.entry(header, (e) => (e ? reject(e) : resolve())));
    return;
  }
  if (Buffer.isBuffer(body)) {
    await new Promise<void>((resolve, reject) => tar.entry(header, body, (e) => (e ? reject(e) : resolve())));
    return;
  }
  await pipeline(createReadStream(body), tar.entry(header));
}

/** What to do with one entry of a copied tar: drop it, keep it, or keep it with other header fields. */
export type EntryFilter = (name: string, header: EntryHeader) => boolean | Partial<EntryHeader>;

/**
 * Copies a tar stream's entries into `tar`, names without the leading `./`, the root entry dropped.
 * Returns the names kept, for checks by the caller.
 */
export async function copyTar(tar: Pack, input: Readable, filter: EntryFilter): Promise<Set<string>> {
  const kept = new Set<string>();
  const ex = extract();
  ex.on('entry', (raw, stream, next) => {
    const header: EntryHeader = { ...raw, pax: (raw.pax ?? undefined) as Record<string, string> | undefined };
    const name = header.name.replace(/^\.\//, '').replace(/\/$/, '');
    const verdict = name === '' || name === '.' ? false : filter(name, header);
    if (verdict === false) {
      stream.on('end', () => next()).resume();
      return;
    }
    kept.add(name);
    const out: EntryHeader = {
      ...header,
      ...(verdict === true ? {} : verdict),
      name: header.type === 'directory' ? `${name}/` : name,
      // A hard link names another member, spelled like the member names.
      ...(header.type === 'link' && header.linkname ? { linkname: header.linkname.replace(/^\.\//, '') } : {}),
    };
    // The pax path/linkpath of long names is re-derived by pack from name/linkname.
    if (out.pax) {
      const rest = Object.fromEntries(
        Object.entries(out.pax).filter(([k]) => k !== 'path' && k !== 'linkpath' && k !== 'size'),
      );
      out.pax = Object.keys(rest).length ? rest : undefined;
    }
    if (out.type === 'file') pipeline(stream, tar.entry(out)).then(() => next(), next);
    else {
      stream.resume();
      tar.entry(out, (e) => next(e ?? undefined));
    }
  });
  await pipeline(input, ex);
  return kept;
}

/** sha256 of a file's bytes, streamed. */
export async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A cache key over any JSON-able inputs. */
export function inputKey(inputs: unknown): string {
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex');
}
