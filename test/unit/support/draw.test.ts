import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { commitSeed, draw, type DrawOptions } from '../../support/draw.js';

let repo: string;
const git = (...args: string[]) =>
  execFileSync('git', args, {
    cwd: repo,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@t',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@t',
    },
  }).trim();
const write = (path: string, text: string) => {
  mkdirSync(join(repo, path, '..'), { recursive: true });
  writeFileSync(join(repo, path), text);
};
const commit = (message: string) => {
  git('add', '-A');
  git('commit', '-q', '-m', message);
  return git('rev-parse', 'HEAD');
};

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), 'draw-test-'));
  git('init', '-q');
  write('lib/runtime/sidecarset/a.ts', '1');
  write('lib/runtime/workloadspread/b.ts', '1');
  commit('root');
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const lines: string[] = [];
const opts = (over: Partial<DrawOptions> = {}): DrawOptions => ({
  full: 300,
  budget: 40,
  modules: ['lib/runtime/sidecarset'],
  fallbackSeed: 7,
  file: 'test/integration/x.test.ts',
  env: {},
  cwd: repo,
  print: (l) => lines.push(l),
  ...over,
});

describe('draw', () => {
  it('takes the seed from KRUISE_HA_SEED when set, and prints a replay command with it', () => {
    write('README', String(Math.random()));
    commit('docs only');
    const d = draw('suite', opts({ env: { KRUISE_HA_SEED: '123' } }));
    expect(d.seed).toBe(123);
    expect(d.numRuns).toBe(40);
    expect(d.reason).toBe('budget');
    expect(d.replay).toBe('KRUISE_HA_SEED=123 npx jest test/integration/x.test.ts');
    expect(lines.at(-1)).toBe(d.line);
    expect(d.line).toContain('seed 123, 40 of 300 cases (budget)');
    expect(() => draw('suite', opts({ env: { KRUISE_HA_SEED: 'x' } }))).toThrow(/not an integer/);
  });

  it('derives the seed from the commit and the suite name', () => {
    write('README', String(Math.random()));
    const head = commit('docs only');
    const a = draw('suite-a', opts());
    expect(a.seed).toBe(commitSeed(head, 'suite-a'));
    expect(draw('suite-a', opts()).seed).toBe(a.seed);
    expect(draw('suite-b', opts()).seed).not.toBe(a.seed);
    write('README', String(Math.random()));
    commit('another commit');
    expect(draw('suite-a', opts()).seed).not.toBe(a.seed);
    expect(a.replay).toBe(`KRUISE_HA_SEED=${a.seed} npx jest test/integration/x.test.ts`);
  });

  it('falls back to the fixed seed outside a git checkout', () => {
    const bare = mkdtempSync(join(tmpdir(), 'draw-nogit-'));
    try {
      const d = draw('suite', opts({ cwd: bare }));
      expect(d.seed).toBe(7);
      expect(d.numRuns).toBe(40);
    } finally {
      rmSync(bare, { recursive: true, force: true });
    }
  });

  it('draws in full when KRUISE_HA_FULL_DRAW=1, and the replay command says so', () => {
    write('README', String(Math.random()));
    commit('docs only');
    const d = draw('suite', opts({ env: { KRUISE_HA_FULL_DRAW: '1', KRUISE_HA_SEED: '5' } }));
    expect(d.numRuns).toBe(300);
    expect(d.reason).toBe('KRUISE_HA_FULL_DRAW=1');
    expect(d.replay).toBe('KRUISE_HA_SEED=5 KRUISE_HA_FULL_DRAW=1 npx jest test/integration/x.test.ts');
  });

  it('draws in full when the commit or the working tree touches a listed module, not another', () => {
    write('lib/runtime/workloadspread/b.ts', String(Math.random()));
    commit('another module');
    expect(draw('suite', opts()).numRuns).toBe(40);
    write('lib/runtime/sidecarset/a.ts', String(Math.random()));
    commit('this module');
    const d = draw('suite', opts());
    expect(d.numRuns).toBe(300);
    expect(d.reason).toBe('touched lib/runtime/sidecarset/a.ts');
    // A prefix of a directory name is not the directory.
    expect(draw('suite', opts({ modules: ['lib/runtime/sidecar'] })).numRuns).toBe(40);
    write('README', String(Math.random()));
    commit('docs only');
    expect(draw('suite', opts()).numRuns).toBe(40);
    write('lib/runtime/sidecarset/new.ts', 'uncommitted');
    expect(draw('suite', opts()).reason).toBe('touched lib/runtime/sidecarset/new.ts');
    rmSync(join(repo, 'lib/runtime/sidecarset/new.ts'));
    write('lib/runtime/sidecarset/a.ts', 'unstaged edit');
    expect(draw('suite', opts()).numRuns).toBe(300);
    git('checkout', '--', '.');
    expect(draw('suite', opts()).numRuns).toBe(40);
  });
});
