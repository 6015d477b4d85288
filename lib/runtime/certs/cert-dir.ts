/**
 * Writes certificate files so a reader never sees a half-written one: each file goes to a temp
 * name in the same directory (same filesystem) and is renamed over the old one, which POSIX makes
 * atomic. The key is written before the certificate, and the server's reloader refuses a pair
 * that does not match, so the short window between the two renames is harmless.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const CertFiles = {
  cert: 'tls.crt',
  key: 'tls.key',
  /** The CA bundle serving clients should trust; read by the readiness self-check and by people debugging. */
  ca: 'ca.crt',
} as const;

export interface CertDirContents {
  cert: string;
  key: string;
  ca: string;
}

/** Writes what differs; resolves true if any file changed. */
export async function writeCertDir(dir: string, contents: CertDirContents): Promise<boolean> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (e) {
    throw new Error(`cannot create certificate directory ${dir}: ${(e as Error).message}`, { cause: e });
  }
  let changed = false;
  for (const [name, text, mode] of [
    [CertFiles.key, contents.key, 0o600],
    [CertFiles.cert, contents.cert, 0o644],
    [CertFiles.ca, contents.ca, 0o644],
  ] as const) {
    const path = join(dir, name);
    if ((await readFile(path, 'utf8').catch(() => undefined)) === text) continue;
    const tmp = join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeFile(tmp, text, { mode, flush: true });
      await rename(tmp, path);
    } catch (e) {
      await rm(tmp, { force: true });
      throw new Error(`writing ${path} failed: ${(e as Error).message}`, { cause: e });
    }
    changed = true;
  }
  return changed;
}
