import { afterEach, describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CertFiles, writeCertDir } from '../../../../lib/runtime/certs/cert-dir.js';
import { tempDir } from '../tls-fixtures.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => dirs.splice(0).forEach((d) => d.remove()));

describe('writeCertDir', () => {
  it('creates the directory, writes the three files with tight modes, and leaves no temp files', async () => {
    const d = tempDir();
    dirs.push(d);
    const dir = join(d.path, 'nested', 'certs');
    expect(await writeCertDir(dir, { cert: 'C', key: 'K', ca: 'A' })).toBe(true);
    expect(readdirSync(dir).sort()).toEqual([CertFiles.ca, CertFiles.cert, CertFiles.key].sort());
    expect(readFileSync(join(dir, CertFiles.key), 'utf8')).toBe('K');
    expect(statSync(join(dir, CertFiles.key)).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o077).toBe(0);
  });

  it('reports no change when the contents are identical, and replaces only what differs', async () => {
    const d = tempDir();
    dirs.push(d);
    await writeCertDir(d.path, { cert: 'C', key: 'K', ca: 'A' });
    const inode = statSync(join(d.path, CertFiles.key)).ino;
    expect(await writeCertDir(d.path, { cert: 'C', key: 'K', ca: 'A' })).toBe(false);
    expect(await writeCertDir(d.path, { cert: 'C2', key: 'K', ca: 'A' })).toBe(true);
    expect(statSync(join(d.path, CertFiles.key)).ino).toBe(inode);
    expect(readFileSync(join(d.path, CertFiles.cert), 'utf8')).toBe('C2');
  });

  it('names the path when it cannot write', async () => {
    const d = tempDir();
    dirs.push(d);
    writeFileSync(join(d.path, 'a-file'), '');
    const target = join(d.path, 'a-file', 'certs');
    await expect(writeCertDir(target, { cert: 'C', key: 'K', ca: 'A' })).rejects.toThrow(
      `cannot create certificate directory ${target}`,
    );
  });
});
