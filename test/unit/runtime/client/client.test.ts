// The public typed client against a local HTTP server: the path each verb builds from a Kind, its query and body,
// the Content-Type of each patch language, errors as StatusError with the Status reason, and the write guard: a
// client guarded by a LeaderElector, by a Manager's leader election and by a stopping Controller sends no write.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { Client, defineKind, Kinds, kindPath, type Kind } from '../../../../lib/runtime/client/index.js';
import { FakeClock, settle } from '../../../../lib/runtime/clock.js';
import { Controller, type ReconcileContext } from '../../../../lib/runtime/controller.js';
import {
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
  reasonOf,
  StatusError,
} from '../../../../lib/runtime/kube/errors.js';
import { LeaderElector, LeadershipLostError, LeaseLock } from '../../../../lib/runtime/leader/index.js';
import { Logger } from '../../../../lib/runtime/log.js';
import { Manager } from '../../../../lib/runtime/manager.js';
import { parseOptions, type ManagerOptions } from '../../../../lib/runtime/options.js';
import { localKubeConfig } from '../kube/local-kubeconfig.js';
import { FakeLeaseServer } from '../leader/fake-lease-api.js';

interface Seen {
  method: string;
  url: URL;
  contentType?: string;
  body: unknown;
}
type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const echo: Handler = (req, res) =>
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Echo', method: req.method }));
let handler: Handler = echo;
let seen: Seen[] = [];
let server: Server;
let kubeConfig: KubeConfig;
let client: Client;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      seen.push({
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://localhost'),
        contentType: req.headers['content-type'],
        body: text ? JSON.parse(text) : undefined,
      });
      handler(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  kubeConfig = localKubeConfig(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  client = new Client(kubeConfig);
});

beforeEach(() => {
  handler = echo;
  seen = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const last = () => seen[seen.length - 1];
const where = (s: Seen) => `${s.method} ${s.url.pathname}${s.url.search}`;
const answer =
  (code: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) =>
    res
      .writeHead(code, { 'content-type': 'application/json', ...headers })
      .end(typeof body === 'string' ? body : JSON.stringify(body));
const status = (code: number, reason: string, message = `${reason}!`) => ({
  kind: 'Status',
  apiVersion: 'v1',
  status: 'Failure',
  code,
  reason,
  message,
});

interface Widget {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  spec?: { size?: number };
  status?: { ready?: boolean };
}
const Widget: Kind<Widget> = defineKind<Widget>({
  group: 'example.com',
  version: 'v1alpha1',
  kind: 'Widget',
  plural: 'widgets',
  namespaced: true,
});
const Cluster = defineKind({
  group: 'example.com',
  version: 'v1',
  kind: 'Cluster',
  plural: 'clusters',
  namespaced: false,
});

describe('paths from Kinds', () => {
  it('core, grouped, namespaced and cluster-scoped kinds, collections, objects and subresources', () => {
    expect(kindPath(Kinds.ConfigMap, { namespace: 'ns', name: 'a' })).toBe('/api/v1/namespaces/ns/configmaps/a');
    expect(kindPath(Kinds.ConfigMap)).toBe('/api/v1/configmaps');
    expect(kindPath(Kinds.Namespace, { name: 'ns' })).toBe('/api/v1/namespaces/ns');
    expect(kindPath(Kinds.Deployment, { namespace: 'ns' })).toBe('/apis/apps/v1/namespaces/ns/deployments');
    expect(kindPath(Kinds.Lease, { namespace: 'n', name: 'l' })).toBe(
      '/apis/coordination.k8s.io/v1/namespaces/n/leases/l',
    );
    expect(kindPath(Kinds.CustomResourceDefinition, { name: 'x.example.com' })).toBe(
      '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com',
    );
    expect(kindPath(Widget, { namespace: 'ns', name: 'w', subresource: 'status' })).toBe(
      '/apis/example.com/v1alpha1/namespaces/ns/widgets/w/status',
    );
    expect(kindPath(Cluster, { name: 'c' })).toBe('/apis/example.com/v1/clusters/c');
    // Names are path segments: a slash or a space cannot reach another path.
    expect(kindPath(Kinds.Secret, { namespace: 'n s', name: '../x' })).toBe('/api/v1/namespaces/n%20s/secrets/..%2Fx');
  });

  it('refuses a namespace on a cluster-scoped kind, none on a namespaced object, and an empty name', () => {
    expect(() => kindPath(Kinds.Namespace, { namespace: 'ns', name: 'x' })).toThrow(/cluster-scoped/);
    expect(() => kindPath(Kinds.Pod, { name: 'p' })).toThrow(/namespaced: pass the namespace/);
    expect(() => kindPath(Kinds.Pod, { namespace: 'ns', name: '' })).toThrow(/name is empty/);
    expect(() => kindPath(Kinds.Pod, { namespace: 'ns', subresource: 'status' })).toThrow(/needs a name/);
  });

  it('the built-in kinds carry their apiVersion, and every plural is the lower-case plural the API serves', () => {
    expect(Kinds.Pod.apiVersion).toBe('v1');
    expect(Kinds.Deployment.apiVersion).toBe('apps/v1');
    expect(Kinds.Event).toMatchObject({ group: '', plural: 'events', namespaced: true });
    for (const [name, kind] of Object.entries(Kinds)) {
      expect(kind.kind).toBe(name);
      expect(kind.plural.startsWith(name.toLowerCase().slice(0, 4))).toBe(true);
    }
  });

  it('defineKind refuses what the API server could not serve', () => {
    const spec = { group: 'example.com', version: 'v1', kind: 'Thing', plural: 'things', namespaced: true };
    expect(defineKind(spec).apiVersion).toBe('example.com/v1');
    expect(() => defineKind({ ...spec, plural: 'Things' })).toThrow(/plural "Things"/);
    expect(() => defineKind({ ...spec, group: 'Example.com' })).toThrow(/group/);
    expect(() => defineKind({ ...spec, version: '' })).toThrow(/version/);
    expect(() => defineKind({ ...spec, kind: 'my-thing' })).toThrow(/kind/);
    expect(() => defineKind({ ...spec, namespaced: undefined as unknown as boolean })).toThrow(/namespaced/);
  });
});

describe('verbs', () => {
  it('get, getStatus and list: GET on the object, its status or the collection, with selectors and paging', async () => {
    expect(await client.get(Kinds.ConfigMap, 'a', { namespace: 'ns' })).toEqual({ kind: 'Echo', method: 'GET' });
    await client.getStatus(Widget, 'w', { namespace: 'ns' });
    await client.list(Kinds.Pod, {
      namespace: 'ns',
      labelSelector: 'app=web,tier in (a,b)',
      fieldSelector: 'status.phase!=Running',
      limit: 50,
      continue: 'tok',
      resourceVersion: '0',
    });
    await client.list(Kinds.Pod);
    expect(seen.map(where)).toEqual([
      'GET /api/v1/namespaces/ns/configmaps/a',
      'GET /apis/example.com/v1alpha1/namespaces/ns/widgets/w/status',
      'GET /api/v1/namespaces/ns/pods?labelSelector=app%3Dweb%2Ctier+in+%28a%2Cb%29&fieldSelector=status.phase%21%3DRunning&limit=50&continue=tok&resourceVersion=0',
      'GET /api/v1/pods',
    ]);
    expect(seen.every((s) => s.body === undefined)).toBe(true);
  });

  it('create and update send the object, with apiVersion and kind from the Kind, to the collection or the object', async () => {
    const cm: V1ConfigMap = { metadata: { name: 'a', namespace: 'ns' }, data: { k: 'v' } };
    await client.create(Kinds.ConfigMap, cm, { fieldManager: 'me', dryRun: true });
    expect(where(last())).toBe('POST /api/v1/namespaces/ns/configmaps?fieldManager=me&dryRun=All');
    expect(last().body).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', ...cm });
    expect(last().contentType).toBe('application/json');
    await client.update(Widget, { metadata: { name: 'w', namespace: 'ns', resourceVersion: '7' }, spec: { size: 2 } });
    expect(where(last())).toBe('PUT /apis/example.com/v1alpha1/namespaces/ns/widgets/w');
    expect(last().body).toEqual({
      apiVersion: 'example.com/v1alpha1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'ns', resourceVersion: '7' },
      spec: { size: 2 },
    });
    await client.updateStatus(Widget, { metadata: { name: 'w', namespace: 'ns' }, status: { ready: true } });
    expect(where(last())).toBe('PUT /apis/example.com/v1alpha1/namespaces/ns/widgets/w/status');
    await client.create(Kinds.Namespace, { metadata: { name: 'fresh' } });
    expect(where(last())).toBe('POST /api/v1/namespaces');
  });

  it('refuses, before sending, an object of another kind, a namespaced object without namespace, an update without name', async () => {
    await expect(
      client.create(Kinds.Secret, { kind: 'ConfigMap', metadata: { name: 'a', namespace: 'n' } }),
    ).rejects.toThrow(/kind ConfigMap was passed with Kind Secret/);
    await expect(client.create(Kinds.Secret, { metadata: { name: 'a' } })).rejects.toThrow(/set metadata.namespace/);
    await expect(client.update(Kinds.Secret, { metadata: { namespace: 'n' } })).rejects.toThrow(/no metadata.name/);
    await expect(client.get(Kinds.Secret, 'a')).rejects.toThrow(TypeError);
    expect(seen).toEqual([]);
  });

  it('each patch language goes with its Content-Type; apply needs a field manager and alone may force', async () => {
    await client.patch(Kinds.ConfigMap, 'a', { type: 'merge', body: { data: { k: null } } }, { namespace: 'ns' });
    await client.patch(
      Kinds.Deployment,
      'd',
      { type: 'strategicMerge', body: { spec: { replicas: 2 } } },
      { namespace: 'ns' },
    );
    await client.patch(
      Kinds.Pod,
      'p',
      { type: 'json', body: [{ op: 'test', path: '/metadata/resourceVersion', value: '5' }] },
      { namespace: 'ns' },
    );
    await client.patch(
      Widget,
      'w',
      { type: 'apply', body: { metadata: { name: 'w', namespace: 'ns' }, spec: { size: 3 } } },
      { namespace: 'ns', fieldManager: 'widget-controller', force: true },
    );
    await client.patchStatus(Widget, 'w', { type: 'merge', body: { status: { ready: true } } }, { namespace: 'ns' });
    expect(seen.map((s) => [where(s), s.contentType])).toEqual([
      ['PATCH /api/v1/namespaces/ns/configmaps/a', 'application/merge-patch+json'],
      ['PATCH /apis/apps/v1/namespaces/ns/deployments/d', 'application/strategic-merge-patch+json'],
      ['PATCH /api/v1/namespaces/ns/pods/p', 'application/json-patch+json'],
      [
        'PATCH /apis/example.com/v1alpha1/namespaces/ns/widgets/w?fieldManager=widget-controller&force=true',
        'application/apply-patch+yaml',
      ],
      ['PATCH /apis/example.com/v1alpha1/namespaces/ns/widgets/w/status', 'application/merge-patch+json'],
    ]);
    expect(seen[0].body).toEqual({ data: { k: null } }); // a merge patch is sent as written
    expect(seen[2].body).toEqual([{ op: 'test', path: '/metadata/resourceVersion', value: '5' }]);
    expect(seen[3].body).toEqual({
      apiVersion: 'example.com/v1alpha1',
      kind: 'Widget',
      metadata: { name: 'w', namespace: 'ns' },
      spec: { size: 3 },
    });
    seen = [];
    await expect(client.patch(Widget, 'w', { type: 'apply', body: {} }, { namespace: 'ns' })).rejects.toThrow(
      /needs options.fieldManager/,
    );
    await expect(
      client.patch(Widget, 'w', { type: 'merge', body: {} }, { namespace: 'ns', force: true, fieldManager: 'm' }),
    ).rejects.toThrow(/force is for server-side apply/);
    await expect(client.patch(Widget, 'w', { type: 'yaml' as 'merge', body: {} }, { namespace: 'ns' })).rejects.toThrow(
      /unknown patch type "yaml"/,
    );
    expect(seen).toEqual([]);
  });

  it('delete sends DeleteOptions with the propagation policy, grace period and preconditions', async () => {
    await client.delete(Kinds.Deployment, 'd', {
      namespace: 'ns',
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u-1', resourceVersion: '9' },
      dryRun: true,
    });
    expect(where(last())).toBe('DELETE /apis/apps/v1/namespaces/ns/deployments/d?dryRun=All');
    expect(last().body).toEqual({
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u-1', resourceVersion: '9' },
    });
    await client.delete(Kinds.Namespace, 'gone');
    expect(where(last())).toBe('DELETE /api/v1/namespaces/gone');
  });
});

describe('errors', () => {
  const failure = async (h: Handler) => {
    handler = h;
    return client.get(Kinds.ConfigMap, 'a', { namespace: 'ns' }).then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e,
    );
  };

  it('a Status answer is a StatusError with its code, reason and message, and the helper of its reason says so', async () => {
    const cases: Array<[number, string, (e: unknown) => boolean]> = [
      [404, 'NotFound', isNotFound],
      [409, 'Conflict', isConflict],
      [409, 'AlreadyExists', isAlreadyExists],
      [422, 'Invalid', isInvalid],
      [403, 'Forbidden', isForbidden],
      [401, 'Unauthorized', isUnauthorized],
      [429, 'TooManyRequests', isTooManyRequests],
    ];
    const helpers = cases.map(([, , helper]) => helper);
    for (const [code, reason, helper] of cases) {
      const e = await failure(answer(code, status(code, reason)));
      expect(e).toBeInstanceOf(StatusError);
      const err = e as StatusError;
      expect([err.code, err.reason, err.status?.message, reasonOf(err)]).toEqual([code, reason, `${reason}!`, reason]);
      expect(err.message).toContain(`HTTP ${code}: ${reason}!`);
      // Exactly its own helper: AlreadyExists is a 409 but not a Conflict, and the reverse.
      expect(helpers.map((h) => h(err))).toEqual(helpers.map((h) => h === helper));
    }
  });

  it('without a Status (a proxy page) the HTTP code decides, except where it is ambiguous', async () => {
    const notFound = await failure(answer(404, '<html>no</html>'));
    expect([(notFound as StatusError).reason, reasonOf(notFound), isNotFound(notFound)]).toEqual(['', undefined, true]);
    const conflict = await failure(answer(409, 'plain'));
    expect([isConflict(conflict), isAlreadyExists(conflict)]).toEqual([true, false]);
    // A reason the helpers do not know, on a 404: still NotFound by its code, as apimachinery's IsNotFound.
    const odd = await failure(answer(404, status(404, 'SomethingNew')));
    expect([reasonOf(odd), isNotFound(odd)]).toEqual(['SomethingNew', true]);
    // Errors not from the API server, and plain objects with a code (the runtime's fakes), read by code too.
    expect([isNotFound(new Error('x')), isNotFound({ code: 404 }), isConflict({ statusCode: 409 })]).toEqual([
      false,
      true,
      true,
    ]);
  });
});

describe('write guard', () => {
  const cm = (name: string): V1ConfigMap => ({ metadata: { name, namespace: 'ns' } });

  it('a guard that throws refuses every write before it is sent; reads go on', async () => {
    let allowed = true;
    const order: string[] = [];
    const guarded = client
      .withGuard(() => {
        order.push('first');
      })
      .withGuard(() => {
        order.push('second');
        if (!allowed) throw new Error('not now');
      });
    await guarded.create(Kinds.ConfigMap, cm('a'));
    expect(order).toEqual(['first', 'second']);
    allowed = false;
    seen = [];
    const writes = [
      guarded.create(Kinds.ConfigMap, cm('b')),
      guarded.update(Kinds.ConfigMap, cm('b')),
      guarded.updateStatus(Widget, { metadata: { name: 'w', namespace: 'ns' } }),
      guarded.patch(Kinds.ConfigMap, 'b', { type: 'merge', body: {} }, { namespace: 'ns' }),
      guarded.patchStatus(Widget, 'w', { type: 'merge', body: {} }, { namespace: 'ns' }),
      guarded.delete(Kinds.ConfigMap, 'b', { namespace: 'ns' }),
    ];
    for (const w of writes) await expect(w).rejects.toThrow('not now');
    expect(seen).toEqual([]);
    await guarded.get(Kinds.ConfigMap, 'b', { namespace: 'ns' });
    await guarded.list(Kinds.ConfigMap, { namespace: 'ns' });
    expect(seen.map((s) => s.method)).toEqual(['GET', 'GET']);
    // The unguarded client it came from is unaffected.
    await client.delete(Kinds.ConfigMap, 'b', { namespace: 'ns' });
    expect(last().method).toBe('DELETE');
  });

  it('guarded by a LeaderElector: writes while it leads, none once it cannot renew its Lease', async () => {
    const clock = new FakeClock();
    const leases = new FakeLeaseServer();
    const leaseClient = leases.client();
    const elector = new LeaderElector({
      lock: new LeaseLock(leaseClient, 'kruise-system', 'lease'),
      identity: 'a',
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      callbacks: { onStartedLeading: () => undefined, onStoppedLeading: () => undefined },
      logger: new Logger({}, 'error', { write: () => undefined }),
      registry: new Registry(),
      clock,
    });
    const guarded = client.withGuard(() => elector.checkStillLeader());
    await expect(guarded.create(Kinds.ConfigMap, cm('early'))).rejects.toBeInstanceOf(LeadershipLostError);
    await elector.start();
    await settle();
    expect(elector.isLeader()).toBe(true);
    await guarded.create(Kinds.ConfigMap, cm('leading'));
    expect(where(last())).toBe('POST /api/v1/namespaces/ns/configmaps');
    seen = [];
    leaseClient.partitioned = true; // renewals fail from now on
    await clock.advance(20_000);
    expect(elector.isLeader()).toBe(false);
    await expect(guarded.create(Kinds.ConfigMap, cm('late'))).rejects.toBeInstanceOf(LeadershipLostError);
    await expect(
      guarded.patch(Kinds.ConfigMap, 'late', { type: 'merge', body: {} }, { namespace: 'ns' }),
    ).rejects.toThrow(/cannot prove it still holds the lease/);
    expect(seen).toEqual([]);
    await elector.stop({ release: false });
  });

  describe('in a Manager and its controllers', () => {
    const controllers: Controller[] = [];
    afterEach(async () => {
      await Promise.all(controllers.splice(0).map((c) => c.stop()));
    });

    /** A Manager whose controller creates a ConfigMap on each reconcile; resolves with the reconcile's outcome. */
    const reconcileOnce = async (argv: string[]) => {
      const manager = new Manager({
        options: parseOptions(
          argv,
          { POD_NAMESPACE: 'kruise-system', POD_NAME: 'mgr-0' },
          { controllers: ['writer'] },
        ) as ManagerOptions,
        kubeConfig,
        logger: new Logger({}, 'error', { write: () => undefined }),
        clock: new FakeClock(),
        onExit: () => undefined,
      });
      let done!: (outcome: unknown) => void;
      const outcome = new Promise<unknown>((r) => (done = r));
      let context: ReconcileContext | undefined;
      const controller = manager.addController({
        name: 'writer',
        reconcile: async (request, ctx) => {
          context = ctx;
          await ctx.client.create(Kinds.ConfigMap, cm(request.name)).then(done, done);
        },
      })!;
      controllers.push(controller);
      // Started directly (no manager.start): as in a replica that is not, or no longer, the leader.
      await controller.start();
      controller.enqueue({ name: 'from-reconcile' });
      return { manager, controller, outcome: await outcome, context: context! };
    };

    it('with leader election, a replica that does not hold the Lease writes nothing through ctx.client', async () => {
      const { manager, outcome } = await reconcileOnce([]);
      expect(manager.elector).toBeDefined();
      expect(outcome).toBeInstanceOf(LeadershipLostError);
      expect(seen).toEqual([]);
      // manager.client is not guarded by leader election (webhooks run on every replica).
      await manager.client.create(Kinds.ConfigMap, cm('from-webhook'));
      expect(where(last())).toBe('POST /api/v1/namespaces/ns/configmaps');
    });

    it('without leader election the write goes out; once the controller stops, ctx.client writes no more', async () => {
      const { controller, outcome, context } = await reconcileOnce(['--enable-leader-election=false']);
      expect(outcome).toEqual({ kind: 'Echo', method: 'POST' });
      expect(where(last())).toBe('POST /api/v1/namespaces/ns/configmaps');
      seen = [];
      await controller.stop();
      await expect(context.client.delete(Kinds.ConfigMap, 'x', { namespace: 'ns' })).rejects.toThrow(/writer stopping/);
      expect(seen).toEqual([]);
    });
  });
});
