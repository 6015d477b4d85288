/**
 * The typed API client a user's controllers and webhooks read and write with: verbs on {@link Kind}s, over the
 * runtime's own HTTP path to the API server (lib/runtime/kube/client.ts, node:http), so it works the same unbundled
 * and in the bundled runtime, which has no client-node generated API classes.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import { PatchTypes } from '../kube/apis.js';
import { kubeClient, type KubeClient, type KubeRequest } from '../kube/client.js';
import type { JsonPatchOperation } from '../webhook/jsonpatch.js';
import { kindPath, type Kind } from './kinds.js';

/** Options every call takes. */
export interface CallOptions {
  /** Aborts the HTTP request (pass the ReconcileContext's, so shutdown is not held up). */
  signal?: AbortSignal;
}

/** Options of {@link Client.get} and {@link Client.getStatus}. */
export interface GetOptions extends CallOptions {
  /** The object's namespace: required for a namespaced kind, refused for a cluster-scoped one. */
  namespace?: string;
}

/** Options of {@link Client.list}. */
export interface ListOptions extends CallOptions {
  /** One namespace; omitted, a namespaced kind is listed across all namespaces. */
  namespace?: string;
  /** A label selector in the API's syntax, e.g. `app=web,tier in (a,b),!canary`. */
  labelSelector?: string;
  /** A field selector in the API's syntax, e.g. `metadata.name=x,status.phase!=Running`. */
  fieldSelector?: string;
  /** At most this many items; the answer's `metadata.continue` then fetches the next page. */
  limit?: number;
  /** The `metadata.continue` of the previous page. */
  continue?: string;
  /** `'0'` lets the API server answer from its watch cache (any version it has) instead of a quorum read. */
  resourceVersion?: string;
}

/** Options of the writes that send an object: create, update, updateStatus. */
export interface WriteOptions extends CallOptions {
  /** Who owns the fields this write sets (managedFields); the API server derives one from the user agent if absent. */
  fieldManager?: string;
  /** Validate and admit the write (webhooks included) without storing it. */
  dryRun?: boolean;
}

/** Options of {@link Client.patch} and {@link Client.patchStatus}. */
export interface PatchOptions extends WriteOptions {
  /** The object's namespace: required for a namespaced kind, refused for a cluster-scoped one. */
  namespace?: string;
  /** Server-side apply only: take the fields other managers own instead of failing with a Conflict. */
  force?: boolean;
}

/** Options of {@link Client.delete}. */
export interface DeleteOptions extends CallOptions {
  /** The object's namespace: required for a namespaced kind, refused for a cluster-scoped one. */
  namespace?: string;
  /** What happens to the objects it owns; the API server's default is per kind (Background for most). */
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Overrides the object's grace period (0: at once). */
  gracePeriodSeconds?: number;
  /** Delete only the object with this uid and/or resourceVersion; a Conflict otherwise. */
  preconditions?: { uid?: string; resourceVersion?: string };
  /** Validate and admit the delete without doing it. */
  dryRun?: boolean;
}

/** One operation of a JSON Patch (RFC 6902): the webhooks' type, one spelling for both. */
export type { JsonPatchOperation } from '../webhook/jsonpatch.js';

/**
 * A patch, in one of the languages the API server speaks (the keys of `type` are its Content-Types):
 * - `merge`: a JSON merge patch (RFC 7386): fields to set, `null` to remove one;
 * - `strategicMerge`: Kubernetes' strategic merge patch (built-in kinds only): lists merge by their keys;
 * - `json`: a JSON Patch (RFC 6902), e.g. with a `test` of `/metadata/resourceVersion` to write only over what
 *   was read;
 * - `apply`: server-side apply of the fields this field manager wants (needs `fieldManager`; `force` takes over
 *   fields others own). The body is the object's intent; `apiVersion` and `kind` default to the Kind's.
 */
export type Patch =
  | { type: 'merge'; body: object }
  | { type: 'strategicMerge'; body: object }
  | { type: 'json'; body: JsonPatchOperation[] }
  | { type: 'apply'; body: object };

/**
 * A list's metadata as the API sends it (client-node's V1ListMeta calls `continue` `_continue`: its name after its
 * own deserializer, which this client does not use).
 */
export interface ListMeta {
  resourceVersion?: string;
  /** Set when `limit` cut the list: pass it as ListOptions.continue for the next page. */
  continue?: string;
  /** How many items are left after this page, when the server can tell. */
  remainingItemCount?: number;
}

/** A list answer: the items and the list's metadata (`resourceVersion`, `continue`). */
export interface ObjectList<T extends KubernetesObject> {
  apiVersion?: string;
  kind?: string;
  metadata?: ListMeta;
  items: T[];
}

/**
 * A typed client of the Kubernetes API (controller-runtime's `client.Client`): get, list, create, update, patch
 * (merge, strategic merge, JSON patch, server-side apply), delete and the status subresource, on any {@link Kind}.
 * Failures are {@link StatusError}s (see isNotFound, isConflict, ...).
 *
 * A client may carry a guard that every write calls first (throwing refuses the write): the client a Manager hands
 * to a reconcile is guarded by its leader election, so a replica that lost its Lease writes nothing.
 */
/** One call as a client's access check sees it (see Client.withAccess). */
export interface ClientCall {
  readonly verb: 'get' | 'list' | 'create' | 'update' | 'patch' | 'delete';
  readonly kind: Kind<KubernetesObject>;
  /** True for create, update, patch and delete. */
  readonly write: boolean;
}

export class Client {
  private kube?: KubeClient;
  private readonly guard?: () => void;
  private readonly access?: (call: ClientCall) => void;

  /**
   * A client of the cluster `kubeConfig` names. It shares the runtime's connection pool for that KubeConfig.
   * `options.guard` runs before every write (create, update, patch, delete and their status forms).
   */
  constructor(
    readonly kubeConfig: KubeConfig,
    options: { guard?: () => void; access?: (call: ClientCall) => void } = {},
  ) {
    this.guard = options.guard;
    this.access = options.access;
  }

  /** This client with one more check before every write: this client's own guard runs first, then `guard`. */
  withGuard(guard: () => void): Client {
    return new Client(this.kubeConfig, { access: this.access, guard: chain(this.guard, guard) });
  }

  /**
   * This client with one more check before every call, read or write, which sees the verb and the kind: throwing
   * refuses the call before anything is sent (a controller's client refuses the kinds it did not declare).
   */
  withAccess(access: (call: ClientCall) => void): Client {
    return new Client(this.kubeConfig, { guard: this.guard, access: chain(this.access, access) });
  }

  /** Reads one object. */
  async get<T extends KubernetesObject>(kind: Kind<T>, name: string, options: GetOptions = {}): Promise<T> {
    return this.read(kind, name, undefined, options);
  }

  /** Reads an object through its status subresource (the whole object, as the API server answers it). */
  async getStatus<T extends KubernetesObject>(kind: Kind<T>, name: string, options: GetOptions = {}): Promise<T> {
    return this.read(kind, name, 'status', options);
  }

  /** Lists objects of a kind: in one namespace or (for a namespaced kind without one) across all of them. */
  async list<T extends KubernetesObject>(kind: Kind<T>, options: ListOptions = {}): Promise<ObjectList<T>> {
    this.access?.({ verb: 'list', kind, write: false });
    return this.kubeClient().call<ObjectList<T>>({
      method: 'GET',
      path: kindPath(kind, { namespace: options.namespace }),
      query: {
        labelSelector: options.labelSelector,
        fieldSelector: options.fieldSelector,
        limit: options.limit === undefined ? undefined : String(options.limit),
        continue: options.continue,
        resourceVersion: options.resourceVersion,
      },
      signal: options.signal,
    });
  }

  /** Creates `object` (in its `metadata.namespace` for a namespaced kind) and returns it as stored. */
  async create<T extends KubernetesObject>(kind: Kind<T>, object: T, options: WriteOptions = {}): Promise<T> {
    const namespace = object.metadata?.namespace;
    if (kind.namespaced && !namespace) throw new TypeError(`${kind.kind} is namespaced: set metadata.namespace`);
    return this.write<T>(
      kind,
      { method: 'POST', path: kindPath(kind, { namespace }), body: typed(kind, object) },
      writeQuery(options),
      options.signal,
    );
  }

  /**
   * Replaces `object` (found by its metadata). With `metadata.resourceVersion` set, as an object read and changed
   * has, the write fails with a Conflict if the object changed since: see retryOnConflict.
   */
  async update<T extends KubernetesObject>(kind: Kind<T>, object: T, options: WriteOptions = {}): Promise<T> {
    return this.replace(kind, object, undefined, options);
  }

  /** Replaces the status of `object` through the status subresource; the rest of what it sends is ignored. */
  async updateStatus<T extends KubernetesObject>(kind: Kind<T>, object: T, options: WriteOptions = {}): Promise<T> {
    return this.replace(kind, object, 'status', options);
  }

  /** Patches one object and returns it as stored. */
  async patch<T extends KubernetesObject>(
    kind: Kind<T>,
    name: string,
    patch: Patch,
    options: PatchOptions = {},
  ): Promise<T> {
    return this.patchAt(kind, name, undefined, patch, options);
  }

  /** Patches one object's status through the status subresource (other fields in the patch are ignored). */
  async patchStatus<T extends KubernetesObject>(
    kind: Kind<T>,
    name: string,
    patch: Patch,
    options: PatchOptions = {},
  ): Promise<T> {
    return this.patchAt(kind, name, 'status', patch, options);
  }

  /**
   * Deletes one object. Resolves once the API server accepted the delete: an object with finalizers or a grace
   * period is gone only later.
   */
  async delete<T extends KubernetesObject>(kind: Kind<T>, name: string, options: DeleteOptions = {}): Promise<void> {
    const { propagationPolicy, gracePeriodSeconds, preconditions } = options;
    await this.write(
      kind,
      {
        method: 'DELETE',
        path: kindPath(kind, { namespace: options.namespace, name }),
        body: { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy, gracePeriodSeconds, preconditions },
      },
      { dryRun: options.dryRun ? 'All' : undefined },
      options.signal,
    );
  }

  private async read<T extends KubernetesObject>(
    kind: Kind<T>,
    name: string,
    subresource: string | undefined,
    options: GetOptions,
  ): Promise<T> {
    this.access?.({ verb: 'get', kind, write: false });
    return this.kubeClient().call<T>({
      method: 'GET',
      path: kindPath(kind, { namespace: options.namespace, name, subresource }),
      signal: options.signal,
    });
  }

  private async replace<T extends KubernetesObject>(
    kind: Kind<T>,
    object: T,
    subresource: string | undefined,
    options: WriteOptions,
  ): Promise<T> {
    const name = object.metadata?.name;
    if (!name) throw new TypeError(`${kind.kind}: the object to update has no metadata.name`);
    return this.write<T>(
      kind,
      {
        method: 'PUT',
        path: kindPath(kind, { namespace: object.metadata?.namespace, name, subresource }),
        body: typed(kind, object),
      },
      writeQuery(options),
      options.signal,
    );
  }

  private async patchAt<T extends KubernetesObject>(
    kind: Kind<T>,
    name: string,
    subresource: string | undefined,
    patch: Patch,
    options: PatchOptions,
  ): Promise<T> {
    const contentType = (PatchTypes as Record<string, string>)[patch.type];
    if (!Object.hasOwn(PatchTypes, patch.type))
      throw new TypeError(`unknown patch type ${JSON.stringify(patch.type)}: one of ${Object.keys(PatchTypes)}`);
    const apply = patch.type === 'apply';
    if (apply && !options.fieldManager) throw new TypeError('a server-side apply needs options.fieldManager');
    if (options.force && !apply) throw new TypeError('options.force is for server-side apply (patch type apply) only');
    return this.write<T>(
      kind,
      {
        method: 'PATCH',
        path: kindPath(kind, { namespace: options.namespace, name, subresource }),
        body: apply ? typed(kind, patch.body as KubernetesObject) : patch.body,
        contentType,
      },
      { ...writeQuery(options), force: options.force ? 'true' : undefined },
      options.signal,
    );
  }

  /** Every write goes through here: the guard, then the request. */
  private async write<T>(
    kind: Kind<KubernetesObject>,
    request: Omit<KubeRequest, 'query' | 'signal'>,
    query: Record<string, string | undefined>,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    const verbs = { POST: 'create', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as const;
    this.access?.({ verb: verbs[request.method as keyof typeof verbs], kind, write: true });
    this.guard?.();
    return this.kubeClient().call<T>({ ...request, query, signal });
  }

  private kubeClient(): KubeClient {
    return (this.kube ??= kubeClient(this.kubeConfig));
  }
}

function writeQuery(options: WriteOptions): Record<string, string | undefined> {
  return { fieldManager: options.fieldManager, dryRun: options.dryRun ? 'All' : undefined };
}

/**
 * `object` with the Kind's apiVersion and kind where it has none (custom resources need them; built-in objects are
 * often written without). An object of another kind is refused before it is sent.
 */
function typed(kind: Kind<KubernetesObject>, object: KubernetesObject): KubernetesObject {
  if (object.kind !== undefined && object.kind !== kind.kind)
    throw new TypeError(`an object of kind ${object.kind} was passed with Kind ${kind.kind}`);
  return { ...object, apiVersion: object.apiVersion ?? kind.apiVersion, kind: kind.kind };
}

function chain<A extends unknown[]>(
  first: ((...args: A) => void) | undefined,
  second: (...args: A) => void,
): (...args: A) => void {
  return first
    ? (...args: A) => {
        first(...args);
        second(...args);
      }
    : second;
}
