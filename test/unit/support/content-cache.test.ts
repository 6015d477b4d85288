import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cachedInto, contentKey, ensureCached, type KeyInputs } from '../../support/content-cache.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const WRITER = join(REPO, 'test', 'unit', 'support', 'content-cache-writer.ts');
const TSX = join(REPO, 'node_modules', 'tsx', 'dist', 'cli.mjs');

const scratch = mkdtempSync(join(tmpdir(), 'content-cache-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let run = 0;
/** A fresh git checkout and cache root for each test. */
let checkout: string;
let root: string;
beforeEach(() => {
  run++;
  checkout = join(scratch, `checkout-${run}`);
  root = join(scratch, `cache-${run}`);
  mkdirSync(checkout);
  execFileSync('git', ['init', '-q'], { cwd: checkout });
  write('src/a.txt', 'a');
  write('src/nested/b.txt', 'b');
  write('other/c.txt', 'c');
  write('.gitignore', 'src/ignored.txt\n');
  execFileSync('git', ['add', '-A'], { cwd: checkout });
});

function write(path: string, text: string): void {
  mkdirSync(join(checkout, path, '..'), { recursive: true });
  writeFileSync(join(checkout, path), text);
}

const inputs = (values: Record<string, string> = {}): KeyInputs => ({ root: checkout, paths: ['src'], values });

/** Every file under `dir`, relative path → bytes (hex) and mode. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dir.length + 1)] =
      `${(statSync(path).mode & 0o777).toString(8)} ${readFileSync(path).toString('hex')}`;
  }
  return out;
}

/** A build writing random bytes (a nested file, an executable one); counts its calls. */
function randomBuild(): { build: (dir: string) => void; calls: () => number } {
  let calls = 0;
  return {
    calls: () => calls,
    build: (dir) => {
      calls++;
      mkdirSync(join(dir, 'deep', 'er'), { recursive: true });
      writeFileSync(join(dir, 'top.bin'), randomBytes(4096));
      writeFileSync(join(dir, 'deep', 'er', 'inner.bin'), randomBytes(100_000));
      writeFileSync(join(dir, 'tool'), '#!/bin/sh\n');
      chmodSync(join(dir, 'tool'), 0o755);
    },
  };
}

describe('contentKey', () => {
  it('is the same for the same inputs, and changes with any input file, new file, path or value', () => {
    const base = contentKey(inputs());
    expect(contentKey(inputs())).toBe(base);
    write('src/a.txt', 'a changed');
    const edited = contentKey(inputs());
    expect(edited).not.toBe(base);
    // Untracked but not ignored: the build would read it.
    write('src/new.txt', 'n');
    const added = contentKey(inputs());
    expect(added).not.toBe(edited);
    // A deleted tracked file.
    rmSync(join(checkout, 'src', 'nested', 'b.txt'));
    const deleted = contentKey(inputs());
    expect(deleted).not.toBe(added);
    // The same bytes under another name.
    rmSync(join(checkout, 'src', 'new.txt'));
    write('src/renamed.txt', 'n');
    expect(contentKey(inputs())).not.toBe(deleted);
    const now = contentKey(inputs());
    expect(contentKey(inputs({ go: 'go1.26.8' }))).not.toBe(now);
    expect(contentKey(inputs({ go: 'go1.26.9' }))).not.toBe(contentKey(inputs({ go: 'go1.26.8' })));
  });

  it('ignores files outside its paths and files git ignores', () => {
    const base = contentKey(inputs());
    write('other/c.txt', 'c changed');
    write('src/ignored.txt', 'ignored');
    expect(contentKey(inputs())).toBe(base);
  });

  it('refuses paths that match no file', () => {
    expect(() => contentKey({ root: checkout, paths: ['nothing-here'] })).toThrow(/no file under nothing-here/);
  });
});

describe('cachedInto', () => {
  it('builds on a miss, then a hit restores the identical bytes without building', () => {
    const lines: string[] = [];
    const { build, calls } = randomBuild();
    const request = { name: 'thing', root, inputs: inputs(), build, log: (l: string) => lines.push(l) };
    const first = cachedInto(join(scratch, `a-${run}`), request);
    expect(first.outcome).toBe('miss');
    const built = snapshot(join(scratch, `a-${run}`));
    expect(Object.keys(built).sort()).toEqual(['deep/er/inner.bin', 'tool', 'top.bin']);
    expect(built.tool).toMatch(/^755 /);

    // A stale file in the target is replaced, not merged.
    mkdirSync(join(scratch, `b-${run}`));
    writeFileSync(join(scratch, `b-${run}`, 'stale'), 'x');
    const second = cachedInto(join(scratch, `b-${run}`), request);
    expect(second).toEqual({ outcome: 'hit', key: first.key, seconds: expect.any(Number) });
    expect(calls()).toBe(1);
    expect(snapshot(join(scratch, `b-${run}`))).toEqual(built);
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`^content cache: thing miss key ${first.key!.slice(0, 20)} in \\d+\\.\\d s$`)),
      expect.stringMatching(new RegExp(`^content cache: thing hit key ${first.key!.slice(0, 20)} in \\d+\\.\\d s$`)),
    ]);
    // One entry, no temporary folder, no lock left.
    expect(readdirSync(root)).toEqual([`thing-${first.key!.slice(0, 20)}`]);
  });

  it('builds again when an input changed, and keeps only the newest entries', () => {
    const { build, calls } = randomBuild();
    const keys: string[] = [];
    for (const text of ['1', '2', '3']) {
      write('src/a.txt', text);
      const result = cachedInto(join(scratch, `t-${run}`), { name: 'thing', root, inputs: inputs(), build, keep: 2 });
      expect(result.outcome).toBe('miss');
      keys.push(result.key!.slice(0, 20));
    }
    expect(calls()).toBe(3);
    expect(readdirSync(root).sort()).toEqual([`thing-${keys[1]}`, `thing-${keys[2]}`].sort());
    // The second input again: still there.
    write('src/a.txt', '2');
    expect(cachedInto(join(scratch, `t-${run}`), { name: 'thing', root, inputs: inputs(), build }).outcome).toBe('hit');
  });

  it('stores nothing when the build throws, and the next call builds', () => {
    const failing = {
      name: 'thing',
      root,
      inputs: inputs(),
      log: () => undefined,
      build: () => {
        throw new Error('compiler crashed');
      },
    };
    expect(() => cachedInto(join(scratch, `f-${run}`), failing)).toThrow('compiler crashed');
    expect(readdirSync(root)).toEqual([]);
    const { build } = randomBuild();
    expect(cachedInto(join(scratch, `f-${run}`), { ...failing, build }).outcome).toBe('miss');
  });

  it('is off with KRUISE_HA_TEST_CACHE=0: every call builds into the target, nothing is stored', () => {
    const { build, calls } = randomBuild();
    const env = { ...process.env, KRUISE_HA_TEST_CACHE: '0' };
    const request = { name: 'thing', root, inputs: inputs(), build, env, log: () => undefined };
    const target = join(scratch, `d-${run}`);
    expect(cachedInto(target, request)).toEqual({ outcome: 'disabled', key: undefined, seconds: expect.any(Number) });
    const once = snapshot(target);
    expect(cachedInto(target, request).outcome).toBe('disabled');
    expect(calls()).toBe(2);
    // Built again: new random bytes, same files.
    expect(Object.keys(snapshot(target))).toEqual(Object.keys(once));
    expect(snapshot(target)).not.toEqual(once);
    expect(ensureCached(request).outcome).toBe('disabled');
    expect(calls()).toBe(2);
    expect(existsSync(root)).toBe(false);
  });

  it('waits for a live owner, up to its limit', () => {
    mkdirSync(join(root, 'thing.lock'), { recursive: true });
    writeFileSync(
      join(root, 'thing.lock', 'owner'),
      JSON.stringify({ pid: process.pid, host: hostname(), at: Date.now(), token: 'alive' }),
    );
    const { build, calls } = randomBuild();
    const lines: string[] = [];
    const request = {
      name: 'thing',
      root,
      inputs: inputs(),
      build,
      lockTimeoutMs: 1_000,
      log: (l: string) => lines.push(l),
    };
    expect(() => cachedInto(join(scratch, `w-${run}`), request)).toThrow(
      /waited 1 s for .*thing\.lock, held by process/,
    );
    expect(lines).toEqual([
      expect.stringMatching(/^content cache: waiting for .*thing\.lock, held by process \d+ on /),
    ]);
    expect(calls()).toBe(0);
  });

  it('takes over a lock whose owner process is gone', () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    mkdirSync(join(root, 'thing.lock'), { recursive: true });
    writeFileSync(
      join(root, 'thing.lock', 'owner'),
      JSON.stringify({ pid: gone, host: hostname(), at: Date.now(), token: 'dead' }),
    );
    const { build } = randomBuild();
    const request = { name: 'thing', root, inputs: inputs(), build, lockTimeoutMs: 5_000, log: () => undefined };
    expect(cachedInto(join(scratch, `l-${run}`), request).outcome).toBe('miss');
    expect(existsSync(join(root, 'thing.lock'))).toBe(false);
  });

  it('two processes at once: one builds, the other waits and uses its entry; one complete entry remains', async () => {
    const builds = join(scratch, `builds-${run}.log`);
    writeFileSync(builds, '');
    const writer = (target: string) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [TSX, WRITER, root, checkout, target, builds, '1500'], {
          env: { ...process.env, NODE_OPTIONS: '' },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    const [one, two] = await Promise.all([writer(join(scratch, `w1-${run}`)), writer(join(scratch, `w2-${run}`))]);
    expect({ one: one.status, two: two.status, stderr: one.stderr + two.stderr }).toEqual({
      one: 0,
      two: 0,
      stderr: '',
    });
    const outcomes = [one, two].map((r) => (JSON.parse(r.stdout) as { outcome: string }).outcome).sort();
    expect(outcomes).toEqual(['hit', 'miss']);
    expect(readFileSync(builds, 'utf8').trim().split('\n')).toHaveLength(1);
    const key = contentKey(inputs()).slice(0, 20);
    expect(readdirSync(root)).toEqual([`race-${key}`]);
    const entry = snapshot(join(root, `race-${key}`));
    expect(Object.keys(entry).sort()).toEqual(['first', 'second']);
    expect(snapshot(join(scratch, `w1-${run}`))).toEqual(entry);
    expect(snapshot(join(scratch, `w2-${run}`))).toEqual(entry);
  }, 60_000);
});
