// The public typed client (kruise-ha-runtime's Client) against a real kube-apiserver + etcd: every verb on
// ConfigMaps and on a custom resource with a status subresource, selectors, dry run, the three patch languages and
// server-side apply (a field conflict, then force), StatusErrors with the API server's reasons, and a real 409
// Conflict retried by retryOnConflict.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import {
  Client,
  defineKind,
  isAlreadyExists,
  isConflict,
  isInvalid,
  isNotFound,
  Kinds,
  retryOnConflict,
  StatusError,
  type Kind,
} from 'kruise-ha-runtime';
import { envtest } from '../envtest/state.js';
import { until } from './support/ha.js';

const SLOW = 60_000; // bound for waits on the API server; never a speed assertion
const kc = new KubeConfig();
kc.loadFromFile(envtest().kubeconfigPath);
const client = new Client(kc);
const suffix = randomBytes(3).toString('hex');
const ns = `client-${suffix}`;
const group = `c${suffix}.example.com`;

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  spec?: { size?: number; color?: string };
  status?: { ready?: boolean; observed?: number };
}
const Widget: Kind<Widget> = defineKind<Widget>({
  group,
  version: 'v1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const crdName = `widgets.${group}`;

const cm = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): V1ConfigMap => ({
  metadata: { name, namespace: ns, ...(labels ? { labels } : {}) },
  data,
});

/** The error `p` rejects with (fails the test if it resolves). */
const rejection = (p: Promise<unknown>) =>
  p.then(
    (v) => {
      throw new Error(`expected a failure, got ${JSON.stringify(v).slice(0, 200)}`);
    },
    (e: unknown) => e,
  );

beforeAll(async () => {
  await client.create(Kinds.Namespace, { metadata: { name: ns } });
  await client.create(Kinds.CustomResourceDefinition, {
    metadata: { name: crdName },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: { size: { type: 'integer', minimum: 0 }, color: { type: 'string' } },
                },
                status: {
                  type: 'object',
                  properties: { ready: { type: 'boolean' }, observed: { type: 'integer' } },
                },
              },
            },
          },
        },
      ],
    },
  });
  await until(
    'the Widget CRD to be established and served',
    async () => {
      const crd = await client.get(Kinds.CustomResourceDefinition, crdName);
      const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      return established && (await client.list(Widget, { namespace: ns })).items !== undefined;
    },
    SLOW,
    100,
  );
}, 90_000);

afterAll(async () => {
  await client.delete(Kinds.CustomResourceDefinition, crdName).catch(() => undefined);
  await client.delete(Kinds.Namespace, ns).catch(() => undefined);
}, 30_000);

describe('ConfigMaps', () => {
  it('create, get, list by label, field and namespace, update, delete; errors carry the reason', async () => {
    const a = await client.create(Kinds.ConfigMap, cm('a', { k: '1' }, { app: 'x' }));
    expect(a).toMatchObject({ apiVersion: 'v1', kind: 'ConfigMap', data: { k: '1' } });
    expect(a.metadata?.resourceVersion).toBeTruthy();
    await client.create(Kinds.ConfigMap, cm('b', {}, { app: 'y' }));

    const taken = await rejection(client.create(Kinds.ConfigMap, cm('a')));
    expect(taken).toBeInstanceOf(StatusError);
    expect([(taken as StatusError).code, (taken as StatusError).reason]).toEqual([409, 'AlreadyExists']);
    expect([isAlreadyExists(taken), isConflict(taken)]).toEqual([true, false]);

    expect((await client.get(Kinds.ConfigMap, 'a', { namespace: ns })).data).toEqual({ k: '1' });
    const names = async (o: Parameters<Client['list']>[1]) =>
      (await client.list(Kinds.ConfigMap, o)).items.map((c) => c.metadata?.name).sort();
    expect(await names({ namespace: ns, labelSelector: 'app=x' })).toEqual(['a']);
    expect(await names({ namespace: ns, labelSelector: 'app in (x,y)' })).toEqual(['a', 'b']);
    expect(await names({ namespace: ns, fieldSelector: 'metadata.name=b' })).toEqual(['b']);
    // Across all namespaces: ours are there, each with its namespace.
    const everywhere = await client.list(Kinds.ConfigMap, { labelSelector: 'app' });
    expect(everywhere.items.filter((c) => c.metadata?.namespace === ns).map((c) => c.metadata?.name)).toHaveLength(2);
    const page = await client.list(Kinds.ConfigMap, { namespace: ns, limit: 1 });
    expect(page.items).toHaveLength(1);
    const rest = await client.list(Kinds.ConfigMap, { namespace: ns, limit: 10, continue: page.metadata!.continue });
    expect(rest.items.length).toBeGreaterThanOrEqual(1); // b (and kube-root-ca.crt, if its controller ran)

    const updated = await client.update(Kinds.ConfigMap, { ...a, data: { k: '2' } });
    expect(updated.data).toEqual({ k: '2' });
    // The object as first read is stale now: a real 409 Conflict.
    const stale = await rejection(client.update(Kinds.ConfigMap, { ...a, data: { k: '3' } }));
    expect([isConflict(stale), (stale as StatusError).reason]).toEqual([true, 'Conflict']);

    const dry = await client.create(Kinds.ConfigMap, cm('dry'), { dryRun: true });
    expect(dry.metadata?.name).toBe('dry');
    expect(isNotFound(await rejection(client.get(Kinds.ConfigMap, 'dry', { namespace: ns })))).toBe(true);

    await client.delete(Kinds.ConfigMap, 'b', { namespace: ns });
    const gone = await rejection(client.get(Kinds.ConfigMap, 'b', { namespace: ns }));
    expect([isNotFound(gone), (gone as StatusError).reason]).toEqual([true, 'NotFound']);
    expect(isNotFound(await rejection(client.delete(Kinds.ConfigMap, 'b', { namespace: ns })))).toBe(true);
  });

  it('merge, strategic merge and JSON patches; a failed JSON Patch test is Invalid', async () => {
    await client.create(Kinds.ConfigMap, cm('p', { keep: '1', drop: '1' }));
    const merged = await client.patch(
      Kinds.ConfigMap,
      'p',
      { type: 'merge', body: { data: { drop: null, added: '1' } } },
      { namespace: ns },
    );
    expect(merged.data).toEqual({ keep: '1', added: '1' });
    const strategic = await client.patch(
      Kinds.ConfigMap,
      'p',
      { type: 'strategicMerge', body: { metadata: { labels: { l: 'v' } } } },
      { namespace: ns },
    );
    expect(strategic.metadata?.labels).toEqual({ l: 'v' });
    const rv = strategic.metadata!.resourceVersion!;
    const json = await client.patch(
      Kinds.ConfigMap,
      'p',
      {
        type: 'json',
        body: [
          { op: 'test', path: '/metadata/resourceVersion', value: rv },
          { op: 'replace', path: '/data/keep', value: '2' },
        ],
      },
      { namespace: ns },
    );
    expect(json.data?.keep).toBe('2');
    const failed = await rejection(
      client.patch(
        Kinds.ConfigMap,
        'p',
        { type: 'json', body: [{ op: 'test', path: '/metadata/resourceVersion', value: rv }] },
        { namespace: ns },
      ),
    );
    expect([isInvalid(failed), (failed as StatusError).code]).toEqual([true, 422]);
  });

  it('server-side apply: fields owned by another manager conflict until forced', async () => {
    const applied = await client.patch(
      Kinds.ConfigMap,
      'ssa',
      { type: 'apply', body: { metadata: { name: 'ssa', namespace: ns }, data: { owned: 'by-a' } } },
      { namespace: ns, fieldManager: 'manager-a' },
    );
    expect(applied.data).toEqual({ owned: 'by-a' });
    const fieldConflict = await rejection(
      client.patch(
        Kinds.ConfigMap,
        'ssa',
        { type: 'apply', body: { metadata: { name: 'ssa', namespace: ns }, data: { owned: 'by-b' } } },
        { namespace: ns, fieldManager: 'manager-b' },
      ),
    );
    expect([isConflict(fieldConflict), (fieldConflict as StatusError).status?.message]).toEqual([
      true,
      expect.stringContaining('manager-a'),
    ]);
    const forced = await client.patch(
      Kinds.ConfigMap,
      'ssa',
      { type: 'apply', body: { metadata: { name: 'ssa', namespace: ns }, data: { owned: 'by-b' } } },
      { namespace: ns, fieldManager: 'manager-b', force: true },
    );
    expect(forced.data).toEqual({ owned: 'by-b' });
    const owners = (forced.metadata?.managedFields ?? []).map((f) => f.manager);
    expect(owners).toContain('manager-b');
    expect(owners).not.toContain('manager-a'); // it owned only that field, now taken
  });

  it('retryOnConflict runs a get-modify-update again after a real 409 from a concurrent writer', async () => {
    await client.create(Kinds.ConfigMap, cm('counter', { n: '0' }));
    let attempts = 0;
    const conflicts: unknown[] = [];
    const result = await retryOnConflict(async () => {
      attempts++;
      const current = await client.get(Kinds.ConfigMap, 'counter', { namespace: ns });
      // Another writer gets in between our read and our write, on the first attempt only.
      if (attempts === 1) {
        await client.patch(
          Kinds.ConfigMap,
          'counter',
          { type: 'merge', body: { data: { other: 'x' } } },
          { namespace: ns },
        );
      }
      try {
        return await client.update(Kinds.ConfigMap, { ...current, data: { ...current.data, n: String(attempts) } });
      } catch (e) {
        conflicts.push(e);
        throw e;
      }
    });
    expect(attempts).toBe(2);
    expect(conflicts).toHaveLength(1);
    expect(isConflict(conflicts[0])).toBe(true);
    expect(result.data).toEqual({ n: '2', other: 'x' }); // the other writer's change survived
  });
});

describe('a custom resource with a status subresource', () => {
  it('create, update, status get/update/patch (ignored by the main resource), apply, list, delete', async () => {
    const created = await client.create(Widget, {
      metadata: { name: 'w', namespace: ns, labels: { tier: 'a' } },
      spec: { size: 1 },
      status: { ready: true }, // dropped: status is written only through its subresource
    });
    expect(created).toMatchObject({ apiVersion: `${group}/v1`, kind: 'Widget', spec: { size: 1 } });
    expect(created.status).toBeUndefined();

    const withStatus = await client.updateStatus(Widget, { ...created, status: { ready: false, observed: 1 } });
    expect(withStatus.status).toEqual({ ready: false, observed: 1 });
    // The main resource ignores status, the status subresource ignores spec.
    const bigger = await client.update(Widget, { ...withStatus, spec: { size: 2 }, status: { ready: true } });
    expect([bigger.spec?.size, bigger.status]).toEqual([2, { ready: false, observed: 1 }]);
    const statusOnly = await client.updateStatus(Widget, { ...bigger, spec: { size: 9 }, status: { ready: true } });
    expect([statusOnly.spec?.size, statusOnly.status?.ready]).toEqual([2, true]);
    expect((await client.getStatus(Widget, 'w', { namespace: ns })).status?.ready).toBe(true);

    const patched = await client.patchStatus(
      Widget,
      'w',
      { type: 'merge', body: { status: { observed: 2 } } },
      { namespace: ns },
    );
    expect(patched.status).toEqual({ ready: true, observed: 2 });
    // Server-side apply of the status by its own field manager, and of the spec.
    const appliedStatus = await client.patchStatus(
      Widget,
      'w',
      { type: 'apply', body: { metadata: { name: 'w', namespace: ns }, status: { observed: 3 } } },
      { namespace: ns, fieldManager: 'widget-status', force: true },
    );
    expect(appliedStatus.status?.observed).toBe(3);
    const appliedSpec = await client.patch(
      Widget,
      'w',
      { type: 'apply', body: { metadata: { name: 'w', namespace: ns }, spec: { color: 'red' } } },
      { namespace: ns, fieldManager: 'widget-spec' },
    );
    expect(appliedSpec.spec).toEqual({ size: 2, color: 'red' });

    // A stale status write is a real Conflict too, and retryOnConflict gets it through.
    const stale = await rejection(client.updateStatus(Widget, { ...created, status: { ready: false } }));
    expect(isConflict(stale)).toBe(true);
    await retryOnConflict(async () => {
      const now = await client.get(Widget, 'w', { namespace: ns });
      return client.updateStatus(Widget, { ...now, status: { ...now.status, ready: false } });
    });

    const invalid = await rejection(
      client.patch(Widget, 'w', { type: 'merge', body: { spec: { size: -1 } } }, { namespace: ns }),
    );
    expect(isInvalid(invalid)).toBe(true);

    await client.create(Widget, { metadata: { name: 'other', namespace: ns, labels: { tier: 'b' } }, spec: {} });
    const tierA = await client.list(Widget, { namespace: ns, labelSelector: 'tier=a' });
    expect(tierA.items.map((w) => [w.metadata?.name, w.status?.ready, w.spec?.color])).toEqual([['w', false, 'red']]);
    expect((await client.list(Widget)).items.map((w) => w.metadata?.name).sort()).toEqual(['other', 'w']);

    await client.delete(Widget, 'w', { namespace: ns, propagationPolicy: 'Background' });
    expect(isNotFound(await rejection(client.get(Widget, 'w', { namespace: ns })))).toBe(true);
    expect(isNotFound(await rejection(client.getStatus(Widget, 'w', { namespace: ns })))).toBe(true);
  });
});
