/**
 * A Jest reporter that appends one JSON line per test file, and one per Jest run, to the run's timings file
 * (tools/test/timings.ts names it; `npm run test:timings` renders the table). Every tier's run writes it, whether
 * `npm test` started it or a person ran `npm run test:unit`, so each choice about the suite's cost is made on
 * figures (docs/development.md, "What a run costs").
 *
 * Jest loads reporters with Node's own loader (type stripping), which cannot resolve `./x.js` to `.ts`: so this file
 * uses only erasable syntax and imports nothing of ours; the file's place is repeated from tools/test/timings.ts
 * (TIMINGS_ENV, DEFAULT_TIMINGS), which a unit test keeps in step.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

interface FileResult {
  testFilePath: string;
  numPassingTests: number;
  numFailingTests: number;
  numPendingTests: number;
  numTodoTests: number;
  perfStats: { start: number; end: number };
  testExecError?: unknown;
}
interface TestRef {
  context: { config: { displayName?: { name: string } | string } };
}
interface AggregatedResult {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numRuntimeErrorTestSuites: number;
  numFailedTestSuites: number;
  numTotalTestSuites: number;
  startTime: number;
}
interface GlobalConfig {
  rootDir: string;
}

export default class TimingsReporter {
  private readonly root: string;
  private readonly file: string;
  private started = Date.now();
  private readonly projects = new Set<string>();

  constructor(globalConfig: GlobalConfig) {
    this.root = globalConfig.rootDir;
    this.file = process.env.KRUISE_HA_TIMINGS ?? join(this.root, '.test-output', 'timings.jsonl');
  }

  onRunStart(): void {
    this.started = Date.now();
  }

  onTestFileResult(test: TestRef, result: FileResult): void {
    const name = test.context.config.displayName;
    const project = typeof name === 'string' ? name : (name?.name ?? 'default');
    this.projects.add(project);
    this.write({
      kind: 'file',
      project,
      file: relative(this.root, result.testFilePath),
      seconds: round((result.perfStats.end - result.perfStats.start) / 1000),
      passed: result.numPassingTests,
      failed: result.numFailingTests + (result.testExecError ? 1 : 0),
      skipped: result.numPendingTests + result.numTodoTests,
    });
  }

  onRunComplete(_contexts: unknown, results: AggregatedResult): void {
    this.write({
      kind: 'jest',
      projects: [...this.projects].sort(),
      seconds: round((Date.now() - this.started) / 1000),
      passed: results.numPassedTests,
      // A file that failed to run (syntax, a global setup's throw) counts as a failure: it ran no test.
      failed: results.numFailedTests + results.numRuntimeErrorTestSuites,
      skipped: results.numPendingTests + results.numTodoTests,
      files: results.numTotalTestSuites,
    });
  }

  private write(record: Record<string, unknown>): void {
    mkdirSync(dirname(this.file), { recursive: true });
    // One short line per append (O_APPEND): two Jest processes of one run write to the same file safely.
    appendFileSync(this.file, `${JSON.stringify({ ...record, at: new Date().toISOString() })}\n`);
  }
}

function round(s: number): number {
  return Math.round(s * 10) / 10;
}
