/**
 * Reads a bundled program's registrations at synth: runs `node main.mjs --registrations ARGS` in this Node (a child
 * process, no cluster, no network; the program's `register` runs on a manager that never starts) and checks the JSON
 * it prints with the contract's rule, so the constructs render exactly what the program serves and needs.
 */
import { spawnSync } from 'node:child_process';
import { describeProblem, REGISTRATIONS_FLAG, registrationsProblems, type Registrations } from '../../contract.js';
import { propError } from '../core/errors.js';

/** How long a program may take to register: a program that reaches for a cluster in register() hangs, not this. */
const READ_TIMEOUT_MS = 60_000;

export function readRegistrations(bundle: string, args: readonly string[], entrypoint: string): Registrations {
  const run = spawnSync(process.execPath, [bundle, `--${REGISTRATIONS_FLAG}`, ...args], {
    encoding: 'utf8',
    timeout: READ_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
    // Nothing of the synth's environment reaches the program (no KUBECONFIG, no credentials): only what Node needs.
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_OPTIONS: '' },
  });
  const stderr = (run.stderr ?? '').trim().split('\n').slice(-5).join(' | ');
  if (run.error || run.status !== 0) {
    const why = run.error
      ? `${run.error.message}`
      : `exited with ${run.status ?? run.signal}${stderr ? `: ${stderr}` : ''}`;
    throw propError(
      'program',
      entrypoint,
      `could not print its registrations (node main.mjs --${REGISTRATIONS_FLAG} ${args.join(' ')}): ${why}`,
      run.status === 2
        ? 'fix the flag the program refused (controllerWorkers, extraArgs)'
        : "end the entrypoint with kruise-ha-runtime's run(), and keep register() free of API calls (it runs at synth, without a cluster)",
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(run.stdout);
  } catch (err) {
    throw propError(
      'program',
      entrypoint,
      `printed something other than JSON for --${REGISTRATIONS_FLAG} (${(err as Error).message})`,
      'write nothing to stdout while registering (the runtime logs to stderr)',
    );
  }
  const problems = registrationsProblems(parsed);
  if (problems.length > 0)
    throw propError(
      'program',
      entrypoint,
      `printed registrations these constructs cannot render: ${problems.slice(0, 5).map(describeProblem).join('; ')}`,
      'use the kruise-ha-runtime of the same version as kruise-ha',
    );
  return parsed as Registrations;
}
