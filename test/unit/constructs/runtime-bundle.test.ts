import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { BuildOptions } from 'esbuild';
import { buildWithRedirects, EsbuildFailure } from '../../../lib/constructs/runtime-image/esbuild-child.js';
import { bundleRuntime } from '../../../lib/constructs/runtime-image/runtime-bundle.js';
import { createConfiguration, ServerConfiguration } from '../../../lib/runtime/kube/client-node-gen-stub.js';

const REAL_MAIN = fileURLToPath(new URL('../../../lib/runtime/main.ts', import.meta.url));
const CLIENT_ENTRY = fileURLToPath(new URL('./fixtures/client-entry/main.ts', import.meta.url));
const ESBUILD = createRequire(import.meta.url).resolve('esbuild');
const temp = mkdtempSync(join(tmpdir(), 'runtime-bundle-test-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

/** Writes `files` (path relative to a fresh folder → source) and returns that folder. */
function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(temp, 'tree-'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), source);
  }
  return dir;
}

describe('bundleRuntime', () => {
  it("leaves client-node's generated models and APIs out of the real runtime, the same bytes every time", () => {
    const first = bundleRuntime(REAL_MAIN, 'main.mjs');
    const code = Buffer.from(first.code).toString('utf8');
    // The models' type names are strings in the bundle (ObjectSerializer's typeMap, attributeTypeMap).
    expect(code).not.toContain('"V1PodSpec"');
    expect(code).toContain('the bundled runtime has no generated client-node API');
    expect(code).toContain('the bundled runtime has no undici');
    const second = bundleRuntime(REAL_MAIN, 'main.mjs');
    expect(Buffer.from(second.code).equals(Buffer.from(first.code))).toBe(true);
    expect(Buffer.from(second.map).equals(Buffer.from(first.map))).toBe(true);
  }, 60_000);
});

describe('the typed client in a bundle', () => {
  it("reads and writes through the runtime's HTTP path, with client-node's generated APIs left out", async () => {
    const bundle = bundleRuntime(CLIENT_ENTRY, 'main.mjs');
    const code = Buffer.from(bundle.code).toString('utf8');
    expect(code).toContain('the bundled runtime has no generated client-node API');
    expect(code).not.toContain('"V1PodSpec"');
    const path = join(mkdtempSync(join(temp, 'client-')), 'main.mjs');
    writeFileSync(path, bundle.code);
    // A stand-in API server: what each request was, and a Status for the unknown object.
    const seen: string[] = [];
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers['content-type'] ?? '-'} ${req.headers.authorization}`);
        const json = (code: number, body: unknown) =>
          res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
        if (req.method === 'GET') json(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'nope' });
        else json(200, { ...JSON.parse(Buffer.concat(chunks).toString('utf8')), metadata: { resourceVersion: '7' } });
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [path, url], { encoding: 'utf8' });
      expect(stderr).toBe('');
      expect(
        stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as unknown),
      ).toEqual([
        { step: 'create', value: '7' },
        { step: 'apply', value: { k: 'w' } },
        { step: 'get', value: { notFound: true, reason: 'NotFound' } },
      ]);
      expect(seen).toEqual([
        'POST /api/v1/namespaces/ns/configmaps application/json Bearer fixture-token',
        'PATCH /api/v1/namespaces/ns/configmaps/a?fieldManager=fixture&force=true application/apply-patch+yaml Bearer fixture-token',
        'GET /api/v1/namespaces/ns/configmaps/missing - Bearer fixture-token',
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  }, 60_000);
});

describe('buildWithRedirects', () => {
  const options = (dir: string): BuildOptions & { write: false } => ({
    entryPoints: [join(dir, 'main.js')],
    absWorkingDir: dir,
    bundle: true,
    write: false,
    outfile: join(dir, 'out.js'),
  });

  it('redirects the import only from the importer named, and returns the output files', () => {
    const dir = tree({
      'main.js': "import { a } from './pkg/dist/config.js';\nimport { b } from './other.js';\nconsole.log(a, b);\n",
      'pkg/dist/config.js': "export { a } from './gen/index.js';\n",
      'pkg/dist/gen/index.js': "export const a = 'REAL-GEN';\n",
      'other.js': "export { b } from './gen/index.js';\n",
      'gen/index.js': "export const b = 'OTHER-GEN';\n",
      'stub.js': "export const a = 'STUB';\n",
    });
    const files = buildWithRedirects(ESBUILD, options(dir), [
      { importerSuffix: '/pkg/dist/config.js', path: './gen/index.js', to: join(dir, 'stub.js') },
    ]);
    expect(files.map((f) => f.path)).toEqual([join(dir, 'out.js')]);
    const code = Buffer.from(files[0].contents).toString('utf8');
    expect(code).toContain('STUB');
    expect(code).not.toContain('REAL-GEN');
    expect(code).toContain('OTHER-GEN');
  }, 30_000);

  it("throws esbuild's messages, with their locations, as EsbuildFailure", () => {
    const dir = tree({ 'main.js': "import './missing.js';\n" });
    let failure: unknown;
    try {
      buildWithRedirects(ESBUILD, options(dir), [{ importerSuffix: '/x.js', path: './y.js', to: join(dir, 'y.js') }]);
    } catch (e) {
      failure = e;
    }
    expect(failure).toBeInstanceOf(EsbuildFailure);
    const errors = (failure as EsbuildFailure).errors;
    expect(errors).toEqual([
      expect.objectContaining({
        text: 'Could not resolve "./missing.js"',
        location: expect.objectContaining({ line: 1 }),
      }),
    ]);
  }, 30_000);

  it('names the child process when esbuild cannot be loaded in it', () => {
    const dir = tree({ 'main.js': '\n' });
    expect(() =>
      buildWithRedirects(join(dir, 'no-esbuild.js'), options(dir), [
        { importerSuffix: '/x.js', path: './y.js', to: join(dir, 'y.js') },
      ]),
    ).toThrow(/^esbuild's child process \(.*\) failed: .*Cannot find module/s);
  }, 30_000);
});

describe("the stand-in for client-node's generated code", () => {
  it('fails loudly, naming makeApiClient, if the runtime ever reaches it', () => {
    expect(() => createConfiguration()).toThrow(
      /generated createConfiguration was reached through KubeConfig\.makeApiClient/,
    );
    expect(() => new ServerConfiguration()).toThrow(
      /generated ServerConfiguration was reached through KubeConfig\.makeApiClient/,
    );
  });
});
