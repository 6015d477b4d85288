/**
 * Runs `kruise-ha doctor` the way a user's `npx kruise-ha doctor` does: a separate Node process
 * started through a symlink in a `node_modules/.bin` directory (the bin entry's main-module check
 * must see through it), against the envtest kubeconfig.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DoctorReport } from '../../../lib/doctor/index.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
let bin: string | undefined;

/** A `node_modules/.bin/kruise-ha` symlink to the CLI's source (run with tsx). */
function doctorBin(): string {
  if (bin) return bin;
  const dir = join(mkdtempSync(join(tmpdir(), 'doctor-bin-')), 'node_modules', '.bin');
  mkdirSync(dir, { recursive: true });
  bin = join(dir, 'kruise-ha');
  symlinkSync(join(ROOT, 'lib/doctor/cli.ts'), bin);
  return bin;
}

export interface DoctorRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function runDoctorCli(args: string[], env: Record<string, string> = {}): Promise<DoctorRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', doctorBin(), ...args],
      { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '', ...env }, timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : NaN) : 0;
        if (Number.isNaN(code)) reject(new Error(`doctor did not run: ${err!.message}\n${stderr}`));
        else resolve({ code, stdout, stderr });
      },
    );
  });
}

/** `doctor --json`: the report, the exit code and the ids of the failing checks. */
export async function doctorJson(
  kubeconfig: string,
  namespace: string,
): Promise<{ code: number; report: DoctorReport; failing: string[] }> {
  const run = await runDoctorCli(['doctor', `--kubeconfig=${kubeconfig}`, `--namespace=${namespace}`, '--json']);
  let report: DoctorReport;
  try {
    report = JSON.parse(run.stdout) as DoctorReport;
  } catch {
    throw new Error(`doctor printed no JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
  return { code: run.code, report, failing: report.checks.filter((c) => c.status === 'fail').map((c) => c.id) };
}
