/**
 * The programs run when started through a symlink, as npm starts a `bin` from
 * node_modules/.bin: node resolves the link for the module but not for process.argv[1].
 * (The installed packages' bins are run from node_modules/.bin in test/package.)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';

const TSX = fileURLToPath(new URL('../../../node_modules/tsx/dist/cli.mjs', import.meta.url));
const bin = mkdtempSync(join(tmpdir(), 'entrypoint-bin-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

function runLinked(name: string, target: string, args: string[]) {
  const link = join(bin, name);
  symlinkSync(fileURLToPath(new URL(target, import.meta.url)), link);
  return spawnSync(process.execPath, [TSX, link, ...args], { encoding: 'utf8', timeout: 30_000 });
}

describe('started through a symlink', () => {
  it('kruise-ha-image prints its usage for --help and fails loudly without a command', () => {
    const help = runLinked('kruise-ha-image', '../../../lib/image/cli.ts', ['--help']);
    expect({ status: help.status, stdout: help.stdout }).toEqual({
      status: 0,
      stdout: expect.stringMatching(/^usage: kruise-ha-image publish <synth-output-dir/),
    });
    const bare = spawnSync(process.execPath, [TSX, join(bin, 'kruise-ha-image')], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(bare.status).toBe(2);
    expect(bare.stderr).toMatch(/^kruise-ha-image: expected "publish <dir>", got ""\n\nusage:/);
  });

  it('the manager prints its flags for --help', () => {
    const help = runLinked('kruise-ha-manager', '../../../lib/runtime/main.ts', ['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--enable-leader-election/);
  });
});
