/**
 * Debian root filesystems from Debian's own packages, with mmdebstrap (installed by
 * test/setup/ensure-image-tools.sh), as a tar that copyTar turns into a layer.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';

export interface DebianRootfs {
  /** Release code name. */
  readonly suite: string;
  /** mmdebstrap variant (`minbase`: Essential packages and apt). */
  readonly variant: string;
  /** Extra packages. */
  readonly include: readonly string[];
  /** dpkg options written into the chroot (path-exclude=... makes a slim image). */
  readonly dpkgopts?: readonly string[];
  /**
   * mmdebstrap hook folders (`/usr/share/mmdebstrap/hooks/merged-usr`: merged /usr without the usrmerge
   * package and the perl it pulls in).
   */
  readonly hookDirs?: readonly string[];
  /** Shell commands run with the root filesystem as "$1" before it is packed. */
  readonly customize?: readonly string[];
}

/** Fixed file times: the same packages give the same tar. */
export const SOURCE_DATE_EPOCH = 0;

/** The mmdebstrap argv for a spec (also part of the cache key: the same argv gives the same tree). */
export function mmdebstrapArgs(spec: DebianRootfs, target: string): string[] {
  return [
    '--quiet',
    '--mode=root',
    `--variant=${spec.variant}`,
    '--format=tar',
    ...(spec.include.length ? [`--include=${spec.include.join(',')}`] : []),
    ...(spec.dpkgopts ?? []).map((o) => `--dpkgopt=${o}`),
    ...(spec.hookDirs ?? []).map((d) => `--hook-dir=${d}`),
    ...(spec.customize ?? []).map((h) => `--customize-hook=${h}`),
    spec.suite,
    target,
  ];
}

/**
 * Runs mmdebstrap into a temporary tar, hands it to `use`, then removes it. Needs root (mmdebstrap
 * mounts /proc and /dev into the chroot) and Debian's package mirror.
 */
export async function withDebianRootfs<T>(
  spec: DebianRootfs,
  scratch: string,
  use: (tarPath: string) => Promise<T>,
  log: (line: string) => void,
): Promise<T> {
  const dir = mkdtempSync(join(scratch, 'mmdebstrap-'));
  const tar = join(dir, 'rootfs.tar');
  try {
    const args = mmdebstrapArgs(spec, tar);
    log(`mmdebstrap ${args.join(' ')}`);
    await new Promise<void>((resolve, reject) => {
      const child = spawn('mmdebstrap', args, {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, SOURCE_DATE_EPOCH: String(SOURCE_DATE_EPOCH), LC_ALL: 'C.UTF-8' },
      });
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        err = (err + d).slice(-4000);
      });
      child.once('error', (e) =>
        reject(new Error(`cannot run mmdebstrap (${e.message}). Fix: bash test/setup/ensure-image-tools.sh`)),
      );
      child.once('close', (code) =>
        code === 0
          ? resolve()
          : reject(
              new Error(
                `mmdebstrap ${spec.suite} (${spec.variant}, ${spec.include.join(',') || 'no extra packages'}) exited with ${code}:\n${err}`,
              ),
            ),
      );
    });
    return await use(tar);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
