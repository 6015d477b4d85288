/**
 * The API calls the runtime makes, with the method names and parameter objects of client-node's
 * generated classes (so call sites and test fakes read the same), over {@link KubeClient}.
 * Types only come from client-node; nothing here loads its generated code.
 */
import type {
  V1ControllerRevision,
  V1ControllerRevisionList,
  V1CustomResourceDefinition,
  V1Lease,
  V1MutatingWebhookConfiguration,
  V1Pod,
  V1Secret,
  V1Status,
  V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import type { KubeClient } from './client.js';

/** The Content-Type of a PATCH: which patch language the body speaks. */
export const PatchTypes = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategicMerge: 'application/strategic-merge-patch+json',
  /** Server-side apply: the body is the whole intent of one field manager (JSON is YAML). */
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchType = (typeof PatchTypes)[keyof typeof PatchTypes];

export interface CallOptions {
  /** Aborts the HTTP request. */
  signal?: AbortSignal;
}
export interface PatchOptions extends CallOptions {
  patchType: PatchType;
}

interface Named {
  name: string;
}
interface InNamespace {
  namespace: string;
}
type WithBody<P, B> = P & { body: B };

const seg = encodeURIComponent;
const ns = (p: InNamespace, plural: string, group = '/api/v1') => `${group}/namespaces/${seg(p.namespace)}/${plural}`;

/** Builds the four verbs on one resource path scheme; `path(p)` is the collection, `path(p)/name` an object. */
function verbs<P, T>(client: KubeClient, collection: (p: P) => string) {
  const item = (p: P & Named) => `${collection(p)}/${seg(p.name)}`;
  return {
    read: (p: P & Named, o?: CallOptions) => client.call<T>({ method: 'GET', path: item(p), signal: o?.signal }),
    create: (p: WithBody<P, T>, o?: CallOptions) =>
      client.call<T>({ method: 'POST', path: collection(p), body: p.body, signal: o?.signal }),
    replace: (p: WithBody<P & Named, T>, o?: CallOptions) =>
      client.call<T>({ method: 'PUT', path: item(p), body: p.body, signal: o?.signal }),
    patch: (p: WithBody<P & Named, object>, o: PatchOptions) =>
      client.call<T>({ method: 'PATCH', path: item(p), body: p.body, contentType: o.patchType, signal: o.signal }),
  };
}

export type CoreV1Client = ReturnType<typeof coreV1>;
export function coreV1(client: KubeClient) {
  const secrets = verbs<InNamespace, V1Secret>(client, (p) => ns(p, 'secrets'));
  const pods = verbs<InNamespace, V1Pod>(client, (p) => ns(p, 'pods'));
  return {
    readNamespacedSecret: secrets.read,
    createNamespacedSecret: secrets.create,
    replaceNamespacedSecret: secrets.replace,
    patchNamespacedPod: pods.patch,
  };
}

const revisionsOf = (p: InNamespace) => ns(p, 'controllerrevisions', '/apis/apps/v1');
export type AppsV1Client = ReturnType<typeof appsV1>;
export function appsV1(client: KubeClient) {
  const revisions = verbs<InNamespace, V1ControllerRevision>(client, revisionsOf);
  return {
    readNamespacedControllerRevision: revisions.read,
    createNamespacedControllerRevision: revisions.create,
    patchNamespacedControllerRevision: revisions.patch,
    listNamespacedControllerRevision: (p: InNamespace & { labelSelector?: string }, o?: CallOptions) =>
      client.call<V1ControllerRevisionList>({
        method: 'GET',
        path: revisionsOf(p),
        query: { labelSelector: p.labelSelector },
        signal: o?.signal,
      }),
    deleteNamespacedControllerRevision: (p: InNamespace & Named, o?: CallOptions) =>
      client.call<V1Status>({ method: 'DELETE', path: `${revisionsOf(p)}/${seg(p.name)}`, signal: o?.signal }),
  };
}

export type CustomObjectsClient = ReturnType<typeof customObjects>;
export function customObjects(client: KubeClient) {
  return {
    patchClusterCustomObjectStatus: (
      p: { group: string; version: string; plural: string; name: string; body: object },
      o: PatchOptions,
    ) =>
      client.call<object>({
        method: 'PATCH',
        path: `/apis/${seg(p.group)}/${seg(p.version)}/${seg(p.plural)}/${seg(p.name)}/status`,
        body: p.body,
        contentType: o.patchType,
        signal: o.signal,
      }),
  };
}

export type CoordinationV1Client = ReturnType<typeof coordinationV1>;
export function coordinationV1(client: KubeClient) {
  const leases = verbs<InNamespace, V1Lease>(client, (p) => ns(p, 'leases', '/apis/coordination.k8s.io/v1'));
  return {
    readNamespacedLease: leases.read,
    createNamespacedLease: leases.create,
    replaceNamespacedLease: leases.replace,
  };
}

const admission = '/apis/admissionregistration.k8s.io/v1';
export type AdmissionregistrationV1Client = ReturnType<typeof admissionregistrationV1>;
export function admissionregistrationV1(client: KubeClient) {
  const mutating = verbs<object, V1MutatingWebhookConfiguration>(
    client,
    () => `${admission}/mutatingwebhookconfigurations`,
  );
  const validating = verbs<object, V1ValidatingWebhookConfiguration>(
    client,
    () => `${admission}/validatingwebhookconfigurations`,
  );
  return {
    readMutatingWebhookConfiguration: mutating.read,
    patchMutatingWebhookConfiguration: mutating.patch,
    readValidatingWebhookConfiguration: validating.read,
    patchValidatingWebhookConfiguration: validating.patch,
  };
}

export type ApiextensionsV1Client = ReturnType<typeof apiextensionsV1>;
export function apiextensionsV1(client: KubeClient) {
  const crds = verbs<object, V1CustomResourceDefinition>(
    client,
    () => '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
  );
  return { readCustomResourceDefinition: crds.read, patchCustomResourceDefinition: crds.patch };
}
