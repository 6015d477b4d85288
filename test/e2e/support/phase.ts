/**
 * Where the e2e tier's time goes: each phase of a file's setup, a drill or an install prints one line to stderr
 * (`e2e-phase <file> <phase> <s> s load <1-min average>`), so a run's log says what every file waited on
 * (issue #35, item 2). Only measures: nothing here changes what a test does or asserts.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

/**
 * The running test file's name, or '-' outside Jest (bench/cluster-compare.ts imports these helpers, and
 * @jest/globals refuses to load there, hence Jest's injected global).
 */
function file(): string {
  const jestExpect = (globalThis as { expect?: { getState?: () => { testPath?: string } } }).expect;
  const path = jestExpect?.getState?.().testPath;
  return path ? basename(path) : '-';
}

const load1 = (): string => {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ')[0] ?? '?';
  } catch {
    return '?';
  }
};

/** Prints how long `name` took (also when it throws) and returns what it returned. */
export async function phase<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t = Date.now();
  let outcome = '';
  try {
    return await fn();
  } catch (e) {
    outcome = ' (failed)';
    throw e;
  } finally {
    process.stderr.write(
      `e2e-phase ${file()} ${name}${outcome}: ${((Date.now() - t) / 1000).toFixed(1)} s load ${load1()}\n`,
    );
  }
}
