/**
 * The API calls of WorkloadSpread's webhooks and controller, over the runtime's one KubeClient:
 * WorkloadSpreads (read, status write with optimistic concurrency), the target workloads and the
 * owners of pods (read), pods (read, patch, delete), nodes (read). Reads of objects that do not
 * exist answer undefined; every other failure throws client-node's ApiException (`code`).
 */
import type { KubeClient } from '../kube/client.js';
import { PatchTypes } from '../kube/apis.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import { KRUISE_APPS_GROUP } from '../../contract.js';
import { apiGroupOf } from '../../contract/workloadspread.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const seg = encodeURIComponent;
const WS = (ns: string) => `/apis/${KRUISE_APPS_GROUP}/v1alpha1/namespaces/${seg(ns)}/workloadspreads`;

/** Plural of the kinds a WorkloadSpread or a pod's owner chain names (upstream's workloads). */
const PLURALS: Record<string, string> = {
  Deployment: 'deployments',
  ReplicaSet: 'replicasets',
  StatefulSet: 'statefulsets',
  Job: 'jobs',
  CloneSet: 'clonesets',
};

export { isConflict, isNotFound };

/**
 * The API path of a workload named by apiVersion and kind, or undefined for a kind upstream does not
 * read. An Advanced StatefulSet is read as apps.kruise.io/v1beta1 whatever version names it, as
 * upstream (GenerateEmptyWorkloadObject).
 */
export function workloadPath(apiVersion: string, kind: string, namespace: string, name: string): string | undefined {
  const plural = PLURALS[kind];
  const group = apiGroupOf(apiVersion);
  if (!plural || group === undefined) return undefined;
  const version =
    kind === 'StatefulSet' && group === KRUISE_APPS_GROUP
      ? 'v1beta1'
      : (apiVersion.split('/')[1] ?? apiVersion.split('/')[0]);
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return `${base}/namespaces/${seg(namespace)}/${plural}/${seg(name)}`;
}

export type WorkloadSpreadApi = ReturnType<typeof workloadSpreadApi>;

/** How long a group version's discovered resources are trusted; a kind not in them is looked up again after 5 s. */
const DISCOVERY_TTL_MS = 60_000;
const DISCOVERY_MISS_MS = 5_000;

export function workloadSpreadApi(client: KubeClient, now: () => number = Date.now) {
  const read = async (path: string, signal?: AbortSignal): Promise<Json | undefined> => {
    try {
      return await client.call<Json>({ method: 'GET', path, signal });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  const discovered = new Map<string, { at: number; resources: Json[] }>();
  /**
   * The API path of any kind (upstream's RESTMapper over discovery): built-in targets by their
   * plural, others by the group version's discovery document; undefined when the API server
   * serves no such kind.
   */
  const pathOf = async (
    apiVersion: string,
    kind: string,
    namespace: string,
    name: string,
    signal?: AbortSignal,
  ): Promise<string | undefined> => {
    const known = workloadPath(apiVersion, kind, namespace, name);
    if (known) return known;
    const group = apiGroupOf(apiVersion);
    if (group === undefined || !apiVersion.includes('/') || !kind) return undefined;
    const base = `/apis/${apiVersion}`;
    const find = (entry?: { resources: Json[] }) =>
      entry?.resources.find((r) => r?.kind === kind && typeof r?.name === 'string' && !r.name.includes('/'));
    let entry = discovered.get(apiVersion);
    let resource = entry && now() - entry.at < DISCOVERY_TTL_MS ? find(entry) : undefined;
    if (!resource && (!entry || now() - entry.at >= DISCOVERY_MISS_MS)) {
      const doc = await read(base, signal);
      entry = { at: now(), resources: Array.isArray(doc?.resources) ? doc.resources : [] };
      discovered.set(apiVersion, entry);
      resource = find(entry);
    }
    if (!resource) return undefined;
    return `${base}/namespaces/${seg(namespace)}/${seg(resource.name)}/${seg(name)}`;
  };
  return {
    getWorkloadSpread: (namespace: string, name: string, signal?: AbortSignal) =>
      read(`${WS(namespace)}/${seg(name)}`, signal),
    /** PUT of the status subresource: fails with 409 when `ws.metadata.resourceVersion` is not the latest. */
    updateStatus: (ws: Json, signal?: AbortSignal): Promise<Json> =>
      client.call<Json>({
        method: 'PUT',
        path: `${WS(ws.metadata.namespace)}/${seg(ws.metadata.name)}/status`,
        body: ws,
        signal,
      }),
    /** A workload by apiVersion and kind (any kind the API server serves); undefined when it does not exist. */
    getWorkload: async (apiVersion: string, kind: string, namespace: string, name: string, signal?: AbortSignal) => {
      const path = await pathOf(apiVersion, kind, namespace, name, signal);
      return path ? read(path, signal) : undefined;
    },
    /**
     * A workload's scale subresource (autoscaling/v1 Scale: spec.replicas, status.selector, the
     * workload's uid); undefined when the workload, or its scale subresource, does not exist.
     */
    getScale: async (apiVersion: string, kind: string, namespace: string, name: string, signal?: AbortSignal) => {
      const path = await pathOf(apiVersion, kind, namespace, name, signal);
      return path ? read(`${path}/scale`, signal) : undefined;
    },
    /** ReplicaSets of a namespace matching a label selector string. */
    listReplicaSets: async (namespace: string, labelSelector: string, signal?: AbortSignal): Promise<Json[]> =>
      (
        await client.call<Json>({
          method: 'GET',
          path: `/apis/apps/v1/namespaces/${seg(namespace)}/replicasets`,
          query: { labelSelector },
          signal,
        })
      ).items ?? [],
    getPod: (namespace: string, name: string, signal?: AbortSignal) =>
      read(`/api/v1/namespaces/${seg(namespace)}/pods/${seg(name)}`, signal),
    getNode: (name: string, signal?: AbortSignal) => read(`/api/v1/nodes/${seg(name)}`, signal),
    /** A strategic merge patch of a pod's metadata (upstream's deletion cost and subset annotation patches). */
    patchPod: (namespace: string, name: string, body: object, signal?: AbortSignal) =>
      client.call<Json>({
        method: 'PATCH',
        path: `/api/v1/namespaces/${seg(namespace)}/pods/${seg(name)}`,
        body,
        contentType: PatchTypes.strategicMerge,
        signal,
      }),
    /** Deletes a pod; one already gone is not an error. */
    deletePod: async (namespace: string, name: string, signal?: AbortSignal): Promise<void> => {
      try {
        await client.call<Json>({
          method: 'DELETE',
          path: `/api/v1/namespaces/${seg(namespace)}/pods/${seg(name)}`,
          signal,
        });
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    },
  };
}

/** Upstream getWorkloadReplicas' value of a workload object (Job: parallelism; others: replicas). */
export function workloadReplicas(kind: string, object: Json): number {
  if (kind === 'Job') return Number(object?.spec?.parallelism ?? 1);
  return Number(object?.spec?.replicas ?? 1);
}

/** Go's strconv.Atoi (an optional sign, decimal digits, within int64), throwing its error text. */
function goAtoi(s: string): number {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > 9223372036854775807n || n < -9223372036854775808n)
    throw new Error(`strconv.Atoi: parsing ${JSON.stringify(s)}: value out of range`);
  return Number(n);
}

/**
 * Upstream GetReplicasFromObject (pkg/util/workloadspread NestedField[int64]): the integer at a
 * dot-separated path, a list indexed by a number; '' is 0. Anything else throws upstream's error:
 * a key the object does not have (`path "x" not exists`), an index that is not a number or past
 * the list (`index 3 out of range`; a negative one too: v1.8.3 panics on it, v1.9.1 errors), a
 * step through something that is neither an object nor a list, null included (`object is not deep
 * enough`), and an end that is no integer (`object type error`). The value as Go's int32() of it.
 */
export function replicasAtPath(object: Json, path: string): number {
  if (path === '') return 0;
  let v: Json = object;
  for (const part of path.split('.')) {
    if (Array.isArray(v)) {
      const i = goAtoi(part);
      if (i < 0 || i >= v.length) throw new Error(`index ${i} out of range`);
      v = v[i];
    } else if (v !== null && typeof v === 'object') {
      if (!Object.prototype.hasOwnProperty.call(v, part) || v[part] === undefined)
        throw new Error(`path ${JSON.stringify(part)} not exists`);
      v = v[part];
    } else throw new Error('object is not deep enough');
  }
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error('object type error');
  return v | 0;
}
