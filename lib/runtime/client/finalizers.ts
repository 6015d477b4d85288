/**
 * Finalizers, as controller-runtime's controllerutil: whether an object has one, and adding or removing one with a
 * merge patch that carries the object's resourceVersion (a precondition), retried on a conflict against a fresh read,
 * so a concurrent writer's finalizers are never lost.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { isNotFound } from '../kube/errors.js';
import type { Client } from './client.js';
import type { Kind } from './kinds.js';
import { retryOnConflict, type RetryOptions } from './retry.js';

const FINALIZER =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;

/** True when `object` carries `finalizer`. */
export function hasFinalizer(object: KubernetesObject, finalizer: string): boolean {
  return object.metadata?.finalizers?.includes(finalizer) ?? false;
}

/**
 * Adds `finalizer` to the object `object` names (its kind, namespace and name), unless it is there; resolves to the
 * object as stored. Throws a TypeError for a malformed finalizer (a qualified name such as `example.com/cleanup`).
 */
export function addFinalizer<T extends KubernetesObject>(
  client: Client,
  kind: Kind<T>,
  object: T,
  finalizer: string,
  options: RetryOptions = {},
): Promise<T> {
  check(finalizer);
  return edit(client, kind, object, options, (list) => (list.includes(finalizer) ? undefined : [...list, finalizer]));
}

/**
 * Removes `finalizer` from the object `object` names, if it is there; resolves to the object as stored, or undefined
 * when the object is gone (removing the last finalizer of an object being deleted ends it).
 */
export async function removeFinalizer<T extends KubernetesObject>(
  client: Client,
  kind: Kind<T>,
  object: T,
  finalizer: string,
  options: RetryOptions = {},
): Promise<T | undefined> {
  check(finalizer);
  try {
    return await edit(client, kind, object, options, (list) =>
      list.includes(finalizer) ? list.filter((f) => f !== finalizer) : undefined,
    );
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function check(finalizer: string): void {
  if (typeof finalizer !== 'string' || !FINALIZER.test(finalizer) || finalizer.length > 316)
    throw new TypeError(`finalizer ${JSON.stringify(finalizer)} is not a qualified name, e.g. example.com/cleanup`);
}

/** Reads the object (the given one first), applies `change` to its finalizers and patches, again on a conflict. */
async function edit<T extends KubernetesObject>(
  client: Client,
  kind: Kind<T>,
  object: T,
  options: RetryOptions,
  change: (finalizers: string[]) => string[] | undefined,
): Promise<T> {
  const name = object.metadata?.name;
  if (!name) throw new TypeError(`${kind.kind}: the object has no metadata.name`);
  const namespace = object.metadata?.namespace;
  let current: T = object;
  let fresh = false;
  return retryOnConflict(async () => {
    if (fresh) current = await client.get(kind, name, { namespace, signal: options.signal });
    fresh = true;
    const before = current.metadata?.finalizers ?? [];
    const after = change(before);
    if (after === undefined) return current;
    // A merge patch carrying the resourceVersion is refused with a Conflict if the object changed since it was read.
    const metadata = { resourceVersion: current.metadata?.resourceVersion, finalizers: after };
    return client.patch(kind, name, { type: 'merge', body: { metadata } }, { namespace, signal: options.signal });
  }, options);
}
