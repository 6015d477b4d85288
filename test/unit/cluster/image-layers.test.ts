// The streaming layer writer and tar copier of the real-cluster images (test/cluster/images): the
// same input gives the same bytes, the cache answers a second call, and copied root filesystems come
// out with the member names images use (no "./", no root entry, hard links renamed alike).
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from '@jest/globals';
import { pack } from 'tar-stream';
import { addEntry, cachedLayer, copyTar } from '../../cluster/images/layer.js';
import { imageDocuments } from '../../cluster/images/push.js';
import { tarEntries } from '../image/tar-entries.js';

const temp = mkdtempSync(join(tmpdir(), 'cluster-layers-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));
const sha = (b: Uint8Array) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const mtime = new Date(0);

const writeTwoFiles = async (tar: Parameters<Parameters<typeof cachedLayer>[3]>[0]) => {
  await addEntry(tar, { name: 'usr/', type: 'directory', mode: 0o755, mtime });
  await addEntry(tar, { name: 'usr/a', type: 'file', mode: 0o644, size: 5, mtime }, Buffer.from('hello'));
  await addEntry(
    tar,
    { name: 'manager', type: 'file', mode: 0o755, size: 3, uid: 65534, gid: 65534, mtime },
    Buffer.from('bin'),
  );
};

/** A tar as mmdebstrap writes it: "./"-prefixed names, a root entry, a hard link, a long name. */
function debianLikeTar(long: string): Readable {
  const tar = pack();
  tar.entry({ name: './', type: 'directory', mode: 0o755, mtime });
  tar.entry({ name: './etc/', type: 'directory', mode: 0o755, mtime });
  tar.entry({ name: './etc/passwd', type: 'file', mode: 0o644, mtime }, 'root:x:0:0\n');
  tar.entry({ name: './etc/passwd-', type: 'link', linkname: './etc/passwd', mode: 0o644, mtime });
  tar.entry({ name: './etc/localtime', type: 'symlink', linkname: '/usr/share/zoneinfo/Etc/UTC', mtime });
  tar.entry({ name: './etc/hostname', type: 'file', mode: 0o644, mtime }, 'build-host\n');
  tar.entry({ name: `./${long}`, type: 'file', mode: 0o644, mtime }, 'long');
  tar.finalize();
  return tar as unknown as Readable; // tar-stream's streamx Readable, which pipeline reads like Node's
}

describe('cachedLayer', () => {
  it('gives the same blob for the same entries, with a time-less gzip header, and reuses it from the cache', async () => {
    const a = await cachedLayer(join(temp, 'a'), 'two', 'k'.repeat(16), writeTwoFiles);
    const b = await cachedLayer(join(temp, 'b'), 'two', 'k'.repeat(16), writeTwoFiles);
    expect(a.built && b.built).toBe(true);
    expect(b.digest).toBe(a.digest);
    const blob = readFileSync(a.path);
    expect(sha(blob)).toBe(a.digest);
    expect(blob.byteLength).toBe(a.size);
    expect(blob.readUInt32LE(4)).toBe(0); // no MTIME
    expect(blob[9]).toBe(0xff); // "unknown OS", as lib/image/layer.ts writes
    const raw = gunzipSync(blob);
    expect(sha(raw)).toBe(a.diffId);
    expect(raw.byteLength).toBe(a.tarSize);
    const entries = await tarEntries(blob);
    expect(entries.map((e) => [e.header.name, e.header.mode, e.header.uid])).toEqual([
      ['usr/', 0o755, 0],
      ['usr/a', 0o644, 0],
      ['manager', 0o755, 65534],
    ]);
    const again = await cachedLayer(join(temp, 'a'), 'two', 'k'.repeat(16), () => {
      throw new Error('must not rebuild a cached layer');
    });
    expect(again).toMatchObject({ built: false, digest: a.digest, diffId: a.diffId, path: a.path });
  });

  it('leaves nothing in the cache when the producer fails', async () => {
    await expect(
      cachedLayer(join(temp, 'c'), 'broken', 'x'.repeat(16), () => Promise.reject(new Error('mmdebstrap failed'))),
    ).rejects.toThrow('mmdebstrap failed');
    expect(readdirSync(join(temp, 'c', `broken-${'x'.repeat(16)}`))).toEqual([]);
    const retried = await cachedLayer(join(temp, 'c'), 'broken', 'x'.repeat(16), writeTwoFiles);
    expect(retried.built).toBe(true);
  });
});

describe('copyTar', () => {
  it('drops the root entry and "./", renames hard links alike, keeps long names, applies the filter', async () => {
    const long = `usr/share/${'very-long-directory-name/'.repeat(6)}file.txt`;
    let kept = new Set<string>();
    const layer = await cachedLayer(join(temp, 'd'), 'copy', 'c'.repeat(16), async (tar) => {
      kept = await copyTar(tar, debianLikeTar(long), (name) =>
        name === 'etc/hostname' ? false : name === 'etc/passwd' ? { uid: 7 } : true,
      );
    });
    const entries = await tarEntries(readFileSync(layer.path));
    expect(entries.map((e) => e.header.name)).toEqual(['etc/', 'etc/passwd', 'etc/passwd-', 'etc/localtime', long]);
    expect([...kept]).toEqual(['etc', 'etc/passwd', 'etc/passwd-', 'etc/localtime', long]);
    const byName = Object.fromEntries(entries.map((e) => [e.header.name, e]));
    expect(byName['etc/passwd'].header.uid).toBe(7);
    expect(byName['etc/passwd'].body.toString()).toBe('root:x:0:0\n');
    expect(byName['etc/passwd-'].header).toMatchObject({ type: 'link', linkname: 'etc/passwd' });
    expect(byName['etc/localtime'].header).toMatchObject({ type: 'symlink', linkname: '/usr/share/zoneinfo/Etc/UTC' });
    expect(byName[long].body.toString()).toBe('long');
  });
});

describe('imageDocuments', () => {
  it('derives rootfs from the layers in order, and the manifest names that config', () => {
    const layers = [
      { path: '', digest: 'sha256:aa', diffId: 'sha256:a', size: 1, tarSize: 2, built: false },
      { path: '', digest: 'sha256:bb', diffId: 'sha256:b', size: 3, tarSize: 4, built: false },
    ];
    const docs = imageDocuments({ layers, config: { architecture: 'amd64', os: 'linux' } });
    const config = JSON.parse(docs.config.toString()) as { rootfs: { diff_ids: string[] } };
    expect(config.rootfs.diff_ids).toEqual(['sha256:a', 'sha256:b']);
    const manifest = JSON.parse(docs.manifest.toString()) as {
      config: { digest: string };
      layers: { digest: string }[];
    };
    expect(manifest.config.digest).toBe(sha(docs.config));
    expect(manifest.layers.map((l) => l.digest)).toEqual(['sha256:aa', 'sha256:bb']);
    expect(docs.digest).toBe(sha(docs.manifest));
    expect(imageDocuments({ layers, config: { architecture: 'amd64', os: 'linux' } }).digest).toBe(docs.digest);
  });
});
