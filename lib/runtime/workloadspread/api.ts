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

export function workloadSpreadApi(client: KubeClient) {
  const read = async (path: string, signal?: AbortSignal): Promise<Json | undefined> => {
    try {
      return await client.call<Json>({ method: 'GET', path, signal });
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
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
    /** A workload by apiVersion and kind; undefined when it does not exist or is of a kind upstream does not read. */
    getWorkload: (apiVersion: string, kind: string, namespace: string, name: string, signal?: AbortSignal) => {
      const path = workloadPath(apiVersion, kind, namespace, name);
      return path ? read(path, signal) : Promise.resolve(undefined);
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

/**
 * Upstream GetReplicasFromObject: the integer at a dot-separated path (a list indexed by a number),
 * 0 when the path does not exist; an error when it holds something else than an integer.
 */
export function replicasAtPath(object: Json, path: string): number {
  if (path === '') return 0;
  let v: Json = object;
  for (const part of path.split('.')) {
    if (Array.isArray(v)) {
      if (!/^\d+$/.test(part)) throw new Error(`${path}: ${part} is not an index of a list`);
      v = v[Number(part)];
    } else if (v && typeof v === 'object') v = v[part];
    else return 0;
    if (v === undefined || v === null) return 0;
  }
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${path}: ${JSON.stringify(v)} is not an integer`);
  return v;
}
