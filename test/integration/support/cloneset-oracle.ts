/**
 * Upstream OpenKruise v1.9.1's OWN CloneSet code as a test oracle: tools/upstream/cloneset-oracle
 * built inside a copy of the pinned module (its own cache key, next to sidecarset-oracle's), so a
 * difference between lib/runtime/cloneset and upstream is a failing test, not an opinion.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runGoOracle } from './go-oracle.js';

const BUILD = fileURLToPath(new URL('../../../tools/upstream/cloneset-oracle/build.sh', import.meta.url));
const cloneSetOracle = <T>(mode: string, cases: object[]) => runGoOracle<T>(BUILD, mode, cases);

/** Upstream's CloneSet mutating webhook, its patch applied: the object it stores (or why it refused). */
export const upstreamCloneSetDefaults = (cases: Array<{ object: object; older?: object }>) =>
  cloneSetOracle<{ object?: object; patched?: boolean; denied?: string; error?: string }>('default', cases);

/** Upstream's CloneSet validation (CREATE, or UPDATE with `older`) on a fake API holding `pods`. */
export const upstreamCloneSetValidation = (cases: Array<{ object: object; older?: object; pods?: object[] }>) =>
  cloneSetOracle<{ errors?: string[]; panic?: string; error?: string }>('validate', cases);

export interface UpstreamRevision {
  name: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: object[];
  /** The revision's data exactly as upstream writes it. */
  data: string;
  revision: number;
  /** The labels WriteRevisionHash puts on a pod of this revision. */
  podLabels: Record<string, string>;
  error?: string;
}

/** Upstream's NewRevision for each CloneSet. */
export const upstreamCloneSetRevision = (cases: Array<{ object: object; revision: number; collisionCount?: number }>) =>
  cloneSetOracle<UpstreamRevision>('revision', cases);

/** Upstream's ApplyRevision of a revision holding `data`. */
export const upstreamCloneSetApply = (cases: Array<{ object: object; data: object }>) =>
  cloneSetOracle<{ object?: object; error?: string }>('apply', cases);

/** The Go layout of CloneSet as the pinned module has it (what gojson.generated.ts was written from). */
export function upstreamCloneSetSchema(): { roots: Record<string, string>; types: Record<string, unknown> } {
  const build = execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  return JSON.parse(execFileSync(build, ['schema'], { encoding: 'utf8', maxBuffer: 64 << 20 })) as {
    roots: Record<string, string>;
    types: Record<string, unknown>;
  };
}
