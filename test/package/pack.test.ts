/**
 * `npm pack` of a checkout that was never built gives complete packages (npm's lifecycle
 * scripts compile first), holding only what users need: no sources, source maps, tests,
 * examples, benchmarks or CI files, and every path a package.json names. The tarballs come from
 * the content cache when a run packed the same inputs before (support.ts, packPackages), packed
 * without build output either way; what they hold is read from the tarballs themselves.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { kb, packPackages, PackedPackage, entryFiles } from './support.js';

const temp = mkdtempSync(join(tmpdir(), 'kruise-pack-'));
let constructs: PackedPackage;
let runtime: PackedPackage;

/** A file of a package, as its tarball holds it. */
const read = (pkg: PackedPackage, path: string): string => {
  const bytes = pkg.contents.get(path);
  if (!bytes) throw new Error(`${pkg.name}: no ${path} in ${pkg.tarball}`);
  return bytes.toString('utf8');
};

beforeAll(() => {
  ({ constructs, runtime } = packPackages(temp));
}, 300_000);
afterAll(() => {
  for (const p of [constructs, runtime]) {
    if (p)
      process.stderr.write(
        `${p.name}: ${p.files.length} files, tarball ${kb(p.size)}, unpacked ${kb(p.unpackedSize)}\n`,
      );
  }
  rmSync(temp, { recursive: true, force: true });
});

/** Files outside `allowed`, and modules without their declarations. */
function unexpected(pkg: PackedPackage, allowed: RegExp): string[] {
  const files = new Set(pkg.files);
  const outside = pkg.files.filter((f) => !allowed.test(f));
  const undeclared = pkg.files
    .filter((f) => f.endsWith('.js') && !files.has(f.replace(/\.js$/, '.d.ts')))
    .map((f) => `${f} (no .d.ts)`);
  return [...outside, ...undeclared];
}

describe('kruise-ha (constructs)', () => {
  it('holds the CommonJS build, its declarations and the jsii assembly, nothing else', () => {
    expect(
      unexpected(constructs, /^(package\.json|README\.md|LICENSE|\.jsii|dist\/package\.json|dist\/.+\.(js|d\.ts))$/),
    ).toEqual([]);
    // The Python, Java and Go packages' kernels load this tarball and read the API from .jsii (docs/languages.md).
    expect(constructs.files).toContain('.jsii');
    expect(JSON.parse(read(constructs, 'dist/package.json'))).toEqual({ type: 'commonjs' });
    expect(constructs.files).toEqual(
      expect.arrayContaining([
        'dist/index.js',
        'dist/contract.js',
        'dist/constructs/kruise-manager.js',
        'dist/upstream/kruise.generated.js',
      ]),
    );
  });

  it('holds none of the runtime: only the two dependency-free image modules RuntimeImage shares with publish', () => {
    expect(constructs.files.filter((f) => f.startsWith('dist/runtime/'))).toEqual([]);
    expect(constructs.files.filter((f) => f.startsWith('dist/image/'))).toEqual([
      'dist/image/build-context.d.ts',
      'dist/image/build-context.js',
      'dist/image/reference.d.ts',
      'dist/image/reference.js',
    ]);
  });

  it('holds every file its package.json names', () => {
    expect(entryFiles(constructs.manifest).filter((f) => !constructs.files.includes(f))).toEqual([]);
    expect(Object.keys(constructs.manifest.exports ?? {})).toEqual(['.', './contract', './package.json']);
  });

  it('depends only on what synthesis needs; the runtime is no declared peer (jsii refuses a non-jsii peer)', () => {
    expect(constructs.manifest.dependencies).toEqual({ 'cdk8s-plus-28': expect.any(String) });
    expect(constructs.manifest.peerDependencies).toEqual({
      cdk8s: expect.any(String),
      constructs: expect.any(String),
    });
    expect(constructs.manifest.peerDependenciesMeta).toBeUndefined();
    expect(constructs.manifest.engines).toEqual({ node: '>= 20.19.0' });
  });
});

describe('kruise-ha-runtime', () => {
  it('holds the ESM build and its declarations, nothing else', () => {
    expect(unexpected(runtime, /^(package\.json|README\.md|LICENSE|dist\/.+\.(js|d\.ts))$/)).toEqual([]);
    // The doctor judges a cluster against upstream's generated definitions (lib/upstream, shared with the
    // constructs): the runtime package carries those pure data modules and no construct-room file.
    const dataModules = ['json-patch', 'kruise.generated', 'permissions', 'release', 'releases', 'upgrade'];
    expect(runtime.files.filter((f) => f.startsWith('dist/constructs/'))).toEqual([]);
    expect(runtime.files.filter((f) => f.startsWith('dist/upstream/')).sort()).toEqual(
      dataModules.flatMap((m) => [`dist/upstream/${m}.d.ts`, `dist/upstream/${m}.js`]).sort(),
    );
    expect(runtime.files).toEqual(
      expect.arrayContaining(['LICENSE', 'README.md', 'dist/runtime/main.js', 'dist/image/cli.js']),
    );
  });

  it('holds every file its package.json names, and its bin is a node script', () => {
    expect(entryFiles(runtime.manifest).filter((f) => !runtime.files.includes(f))).toEqual([]);
    expect(runtime.manifest.bin).toEqual({ 'kruise-ha-image': 'dist/image/cli.js', 'kruise-ha': 'dist/doctor/cli.js' });
    for (const bin of Object.values(runtime.manifest.bin as Record<string, string>)) {
      expect(read(runtime, bin)).toMatch(/^#!\/usr\/bin\/env node\n/);
    }
  });

  it("needs Node 24 and brings the runtime's dependencies", () => {
    expect(runtime.manifest.engines).toEqual({ node: '>= 24.0.0' });
    expect(Object.keys(runtime.manifest.dependencies ?? {})).toEqual(
      expect.arrayContaining(['@kubernetes/client-node', 'esbuild', 'prom-client']),
    );
    expect(runtime.version).toBe(constructs.version);
  });
});
