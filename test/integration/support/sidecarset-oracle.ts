/**
 * Upstream OpenKruise's OWN SidecarSet code as a test oracle: tools/upstream/sidecarset-oracle
 * built inside a copy of the pinned module (offline, from the module cache the envtest build
 * fills), so a difference between this runtime and upstream is a failing test, not an opinion.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BUILD = fileURLToPath(new URL('../../../tools/upstream/sidecarset-oracle/build.sh', import.meta.url));

export interface OracleHashes { hash: string; withoutImage: string }
export interface OracleResult {
  /** Upstream's hashes of the SidecarSet exactly as decoded. */
  raw: OracleHashes;
  /** After upstream's SidecarSet defaulting: what its mutating webhook records, and the spec it stores. */
  defaulted: OracleHashes & { spec: Record<string, unknown> };
  error?: string;
}

let binary: string | undefined;

/** Runs upstream's defaulting and hashing over each SidecarSet, in one process. */
export function upstreamSidecarSetOracle(sidecarSets: object[]): OracleResult[] {
  binary ??= execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const out = execFileSync(binary, ['hash'], { input: sidecarSets.map((s) => JSON.stringify(s)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 256 << 20 });
  const results = out.trim().split('\n').map((l) => JSON.parse(l) as OracleResult);
  if (results.length !== sidecarSets.length) throw new Error(`oracle answered ${results.length} of ${sidecarSets.length} SidecarSets`);
  return results;
}
