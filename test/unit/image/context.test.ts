import { cpSync, mkdtempSync, rmSync, writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { App } from 'cdk8s';
import { RuntimeImage } from '../../../lib/constructs/runtime-image/runtime-image.js';
import { findBuildContexts, readBuildContext } from '../../../lib/image/context-files.js';
import { main } from '../../../lib/image/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'context-test-'));
let outdir = '';
let contextDir = '';
beforeAll(() => {
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src', 'main.ts'), 'console.log("context");\n');
  outdir = join(dir, 'cdk8s.out');
  contextDir = new RuntimeImage(new App({ outdir }), 'Image', {
    repository: 'r.example.com/app',
    entrypoint: join(dir, 'src', 'main.ts'),
  }).contextDir;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function copy(): string {
  const target = mkdtempSync(join(dir, 'copy-'));
  cpSync(contextDir, target, { recursive: true });
  return target;
}

describe('build context handoff', () => {
  it('finds the context under the synth output folder', () => {
    expect(findBuildContexts(outdir)).toEqual([contextDir]);
    expect(findBuildContexts(contextDir)).toEqual([contextDir]);
    expect(() => findBuildContexts(join(dir, 'src'))).toThrow(
      /no image\.json under .*src\. Fix: synth an app with a RuntimeImage/,
    );
  });

  it('refuses a bundle that changed after synth', () => {
    const ctx = copy();
    writeFileSync(join(ctx, 'main.mjs'), 'console.log("tampered");\n');
    expect(() => readBuildContext(ctx)).toThrow(
      /main\.mjs changed since synth \(sha256 [0-9a-f]{64}, image\.json says [0-9a-f]{64}\)\. Fix: re-run synth/,
    );
  });

  it('refuses an image.json edited by hand, since its tag no longer matches', () => {
    const ctx = copy();
    const json = JSON.parse(readFileSync(join(ctx, 'image.json'), 'utf8'));
    json.config.user = '0:0';
    writeFileSync(join(ctx, 'image.json'), JSON.stringify(json));
    expect(() => readBuildContext(ctx)).toThrow(
      /tag [0-9a-f]{20} does not match its content \(expected [0-9a-f]{20}\); the file was edited by hand/,
    );
  });

  it('the CLI explains usage mistakes with exit code 2', async () => {
    const err: string[] = [];
    const io = {
      out: () => undefined,
      err: (t: string) => {
        err.push(t);
      },
    };
    expect(await main(['push', outdir], io)).toBe(2);
    expect(err.join('')).toMatch(/expected "publish <dir>", got "push .*"\n\nusage: kruise-ha-image publish/);
    expect(await main(['publish', outdir, '--chunk-size', '12'], io)).toBe(2);
    expect(await main(['publish', join(dir, 'nowhere')], io)).toBe(1);
    expect(err.join('')).toMatch(/image publish: .*nowhere is not a folder/);
  });
});
