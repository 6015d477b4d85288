// The informer and controller against a real kube-apiserver: events for core objects and CRDs,
// label selectors, a quiet watch that outlives client-node's 30s abort, and convergence after
// the API server restarts (which cuts every watch) with changes made while we were cut off.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  ApiextensionsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Registry } from 'prom-client';
import { Client } from '../../lib/runtime/client/index.js';
import { Controller } from '../../lib/runtime/controller.js';
import { Informer, resourcePath, type InformerOptions } from '../../lib/runtime/informer/index.js';
import { Logger } from '../../lib/runtime/log.js';
import { envtest, restartApiServer } from '../envtest/state.js';
import { samples } from '../unit/runtime/metric-values.js';

const SLOW = 120_000; // bound for waits on the API server; never a speed assertion
const state = envtest();
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(state.kubeconfigPath);
const core = kubeConfig.makeApiClient(CoreV1Api);
const logger = new Logger({ test: 'runtime-informer' }, 'warn');
const suffix = randomBytes(3).toString('hex');
const ns = `informer-${suffix}`;
const otherNs = `informer-other-${suffix}`;
const informers: Array<Informer<KubernetesObject>> = [];

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = SLOW): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function informer<T extends KubernetesObject>(options: Omit<InformerOptions<T>, 'logger' | 'kubeConfig' | 'registry'>) {
  const registry = new Registry();
  const inf = new Informer<T>({ kubeConfig, logger, registry, ...options });
  informers.push(inf as unknown as Informer<KubernetesObject>);
  const events: string[] = [];
  inf.addEventHandler({
    onAdd: (o) => events.push(`add ${o.metadata?.name}`),
    onUpdate: (_old, o) => events.push(`update ${o.metadata?.name}`),
    onDelete: (o) => events.push(`delete ${o.metadata?.name}`),
  });
  return { inf, events, registry };
}

const configMap = (name: string, data: Record<string, string> = {}, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  data,
});

beforeAll(async () => {
  for (const name of [ns, otherNs]) await core.createNamespace({ body: { metadata: { name } } });
});

afterAll(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

describe('Informer on a real API server', () => {
  it('delivers add, update and delete for core objects and keeps the cache equal to the server', async () => {
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('before-start', { v: '1' }) });
    const { inf, events } = informer<V1ConfigMap>({
      path: resourcePath({ version: 'v1', plural: 'configmaps', namespace: ns }),
    });
    await inf.start();
    await inf.waitForSync();
    expect(events).toContain('add before-start');

    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('created', { v: '1' }) });
    await core.replaceNamespacedConfigMap({
      name: 'before-start',
      namespace: ns,
      body: configMap('before-start', { v: '2' }),
    });
    await core.deleteNamespacedConfigMap({ name: 'created', namespace: ns });
    await until('all three events', () =>
      ['add created', 'update before-start', 'delete created'].every((e) => events.includes(e)),
    );
    expect(inf.store.getByName('before-start', ns)?.data).toEqual({ v: '2' });
    expect(inf.store.getByName('created', ns)).toBeUndefined();
    expect(inf.store.getByName('before-start', ns)?.kind).toBe('ConfigMap');
  });

  it('honours label selectors', async () => {
    const { inf, events } = informer<V1ConfigMap>({
      path: resourcePath({ version: 'v1', plural: 'configmaps', namespace: ns }),
      labelSelector: 'pick=me',
    });
    await inf.start();
    await inf.waitForSync();
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('ignored', {}, { pick: 'not-me' }) });
    await core.createNamespacedConfigMap({ namespace: ns, body: configMap('picked', {}, { pick: 'me' }) });
    await until('the selected object', () => events.includes('add picked'));
    expect(events).not.toContain('add ignored');
    expect(inf.store.keys()).toEqual([`${ns}/picked`]);
  });

  it('watches custom resources across all namespaces', async () => {
    const group = `t${suffix}.kruise.io`;
    const ext = kubeConfig.makeApiClient(ApiextensionsV1Api);
    await ext.createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    });
    await until('the CRD to be established', async () => {
      const crd = await ext.readCustomResourceDefinition({ name: `widgets.${group}` });
      return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
    const { inf, events } = informer<KubernetesObject & { spec?: unknown }>({
      path: resourcePath({ group, version: 'v1', plural: 'widgets' }),
    });
    await inf.start();
    await inf.waitForSync();
    const custom = kubeConfig.makeApiClient(CustomObjectsApi);
    for (const namespace of [ns, otherNs]) {
      await custom.createNamespacedCustomObject({
        group,
        version: 'v1',
        namespace,
        plural: 'widgets',
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' }, spec: { size: 3 } },
      });
    }
    await until('widgets from both namespaces', () => events.filter((e) => e === 'add w').length === 2);
    expect(inf.store.keys().sort()).toEqual([`${ns}/w`, `${otherNs}/w`].sort());
    expect(inf.store.listNamespace(otherNs)[0]).toMatchObject({ kind: 'Widget', spec: { size: 3 } });
  });

  it('keeps a quiet, healthy watch open well past 30s (client-node 2.0.0 aborted those)', async () => {
    const quietNs = `informer-quiet-${suffix}`;
    await core.createNamespace({ body: { metadata: { name: quietNs } } });
    const { inf, events, registry } = informer<V1ConfigMap>({
      path: resourcePath({ version: 'v1', plural: 'configmaps', namespace: quietNs }),
      watchTimeoutSeconds: 600,
    });
    await inf.start();
    await inf.waitForSync();
    await sleep(40_000);
    await core.createNamespacedConfigMap({ namespace: quietNs, body: configMap('still-listening') });
    await until('an event on the long-lived watch', () => events.includes('add still-listening'));
    const restarts = (await samples(registry, 'informer_watch_restarts_total')).reduce((n, s) => n + s.value, 0);
    expect(restarts).toBe(0);
    expect(inf.health().healthy).toBe(true);
  }, 90_000);

  it.each(['graceful', 'kill'] as const)(
    'converges after a %s API server restart, including changes made while it was cut off',
    async (mode) => {
      const restartNs = `informer-restart-${mode}-${suffix}`;
      await core.createNamespace({ body: { metadata: { name: restartNs } } });
      for (const name of ['keep', 'change', 'remove']) {
        await core.createNamespacedConfigMap({ namespace: restartNs, body: configMap(name, { v: '1' }) });
      }
      // A long first backoff leaves a window after the restart in which we make changes unseen.
      const { inf, events, registry } = informer<V1ConfigMap>({
        path: resourcePath({ version: 'v1', plural: 'configmaps', namespace: restartNs }),
        backoff: { initialMs: 4000, maxMs: 8000 },
      });
      await inf.start();
      await inf.waitForSync();
      events.length = 0;

      await restartApiServer(mode);
      await core.replaceNamespacedConfigMap({
        name: 'change',
        namespace: restartNs,
        body: configMap('change', { v: '2' }),
      });
      await core.deleteNamespacedConfigMap({ name: 'remove', namespace: restartNs });
      await core.createNamespacedConfigMap({ namespace: restartNs, body: configMap('new', { v: '1' }) });

      const serverState = async () =>
        Object.fromEntries(
          (await core.listNamespacedConfigMap({ namespace: restartNs })).items.map((c) => [
            c.metadata?.name,
            c.data ?? {},
          ]),
        );
      const cacheState = () => Object.fromEntries(inf.store.list().map((c) => [c.metadata?.name, c.data ?? {}]));
      const expected = await serverState();
      await until('the cache to converge', () => JSON.stringify(cacheState()) === JSON.stringify(expected));
      expect(cacheState()).toEqual(expected);
      expect(events.sort()).toEqual(expect.arrayContaining(['add new', 'delete remove', 'update change']));
      expect(events).not.toContain('update keep'); // unchanged objects make no noise after a relist
      const restarts = (await samples(registry, 'informer_watch_restarts_total')).reduce((n, s) => n + s.value, 0);
      expect(restarts).toBeGreaterThan(0);

      // And it keeps following new changes on the re-established watch.
      await core.createNamespacedConfigMap({ namespace: restartNs, body: configMap('after-restart') });
      await until('an event after the restart', () => events.includes('add after-restart'));
      expect(inf.health().healthy).toBe(true);
    },
    SLOW * 2,
  );
});

describe('Informer behind a connection that goes silent', () => {
  it(
    'detects the stalled watch, re-watches, and catches up on what it missed',
    async () => {
      const proxy = await BlackholeProxy.start(new URL(state.server));
      const viaProxy = new KubeConfig();
      viaProxy.loadFromFile(state.kubeconfigPath);
      // The serving certificate covers 127.0.0.1 whatever the port, so TLS passes straight through.
      viaProxy.clusters = viaProxy.clusters.map((c) => ({ ...c, server: `https://127.0.0.1:${proxy.port}` }));
      const stallNs = `informer-stall-${suffix}`;
      await core.createNamespace({ body: { metadata: { name: stallNs } } });
      const registry = new Registry();
      const inf = new Informer<V1ConfigMap>({
        kubeConfig: viaProxy,
        logger,
        registry,
        path: resourcePath({ version: 'v1', plural: 'configmaps', namespace: stallNs }),
        watchTimeoutSeconds: 60,
        stallTimeoutMs: 5_000,
        backoff: { initialMs: 200, maxMs: 1_000 },
      });
      informers.push(inf as unknown as Informer<KubernetesObject>);
      try {
        await inf.start();
        await inf.waitForSync();
        await sleep(500); // let the watch connect
        proxy.freezeOpenConnections(); // no FIN, no RST: the stream just stops, as behind a dead LB
        await core.createNamespacedConfigMap({ namespace: stallNs, body: configMap('sent-into-the-void') });
        await until(
          'the missed object after the re-watch',
          () => inf.store.getByName('sent-into-the-void', stallNs) !== undefined,
          60_000,
        );
        const stalled = (await samples(registry, 'informer_watch_restarts_total')).find(
          (x) => x.labels.reason === 'stalled',
        );
        expect(stalled?.value).toBeGreaterThanOrEqual(1);
      } finally {
        await inf.stop();
        proxy.close();
      }
    },
    SLOW,
  );
});

/** A TCP proxy whose open connections can be frozen: kept open, but nothing flows any more. */
class BlackholeProxy {
  private readonly sockets = new Set<Socket>();
  private frozen = new Set<Socket>();
  private readonly server: Server;
  port = 0;

  private constructor(target: URL) {
    this.server = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      for (const [from, to] of [
        [client, upstream],
        [upstream, client],
      ] as const) {
        from.on('data', (chunk) => {
          if (!this.frozen.has(from)) to.write(chunk);
        });
        from.on('error', () => to.destroy());
        from.on('close', () => {
          to.destroy();
          this.sockets.delete(from);
        });
        this.sockets.add(from);
      }
    });
  }

  static async start(target: URL): Promise<BlackholeProxy> {
    const proxy = new BlackholeProxy(target);
    await new Promise<void>((r) => proxy.server.listen(0, '127.0.0.1', r));
    proxy.port = (proxy.server.address() as AddressInfo).port;
    return proxy;
  }

  freezeOpenConnections(): void {
    this.frozen = new Set(this.sockets);
  }

  close(): void {
    for (const s of this.sockets) s.destroy();
    this.server.close();
  }
}

describe('Controller fed by an informer on a real API server', () => {
  it('reconciles every object, and again when it changes', async () => {
    const ctrlNs = `controller-${suffix}`;
    await core.createNamespace({ body: { metadata: { name: ctrlNs } } });
    const { inf } = informer<V1ConfigMap>({
      path: resourcePath({ version: 'v1', plural: 'configmaps', namespace: ctrlNs }),
    });
    const reconciled: string[] = [];
    const controller = new Controller({
      name: 'configmap-test',
      workers: 2,
      logger,
      client: new Client(kubeConfig),
      reconcile: async (req) => {
        const cm = inf.store.getByName(req.name, req.namespace);
        reconciled.push(`${req.name}=${cm?.data?.v ?? 'gone'}`);
      },
    });
    controller.watch(inf);
    await inf.start();
    await controller.start();
    try {
      await core.createNamespacedConfigMap({ namespace: ctrlNs, body: configMap('a', { v: '1' }) });
      await until('a reconciled', () => reconciled.includes('a=1'));
      await core.replaceNamespacedConfigMap({ name: 'a', namespace: ctrlNs, body: configMap('a', { v: '2' }) });
      await until('a reconciled after its update', () => reconciled.includes('a=2'));
      await core.deleteNamespacedConfigMap({ name: 'a', namespace: ctrlNs });
      await until('a reconciled after its deletion', () => reconciled.includes('a=gone'));
    } finally {
      await controller.stop();
    }
  });
});
