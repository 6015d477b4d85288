/**
 * Two application images the e2e workloads run and switch between: the machine's static busybox
 * with a `/version` file, so v1 and v2 differ in content (and so in digest and the kubelet's
 * imageID). Layers cached and pushed by the cluster images' own machinery (test/cluster/images).
 */
import { statSync } from 'node:fs';
import { defaultCacheDir } from '../../cluster/images/index.js';
import { addEntry, cachedLayer, fileSha256, inputKey } from '../../cluster/images/layer.js';
import { pushImage } from '../../cluster/images/push.js';

/** Debian's busybox-static (installed by the cluster's setup script). */
const BUSYBOX = '/bin/busybox';
const REPOSITORY = 'e2e/app';

export interface AppImages {
  /** `<registry>/e2e/app:v1`, as pods name it. */
  readonly v1: string;
  readonly v2: string;
  /** Manifest digests, which the kubelet reports as the containers' imageID (`…@sha256:…`). */
  readonly digests: { readonly v1: string; readonly v2: string };
}

/** Pushes `e2e/app:v1` and `:v2` (idempotent: same content, same digests; a warm run writes nothing). */
export async function pushAppImages(registry: string): Promise<AppImages> {
  const sha = await fileSha256(BUSYBOX);
  const size = statSync(BUSYBOX).size;
  const mtime = new Date(0);
  const digests: Record<string, string> = {};
  for (const version of ['v1', 'v2']) {
    const versionFile = Buffer.from(`${version}\n`);
    const layer = await cachedLayer(
      defaultCacheDir(),
      `e2e-app-${version}`,
      inputKey({ sha, version }),
      async (tar) => {
        await addEntry(tar, { name: 'bin/busybox', type: 'file', mode: 0o755, size, mtime }, BUSYBOX);
        await addEntry(
          tar,
          { name: 'version', type: 'file', mode: 0o644, size: versionFile.byteLength, mtime },
          versionFile,
        );
      },
    );
    const pushed = await pushImage(
      {
        registry,
        repository: REPOSITORY,
        tag: version,
        layers: [layer],
        plainHttp: [registry],
        config: {
          architecture: 'amd64',
          os: 'linux',
          config: { Env: ['PATH=/bin'], Entrypoint: ['/bin/busybox'], Cmd: ['sleep', '86400'] },
          history: [{ created_by: `kruise-ha e2e app image ${version}` }],
        },
      },
      () => undefined,
    );
    digests[version] = pushed.digest;
  }
  return {
    v1: `${registry}/${REPOSITORY}:v1`,
    v2: `${registry}/${REPOSITORY}:v2`,
    digests: { v1: digests.v1!, v2: digests.v2! },
  };
}
