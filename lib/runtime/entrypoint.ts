import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the program node was started
 * with. Compares real paths: npm starts a `bin` through a `node_modules/.bin` symlink, which
 * node resolves for the module but not for `process.argv[1]`.
 */
export function isEntrypoint(moduleUrl: string): boolean {
  try {
    return Boolean(process.argv[1]) && realpathSync(fileURLToPath(moduleUrl)) === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
}
