/**
 * One reproducible image layer: the same files always give the same bytes, on any machine.
 * Entries are sorted, times fixed, owners and modes fixed, and the gzip header carries no
 * time and a fixed OS byte (zlib would write the build machine's).
 */
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { sha256Hex } from './build-context.js';

export interface LayerEntry {
  /** Path in the image without the leading slash (`app/main.mjs`). */
  readonly path: string;
  readonly content: Uint8Array;
  readonly mode: number;
}

export interface BuiltLayer {
  /** gzip-compressed tar: the blob that is pushed. */
  readonly blob: Uint8Array;
  /** `sha256:` of the blob (the manifest's layer digest). */
  readonly digest: string;
  /** `sha256:` of the uncompressed tar (the config's diff_id). */
  readonly diffId: string;
}

/** Owned by root: the runtime user (65532) can read its code but never rewrite it. */
const OWNER = { uid: 0, gid: 0, uname: '', gname: '' };
/** "Unknown OS" (RFC 1952), as Go's compress/gzip writes: same header on every platform. */
const GZIP_OS_UNKNOWN = 0xff;

export async function buildLayer(entries: readonly LayerEntry[], epochSeconds: number): Promise<BuiltLayer> {
  const mtime = new Date(epochSeconds * 1000);
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const dirs = [...new Set(sorted.flatMap((e) => parents(e.path)))].sort();
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on('data', (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    tar.on('end', resolve);
    tar.on('error', reject);
  });
  for (const dir of dirs) tar.entry({ name: `${dir}/`, type: 'directory', mode: 0o755, mtime, ...OWNER });
  for (const e of sorted)
    tar.entry(
      { name: e.path, type: 'file', mode: e.mode, mtime, size: e.content.byteLength, ...OWNER },
      Buffer.from(e.content),
    );
  tar.finalize();
  await done;
  const raw = Buffer.concat(chunks);
  const blob = gzipSync(raw, { level: 9 });
  blob.writeUInt32LE(0, 4); // MTIME
  blob[9] = GZIP_OS_UNKNOWN; // the header is outside the CRC, so this keeps the stream valid
  return { blob, digest: `sha256:${sha256Hex(blob)}`, diffId: `sha256:${sha256Hex(raw)}` };
}

/** `app/x/y.js` → `app`, `app/x`. */
function parents(path: string): string[] {
  const parts = path.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
}
