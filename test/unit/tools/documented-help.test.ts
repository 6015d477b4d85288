/**
 * The documented npm scripts whose real work needs a cluster, a registry or minutes (docs/operating.md,
 * docs/runtime.md, docs/local-cluster-images.md), run the cheap way a person first runs them: `-- --help`, through
 * npm and projen as documented. This proves the script exists, starts from a clone and prints its usage; what each
 * does is tested elsewhere (test/lint/doc-commands.test.ts lists where).
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const HELP: Array<[command: string, usage: RegExp]> = [
  ['npm run doctor -- --help', /^Usage: kruise-ha doctor \[options\]/m],
  ['npm run image -- --help', /^usage: kruise-ha-image publish /m],
  ['npm run cluster:images -- --help', /^usage: npm run cluster:images -- --registry /m],
  ['npm run runtime -- --help', /^ {2}--kubeconfig=PATH /m],
];

describe('documented npm scripts answer --help', () => {
  it.each(HELP)(
    '`%s` exits 0 and prints its usage',
    (command, usage) => {
      const [bin, ...args] = command.split(' ');
      const run = spawnSync(bin, [args[0], '--silent', ...args.slice(1)], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ status: run.status, usage: usage.test(run.stdout) }).toEqual({ status: 0, usage: true });
    },
    70_000,
  );
});
