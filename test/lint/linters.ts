/**
 * Runs the field's manifest linters, kube-score and checkov, on synthesized YAML and turns their
 * reports into one kind of finding, keyed by the object (kind and name) it is about.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Yaml } from 'cdk8s';

/** A synthesized Kubernetes object, as plain JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = Record<string, any>;

export type Linter = 'kube-score' | 'checkov';

export interface Finding {
  readonly linter: Linter;
  /** The linter's check id, e.g. `container-resources` or `CKV_K8S_10`. */
  readonly check: string;
  readonly kind: string;
  readonly name: string;
  readonly message: string;
}

/** `<linter>:<check> <Kind>/<name>: <message>`, for readable failures. */
export const describeFinding = (f: Finding): string => `${f.linter}:${f.check} ${f.kind}/${f.name}: ${f.message}`;

export interface Linters {
  readonly kubeScore: string;
  readonly kubeScoreVersion: string;
  readonly checkov: string;
  readonly checkovVersion: string;
}

/** The Kubernetes version kube-score judges API versions against: the envtest API server's minor. */
export const KUBERNETES_VERSION = 'v1.36';

/**
 * kube-score's optional checks that this project passes and keeps passing. Not enabled: the
 * requests-equal-limits family (the manager is deliberately Burstable: it may use more CPU than
 * it reserves during a rollout or a resync).
 */
export const KUBE_SCORE_OPTIONAL = ['container-seccomp-profile', 'container-ports-check'];

/** No network beyond what the run needs: no update check, no policy download. */
const CHECKOV_ENV = { CKV_SKIP_PACKAGE_UPDATE_CHECK: 'true', BC_SKIP_MAPPING: 'TRUE' };

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env: { ...process.env, ...env }, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : NaN) : 0;
      if (Number.isNaN(code)) reject(new Error(`${file} ${args.join(' ')} did not run: ${err!.message}\n${stderr}`));
      else resolve({ code, stdout, stderr });
    });
  });
}

const ENSURE = fileURLToPath(new URL('../setup/ensure-linters.sh', import.meta.url));

/** The pinned linters: installed on the first run (about a minute), cached after. */
export async function ensureLinters(): Promise<Linters> {
  const { code, stdout, stderr } = await run('bash', [ENSURE]);
  if (code !== 0) throw new Error(`test/setup/ensure-linters.sh failed (exit ${code}):\n${stderr}`);
  const kv = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  return {
    kubeScore: kv.KUBE_SCORE,
    kubeScoreVersion: kv.KUBE_SCORE_VERSION,
    checkov: kv.CHECKOV,
    checkovVersion: kv.CHECKOV_VERSION,
  };
}

/** Where each object of a written manifest stands, so line-based reports map back to it. */
export interface Placed {
  readonly kind: string;
  readonly name: string;
  /** First and last line of the object's document, 1-based, inclusive. */
  readonly lines: readonly [number, number];
}

/** Writes the objects as one multi-document YAML file, as `cdk8s synth` would. */
export function writeManifest(path: string, objects: Manifest[]): Placed[] {
  const placed: Placed[] = [];
  let text = '';
  let line = 1;
  for (const o of objects) {
    const doc = `${text ? '---\n' : ''}${Yaml.stringify(o)}`;
    const count = doc.split('\n').length - 1;
    placed.push({ kind: o.kind, name: o.metadata?.name, lines: [line, line + count - 1] });
    line += count;
    text += doc;
  }
  writeFileSync(path, text);
  return placed;
}

// kube-score's grades: 10 all OK, 7 almost OK, 5 warning, 1 critical. Anything under 10 counts.
const ALL_OK = 10;

interface KubeScoreObject {
  readonly type_meta: { readonly kind: string };
  readonly object_meta: { readonly name: string };
  readonly checks: ReadonlyArray<{
    readonly check: { readonly id: string };
    readonly grade: number;
    readonly skipped: boolean;
    readonly comments: ReadonlyArray<{ readonly path: string; readonly summary: string }> | null;
  }>;
}

/** kube-score's findings on one manifest file (the objects it knows; it skips custom kinds). */
export async function kubeScore(linters: Linters, file: string): Promise<Finding[]> {
  const args = [
    'score',
    '-o',
    'json',
    '--kubernetes-version',
    KUBERNETES_VERSION,
    ...KUBE_SCORE_OPTIONAL.flatMap((t) => ['--enable-optional-test', t]),
    file,
  ];
  const { code, stdout, stderr } = await run(linters.kubeScore, args);
  // Exit 1 means "critical findings", reported in the JSON like the rest.
  if (code > 1 || !stdout.trim().startsWith('['))
    throw new Error(`kube-score failed on ${file} (exit ${code}):\n${stderr}${stdout.slice(0, 2000)}`);
  return (JSON.parse(stdout) as KubeScoreObject[]).flatMap((o) =>
    o.checks
      .filter((c) => !c.skipped && c.grade < ALL_OK)
      .map((c) => ({
        linter: 'kube-score' as const,
        check: c.check.id,
        kind: o.type_meta.kind,
        name: o.object_meta.name,
        message: (c.comments ?? []).map((m) => (m.path ? `(${m.path}) ${m.summary}` : m.summary)).join('; '),
      })),
  );
}

interface CheckovReport {
  readonly results: {
    readonly failed_checks: ReadonlyArray<{
      readonly check_id: string;
      readonly check_name: string;
      readonly file_path: string;
      readonly file_line_range: [number, number];
    }>;
  };
  readonly summary: { readonly parsing_errors: number; readonly resource_count: number };
}

/**
 * checkov's findings on every manifest in `dir`, one run for all (it starts in about 1.5 s),
 * keyed by file name. Findings are mapped to objects by line: graph checks name derived
 * resources (`Pod.<ns>.<name>.<labels>`), not the object that renders them.
 */
export async function checkov(
  linters: Linters,
  dir: string,
  files: ReadonlyMap<string, Placed[]>,
): Promise<Map<string, Finding[]>> {
  const { code, stdout, stderr } = await run(
    linters.checkov,
    ['-d', dir, '--framework', 'kubernetes', '--skip-download', '--quiet', '-o', 'json'],
    CHECKOV_ENV,
  );
  if (code > 1 || !stdout.trim().startsWith('{'))
    throw new Error(`checkov failed on ${dir} (exit ${code}):\n${stderr}${stdout.slice(0, 2000)}`);
  const report = JSON.parse(stdout) as CheckovReport;
  if (report.summary.parsing_errors > 0)
    throw new Error(`checkov could not parse ${report.summary.parsing_errors} file(s) in ${dir}`);
  const found = new Map<string, Finding[]>([...files.keys()].map((f) => [f, []]));
  for (const f of report.results.failed_checks) {
    const file = basename(f.file_path);
    const placed = files.get(file);
    const object = placed?.find((p) => p.lines[0] <= f.file_line_range[0] && f.file_line_range[0] <= p.lines[1]);
    if (!placed || !object)
      throw new Error(
        `checkov reported ${f.check_id} at ${f.file_path}:${f.file_line_range[0]}, which is no object this test wrote`,
      );
    found
      .get(file)!
      .push({ linter: 'checkov', check: f.check_id, kind: object.kind, name: object.name, message: f.check_name });
  }
  return found;
}

/** Writes `objects` to `<dir>/<name>.yaml` and returns its placement, keyed by that file name. */
export function writeExample(dir: string, name: string, objects: Manifest[]): [string, Placed[]] {
  const file = `${name}.yaml`;
  return [file, writeManifest(join(dir, file), objects)];
}
