/**
 * The images the real-cluster tier runs, built here and pushed to a local registry:
 *
 * - `openkruise/kruise-manager:<default release>` (ensureUpstreamImage(): any other pinned release):
 *   upstream's image, laid out as upstream's Dockerfile lays it out
 *   (`/manager` and `/kruise-daemon`, static binaries from the pinned, checksum-verified module, built by
 *   test/envtest/binaries/build.sh) on a base from Debian's packages. Pushed under the repository that
 *   the synthesized reference resolves to through a docker.io mirror, so `npm run synth`'s output runs
 *   unmodified on nodes whose containerd mirrors docker.io to the registry.
 * - `library/node:24.21.0-bookworm-slim`: the RuntimeImage default base (not pullable here), rebuilt from
 *   Debian bookworm (minbase, slimmed like debian:bookworm-slim) and the Node binary of the `node`
 *   devDependency, laid out like the node slim images.
 * - the runtime image: a cdk8s app with RuntimeImage (runtime-app.ts), synthesized, then
 *   `kruise-ha-image publish`, as a user does.
 *
 * Layers are cached under ~/.cache/kruise-ts-envtest/kruise-images keyed by their inputs; pushes skip
 * what the registry holds already.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createReadStream } from 'node:fs';
import { DEFAULT_RUNTIME_BASE_IMAGE } from '../../../lib/constructs/runtime-image/runtime-image.js';
import type { PublishResult } from '../../../lib/image/publish.js';
import { parseReference } from '../../../lib/image/reference.js';
import { type DebianRootfs, SOURCE_DATE_EPOCH, mmdebstrapArgs, withDebianRootfs } from './debian.js';
import { type EntryHeader, type LayerBlob, addEntry, cachedLayer, copyTar, fileSha256, inputKey } from './layer.js';
import { type PushedImage, pushImage } from './push.js';
import { RUNTIME_REPOSITORY, runtimeImageProps } from './runtime-app.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..', '..');
const BUILD_SCRIPT = join(ROOT, 'test', 'envtest', 'binaries', 'build.sh');
const ENSURE_TOOLS = join(ROOT, 'test', 'setup', 'ensure-image-tools.sh');
/** Bump when a layer's recipe changes in a way its inputs do not show. */
const RECIPE = 1;
const EPOCH_DATE = new Date(SOURCE_DATE_EPOCH * 1000).toISOString().replace('.000Z', 'Z');
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const NOBODY = 65534;
const MERGED_USR = '/usr/share/mmdebstrap/hooks/merged-usr';

export interface ClusterImagesOptions {
  /** `host:port` of the registry the nodes pull from. */
  readonly registry: string;
  /** Reach it over plain HTTP (loopback registries always are). @default false */
  readonly plainHttp?: boolean;
  /** @default $ENVTEST_CACHE_DIR or ~/.cache/kruise-ts-envtest, + /cluster-images */
  readonly cacheDir?: string;
  /** Progress lines. @default stderr */
  readonly log?: (line: string) => void;
}

export interface BuiltImage extends PushedImage {
  /** The reference the synthesized output names (`openkruise/kruise-manager:v1.8.3`), where it differs. */
  readonly name: string;
}

export interface RuntimeImageResult {
  /** `registry/kruise-ha/runtime:<content tag>`, as the synthesized Deployment names it. */
  readonly reference: string;
  readonly digest: string;
  readonly upToDate: boolean;
  /** The base as RuntimeImage was given it: the local copy, pinned by digest. */
  readonly baseImage: string;
  /** Bytes of the app layer (bundle + source map), compressed. */
  readonly appLayerSize: number;
  /** Publish's JSON result (`kruise-ha-image publish --json`). */
  readonly publish: PublishResult;
}

export interface Timing {
  readonly step: string;
  readonly seconds: number;
  /** `built` when this run did the work, `cached` when it reused a cached result. */
  readonly how: 'built' | 'cached' | 'pushed' | 'up to date';
}

export interface ClusterImages {
  /** Upstream kruise-manager (with /kruise-daemon) under the docker.io name the output uses. */
  readonly upstreamManager: BuiltImage;
  /** The RuntimeImage base, under the docker.io name of the default base. */
  readonly runtimeBase: BuiltImage;
  readonly runtime: RuntimeImageResult;
  readonly kruiseVersion: string;
  readonly timings: readonly Timing[];
}

export function defaultCacheDir(): string {
  const root =
    process.env.ENVTEST_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'kruise-ts-envtest');
  return join(root, 'kruise-images');
}

/** Builds (or takes from the cache) and pushes the three images; safe to call again. */
export async function ensureClusterImages(options: ClusterImagesOptions): Promise<ClusterImages> {
  const log = options.log ?? ((line: string) => process.stderr.write(`cluster-images: ${line}\n`));
  const registry = options.registry;
  if (!/^[a-zA-Z0-9.-]+:\d{1,5}$|^\[[0-9a-fA-F:]+\]:\d{1,5}$/.test(registry))
    throw new Error(`registry "${registry}" is not host:port. Fix: pass the registry as e.g. 127.0.0.1:5000`);
  const plainHttp = options.plainHttp ? [registry] : [];
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  mkdirSync(cacheDir, { recursive: true });
  const timings: Timing[] = [];
  const timed = async <T>(step: string, work: () => Promise<T>, how: (r: T) => Timing['how']): Promise<T> => {
    const start = performance.now();
    const result = await work();
    const t: Timing = { step, seconds: Math.round((performance.now() - start) / 100) / 10, how: how(result) };
    timings.push(t);
    log(`${step}: ${t.seconds} s (${t.how})`);
    return result;
  };
  const layerHow = (l: LayerBlob) => (l.built ? 'built' : 'cached');
  const pushHow = (p: PushedImage) => (p.upToDate ? 'up to date' : 'pushed');

  await timed(
    'image tools (mmdebstrap, containerd)',
    () => run('bash', [ENSURE_TOOLS]),
    (r) => (r.stderr.includes('installing') ? 'built' : 'cached'),
  );
  const {
    bins,
    image: upstreamManager,
    name: upstreamName,
  } = await pushUpstreamImage({ registry, plainHttp, cacheDir, log, timed }, undefined);
  const arch = goArch();

  // The runtime's base, then the runtime image itself.
  const node = await nodeBinary();
  const debian = await timed(
    'node base: debian slim rootfs (mmdebstrap)',
    () => nodeDebianLayer(cacheDir, log),
    layerHow,
  );
  const nodeLayer = await timed(
    `node base: node ${node.version} layer`,
    () => nodeBinaryLayer(cacheDir, node),
    layerHow,
  );
  const baseRef = parseReference(DEFAULT_RUNTIME_BASE_IMAGE);
  const runtimeBase = await timed(
    `push ${DEFAULT_RUNTIME_BASE_IMAGE}`,
    () =>
      pushImage(
        {
          registry,
          repository: baseRef.repository,
          tag: baseRef.tag!,
          layers: [debian, nodeLayer],
          plainHttp,
          config: {
            architecture: arch,
            os: 'linux',
            created: EPOCH_DATE,
            config: { Env: [PATH_ENV, `NODE_VERSION=${node.version}`], Cmd: ['node'] },
            history: [
              { created: EPOCH_DATE, created_by: `mmdebstrap ${mmdebstrapArgs(NODE_DEBIAN, '-').join(' ')}` },
              { created: EPOCH_DATE, created_by: `COPY node ${node.version} /usr/local/bin/node` },
            ],
          },
        },
        log,
      ),
    pushHow,
  );
  const baseImage = `${registry}/${baseRef.repository}:${baseRef.tag}@${runtimeBase.digest}`;
  const runtime = await timed(
    'runtime image: synth + kruise-ha-image publish',
    () => publishRuntime(registry, baseImage, options.plainHttp ?? false, cacheDir),
    (r) => (r.upToDate ? 'up to date' : 'pushed'),
  );
  const total = timings.reduce((n, t) => n + t.seconds, 0);
  log(`all images ready in ${Math.round(total * 10) / 10} s`);
  return {
    upstreamManager: { ...upstreamManager, name: upstreamName },
    runtimeBase: { ...runtimeBase, name: DEFAULT_RUNTIME_BASE_IMAGE },
    runtime,
    kruiseVersion: bins.version,
    timings,
  };
}

/** Go's name of this machine's architecture, as image configs spell it. */
function goArch(): string {
  const arch = { x64: 'amd64', arm64: 'arm64' }[process.arch as string];
  if (!arch) throw new Error(`cluster images are built for amd64 or arm64, not ${process.arch}`);
  return arch;
}

// ---------------------------------------------------------------------------------------------
// Upstream's image

/**
 * What upstream's final image keeps of its alpine base once its Dockerfile has deleted every
 * executable (/bin, /sbin, /usr/bin, /usr/sbin, /usr/local/bin): the CA bundle and time zones
 * (ca-certificates, tzdata), and the name databases. The same files here come from Debian's packages.
 */
export const KRUISE_BASE: DebianRootfs = {
  suite: 'bookworm',
  variant: 'minbase',
  include: ['ca-certificates', 'tzdata', 'netbase'],
  hookDirs: [MERGED_USR],
};
const KRUISE_BASE_FILES = [
  'etc/ssl/certs/ca-certificates.crt',
  'etc/services',
  'etc/protocols',
  'etc/nsswitch.conf',
  'etc/localtime',
  'etc/timezone',
  'etc/os-release',
  'usr/lib/os-release',
];
const KRUISE_BASE_TREES = ['usr/share/zoneinfo/'];
/** Mount points as alpine's root has them, for runtimes that do not create them (a read-only snapshot). */
const KRUISE_BASE_MOUNT_POINTS: readonly [string, number][] = [
  ['dev/', 0o755],
  ['proc/', 0o555],
  ['sys/', 0o555],
];
const KRUISE_BASE_LICENSES = ['base-files', 'ca-certificates', 'tzdata', 'netbase'].map(
  (p) => `usr/share/doc/${p}/copyright`,
);

async function kruiseBaseLayer(cacheDir: string, log: (line: string) => void): Promise<LayerBlob> {
  const keep = new Set([...KRUISE_BASE_FILES, ...KRUISE_BASE_LICENSES]);
  const parents = new Set([...keep, ...KRUISE_BASE_TREES].flatMap((p) => ancestors(p)));
  const key = inputKey({
    RECIPE,
    KRUISE_BASE,
    keep: [...keep],
    KRUISE_BASE_TREES,
    KRUISE_BASE_MOUNT_POINTS,
    arch: process.arch,
  });
  return cachedLayer(cacheDir, 'kruise-base', key, (tar) =>
    withDebianRootfs(
      KRUISE_BASE,
      cacheDir,
      async (rootfs) => {
        const kept = await copyTar(tar, createReadStream(rootfs), (name) => {
          if (keep.has(name) || parents.has(name)) return true;
          return KRUISE_BASE_TREES.some((t) => name.startsWith(t) || `${name}/` === t);
        });
        const lost = [...keep].filter((f) => !kept.has(f));
        if (lost.length) throw new Error(`Debian ${KRUISE_BASE.suite} no longer ships ${lost.join(', ')}`);
        // Upstream keeps two users, root and nobody, and gives /tmp and /log to nobody.
        const file = (name: string, text: string): EntryHeader => ({
          name,
          type: 'file',
          mode: 0o644,
          uid: 0,
          gid: 0,
          size: Buffer.byteLength(text),
          mtime: new Date(SOURCE_DATE_EPOCH * 1000),
        });
        const passwd = `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:${NOBODY}:${NOBODY}:nobody:/nonexistent:/sbin/nologin\n`;
        const group = `root:x:0:\nnobody:x:${NOBODY}:\n`;
        await addEntry(tar, file('etc/passwd', passwd), Buffer.from(passwd));
        await addEntry(tar, file('etc/group', group), Buffer.from(group));
        for (const [name, mode] of [
          ['log/', 0o755],
          ['tmp/', 0o1777],
        ] as const)
          await addEntry(tar, {
            name,
            type: 'directory',
            mode,
            uid: NOBODY,
            gid: NOBODY,
            mtime: new Date(SOURCE_DATE_EPOCH * 1000),
          });
        for (const [name, mode] of KRUISE_BASE_MOUNT_POINTS)
          await addEntry(tar, {
            name,
            type: 'directory',
            mode,
            uid: 0,
            gid: 0,
            mtime: new Date(SOURCE_DATE_EPOCH * 1000),
          });
      },
      log,
    ),
  );
}

/** One static binary at the image root. */
async function binaryLayer(
  cacheDir: string,
  name: string,
  binary: string,
  owner: { uid: number; gid: number },
): Promise<LayerBlob> {
  const sha = await fileSha256(binary);
  const size = statSync(binary).size;
  return cachedLayer(cacheDir, name, inputKey({ RECIPE, name, sha, owner }), (tar) =>
    addEntry(
      tar,
      { name, type: 'file', mode: 0o755, size, ...owner, mtime: new Date(SOURCE_DATE_EPOCH * 1000) },
      binary,
    ),
  );
}

interface ImageContext {
  readonly registry: string;
  readonly plainHttp: string[];
  readonly cacheDir: string;
  readonly log: (line: string) => void;
  readonly timed: <T>(step: string, work: () => Promise<T>, how: (r: T) => Timing['how']) => Promise<T>;
}

/**
 * Upstream's image of one release (`openkruise/kruise-manager:<version>` with /kruise-daemon),
 * laid out as upstream's Dockerfile lays it out, from the binaries build.sh builds from that
 * release's checksum-pinned module. `version` undefined: the default release.
 */
async function pushUpstreamImage(
  ctx: ImageContext,
  version: string | undefined,
): Promise<{ bins: KruiseBinaries; image: PushedImage; name: string }> {
  const { registry, plainHttp, cacheDir, log, timed } = ctx;
  const layerHow = (l: LayerBlob) => (l.built ? 'built' : 'cached');
  const pushHow = (p: PushedImage) => (p.upToDate ? 'up to date' : 'pushed');
  const bins = await timed(
    `kruise-manager + kruise-daemon ${version ?? '(default release)'} binaries (build.sh)`,
    () => resolveKruiseBinaries(version),
    (b) => (b.builtNow ? 'built' : 'cached'),
  );
  const arch = goArch();

  // Upstream's image.
  const kruiseBase = await timed('kruise base rootfs (mmdebstrap)', () => kruiseBaseLayer(cacheDir, log), layerHow);
  const manager = await timed(
    'kruise-manager layer',
    () => binaryLayer(cacheDir, 'manager', bins.manager, { uid: NOBODY, gid: NOBODY }),
    layerHow,
  );
  const daemon = await timed(
    'kruise-daemon layer',
    () => binaryLayer(cacheDir, 'kruise-daemon', bins.daemon, { uid: 0, gid: 0 }),
    layerHow,
  );
  const upstreamName = `openkruise/kruise-manager:${bins.version}`;
  const upstreamRef = parseReference(upstreamName);
  const upstreamManager = await timed(
    `push ${upstreamName}`,
    () =>
      pushImage(
        {
          registry,
          repository: upstreamRef.repository,
          tag: upstreamRef.tag!,
          layers: [kruiseBase, manager, daemon],
          plainHttp,
          config: {
            architecture: arch,
            os: 'linux',
            created: EPOCH_DATE,
            config: {
              Env: [PATH_ENV],
              Entrypoint: ['/manager'],
              WorkingDir: '/',
              Labels: {
                'org.opencontainers.image.title': 'kruise-manager',
                'org.opencontainers.image.version': bins.version,
                'org.opencontainers.image.source': 'https://github.com/openkruise/kruise',
                'org.opencontainers.image.description': `built by kruise-ha from the Go module github.com/openkruise/kruise@${bins.version} (checksum-verified), on a Debian ${KRUISE_BASE.suite} base`,
              },
            },
            history: [
              { created: EPOCH_DATE, created_by: `mmdebstrap ${mmdebstrapArgs(KRUISE_BASE, '-').join(' ')}` },
              { created: EPOCH_DATE, created_by: 'COPY manager /manager (nobody, as upstream chowns it)' },
              { created: EPOCH_DATE, created_by: 'COPY daemon /kruise-daemon' },
            ],
          },
        },
        log,
      ),
    pushHow,
  );

  return { bins, image: upstreamManager, name: upstreamName };
}

/**
 * Builds (or takes from the cache) and pushes upstream's image of `version` (any release pinned
 * in tools/upstream/pin.json), e.g. the previous release for an upgrade test; safe to call again.
 */
export async function ensureUpstreamImage(options: ClusterImagesOptions, version: string): Promise<BuiltImage> {
  const log = options.log ?? ((line: string) => process.stderr.write(`cluster-images: ${line}\n`));
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  mkdirSync(cacheDir, { recursive: true });
  const timed = async <T>(step: string, work: () => Promise<T>, how: (r: T) => Timing['how']): Promise<T> => {
    const start = performance.now();
    const result = await work();
    log(`${step}: ${Math.round((performance.now() - start) / 100) / 10} s (${how(result)})`);
    return result;
  };
  await timed(
    'image tools (mmdebstrap, containerd)',
    () => run('bash', [ENSURE_TOOLS]),
    (r) => (r.stderr.includes('installing') ? 'built' : 'cached'),
  );
  const { image, name } = await pushUpstreamImage(
    { registry: options.registry, plainHttp: options.plainHttp ? [options.registry] : [], cacheDir, log, timed },
    version,
  );
  return { ...image, name };
}

interface KruiseBinaries {
  manager: string;
  daemon: string;
  version: string;
  builtNow: boolean;
}

/**
 * kruise-manager and kruise-daemon of `version` (default: the default release) from build.sh
 * (built from that release's pinned module, or its TEST_ASSET_* overrides).
 */
async function resolveKruiseBinaries(version?: string): Promise<KruiseBinaries> {
  const { stdout, stderr } = await run('bash', [BUILD_SCRIPT], version ? { KRUISE_RELEASE: version } : {});
  const kv = new Map(
    stdout
      .split('\n')
      .filter((l) => l.includes('='))
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const),
  );
  const need = (k: string) => {
    const v = kv.get(k);
    if (!v) throw new Error(`${BUILD_SCRIPT} printed no ${k}=... line; got:\n${stdout}`);
    return v;
  };
  return {
    manager: need('KRUISE_MANAGER'),
    daemon: need('KRUISE_DAEMON'),
    version: need('KRUISE_VERSION'),
    builtNow: /built kruise-(manager|daemon)/.test(stderr),
  };
}

// ---------------------------------------------------------------------------------------------
// The runtime's base

/**
 * Debian bookworm as debian:bookworm-slim is (minbase, without docs but copyrights, man pages,
 * locales), plus the `node` user (uid 1000) of the node images. The runtime image itself runs as
 * 65532 and needs no entry; the user is there for parity with the image it stands in for.
 */
export const NODE_DEBIAN: DebianRootfs = {
  suite: 'bookworm',
  variant: 'minbase',
  include: [],
  // As Debian's own images: /usr merged by the build, not by the usrmerge package (which pulls in perl).
  hookDirs: [MERGED_USR],
  dpkgopts: [
    'path-exclude=/usr/share/doc/*',
    'path-include=/usr/share/doc/*/copyright',
    'path-exclude=/usr/share/man/*',
    'path-exclude=/usr/share/groff/*',
    'path-exclude=/usr/share/info/*',
    'path-exclude=/usr/share/locale/*',
    'path-exclude=/usr/share/lintian/*',
    'path-exclude=/usr/share/linda/*',
  ],
  customize: [
    'chroot "$1" groupadd --gid 1000 node',
    'chroot "$1" useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
  ],
};

async function nodeDebianLayer(cacheDir: string, log: (line: string) => void): Promise<LayerBlob> {
  // The container runtime provides /dev and the kubelet mounts resolv.conf and hostname.
  const dropped = (name: string) => name.startsWith('dev/') || name === 'etc/resolv.conf' || name === 'etc/hostname';
  return cachedLayer(cacheDir, 'debian-slim', inputKey({ RECIPE, NODE_DEBIAN, arch: process.arch }), (tar) =>
    withDebianRootfs(
      NODE_DEBIAN,
      cacheDir,
      async (rootfs) => void (await copyTar(tar, createReadStream(rootfs), (n) => !dropped(n))),
      log,
    ),
  );
}

interface NodeBinary {
  readonly path: string;
  readonly version: string;
}

/**
 * The Node binary the `node` devDependency installed (node_modules/node/bin/node: its preinstall copies
 * it there from the platform package, which a later `npm install` may prune), checked to be the
 * release the default base names.
 */
async function nodeBinary(): Promise<NodeBinary> {
  const want = parseReference(DEFAULT_RUNTIME_BASE_IMAGE).tag!.split('-')[0];
  const path = join(ROOT, 'node_modules', 'node', 'bin', 'node');
  const { stdout } = await run(path, ['--version']).catch((e: Error) => {
    throw new Error(`cannot run ${path} (${e.message}). Fix: npm install (the node devDependency ships it)`);
  });
  const version = stdout.trim().replace(/^v/, '');
  if (version !== want)
    throw new Error(
      `${path} is Node ${version}, but the RuntimeImage default base is Node ${want}. Fix: npm install (the node devDependency pins ${want})`,
    );
  return { path, version };
}

/** Node at /usr/local/bin/node, where the node images install it. */
async function nodeBinaryLayer(cacheDir: string, node: NodeBinary): Promise<LayerBlob> {
  const sha = await fileSha256(node.path);
  const mtime = new Date(SOURCE_DATE_EPOCH * 1000);
  const size = statSync(node.path).size;
  return cachedLayer(cacheDir, `node-${node.version}`, inputKey({ RECIPE, sha }), async (tar) => {
    for (const d of ['usr/', 'usr/local/', 'usr/local/bin/'])
      await addEntry(tar, { name: d, type: 'directory', mode: 0o755, uid: 0, gid: 0, mtime });
    await addEntry(
      tar,
      { name: 'usr/local/bin/node', type: 'file', mode: 0o755, size, uid: 0, gid: 0, mtime },
      node.path,
    );
  });
}

// ---------------------------------------------------------------------------------------------
// The runtime image, as a user makes it

async function publishRuntime(
  registry: string,
  baseImage: string,
  plainHttp: boolean,
  cacheDir: string,
): Promise<RuntimeImageResult> {
  const out = mkdtempSync(join(cacheDir, 'runtime-synth-'));
  try {
    const tsx = join(ROOT, 'node_modules', '.bin', 'tsx');
    await run(tsx, ['--tsconfig', join(ROOT, 'tsconfig.dev.json'), join(HERE, 'runtime-app.ts')], {
      CDK8S_OUTDIR: out,
      KRUISE_HA_IMAGE_REGISTRY: registry,
      KRUISE_HA_RUNTIME_BASE: baseImage,
    });
    const { stdout } = await run(tsx, [
      join(ROOT, 'lib', 'image', 'cli.ts'),
      'publish',
      out,
      '--json',
      ...(plainHttp ? ['--plain-http', registry] : []),
    ]);
    const publish = JSON.parse(stdout) as PublishResult;
    return {
      reference: publish.reference,
      digest: publish.digest,
      upToDate: publish.upToDate,
      baseImage,
      appLayerSize: publish.appLayer.size,
      publish,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export { RUNTIME_REPOSITORY, runtimeImageProps };

/** `a/b/c` → `a`, `a/b` (directories only; a trailing slash names a directory itself). */
function ancestors(path: string): string[] {
  const parts = path.replace(/\/$/, '').split('/');
  const upTo = path.endsWith('/') ? parts.length : parts.length - 1;
  return Array.from({ length: upTo }, (_, i) => parts.slice(0, i + 1).join('/'));
}

/** Runs a command; stderr passes through to ours (build progress), stdout is returned. */
function run(
  command: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      process.stderr.write(d);
    });
    child.once('error', (e) => reject(new Error(`cannot run ${command}: ${e.message}`)));
    child.once('close', (code) =>
      code === 0
        ? resolve({ stdout, stderr })
        : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${stderr.slice(-3000)}`)),
    );
  });
}
