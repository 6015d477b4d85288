import { gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { buildLayer } from '../../../lib/image/layer.js';
import { tarEntries } from './tar-entries.js';

describe('buildLayer', () => {
  const files = [
    { path: 'app/main.mjs.map', content: Buffer.from('{"version":3}'), mode: 0o644 },
    { path: 'app/main.mjs', content: Buffer.from('console.log(1)'), mode: 0o644 },
  ];

  it('gives the same bytes for the same files, whatever their order', async () => {
    const a = await buildLayer(files, 0);
    const b = await buildLayer([...files].reverse(), 0);
    expect(Buffer.from(a.blob).equals(Buffer.from(b.blob))).toBe(true);
    expect(a.digest).toBe(`sha256:${createHash('sha256').update(a.blob).digest('hex')}`);
    expect(a.diffId).toBe(`sha256:${createHash('sha256').update(gunzipSync(a.blob)).digest('hex')}`);
    expect((await buildLayer(files, 1)).digest).not.toBe(a.digest);
  });

  it('writes sorted, root-owned entries with fixed times, modes and a fixed gzip header', async () => {
    const layer = await buildLayer(files, 1_700_000_000);
    expect(layer.blob.subarray(4, 8)).toEqual(Buffer.alloc(4));
    expect(layer.blob[9]).toBe(0xff);
    const list = await tarEntries(layer.blob);
    expect(list.map((e) => [e.header.name, e.header.type, e.header.mode, e.header.uid, e.header.gid])).toEqual([
      ['app/', 'directory', 0o755, 0, 0],
      ['app/main.mjs', 'file', 0o644, 0, 0],
      ['app/main.mjs.map', 'file', 0o644, 0, 0],
    ]);
    expect(list.every((e) => e.header.mtime?.getTime() === 1_700_000_000_000)).toBe(true);
    expect(list[1].body.toString()).toBe('console.log(1)');
  });
});
