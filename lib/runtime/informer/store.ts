import type { KubernetesObject } from '@kubernetes/client-node';

/** Values an object is indexed under (for example its namespace, or the names it references). */
export type IndexFunc<T> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';

/** `namespace/name`, or `name` for cluster-scoped objects; undefined when the object has no name. */
export function objectKey(obj: KubernetesObject): string | undefined {
  const name = obj?.metadata?.name;
  if (typeof name !== 'string' || name === '') return undefined;
  const namespace = obj.metadata?.namespace;
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}/${name}` : name;
}

export type Delta<T> = { type: 'add'; obj: T } | { type: 'update'; oldObj: T; obj: T } | { type: 'delete'; obj: T };

/**
 * The informer's cache: objects by `namespace/name`, plus secondary indexes. Objects are deeply
 * frozen on the way in, because every reader shares them: a reconciler that mutates a cached
 * object gets a TypeError instead of silently corrupting the cache (clone with structuredClone).
 */
export class Store<T extends KubernetesObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  private readonly indices = new Map<string, Map<string, Set<string>>>();
  /** What each key was indexed under, so unindexing never depends on re-running index functions. */
  private readonly indexedUnder = new Map<string, Map<string, string[]>>();

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    this.addIndexer(NAMESPACE_INDEX, (obj) => (obj.metadata?.namespace ? [obj.metadata.namespace] : []));
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  /** Adds an index and indexes what is already cached. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (this.indexers.has(name)) throw new Error(`index ${JSON.stringify(name)} already exists`);
    this.indexers.set(name, fn);
    this.indices.set(name, new Map());
    for (const [key, obj] of this.objects) this.indexOne(name, fn, key, obj);
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  getByName(name: string, namespace?: string): T | undefined {
    return this.objects.get(namespace ? `${namespace}/${name}` : name);
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  listNamespace(namespace: string): T[] {
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  /** Objects whose index function returned `value` for index `indexName`. */
  byIndex(indexName: string, value: string): T[] {
    const index = this.indices.get(indexName);
    if (!index)
      throw new Error(`no index named ${JSON.stringify(indexName)}; known: ${[...this.indexers.keys()].join(', ')}`);
    const keys = index.get(value);
    return keys ? [...keys].map((k) => this.objects.get(k) as T) : [];
  }

  /** Inserts or replaces; returns the previous object. Objects without a name are ignored. */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    if (key === undefined) return undefined;
    const old = this.objects.get(key);
    if (old) this.unindex(key);
    deepFreeze(obj);
    this.objects.set(key, obj);
    for (const [name, fn] of this.indexers) this.indexOne(name, fn, key, obj);
    return old;
  }

  delete(key: string): T | undefined {
    const old = this.objects.get(key);
    if (!old) return undefined;
    this.unindex(key);
    this.objects.delete(key);
    return old;
  }

  /**
   * Makes the cache equal to `objs` (a fresh list) and returns what changed. Unchanged objects
   * (same resourceVersion) produce nothing, so a relist after a reconnect does not flood
   * handlers; an object recreated under the same name (new uid) is a delete plus an add.
   */
  replace(objs: T[]): Array<Delta<T>> {
    const deltas: Array<Delta<T>> = [];
    const seen = new Set<string>();
    for (const obj of objs) {
      const key = objectKey(obj);
      if (key === undefined || seen.has(key)) continue;
      seen.add(key);
      const old = this.upsert(obj);
      if (!old) deltas.push({ type: 'add', obj });
      else if (old.metadata?.uid !== obj.metadata?.uid) deltas.push({ type: 'delete', obj: old }, { type: 'add', obj });
      else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
        deltas.push({ type: 'update', oldObj: old, obj });
    }
    for (const key of this.keys()) {
      if (seen.has(key)) continue;
      const old = this.delete(key);
      if (old) deltas.push({ type: 'delete', obj: old });
    }
    return deltas;
  }

  private indexOne(name: string, fn: IndexFunc<T>, key: string, obj: T): void {
    const index = this.indices.get(name) as Map<string, Set<string>>;
    const values = safeIndexValues(fn, obj);
    let byIndex = this.indexedUnder.get(key);
    if (!byIndex) this.indexedUnder.set(key, (byIndex = new Map()));
    byIndex.set(name, values);
    for (const value of values) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string): void {
    for (const [name, values] of this.indexedUnder.get(key) ?? []) {
      const index = this.indices.get(name) as Map<string, Set<string>>;
      for (const value of values) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
    this.indexedUnder.delete(key);
  }
}

// An index function that throws or returns junk on an odd object must not break the cache:
// the object is simply not indexed under that index.
function safeIndexValues<T>(fn: IndexFunc<T>, obj: T): string[] {
  try {
    const values = fn(obj);
    return Array.isArray(values) ? [...new Set(values.filter((v) => typeof v === 'string'))] : [];
  } catch {
    return [];
  }
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const child of Object.values(value)) deepFreeze(child);
}
