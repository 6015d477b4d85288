/**
 * Two application images the e2e workloads run and switch between: the machine's static busybox
 * with a `/version` file, so v1 and v2 differ in content (and so in digest and the kubelet's
 * imageID). Built and pushed with the project's own image tooling into the cluster's registry.
 */
import { readFileSync } from 'node:fs';
import { canonicalJson, sha256Hex } from '../../../lib/image/build-context.js';
import { buildLayer } from '../../../lib/image/layer.js';
import { MediaTypes } from '../../../lib/image/oci.js';
import { RegistryClient } from '../../../lib/image/registry.js';
import { RegistryHttp } from '../../../lib/image/registry-http.js';

/** Debian's busybox-static (installed by the cluster's setup script). */
const BUSYBOX = '/bin/busybox';

export interface AppImages {
  /** `<registry>/e2e/app:v1`, as pods name it. */
  readonly v1: string;
  readonly v2: string;
  /** Manifest digests, which the kubelet reports as the containers' imageID (`…@sha256:…`). */
  readonly digests: { readonly v1: string; readonly v2: string };
}

/** Pushes `e2e/app:v1` and `:v2` (idempotent: same content, same digests). */
export async function pushAppImages(registry: string): Promise<AppImages> {
  const client = new RegistryClient(new RegistryHttp(registry, { plainHttp: [registry] }));
  const busybox = readFileSync(BUSYBOX);
  const digests: Record<string, string> = {};
  for (const version of ['v1', 'v2']) {
    const layer = await buildLayer(
      [
        { path: 'bin/busybox', content: busybox, mode: 0o755 },
        { path: 'version', content: Buffer.from(`${version}\n`), mode: 0o644 },
      ],
      0,
    );
    const config = Buffer.from(
      canonicalJson({
        architecture: 'amd64',
        os: 'linux',
        config: { Env: ['PATH=/bin'], Entrypoint: ['/bin/busybox'], Cmd: ['sleep', '86400'] },
        rootfs: { type: 'layers', diff_ids: [layer.diffId] },
        history: [{ created_by: `kruise-ha e2e app image ${version}` }],
      }),
    );
    const configDigest = `sha256:${sha256Hex(config)}`;
    await client.uploadBlob('e2e/app', layer.digest, [layer.blob], 'pushing the e2e app layer');
    await client.uploadBlob('e2e/app', configDigest, [config], 'pushing the e2e app config');
    const manifest = Buffer.from(
      canonicalJson({
        schemaVersion: 2,
        mediaType: MediaTypes.ociManifest,
        config: { mediaType: MediaTypes.ociConfig, digest: configDigest, size: config.byteLength },
        layers: [{ mediaType: MediaTypes.ociLayerGzip, digest: layer.digest, size: layer.blob.byteLength }],
      }),
    );
    digests[version] = await client.putManifest(
      'e2e/app',
      version,
      MediaTypes.ociManifest,
      manifest,
      'pushing the e2e app manifest',
    );
  }
  return {
    v1: `${registry}/e2e/app:v1`,
    v2: `${registry}/e2e/app:v2`,
    digests: { v1: digests.v1!, v2: digests.v2! },
  };
}
