/**
 * How many generated cases a differential or property suite draws this run, and with which seed
 * (issue #35, item 4). A budgeted sample per run, with a seed that changes with the commit and is
 * printed with the command that replays it, so a failure replays and coverage accumulates over
 * commits; the full draw is one command away (`npx projen test:full-draw`, or
 * KRUISE_HA_FULL_DRAW=1) and runs by itself when the commit under test touches one of the
 * suite's modules.
 *
 * - seed: KRUISE_HA_SEED if set; else a hash of `git rev-parse HEAD` and the suite's name; else
 *   (no git checkout) the suite's previous fixed seed.
 * - runs: the full count when KRUISE_HA_FULL_DRAW=1 or when HEAD's diff against its first parent,
 *   or the working tree's uncommitted changes, touch a path under one of `modules`; else the budget.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';

export interface DrawOptions {
  /** The count the suite drew before budgets: what a full draw runs. */
  readonly full: number;
  /** The count a budgeted run draws (at most `full`). */
  readonly budget: number;
  /** Paths (prefixes, relative to the repository root) whose change makes this run a full draw. */
  readonly modules: readonly string[];
  /** The seed used outside a git checkout (the suite's former fixed seed). */
  readonly fallbackSeed: number;
  /** The test file, relative to the repository root, for the printed replay command. */
  readonly file: string;
  /** Environment (tests); process.env by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** Directory of the git checkout (tests); the current directory by default. */
  readonly cwd?: string;
  /** Where the one line goes (tests); stderr by default. */
  readonly print?: (line: string) => void;
}

export interface Draw {
  readonly numRuns: number;
  readonly seed: number;
  /** Why this count: 'KRUISE_HA_FULL_DRAW=1', 'touched <path>' or 'budget'. */
  readonly reason: string;
  /** The command that replays this draw. */
  readonly replay: string;
  /** The line printed, also meant for a test or describe name and assertion messages. */
  readonly line: string;
}

function git(args: string[], cwd: string | undefined): string | undefined {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

/** Paths changed by HEAD against its first parent, and uncommitted (staged, unstaged, untracked). */
export function changedPaths(cwd?: string): string[] {
  const paths = new Set<string>();
  const add = (out: string | undefined) =>
    out
      ?.split('\n')
      .map((p) => p.trim())
      .filter((p) => p !== '')
      .forEach((p) => paths.add(p));
  // A root commit has no parent: its whole tree is "touched".
  add(git(['diff', '--name-only', 'HEAD^1', 'HEAD'], cwd) ?? git(['ls-tree', '-r', '--name-only', 'HEAD'], cwd));
  add(git(['diff', '--name-only', 'HEAD'], cwd));
  add(git(['ls-files', '--others', '--exclude-standard'], cwd));
  return [...paths];
}

/** A 31-bit seed from the commit and the suite name. */
export function commitSeed(commit: string, name: string): number {
  return createHash('sha256').update(`${commit}\0${name}`).digest().readUInt32BE(0) & 0x7fffffff;
}

export function draw(name: string, options: DrawOptions): Draw {
  const env = options.env ?? process.env;
  const budget = Math.min(options.budget, options.full);
  let seed: number;
  const fromEnv = env.KRUISE_HA_SEED;
  if (fromEnv !== undefined && fromEnv.trim() !== '') {
    seed = Number(fromEnv);
    if (!Number.isSafeInteger(seed)) throw new Error(`KRUISE_HA_SEED=${fromEnv} is not an integer`);
  } else {
    const head = git(['rev-parse', 'HEAD'], options.cwd)?.trim();
    seed = head ? commitSeed(head, name) : options.fallbackSeed;
  }
  let reason = 'budget';
  let numRuns = budget;
  if (env.KRUISE_HA_FULL_DRAW === '1') {
    reason = 'KRUISE_HA_FULL_DRAW=1';
    numRuns = options.full;
  } else {
    const touched = changedPaths(options.cwd).find((p) =>
      options.modules.some((m) => p === m || p.startsWith(m.endsWith('/') ? m : `${m}/`)),
    );
    if (touched !== undefined) {
      reason = `touched ${touched}`;
      numRuns = options.full;
    }
  }
  const fullFlag = numRuns === options.full && numRuns !== budget ? 'KRUISE_HA_FULL_DRAW=1 ' : '';
  const replay = `KRUISE_HA_SEED=${seed} ${fullFlag}npx jest ${options.file}`;
  const line = `[draw] ${name}: seed ${seed}, ${numRuns} of ${options.full} cases (${reason}); replay: ${replay}`;
  (options.print ?? ((l: string) => process.stderr.write(`${l}\n`)))(line);
  return { numRuns, seed, reason, replay, line };
}
