// Where the local loop of docs/runtime.md keeps its files: `npm run envtest` writes the kubeconfig
// there and `npm run envtest:install-runtime` reads it. `.envtest/` in the repository by default (the
// path the docs give `npm run runtime -- --kubeconfig=.envtest/kubeconfig`); KRUISE_HA_ENVTEST_DIR moves
// it, so a second loop (a test's) never overwrites the one a person runs.
import { isAbsolute, join, resolve } from 'node:path';

/** The env var that moves the local loop's directory away from `<repo>/.envtest`. */
export const LOCAL_DIR_ENV = 'KRUISE_HA_ENVTEST_DIR';

/** The local loop's directory: $KRUISE_HA_ENVTEST_DIR (relative to `repoRoot`), else `<repoRoot>/.envtest`. */
export function localDir(repoRoot: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = env[LOCAL_DIR_ENV];
  if (!dir) return join(repoRoot, '.envtest');
  return isAbsolute(dir) ? dir : resolve(repoRoot, dir);
}

/** The admin kubeconfig `npm run envtest` writes into the local loop's directory. */
export const localKubeconfig = (repoRoot: string, env: NodeJS.ProcessEnv = process.env): string =>
  join(localDir(repoRoot, env), 'kubeconfig');
