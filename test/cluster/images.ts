// The two images every node needs and nothing may pull from a public registry: the pod sandbox
// (our own static pause, pause.c) and a busybox-static image for smoke tests. Built once with
// umoci into an OCI layout in the cache, keyed on their inputs; pushed to the cluster's registry
// under the paths containerd asks for when it resolves registry.k8s.io/docker.io through it.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireLock } from '../support/content-cache.js';
import { cacheRoot } from './paths.js';

const PAUSE_SOURCE = join(dirname(fileURLToPath(import.meta.url)), 'pause.c');

/** What the kubelet/containerd ask for; the path part is what the local registry stores. */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
export interface NodeImages {
  /** OCI layout holding both images (tags `pause`, `busybox`). */
  layout: string;
  /** Full references as pods name them, e.g. docker.io/library/busybox:1.35.0. */
  pause: string;
  busybox: string;
}

const run = (cmd: string, args: string[], cwd?: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function busyboxVersion(bin: string): string {
  const m = /BusyBox v(\d+\.\d+\.\d+)/.exec(run(bin, ['--help']));
  if (!m) throw new Error(`cluster: cannot read the version of ${bin} (busybox --help)`);
  return m[1];
}

/** Builds (first run only) and returns the node images' OCI layout. */
export function buildNodeImages(log: (m: string) => void): NodeImages {
  const busybox = run('sh', ['-c', 'command -v busybox']).trim();
  const version = busyboxVersion(busybox);
  const key = createHash('sha256')
    .update(readFileSync(PAUSE_SOURCE))
    .update(readFileSync(busybox))
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .digest('hex')
    .slice(0, 12);
  const dir = join(cacheRoot(), `cluster-images-${key}`);
  const images = {
    layout: join(dir, 'oci'),
    pause: PAUSE_IMAGE,
    busybox: `docker.io/library/busybox:${version}`,
  };
  if (existsSync(join(dir, 'done'))) return images;
  // Two clusters starting side by side (npm test's e2e shards) build them once: the second waits, then finds them.
  mkdirSync(dirname(dir), { recursive: true });
  const release = acquireLock(`${dir}.lock`, log, 600_000, 'cluster images', `remove ${dir}.lock if no cluster starts`);
  try {
    if (!existsSync(join(dir, 'done'))) buildInto(dir, version, busybox, log);
  } finally {
    release();
  }
  return images;
}

function buildInto(dir: string, version: string, busybox: string, log: (m: string) => void): void {
  log(`building the pause and busybox ${version} images (first run only)`);
  const tmp = `${dir}.tmp.${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const layout = join(tmp, 'oci');
    run('umoci', ['init', '--layout', layout]);
    // pause: one static binary, run as 65535 like upstream's image.
    run('gcc', ['-static', '-Os', '-Wall', '-o', join(tmp, 'pause'), PAUSE_SOURCE]);
    run('strip', [join(tmp, 'pause')]);
    image(
      layout,
      'pause',
      tmp,
      (rootfs) => {
        execFileSync('install', ['-m', '0755', join(tmp, 'pause'), join(rootfs, 'pause')]);
      },
      ['--config.entrypoint', '/pause', '--config.user', '65535:65535'],
    );
    // busybox: the static binary, every applet as a symlink, a nonroot user (65532) and a page to serve.
    image(
      layout,
      'busybox',
      tmp,
      (rootfs) => {
        for (const d of ['bin', 'etc', 'tmp', 'www', 'proc', 'sys', 'dev', 'root'])
          mkdirSync(join(rootfs, d), { recursive: true });
        execFileSync('install', ['-m', '0755', busybox, join(rootfs, 'bin', 'busybox')]);
        for (const applet of run(busybox, ['--list']).split('\n').filter(Boolean)) {
          if (applet !== 'busybox') symlinkSync('busybox', join(rootfs, 'bin', applet));
        }
        writeFileSync(
          join(rootfs, 'etc', 'passwd'),
          'root:x:0:0:root:/root:/bin/sh\nnonroot:x:65532:65532:nonroot:/tmp:/bin/sh\n',
        );
        writeFileSync(join(rootfs, 'etc', 'group'), 'root:x:0:\nnonroot:x:65532:\n');
        writeFileSync(join(rootfs, 'www', 'index.html'), 'hello from busybox httpd\n');
      },
      ['--config.cmd', '/bin/sh', '--config.env', 'PATH=/bin'],
    );
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
    writeFileSync(join(dir, 'done'), `${new Date().toISOString()}\n`);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    const err = e as Error & { stderr?: string };
    throw new Error(`cluster: building the node images failed: ${err.message}\n${err.stderr ?? ''}`, { cause: e });
  }
}

function image(layout: string, tag: string, tmp: string, fill: (rootfs: string) => void, config: string[]): void {
  const ref = `${layout}:${tag}`;
  const bundle = join(tmp, `bundle-${tag}`);
  run('umoci', ['new', '--image', ref]);
  run('umoci', ['unpack', '--image', ref, bundle]);
  fill(join(bundle, 'rootfs'));
  run('umoci', ['repack', '--image', ref, bundle]);
  run('umoci', ['config', '--image', ref, '--architecture', 'amd64', '--os', 'linux', ...config]);
  run('umoci', ['gc', '--layout', layout]);
  rmSync(bundle, { recursive: true, force: true });
}

/** The registry path (no host) that containerd requests for `reference` through a mirror. */
export function registryPath(reference: string): string {
  const slash = reference.indexOf('/');
  const first = slash < 0 ? '' : reference.slice(0, slash);
  // A first component with a dot, a colon or `localhost` is a registry host (distribution's rule).
  const path = /[.:]|^localhost$/.test(first) ? reference.slice(slash + 1) : reference;
  return first === 'docker.io' || !/[.:]|^localhost$/.test(first)
    ? path.includes('/')
      ? path
      : `library/${path}`
    : path;
}

/** Copies both images into the registry at `registry` (host:port, plain HTTP). */
export function pushNodeImages(images: NodeImages, registry: string): void {
  for (const [tag, ref] of [
    ['pause', images.pause],
    ['busybox', images.busybox],
  ] as const) {
    run('skopeo', [
      'copy',
      '--quiet',
      '--dest-tls-verify=false',
      `oci:${images.layout}:${tag}`,
      `docker://${registry}/${registryPath(ref)}`,
    ]);
  }
}
