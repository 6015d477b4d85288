import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { App, Chart, Testing } from 'cdk8s';
import {
  DEFAULT_RUNTIME_BASE_IMAGE,
  RuntimeImage,
  RuntimeImageProps,
} from '../../../lib/constructs/runtime-image/runtime-image.js';
import { RUNTIME_NODE_FLAGS } from '../../../lib/constructs/runtime-image/runtime-dockerfile.js';
import { readBuildContext } from '../../../lib/image/context-files.js';
import { KruiseManager, ManagerImage } from '../../../lib/index.js';
import { find } from './synth.js';

const NODE = process.execPath;
const REAL_MAIN = fileURLToPath(new URL('../../../lib/runtime/main.ts', import.meta.url));
const CJS_FIXTURE = fileURLToPath(new URL('./fixtures/runtime-entry/main.ts', import.meta.url));
const temp = mkdtempSync(join(tmpdir(), 'runtime-image-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

let counter = 0;
/** A tiny entrypoint in its own temp folder (no package.json above it). */
function fixture(source: string): string {
  const dir = join(temp, `fixture-${counter++}`);
  mkdirSync(dir);
  writeFileSync(join(dir, 'main.ts'), source);
  return join(dir, 'main.ts');
}

function synth(props: Partial<RuntimeImageProps>, outdir = mkdtempSync(join(temp, 'out-'))): RuntimeImage {
  return new RuntimeImage(new App({ outdir }), 'Image', {
    repository: 'registry.example.com/kruise-ha/runtime',
    ...props,
  });
}

describe('RuntimeImage', () => {
  it('gives byte-identical bundles and the same reference on two synths in different folders', () => {
    const entrypoint = fixture('export const answer: number = 42;\nconsole.log(answer);\n');
    const a = synth({ entrypoint });
    const b = synth({ entrypoint });
    expect(a.contextDir).not.toBe(b.contextDir);
    expect(a.imageReference).toBe(b.imageReference);
    expect(a.imageReference).toMatch(/^registry\.example\.com\/kruise-ha\/runtime:[0-9a-f]{20}$/);
    for (const file of ['main.mjs', 'main.mjs.map', 'image.json', 'Dockerfile']) {
      expect(readFileSync(join(a.contextDir, file))).toEqual(readFileSync(join(b.contextDir, file)));
    }
  });

  it('changes the reference when the source, the base or a label changes', () => {
    const entrypoint = fixture('console.log("one");\n');
    const first = synth({ entrypoint }).imageReference;
    writeFileSync(entrypoint, 'console.log("two");\n');
    const edited = synth({ entrypoint }).imageReference;
    expect(edited).not.toBe(first);
    expect(synth({ entrypoint, baseImage: 'docker.io/library/node:24.20.0-bookworm-slim' }).imageReference).not.toBe(
      edited,
    );
    expect(synth({ entrypoint, labels: { 'org.opencontainers.image.revision': 'abc' } }).imageReference).not.toBe(
      edited,
    );
    expect(synth({ entrypoint, sourceDateEpoch: 1_700_000_000 }).imageReference).not.toBe(edited);
  });

  it('writes a complete build context that publish accepts', () => {
    const image = synth({ entrypoint: fixture('console.log("ctx");\n') });
    expect(image.contextDir).toMatch(/runtime-image\/context$/);
    const context = readBuildContext(image.contextDir);
    expect(context.image).toMatchObject({
      reference: image.imageReference,
      base: DEFAULT_RUNTIME_BASE_IMAGE,
      bundleSha256: image.bundleSha256,
      config: {
        user: '65532:65532',
        entrypoint: ['node', '--expose-gc', '/app/main.mjs'],
        env: [
          'NODE_ENV=production',
          'MALLOC_ARENA_MAX=2',
          'MALLOC_TRIM_THRESHOLD_=131072',
          'MALLOC_MMAP_THRESHOLD_=131072',
        ],
        cmd: [],
        created: '1970-01-01T00:00:00Z',
      },
    });
    expect(context.entries.map((e) => e.path)).toEqual(['app/main.mjs', 'app/main.mjs.map']);
    const dockerfile = readFileSync(join(image.contextDir, 'Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`FROM ${DEFAULT_RUNTIME_BASE_IMAGE}\n`);
    expect(dockerfile).toContain('USER 65532:65532\n');
    expect(dockerfile).toContain('ENTRYPOINT ["node","--expose-gc","/app/main.mjs"]\n');
    expect(dockerfile).toContain('ENV NODE_ENV="production"\n');
    expect(dockerfile).toContain('ENV MALLOC_ARENA_MAX="2"\n');
    expect(dockerfile).not.toMatch(/^RUN /m);
    const bundle = readFileSync(join(image.contextDir, 'main.mjs'), 'utf8');
    expect(bundle).toMatch(/^import \{ createRequire as __kruiseHaCreateRequire \} from 'node:module';/);
    expect(bundle.trimEnd().endsWith('//# sourceMappingURL=main.mjs.map')).toBe(true);
  });

  it("runs the bundle with the entrypoint's node flags (a flag this node rejects would stop the container)", () => {
    const image = synth({ entrypoint: CJS_FIXTURE });
    const entrypoint = readBuildContext(image.contextDir).image.config.entrypoint;
    expect(entrypoint.slice(1, -1)).toEqual([...RUNTIME_NODE_FLAGS]);
    const run = spawnSync(NODE, [...RUNTIME_NODE_FLAGS, join(image.contextDir, 'main.mjs')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('fixture ok: text/plain\n');
  });

  it('bundles CommonJS dependencies that run under node, with stack traces mapped to the TypeScript source', () => {
    const image = synth({ entrypoint: CJS_FIXTURE });
    const bundle = join(image.contextDir, 'main.mjs');
    const ok = spawnSync(NODE, ['--enable-source-maps', bundle], { encoding: 'utf8' });
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toBe('fixture ok: text/plain\n');
    const failed = spawnSync(NODE, ['--enable-source-maps', bundle, '--throw'], { encoding: 'utf8' });
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toMatch(/at fail \(.*fixtures\/runtime-entry\/main\.ts:6:9\)/);
  });

  it('puts the content-addressed reference into the KruiseManager Deployment', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'test');
    const image = new RuntimeImage(chart, 'Image', {
      repository: 'registry.example.com/kruise-ha/runtime',
      entrypoint: fixture('console.log(1);\n'),
    });
    new KruiseManager(chart, 'Kruise', { image: ManagerImage.fromRuntime(image) });
    const deployment = find(Testing.synth(chart), 'Deployment', 'kruise-controller-manager');
    expect(deployment.spec.template.spec.containers[0].image).toBe(image.imageReference);
    expect(image.contextDir).toBe(join(app.outdir, 'runtime-image', 'context'));
  });

  it('rejects bad props, naming the prop, the value and the fix', () => {
    const entrypoint = fixture('console.log(1);\n');
    const cases: [Partial<RuntimeImageProps>, RegExp][] = [
      [{ repository: '' }, /^repository: is required \(got ""\)\. Fix: use a lower-case repository/],
      [
        { repository: 'registry.example.com/Team/runtime' },
        /^repository: is not a valid repository: .*"Team".*\(got "registry\.example\.com\/Team\/runtime"\)\. Fix:/,
      ],
      [
        { repository: 'registry.example.com/runtime:1.0' },
        /^repository: has a tag or digest \(got "registry\.example\.com\/runtime:1\.0"\)\. Fix: .*the tag is computed from the content/,
      ],
      [{ baseImage: 'node' }, /^baseImage: has no tag or digest, so it would float \(got "node"\)\. Fix: pin the base/],
      [{ baseImage: 'node:24@sha256:abc' }, /^baseImage: is not a valid image reference: .*sha256:<64 hex>/],
      [
        { entrypoint: './does/not/exist.ts' },
        /^entrypoint: does not exist \(resolved to .*\) \(got "\.\/does\/not\/exist\.ts"\)\. Fix:/,
      ],
      [{ entrypoint: 'main' }, /^entrypoint: is not a file path \(got "main"\)\. Fix: pass an absolute path/],
      [{ labels: { 'bad key': 'x' } }, /^labels\["bad key"\]: is not a label key/],
      [{ sourceDateEpoch: -1 }, /^sourceDateEpoch: is not whole seconds since 1970 \(got -1\)\. Fix:/],
      [{ outdir: ' ' }, /^outdir: is empty/],
    ];
    for (const [props, error] of cases) expect(() => synth({ entrypoint, ...props })).toThrow(error);
  });

  it('names the import esbuild cannot resolve', () => {
    const entrypoint = fixture('import "./missing.js";\n');
    expect(() => synth({ entrypoint })).toThrow(
      /^entrypoint: could not be bundled by esbuild: .*main\.ts:1:7: Could not resolve "\.\/missing\.js"/,
    );
  });

  it('refuses two images writing the same context', () => {
    const app = new App({ outdir: mkdtempSync(join(temp, 'out-')) });
    const entrypoint = fixture('console.log(1);\n');
    new RuntimeImage(app, 'A', { repository: 'r.example.com/a', entrypoint });
    expect(() => new RuntimeImage(app, 'B', { repository: 'r.example.com/b', entrypoint })).toThrow(
      /^outdir: is already used by the RuntimeImage at A/,
    );
    expect(
      new RuntimeImage(app, 'C', { repository: 'r.example.com/c', entrypoint, outdir: join(app.outdir, 'c') })
        .contextDir,
    ).toBe(join(app.outdir, 'c', 'context'));
  });

  it('bundles the real runtime entrypoint into a bundle that answers --help', () => {
    const image = synth({});
    expect(image.entrypoint).toBe(REAL_MAIN);
    const run = spawnSync(NODE, ['--enable-source-maps', join(image.contextDir, 'main.mjs'), '--help'], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
    expect(run.stdout).toMatch(/--enable-leader-election/);
  }, 60_000);
});
