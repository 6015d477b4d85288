// The real-cluster images (test/cluster/images) built and pushed to a real registry (Debian's
// docker-registry on loopback), then pulled by a real containerd (Debian's, through a hosts.toml that
// mirrors docker.io to that registry, as the cluster's nodes do) and run: upstream's /manager and
// /kruise-daemon, the node base, and the RuntimeImage-built runtime image. Nothing comes from a public
// registry. Needs root (mmdebstrap, containerd, runc); the layers are cached, so only the first run
// on a machine builds root filesystems.
import { existsSync, lstatSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import { DefaultHaChart } from '../../examples/default-ha.js';
import type { ImageConfig } from '../../lib/image/image-config.js';
import type { ImageManifest } from '../../lib/image/oci.js';
import { parseReference } from '../../lib/image/reference.js';
import { RegistryClient } from '../../lib/image/registry.js';
import { RegistryHttp } from '../../lib/image/registry-http.js';
import { ContainerdProcess, mountsUnder } from '../cluster/images/containerd.js';
import { type ClusterImages, ensureClusterImages } from '../cluster/images/index.js';
import { RegistryProcess } from './registry-process.js';

const hadRunContainerd = existsSync('/run/containerd');
const registry = new RegistryProcess();
const containerd = new ContainerdProcess();
let images: ClusterImages;
let again: ClusterImages;

beforeAll(async () => {
  await registry.start();
  // Cold on a fresh machine (root filesystems from Debian, the kruise binaries from build.sh); cached after.
  images = await ensureClusterImages({ registry: registry.host });
  again = await ensureClusterImages({ registry: registry.host });
  await containerd.start();
  containerd.mirror('docker.io', registry.host);
  containerd.mirror(registry.host, registry.host);
  await containerd.pull(`docker.io/${images.upstreamManager.name}`);
  await containerd.pull(images.runtimeBase.name);
  await containerd.pull(images.runtime.reference);
}, 45 * 60_000);

afterAll(async () => {
  const dir = containerd.dir;
  await containerd.cleanup();
  await registry.cleanup();
  expect(mountsUnder(dir)).toEqual([]);
  expect(existsSync(dir)).toBe(false);
  // ctr's runc root and fifos were in our folder; containerd's shim-socket folder goes if we made it.
  expect(existsSync(`/run/containerd/runc/${containerd.namespace}`)).toBe(false);
  if (!hadRunContainerd) expect(existsSync('/run/containerd')).toBe(false);
}, 60_000);

const client = () => new RegistryClient(new RegistryHttp(registry.host));
async function configOf(repository: string, tag: string): Promise<ImageConfig> {
  const m = await client().getManifest(repository, tag, 'test');
  const manifest = JSON.parse(Buffer.from(m!.bytes).toString('utf8')) as ImageManifest;
  return JSON.parse(
    Buffer.from(await client().getBlob(repository, manifest.config.digest, 'test')).toString('utf8'),
  ) as ImageConfig;
}
/** The synthesized default output (examples/default-ha.ts, the app `npm run synth` runs). */
function defaultOutput(): {
  kind: string;
  spec?: { template?: { spec?: { containers?: { image: string; command?: string[] }[] } } };
}[] {
  const app = new App();
  const chart = new DefaultHaChart(app, 'kruise');
  return chart.toJson() as ReturnType<typeof defaultOutput>;
}

describe('upstream kruise-manager image', () => {
  it('is pushed under the repository and tag the unmodified synthesized output names through a docker.io mirror', async () => {
    const workloads = defaultOutput().filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet');
    const names = new Set(workloads.flatMap((w) => w.spec!.template!.spec!.containers!.map((c) => c.image)));
    expect([...names]).toEqual([images.upstreamManager.name]);
    const ref = parseReference(images.upstreamManager.name);
    expect(ref.registry).toBe('docker.io');
    expect(images.upstreamManager.reference).toBe(`${registry.host}/${ref.repository}:${ref.tag}`);
    const m = await client().getManifest(ref.repository, ref.tag!, 'test');
    expect(m?.digest).toBe(images.upstreamManager.digest);
  });

  it('is laid out as upstream lays it out: /manager (nobody), /kruise-daemon, /tmp and /log for nobody, no executables', async () => {
    const ref = parseReference(images.upstreamManager.name);
    const config = await configOf(ref.repository, ref.tag!);
    expect(config.config?.Entrypoint).toEqual(['/manager']);
    expect(config.config?.WorkingDir).toBe('/');
    expect(config.config?.User ?? '').toBe('');
    expect(config.rootfs.diff_ids).toHaveLength(3);
    await containerd.withRootfs(`docker.io/${images.upstreamManager.name}`, async (root) => {
      const st = (p: string) => lstatSync(join(root, p));
      expect(st('manager')).toMatchObject({ uid: 65534, gid: 65534, mode: 0o100755 });
      expect(st('kruise-daemon')).toMatchObject({ uid: 0, gid: 0, mode: 0o100755 });
      expect(st('tmp')).toMatchObject({ uid: 65534, gid: 65534, mode: 0o41777 });
      expect(st('log')).toMatchObject({ uid: 65534, gid: 65534, mode: 0o40755 });
      for (const dir of ['bin', 'sbin', 'usr/bin', 'usr/sbin', 'usr/local/bin'])
        expect(existsSync(join(root, dir))).toBe(false);
      expect(
        readFileSync(join(root, 'etc/passwd'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split(':')[0]),
      ).toEqual(['root', 'nobody']);
      // What the binaries read: the CA bundle (kruise-daemon pulls images over TLS), and time zones
      // (upstream installs tzdata).
      expect(statSync(join(root, 'etc/ssl/certs/ca-certificates.crt')).size).toBeGreaterThan(100_000);
      expect(existsSync(join(root, 'usr/share/zoneinfo/Asia/Shanghai'))).toBe(true);
    });
  });

  it('a second run builds nothing and pushes nothing', () => {
    expect(again.upstreamManager).toMatchObject({ upToDate: true, digest: images.upstreamManager.digest });
    expect(again.runtimeBase).toMatchObject({ upToDate: true, digest: images.runtimeBase.digest });
    expect(again.runtime).toMatchObject({ upToDate: true, reference: images.runtime.reference });
    expect(again.timings.filter((t) => t.how === 'built' || t.how === 'pushed')).toEqual([]);
  });

  it('containerd pulls it as docker.io/openkruise/kruise-manager through the mirror; /manager starts as 65534 on a read-only root', async () => {
    const help = await containerd.runAs(`docker.io/${images.upstreamManager.name}`, ['/manager', '--help'], {
      uid: 65534,
      gid: 65534,
    });
    // pflag v1.0.5 (upstream's go.mod) prints the usage, then exits 2 for --help as for any flag error.
    expect(help.stderr + help.stdout).toContain('--enable-leader-election');
    expect(help.stderr + help.stdout).toContain('--health-probe-addr');
    expect(help.stdout).toContain('pflag: help requested');
    expect(help.code).toBe(2);
  });

  it('/kruise-daemon starts (its flags), and the image holds no shell: upstream deletes every executable', async () => {
    const ref = `docker.io/${images.upstreamManager.name}`;
    const help = await containerd.run(ref, ['/kruise-daemon', '--help']);
    expect(help.stderr + help.stdout).toContain('--addr string');
    expect(help.stdout).toContain('pflag: help requested');
    expect(help.code).toBe(2);
    // Without flags it runs its main: no API server to reach outside a cluster, so it says so and exits.
    const bare = await containerd.run(ref, ['/kruise-daemon']);
    expect(bare.stderr + bare.stdout).toContain('unable to load in-cluster configuration');
    const shell = await containerd.run(ref, ['/bin/sh', '-c', 'true']);
    expect(shell.code).not.toBe(0);
    expect(shell.stderr).toMatch(/no such file|not found/i);
  });
});

describe('runtime base (library/node:24.21.0-bookworm-slim from Debian)', () => {
  it('pulls through the docker.io mirror and runs node 24.21.0 from /usr/local/bin', async () => {
    const ref = images.runtimeBase.name;
    const version = await containerd.run(ref, ['node', '-p', 'process.version + " " + process.execPath']);
    expect(version.stdout.trim()).toBe('v24.21.0 /usr/local/bin/node');
    const user = await containerd.run(ref, ['getent', 'passwd', 'node']);
    expect(user.stdout).toMatch(/^node:x:1000:1000:/);
  });
});

describe('runtime image (RuntimeImage + kruise-ha-image publish)', () => {
  it('is built on the local base pinned by digest and pushed to the local registry', () => {
    expect(images.runtime.baseImage).toBe(
      `${registry.host}/library/node:24.21.0-bookworm-slim@${images.runtimeBase.digest}`,
    );
    expect(images.runtime.reference.startsWith(`${registry.host}/kruise-ha/runtime:`)).toBe(true);
    expect(images.runtime.publish.baseDigest).toBe(images.runtimeBase.digest);
  });

  it('its entrypoint prints the runtime help, as uid 65532 on a read-only root', async () => {
    const ref = parseReference(images.runtime.reference);
    const config = await configOf(ref.repository, ref.tag!);
    expect(config.config?.User).toBe('65532:65532');
    // ctr replaces the whole argv: give the image's ENTRYPOINT plus --help, as a container args: [--help] does.
    const help = await containerd.run(images.runtime.reference, [...config.config!.Entrypoint!, '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('kruise-ha manager: leader-elected controllers');
    expect(help.stdout).toContain('--enable-leader-election=BOOL');
    const uid = await containerd.run(images.runtime.reference, ['node', '-p', 'process.getuid()']);
    expect(uid.stdout.trim()).toBe('65532');
  });
});
