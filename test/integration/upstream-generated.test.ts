/**
 * lib/upstream/kruise.generated.ts must be exactly what the generator makes from the
 * pinned upstream modules today: a hand edit, a changed pin or a changed extractor fails here.
 * (Integration project: it needs Go and the module proxy, like the kruise-manager build.)
 */
import { describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('generated upstream release data', () => {
  it('is up to date with the pinned module', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'tools/upstream/generate.ts', '--check'],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '' } },
    );
    expect(stdout).toMatch(
      /up to date \(default v1\.9\.1; v1\.7\.0: 18 CRDs, 37 webhooks, 21 controllers.*; v1\.8\.3: 18 CRDs, 37 webhooks, 21 controllers.*; v1\.9\.1: 18 CRDs, 37 webhooks, 21 controllers/,
    );
  }, 180_000);
});
