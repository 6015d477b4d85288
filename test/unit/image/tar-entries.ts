// Reads a (gzipped) tar back into entries, for assertions on image layers.
import { gunzipSync } from 'node:zlib';
import { extract, type Header } from 'tar-stream';

export interface TarEntry {
  header: Header;
  body: Buffer;
}

export async function tarEntries(blob: Uint8Array): Promise<TarEntry[]> {
  const gzipped = blob[0] === 0x1f && blob[1] === 0x8b;
  const out: TarEntry[] = [];
  const ex = extract();
  ex.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c) => chunks.push(c as Buffer));
    stream.on('end', () => {
      out.push({ header, body: Buffer.concat(chunks) });
      next();
    });
  });
  const done = new Promise<void>((resolve, reject) => {
    ex.on('finish', () => resolve());
    ex.on('error', reject);
  });
  ex.end(gzipped ? gunzipSync(blob) : Buffer.from(blob));
  await done;
  return out;
}
