import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Store, objectKey, resourcePath } from '../../../../lib/runtime/informer/index.js';
import type { Obj } from './fake-api.js';

const obj = (
  name: string,
  namespace: string | undefined,
  rv = '1',
  uid = `uid-${name}`,
  labels: Record<string, string> = {},
): Obj => ({ metadata: { name, namespace, resourceVersion: rv, uid, labels } });

describe('Store', () => {
  it('keys objects by namespace/name, cluster-scoped ones by name', () => {
    const store = new Store<Obj>();
    store.upsert(obj('a', 'ns1'));
    store.upsert(obj('a', 'ns2'));
    store.upsert(obj('node-1', undefined));
    expect(store.keys().sort()).toEqual(['node-1', 'ns1/a', 'ns2/a']);
    expect(store.getByName('a', 'ns2')?.metadata?.namespace).toBe('ns2');
    expect(store.getByName('node-1')?.metadata?.name).toBe('node-1');
    expect(store.listNamespace('ns1')).toHaveLength(1);
  });

  it('maintains custom indexes across updates and deletes', () => {
    const store = new Store<Obj>({ app: (o) => [o.metadata?.labels?.app ?? ''] });
    store.upsert(obj('a', 'ns', '1', 'u', { app: 'web' }));
    store.upsert(obj('b', 'ns', '1', 'u', { app: 'web' }));
    expect(
      store
        .byIndex('app', 'web')
        .map((o) => o.metadata?.name)
        .sort(),
    ).toEqual(['a', 'b']);
    store.upsert(obj('a', 'ns', '2', 'u', { app: 'db' }));
    expect(store.byIndex('app', 'web').map((o) => o.metadata?.name)).toEqual(['b']);
    expect(store.byIndex('app', 'db').map((o) => o.metadata?.name)).toEqual(['a']);
    store.delete('ns/b');
    expect(store.byIndex('app', 'web')).toEqual([]);
  });

  it('indexes existing objects when an index is added later, and rejects unknown or duplicate indexes', () => {
    const store = new Store<Obj>();
    store.upsert(obj('a', 'ns', '1', 'u', { tier: 'x' }));
    store.addIndexer('tier', (o) => [o.metadata?.labels?.tier ?? '']);
    expect(store.byIndex('tier', 'x')).toHaveLength(1);
    expect(() => store.byIndex('missing', 'x')).toThrow(/no index named "missing"/);
    expect(() => store.addIndexer('tier', () => [])).toThrow(/already exists/);
  });

  it('survives index functions that throw or return junk', () => {
    const store = new Store<Obj>({
      throws: () => {
        throw new Error('bad');
      },
      junk: () => 'not-an-array' as unknown as string[],
    });
    store.upsert(obj('a', 'ns'));
    expect(store.get('ns/a')).toBeDefined();
    expect(store.byIndex('throws', 'x')).toEqual([]);
  });

  it('unindexes by what was indexed, even if the index function is not deterministic', () => {
    let n = 0;
    const store = new Store<Obj>({ counter: () => [String(n++)] });
    store.upsert(obj('a', 'ns'));
    store.delete('ns/a');
    expect(store.byIndex('counter', '0')).toEqual([]);
  });

  it('freezes cached objects so a reader cannot corrupt the cache', () => {
    const store = new Store<Obj>();
    store.upsert(obj('a', 'ns', '1', 'u', { app: 'web' }));
    const cached = store.get('ns/a') as Obj;
    expect(() => {
      (cached.metadata as { labels: Record<string, string> }).labels.app = 'hacked';
    }).toThrow(TypeError);
    const copy = structuredClone(cached);
    copy.metadata!.labels!.app = 'mine';
    expect(store.get('ns/a')?.metadata?.labels?.app).toBe('web');
  });

  it('ignores objects without a name', () => {
    const store = new Store<Obj>();
    expect(store.upsert({ metadata: { namespace: 'ns' } })).toBeUndefined();
    expect(store.upsert({} as Obj)).toBeUndefined();
    expect(store.size).toBe(0);
    expect(objectKey(null as unknown as Obj)).toBeUndefined();
  });

  it('replace() returns only real differences', () => {
    const store = new Store<Obj>();
    store.replace([obj('same', 'ns'), obj('changed', 'ns'), obj('gone', 'ns'), obj('reborn', 'ns', '1', 'old-uid')]);
    const deltas = store.replace([
      obj('same', 'ns'),
      obj('changed', 'ns', '2'),
      obj('reborn', 'ns', '5', 'new-uid'),
      obj('new', 'ns'),
    ]);
    expect(deltas.map((d) => `${d.type} ${d.obj.metadata?.name}`).sort()).toEqual([
      'add new',
      'add reborn',
      'delete gone',
      'delete reborn',
      'update changed',
    ]);
    expect(store.get('ns/reborn')?.metadata?.uid).toBe('new-uid');
  });

  it('property: replaying replace() deltas onto the old state yields the new state', () => {
    const state = fc.dictionary(
      fc.constantFrom('a', 'b', 'c', 'd', 'e'),
      fc.tuple(fc.constantFrom('1', '2'), fc.constantFrom('u1', 'u2')),
    );
    fc.assert(
      fc.property(state, state, (before, after) => {
        const store = new Store<Obj>();
        store.replace(Object.entries(before).map(([n, [rv, uid]]) => obj(n, 'ns', rv, uid)));
        const mirror = new Map(store.list().map((o) => [objectKey(o), o]));
        for (const d of store.replace(Object.entries(after).map(([n, [rv, uid]]) => obj(n, 'ns', rv, uid)))) {
          if (d.type === 'delete') mirror.delete(objectKey(d.obj));
          else mirror.set(objectKey(d.obj), d.obj);
        }
        const summary = (objs: Iterable<Obj>) =>
          [...objs].map((o) => `${o.metadata?.name}:${o.metadata?.resourceVersion}:${o.metadata?.uid}`).sort();
        expect(summary(mirror.values())).toEqual(summary(store.list()));
        expect(summary(store.list())).toEqual(
          summary(Object.entries(after).map(([n, [rv, uid]]) => obj(n, 'ns', rv, uid))),
        );
      }),
    );
  });
});

describe('resourcePath', () => {
  it('builds core, group, namespaced and cluster-wide paths', () => {
    expect(resourcePath({ version: 'v1', plural: 'pods' })).toBe('/api/v1/pods');
    expect(resourcePath({ version: 'v1', plural: 'pods', namespace: 'kube-system' })).toBe(
      '/api/v1/namespaces/kube-system/pods',
    );
    expect(resourcePath({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets' })).toBe(
      '/apis/apps.kruise.io/v1alpha1/sidecarsets',
    );
  });
});
