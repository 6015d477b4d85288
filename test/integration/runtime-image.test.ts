// RuntimeImage + `image publish` against real CNCF distribution registries (Debian's
// docker-registry): one open, one with htpasswd auth. The base image is built and pushed by
// the test itself, so nothing here needs the internet or a Docker daemon.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import { RuntimeImage } from '../../lib/constructs/runtime-image/runtime-image.js';
import { main } from '../../lib/image/cli.js';
import type { ImageConfig } from '../../lib/image/image-config.js';
import type { ImageIndex, ImageManifest } from '../../lib/image/oci.js';
import { publishImage } from '../../lib/image/publish.js';
import { RegistryClient } from '../../lib/image/registry.js';
import { RegistryHttp } from '../../lib/image/registry-http.js';
import { type TestBase, pushTestBase } from './base-image-fixture.js';
import { RegistryProcess } from './registry-process.js';
import { tarEntries } from '../unit/image/tar-entries.js';

const ENTRY = fileURLToPath(new URL('../unit/constructs/fixtures/runtime-entry/main.ts', import.meta.url));
const USER = { username: 'ci', password: 's3cret' };
const open = new RegistryProcess();
const authed = new RegistryProcess(USER);
const gone = new RegistryProcess();
const temp = mkdtempSync(join(tmpdir(), 'runtime-image-it-'));
let base: TestBase;
let dockerConfig = '';

beforeAll(async () => {
  await Promise.all([open.start(), authed.start(), gone.start()]);
  base = await pushTestBase(client(open.host), 'test/base', '1');
  dockerConfig = join(temp, 'config.json');
  writeFileSync(
    dockerConfig,
    JSON.stringify({
      auths: { [authed.host]: { auth: Buffer.from(`${USER.username}:${USER.password}`).toString('base64') } },
    }),
  );
}, 120_000);
afterAll(async () => {
  await Promise.all([open.cleanup(), authed.cleanup(), gone.cleanup()]);
  rmSync(temp, { recursive: true, force: true });
}, 30_000);

function client(host: string, credentials = USER): RegistryClient {
  return new RegistryClient(
    new RegistryHttp(host, { credentials: { searched: 'test', find: () => ({ ...credentials, source: 'test' }) } }),
  );
}
function synth(repository: string, baseImage = `${open.host}/test/base:1`): RuntimeImage {
  return new RuntimeImage(new App({ outdir: mkdtempSync(join(temp, 'out-')) }), 'Image', {
    repository,
    baseImage,
    entrypoint: ENTRY,
  });
}
/** Records every request, and optionally fails one, like a connection dropped mid-upload. */
function recorder(failOn?: (method: string, n: number) => boolean) {
  const calls: string[] = [];
  const counts = new Map<string, number>();
  const fetchImpl: typeof fetch = (input, init) => {
    const method = init?.method ?? 'GET';
    counts.set(method, (counts.get(method) ?? 0) + 1);
    calls.push(`${method} ${input instanceof Request ? input.url : String(input)}`);
    if (failOn?.(method, counts.get(method)!))
      return Promise.reject(
        new TypeError('fetch failed', {
          cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
        }),
      );
    return fetch(input, init);
  };
  return { calls, fetchImpl };
}
const json = <T>(b: Uint8Array): T => JSON.parse(Buffer.from(b).toString('utf8')) as T;
const writes = (calls: string[]) => calls.filter((c) => /^(POST|PUT|PATCH|DELETE) /.test(c));

describe('image publish against a real registry', () => {
  const io = () => {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      io: {
        out: (t: string) => {
          out.push(t);
        },
        err: (t: string) => {
          err.push(t);
        },
      },
    };
  };
  let image: RuntimeImage;
  let printed = '';

  it('publishes onto a base it never downloads, and the registry serves back that image', async () => {
    image = synth(`${open.host}/kruise-ha/runtime`);
    const { calls, fetchImpl } = recorder();
    const cli = io();
    expect(await main(['publish', join(image.contextDir, '..', '..')], cli.io, fetchImpl)).toBe(0);
    printed = cli.out.join('');
    expect(printed).toMatch(new RegExp(`^${image.imageReference}@sha256:[0-9a-f]{64}\n$`));
    // Same registry: the base layer is mounted across repositories, never pulled.
    expect(cli.err.join('')).toContain(`mounted ${base.manifests.amd64.layerDigest.slice(0, 19)} from test/base`);
    expect(calls.some((c) => c.startsWith('GET ') && c.includes(base.manifests.amd64.layerDigest))).toBe(false);

    const registry = client(open.host);
    const stored = (await registry.getManifest('kruise-ha/runtime', image.tag, 'test'))!;
    expect(`${image.imageReference}@${stored.digest}\n`).toBe(printed);
    const manifest = json<ImageManifest>(stored.bytes);
    expect(manifest.layers.map((l) => l.digest)[0]).toBe(base.manifests.amd64.layerDigest);
    expect(manifest.layers).toHaveLength(2);
    const config = json<ImageConfig>(await registry.getBlob('kruise-ha/runtime', manifest.config.digest, 'test'));
    expect(config.config).toMatchObject({
      User: '65532:65532',
      Entrypoint: ['node', '--expose-gc', '/app/main.mjs'],
      WorkingDir: '/app',
    });
    expect(config.config?.Cmd).toBeUndefined(); // the base's CMD ["node"] must not become an argument
    expect(config.config?.Env).toEqual([
      'PATH=/usr/local/bin:/usr/bin:/bin',
      'NODE_ENV=production',
      'MALLOC_ARENA_MAX=2',
      'MALLOC_TRIM_THRESHOLD_=131072',
      'MALLOC_MMAP_THRESHOLD_=131072',
    ]);
    expect(config.config?.Labels?.['org.opencontainers.image.base.digest']).toBe(base.manifests.amd64.digest);
    const files = await tarEntries(await registry.getBlob('kruise-ha/runtime', manifest.layers[1].digest, 'test'));
    expect(files.map((f) => `${f.header.name} ${f.header.mode?.toString(8)} ${f.header.uid}:${f.header.gid}`)).toEqual([
      'app/ 755 0:0',
      'app/main.mjs 644 0:0',
      'app/main.mjs.map 644 0:0',
    ]);
    expect(files[1].body.equals(readFileSync(join(image.contextDir, 'main.mjs')))).toBe(true);
  });

  it('re-publishing the same content writes nothing and reports "up to date"', async () => {
    const { calls, fetchImpl } = recorder();
    const cli = io();
    expect(await main(['publish', image.contextDir], cli.io, fetchImpl)).toBe(0);
    expect(cli.out.join('')).toBe(printed);
    expect(cli.err.join('')).toContain(`${image.imageReference} is up to date`);
    expect(writes(calls)).toEqual([]);
  });

  it('treats the same content compressed by another zlib as up to date, keeping the existing digest', async () => {
    // Another machine's zlib may compress the app layer differently: same diff_id and config,
    // different layer digest. Simulate it by re-tagging the image with a level-1 gzip layer.
    const registry = client(open.host);
    const manifest = json<ImageManifest>((await registry.getManifest('kruise-ha/runtime', image.tag, 'test'))!.bytes);
    const recompressed = gzipSync(
      gunzipSync(await registry.getBlob('kruise-ha/runtime', manifest.layers[1].digest, 'test')),
      { level: 1 },
    );
    const layerDigest = `sha256:${createHash('sha256').update(recompressed).digest('hex')}`;
    await registry.uploadBlob('kruise-ha/runtime', layerDigest, [recompressed], 'test');
    const other = {
      ...manifest,
      layers: [manifest.layers[0], { ...manifest.layers[1], digest: layerDigest, size: recompressed.byteLength }],
    };
    const otherDigest = await registry.putManifest(
      'kruise-ha/runtime',
      image.tag,
      manifest.mediaType!,
      Buffer.from(JSON.stringify(other)),
      'test',
    );
    const { calls, fetchImpl } = recorder();
    const result = await publishImage({ context: image.contextDir, fetch: fetchImpl });
    expect(result).toMatchObject({ upToDate: true, digest: otherDigest });
    expect(writes(calls)).toEqual([]);
  });

  it('copies the base across registries in chunks, with docker-config credentials, and pushes an index for two platforms', async () => {
    const target = synth(`${authed.host}/team/runtime`);
    const { calls, fetchImpl } = recorder();
    const result = await publishImage({
      context: target.contextDir,
      dockerConfig,
      platforms: ['linux/amd64', 'linux/arm64'],
      chunkSize: 64 * 1024,
      fetch: fetchImpl,
    });
    expect(result.blobs).toMatchObject({ uploaded: 5, mounted: 0 }); // 2 base layers, 2 configs, 1 app layer
    expect(writes(calls).filter((c) => c.startsWith(`PATCH http://${authed.host}/`)).length).toBeGreaterThanOrEqual(8);
    const stored = (await client(authed.host).getManifest('team/runtime', target.tag, 'test'))!;
    expect(stored.digest).toBe(result.digest);
    const index = json<ImageIndex>(stored.bytes);
    expect(index.manifests.map((m) => m.platform?.architecture)).toEqual(['amd64', 'arm64']);
    const arm = json<ImageManifest>(
      (await client(authed.host).getManifest('team/runtime', index.manifests[1].digest, 'test'))!.bytes,
    );
    expect(arm.layers[0].digest).toBe(base.manifests.arm64.layerDigest);
  });

  it('wrong credentials fail with a 401 naming registry and image, and tag nothing', async () => {
    const target = synth(`${authed.host}/team/denied`);
    await expect(
      publishImage({
        context: target.contextDir,
        registryAuth: { [authed.host]: { username: 'ci', password: 'wrong' } },
      }),
    ).rejects.toThrow(
      new RegExp(
        `^registry ${authed.host} rejected the credentials from the registryAuth option \\(401\\) while checking the tag ${target.imageReference}: .*Fix: run docker login ${authed.host}`,
      ),
    );
    expect(await client(authed.host).getManifest('team/denied', target.tag, 'test')).toBeUndefined();
  });

  it('an upload interrupted mid-blob leaves the tag untouched, and the next publish finishes it', async () => {
    const target = synth(`${authed.host}/team/flaky`);
    const { fetchImpl } = recorder((method, n) => method === 'PATCH' && n === 3);
    await expect(
      publishImage({ context: target.contextDir, dockerConfig, chunkSize: 64 * 1024, fetch: fetchImpl }),
    ).rejects.toThrow(
      new RegExp(
        `^registry ${authed.host} is unreachable \\(UND_ERR_SOCKET\\) .* while pushing blob sha256:[0-9a-f]{64} \\(\\d+ bytes\\) of ${target.imageReference}\\. .*Nothing was tagged: ${target.imageReference} is unchanged; re-run publish`,
      ),
    );
    expect(await client(authed.host).getManifest('team/flaky', target.tag, 'test')).toBeUndefined();
    const result = await publishImage({ context: target.contextDir, dockerConfig, chunkSize: 64 * 1024 });
    expect(result.upToDate).toBe(false);
    expect((await client(authed.host).getManifest('team/flaky', target.tag, 'test'))?.digest).toBe(result.digest);
  });

  it('a stopped registry is reported unreachable, with its address and the image', async () => {
    const target = synth(`${gone.host}/app`);
    await gone.stop();
    await expect(publishImage({ context: target.contextDir })).rejects.toThrow(
      new RegExp(
        `^registry ${gone.host} is unreachable \\(ECONNREFUSED\\) at http://${gone.host} while checking the tag ${target.imageReference}`,
      ),
    );
  });

  it('a missing base tag is named, and nothing is tagged', async () => {
    const target = synth(`${open.host}/kruise-ha/nobase`, `${open.host}/test/base:missing`);
    await expect(publishImage({ context: target.contextDir })).rejects.toThrow(
      new RegExp(
        `^base image ${open.host}/test/base:missing was not found in registry ${open.host} \\(manifest unknown\\)`,
      ),
    );
    expect(await client(open.host).getManifest('kruise-ha/nobase', target.tag, 'test')).toBeUndefined();
  });

  it('refuses to move a content-addressed tag when the base tag moved, unless forced', async () => {
    await pushTestBase(client(open.host), 'test/moving', '1', 'first');
    const target = synth(`${open.host}/kruise-ha/moving`, `${open.host}/test/moving:1`);
    const first = await publishImage({ context: target.contextDir });
    const moved = await pushTestBase(client(open.host), 'test/moving', '1', 'second');
    await expect(publishImage({ context: target.contextDir })).rejects.toThrow(
      new RegExp(
        `^${target.imageReference} already holds another image \\(${first.digest} on base ${first.platforms[0].baseManifestDigest}\\); this build is sha256:[0-9a-f]{64} on base ${moved.manifests.amd64.digest}\\..*Fix: pin baseImage by digest`,
      ),
    );
    expect((await client(open.host).getManifest('kruise-ha/moving', target.tag, 'test'))?.digest).toBe(first.digest);
    const forced = await publishImage({ context: target.contextDir, force: true });
    expect(forced.digest).not.toBe(first.digest);
    expect(forced.baseDigest).toBe(moved.digest);
  }, 60_000); // three publishes and two base pushes: over Jest's 5 s default at load 14-20
});
