/**
 * `npm run cluster:images -- --registry HOST:PORT [--plain-http] [--json]`: builds the real-cluster images
 * (upstream kruise-manager with kruise-daemon, the runtime's node base, the runtime image) and pushes
 * them to that registry. Prints the references on stdout, progress and timings on stderr.
 */
import { parseArgs } from 'node:util';
import { ensureClusterImages } from './index.js';

const USAGE = `usage: npm run cluster:images -- --registry <host:port> [--plain-http] [--cache-dir <dir>] [--json]

Builds upstream's kruise-manager image (/manager, /kruise-daemon) from the pinned Go module, the
RuntimeImage base (node 24 on Debian bookworm) and the runtime image, and pushes them to the registry:
  <registry>/openkruise/kruise-manager:<version>      = docker.io/openkruise/kruise-manager through a mirror
  <registry>/library/node:24.21.0-bookworm-slim        = docker.io/library/node:... through a mirror
  <registry>/kruise-ha/runtime:<content tag>          (RuntimeImage + kruise-ha-image publish)
Cached under ~/.cache/kruise-ts-envtest/kruise-images; a warm run pushes nothing.

  --plain-http   the registry speaks HTTP (loopback registries always do)
`;

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        registry: { type: 'string' },
        'plain-http': { type: 'boolean' },
        'cache-dir': { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    process.stderr.write(`cluster:images: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (!values.registry) {
    process.stderr.write(`cluster:images: --registry is required\n\n${USAGE}`);
    return 2;
  }
  let images;
  try {
    images = await ensureClusterImages({
      registry: values.registry,
      plainHttp: values['plain-http'],
      cacheDir: values['cache-dir'],
    });
  } catch (e) {
    const message = (e as Error).message;
    // An HTTPS hello answered by a plain-HTTP registry.
    const hint =
      !values['plain-http'] && message.includes('WRONG_VERSION_NUMBER')
        ? `\n(the registry speaks plain HTTP: add --plain-http)`
        : '';
    process.stderr.write(`cluster:images: ${message}${hint}\n`);
    return 1;
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(images, null, 2)}\n`);
  } else {
    const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
    for (const i of [images.upstreamManager, images.runtimeBase])
      process.stdout.write(
        `${i.name} -> ${i.reference}@${i.digest} (${mb(i.compressedSize)} compressed, ${mb(i.uncompressedSize)} unpacked)\n`,
      );
    const r = images.runtime;
    process.stdout.write(`${r.reference}@${r.digest} (app layer ${mb(r.appLayerSize)}, on ${r.baseImage})\n`);
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`cluster:images: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
