/**
 * Runs one of the upstream oracles (tools/upstream/<name>/build.sh builds it inside a copy of the
 * pinned module and prints its path) over JSON cases, one stdin line each, in one process.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { basename, dirname } from 'node:path';

const binaries = new Map<string, string>();

/** `<oracle> <mode>` over the cases: one parsed JSON answer per case, in order. */
export function runGoOracle<T>(build: string, mode: string, cases: object[]): T[] {
  let binary = binaries.get(build);
  if (!binary) {
    binary = execFileSync('bash', [build], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
    binaries.set(build, binary);
  }
  const name = basename(dirname(build));
  const run = spawnSync(binary, [mode], {
    input: cases.map((c) => JSON.stringify(c)).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (run.status !== 0)
    throw new Error(`${name} ${mode} failed (${run.status ?? run.signal}): ${(run.stderr ?? '').slice(0, 2000)}`);
  const answers = run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as T);
  if (answers.length !== cases.length)
    throw new Error(`${name} ${mode} answered ${answers.length} of ${cases.length} cases`);
  return answers;
}
