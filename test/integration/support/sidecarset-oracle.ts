/**
 * Upstream OpenKruise's OWN SidecarSet code as a test oracle: tools/upstream/sidecarset-oracle
 * built inside a copy of the pinned module (offline, from the module cache the envtest build
 * fills), so a difference between this runtime and upstream is a failing test, not an opinion.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runGoOracle } from './go-oracle.js';

const BUILD = fileURLToPath(new URL('../../../tools/upstream/sidecarset-oracle/build.sh', import.meta.url));

/**
 * The labels the API server gives Namespace "apps" (kubernetes.io/metadata.name, set on every Namespace), which
 * upstream v1.9.1 matches a SidecarSet's `namespace` through; and that Namespace, for the oracle's fake cluster.
 */
export const APPS_NAMESPACE_LABELS: Record<string, string> = { 'kubernetes.io/metadata.name': 'apps' };
export const APPS_NAMESPACE = {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'apps', labels: APPS_NAMESPACE_LABELS },
};

export interface OracleHashes {
  hash: string;
  withoutImage: string;
}
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
  const out = execFileSync(binary, ['hash'], {
    input: sidecarSets.map((s) => JSON.stringify(s)).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  const results = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as OracleResult);
  if (results.length !== sidecarSets.length)
    throw new Error(`oracle answered ${results.length} of ${sidecarSets.length} SidecarSets`);
  return results;
}

export interface OracleInjection {
  pod?: Record<string, unknown>;
  skip?: boolean;
  error?: string;
}

/** Upstream's pod-webhook SidecarSet injection (pod CREATE) for each case, in one process. */
export function upstreamInjectionOracle(
  cases: Array<{ sidecarSets: object[]; namespaces: object[]; pod: object }>,
): OracleInjection[] {
  binary ??= execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const run = spawnSync(binary, ['inject'], {
    input: cases.map((c) => JSON.stringify(c)).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (run.status !== 0)
    throw new Error(
      `sidecarset-oracle inject failed (${run.status ?? run.signal}): ${(run.stderr ?? '')
        .split('\n')
        .filter((l) => !/^[IW]\d{4} /.test(l))
        .slice(0, 20)
        .join('\n')}`,
    );
  const out = run.stdout;
  const results = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as OracleInjection);
  if (results.length !== cases.length) throw new Error(`oracle answered ${results.length} of ${cases.length} cases`);
  return results;
}

export interface OracleState {
  updated?: boolean;
  upgradable?: boolean;
  consistent?: boolean;
  error?: string;
}

/** How upstream's SidecarSet controller sees each pod: IsPodSidecarUpdated and IsSidecarSetUpgradable. */
export function upstreamStateOracle(cases: Array<{ sidecarSet: object; pod: object }>): OracleState[] {
  binary ??= execFileSync('bash', [BUILD], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const run = spawnSync(binary, ['state'], {
    input: cases.map((c) => JSON.stringify(c)).join('\n') + '\n',
    encoding: 'utf8',
    maxBuffer: 256 << 20,
  });
  if (run.status !== 0)
    throw new Error(
      `sidecarset-oracle state failed (${run.status ?? run.signal}): ${(run.stderr ?? '').slice(0, 2000)}`,
    );
  const results = run.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as OracleState);
  if (results.length !== cases.length) throw new Error(`oracle answered ${results.length} of ${cases.length} cases`);
  return results;
}

/** Runs the oracle's `mode` on one JSON line per case; one `{ errors }` (or `{ error }`) per case. */
function validationOracle(mode: string, cases: object[]): Array<{ errors?: string[]; error?: string }> {
  return runGoOracle(BUILD, mode, cases);
}

/** Upstream's SidecarSet validation (its validating webhook's checks, conflicts with `existing` included). */
export function upstreamValidationOracle(
  cases: Array<{ existing: object[]; namespaces: object[]; object: object; older?: object }>,
): Array<{ errors?: string[]; error?: string }> {
  return validationOracle('validate', cases);
}

/**
 * Upstream's WorkloadSpread validating webhook (validatingWorkloadSpreadFn, and on UPDATE
 * validateWorkloadSpreadUpdate) on a fake API holding `wsExisting` WorkloadSpreads and `workloads`.
 */
export function upstreamWorkloadSpreadValidationOracle(
  cases: Array<{ ws: object; wsOlder?: object; wsExisting?: object[]; workloads?: object[] }>,
): Array<{ errors?: string[]; error?: string }> {
  return validationOracle('wsvalidate', cases);
}

/**
 * Upstream's pod-webhook steps for WorkloadSpread (acquireSuitableSubset's StatefulSet branch or
 * updateSubsetForPod, then injectWorkloadSpreadIntoPod) on a fake API holding `workloads`.
 */
export function upstreamWorkloadSpreadSubsetOracle(
  cases: Array<{ ws: object; pod: object; operation: string; injectWS?: object; workloads?: object[] }>,
): object[] {
  return validationOracle('wssubset', cases);
}

/**
 * Upstream's updateDeletionCostBySubset on a fake API holding the pods (but the `absent` ones):
 * `{ costs, failed, events }` per case: each pod's cost afterwards ("" for none), the error it
 * stopped at ("" for none), the events it recorded ("<type> <reason> <message>").
 */
export function upstreamWorkloadSpreadDeletionCostOracle(
  cases: Array<{ ws: object; podMap: Record<string, object[]>; replicas: number; reverse: boolean; absent?: string[] }>,
): object[] {
  return validationOracle('wscost', cases);
}

/** Upstream's calculateWorkloadSpreadSubsetStatuses: `{ statuses, failed, nil, events }` per case. */
export function upstreamWorkloadSpreadStatusOracle(
  cases: Array<{ ws: object; oldStatuses: object[]; podMap: Record<string, object[]>; replicas: number }>,
): object[] {
  return validationOracle('wsstatus', cases);
}

/** Upstream's groupPodBySubset on a fake API holding the pods and nodes: `{ podMap, pods }` per case. */
export function upstreamWorkloadSpreadGroupOracle(
  cases: Array<{ ws: object; pods: object[]; nodes: object[]; replicas: number }>,
): object[] {
  return validationOracle('wsgroup', cases);
}

/** apimachinery's StrategicMergePatch over a corev1.Pod, decoded into a Pod: `{ pod }` or `{ error }` per case. */
export function upstreamStrategicMergeOracle(cases: Array<{ pod: object; patch: object }>): object[] {
  return validationOracle('smp', cases);
}
