/**
 * The certificate Secret as the cert managers need it: read, create, and update guarded by
 * resourceVersion. An interface, so the race logic is unit-tested against an in-memory store
 * with the API server's conflict semantics, and integration-tested against the real one.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { failedError, isAlreadyExists, isConflict, isNotFound } from '../kube/errors.js';
import type { CoreV1Client } from '../kube/index.js';

export interface SecretSnapshot {
  resourceVersion: string;
  /** Decoded (UTF-8) values. */
  data: Record<string, string>;
}

/** The API server said 409: AlreadyExists on create, Conflict on a stale update. */
export class ConflictError extends Error {}

export interface SecretStore {
  /** Where the Secret lives, for messages. */
  readonly ref: string;
  /** Undefined when the Secret does not exist. */
  get(): Promise<SecretSnapshot | undefined>;
  /** Throws ConflictError when it already exists. */
  create(data: Record<string, string>): Promise<SecretSnapshot>;
  /** Replaces the data if `resourceVersion` is still current; throws ConflictError otherwise. */
  update(resourceVersion: string, data: Record<string, string>): Promise<SecretSnapshot>;
}

export class KubeSecretStore implements SecretStore {
  readonly ref: string;

  constructor(
    private readonly core: Pick<
      CoreV1Client,
      'readNamespacedSecret' | 'createNamespacedSecret' | 'replaceNamespacedSecret'
    >,
    private readonly namespace: string,
    private readonly name: string,
  ) {
    this.ref = `Secret ${namespace}/${name}`;
  }

  async get(): Promise<SecretSnapshot | undefined> {
    try {
      return snapshot(await this.core.readNamespacedSecret({ name: this.name, namespace: this.namespace }));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw failedError(e, `reading ${this.ref}`);
    }
  }

  async create(data: Record<string, string>): Promise<SecretSnapshot> {
    try {
      return snapshot(
        await this.core.createNamespacedSecret({
          namespace: this.namespace,
          body: { metadata: { name: this.name, namespace: this.namespace }, type: 'Opaque', data: encode(data) },
        }),
      );
    } catch (e) {
      if (isAlreadyExists(e) || isConflict(e)) throw new ConflictError(`${this.ref} already exists`);
      throw failedError(e, `creating ${this.ref}`);
    }
  }

  async update(resourceVersion: string, data: Record<string, string>): Promise<SecretSnapshot> {
    try {
      const current = await this.core.readNamespacedSecret({ name: this.name, namespace: this.namespace });
      // Keep labels, annotations and owner references others put there; only data is ours.
      const body: V1Secret = { ...current, metadata: { ...current.metadata, resourceVersion }, data: encode(data) };
      return snapshot(await this.core.replaceNamespacedSecret({ name: this.name, namespace: this.namespace, body }));
    } catch (e) {
      if (isConflict(e) || isNotFound(e)) {
        throw new ConflictError(`${this.ref} changed since resourceVersion ${resourceVersion}`);
      }
      throw failedError(e, `updating ${this.ref}`);
    }
  }
}

function snapshot(secret: V1Secret): SecretSnapshot {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) data[k] = Buffer.from(v, 'base64').toString('utf8');
  return { resourceVersion: secret.metadata?.resourceVersion ?? '', data };
}

function encode(data: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')]));
}
