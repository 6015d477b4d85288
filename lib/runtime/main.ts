#!/usr/bin/env node
/**
 * The kruise-ha manager process: Kruise's features on the runtime's entrypoint ({@link run}), which
 * owns flags, signals and exit codes: 0 after a graceful shutdown, 1 on a fatal error (the container
 * restarts), 2 on bad flags.
 */
import { KruiseObjectNames, RuntimeControllers } from '../contract.js';
import { isEntrypoint } from './entrypoint.js';
import { run, type RunDeps } from './run.js';
import { registerSidecarSet } from './sidecarset/index.js';
import { registerWorkloadSpread } from './workloadspread/index.js';

/** Runs Kruise's manager with `argv` and `env`; `deps` replaces the rest of the process (tests). */
export function main(argv: string[], env: NodeJS.ProcessEnv, deps: Omit<RunDeps, 'argv' | 'env'> = {}): Promise<void> {
  return run(
    {
      name: 'kruise-ha manager',
      description: 'leader-elected controllers and a replicated admission webhook.',
      controllers: Object.values(RuntimeControllers),
      objectNames: KruiseObjectNames,
      register(manager) {
        // Pod CREATE runs WorkloadSpread's step before SidecarSet injection, as upstream's pod webhook.
        registerSidecarSet(manager, registerWorkloadSpread(manager));
      },
    },
    { ...deps, argv, env },
  );
}

if (isEntrypoint(import.meta.url)) await main(process.argv.slice(2), process.env);
