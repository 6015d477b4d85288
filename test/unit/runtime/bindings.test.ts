// Webhook bindings by kind (manager.when): what a binding registers (the entry the constructs render), what its
// handler admits and patches, which requests its filters leave alone, and the mistakes it refuses when it is built;
// a controller's declared kinds (registrations, and the client refusing an undeclared kind before sending); and
// `--registrations`, which prints it all without a cluster.
import { describe, expect, it } from '@jest/globals';
import { KubeConfig, type V1ConfigMap, type V1Pod } from '@kubernetes/client-node';
import { registrationsProblems, type Registrations } from '../../../lib/contract.js';
import { AdmissionBinding, type BoundWebhook } from '../../../lib/runtime/bindings/admission.js';
import { Client, defineKind, Kinds } from '../../../lib/runtime/client/index.js';
import { FakeClock } from '../../../lib/runtime/clock.js';
import { Logger } from '../../../lib/runtime/log.js';
import { Manager } from '../../../lib/runtime/manager.js';
import { parseOptions, type ManagerOptions } from '../../../lib/runtime/options.js';
import { run } from '../../../lib/runtime/run.js';
import type { AdmissionRequest } from '../../../lib/runtime/webhook/admission.js';
import { deny, type MutationResult } from '../../../lib/runtime/webhook/handler.js';

const logger = new Logger({}, 'error', { write: () => undefined });
const ctx = { signal: new AbortController().signal, logger };

function manager(controllers: string[] = []): Manager {
  const options = parseOptions(
    ['--enable-leader-election=false'],
    { POD_NAMESPACE: 'ops', POD_NAME: 'op-0' },
    {
      controllers,
    },
  ) as ManagerOptions;
  return new Manager({
    options,
    kubeConfig: new KubeConfig(),
    logger,
    clock: new FakeClock(),
    onExit: () => {},
    name: 'team-op',
  });
}

function bind<T extends V1Pod | V1ConfigMap>(build: (b: AdmissionBinding<T>) => void, kind = Kinds.Pod as never) {
  let bound: BoundWebhook | undefined;
  build(new AdmissionBinding<T>(kind, (b) => (bound = b)));
  return { bound: bound!, webhook: bound!.webhook(['kube-system', 'ops']) };
}

function request(over: Partial<AdmissionRequest> & { object?: object; oldObject?: object }): AdmissionRequest {
  return {
    uid: 'u',
    apiVersion: 'admission.k8s.io/v1',
    operation: 'CREATE',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'team-a',
    userInfo: {},
    dryRun: false,
    ...over,
  } as AdmissionRequest;
}

const pod = (labels: Record<string, string> = {}, name = 'p') => ({ metadata: { name, namespace: 'team-a', labels } });

describe('manager.when: registrations', () => {
  it('records one entry per binding, with its path and name, and a second binding on a kind gets its own', () => {
    const m = manager();
    m.when(Kinds.Pod)
      .isCreated()
      .inNamespacesLabelled({ team: 'x' })
      .mutate(() => undefined);
    m.when(Kinds.Pod)
      .isCreatedOrUpdated()
      .withLabels({ app: 'web' })
      .failurePolicy('Ignore')
      .timeoutSeconds(3)
      .mutate(() => undefined);
    m.when(Kinds.ConfigMap)
      .isDeleted()
      .inNamespaces('team-b', 'team-a')
      .exceptNamespaces('team-c')
      .validate(() => undefined);
    const r = m.registrations();
    expect(r.name).toBe('team-op');
    expect(r.webhooks.map((w) => [w.type, w.name, w.path])).toEqual([
      ['mutating', 'mpod.team-op.kruise-ha.io', '/mutate--v1-pod'],
      ['mutating', 'mpod-2.team-op.kruise-ha.io', '/mutate--v1-pod-2'],
      ['validating', 'vconfigmap.team-op.kruise-ha.io', '/validate--v1-configmap'],
    ]);
    expect(r.webhooks[0]).toMatchObject({
      operations: ['CREATE'],
      namespaceLabels: { team: 'x' },
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
    });
    expect(r.webhooks[1]).toMatchObject({
      operations: ['CREATE', 'UPDATE'],
      labels: { app: 'web' },
      failurePolicy: 'Ignore',
      timeoutSeconds: 3,
    });
    expect(r.webhooks[2]).toMatchObject({
      operations: ['DELETE'],
      namespaces: ['team-a', 'team-b'],
      exemptNamespaces: ['team-c'],
    });
    // What a program prints is what the constructs accept.
    expect(registrationsProblems(r)).toEqual([]);
  });

  it('a custom kind takes its group into the path', () => {
    const Widget = defineKind({
      group: 'example.com',
      version: 'v1',
      kind: 'Widget',
      plural: 'widgets',
      namespaced: true,
    });
    const m = manager();
    m.when(Widget)
      .isUpdated()
      .validate(() => undefined);
    expect(m.registrations().webhooks[0]).toMatchObject({
      path: '/validate-example-com-v1-widget',
      name: 'vwidget.team-op.kruise-ha.io',
    });
  });

  it('refuses a binding it could not render, naming the fix', () => {
    expect(() => bind((b) => b.mutate(() => undefined))).toThrow(/no operation chosen.*isCreated\(\)/);
    expect(() => bind((b) => b.isDeleted().mutate(() => undefined))).toThrow(
      /deletion cannot be mutated.*validate\(\)/,
    );
    expect(() => bind((b) => b.isCreated().withLabels({ 'bad key!': 'x' }))).toThrow(
      /withLabels: "bad key!"="x" is not a valid label/,
    );
    expect(() => bind((b) => b.isCreated().inNamespaces('Team_A'))).toThrow(
      /inNamespaces: "Team_A" is not a namespace name/,
    );
    expect(() => bind((b) => b.isCreated().inNamespaces('kube-system'))).toThrow(/kube-system is never intercepted/);
    expect(() => bind((b) => b.isCreated().inNamespaces('a'), Kinds.Namespace as never)).toThrow(
      /Namespace is cluster-scoped/,
    );
    expect(() => bind((b) => b.isCreated().timeoutSeconds(31))).toThrow(
      /timeoutSeconds: 31 is not a whole number of seconds from 1 to 30/,
    );
    expect(() => bind((b) => b.isCreated().failurePolicy('Maybe' as 'Fail'))).toThrow(/failurePolicy: "Maybe"/);
    expect(() =>
      bind((b) => {
        b.isCreated().mutate(() => undefined);
        b.validate(() => undefined);
      }),
    ).toThrow(/already has its mutate action; start another with when\(\)/);
  });
});

describe('a binding as a handler', () => {
  it('sends the JSON patch between the object and what the action made of it', async () => {
    const { webhook } = bind<V1Pod>((b) =>
      b.isCreated().mutate((p) => {
        p.metadata = { ...p.metadata, labels: { ...p.metadata?.labels, team: 'x' } };
      }),
    );
    const result = (await webhook.handle(request({ object: pod({ app: 'web' }) }), ctx)) as MutationResult;
    expect(result).toEqual({ allowed: true, patches: [{ op: 'add', path: '/metadata/labels/team', value: 'x' }] });
  });

  it('admits without a patch when nothing changed, and passes a denial through', async () => {
    const same = bind<V1Pod>((b) => b.isCreated().mutate(() => undefined)).webhook;
    expect(await same.handle(request({ object: pod() }), ctx)).toEqual({ allowed: true });
    const refuse = bind<V1Pod>((b) => b.isCreated().mutate(() => deny('no pods today'))).webhook;
    expect(await refuse.handle(request({ object: pod() }), ctx)).toMatchObject({
      allowed: false,
      message: 'no pods today',
    });
  });

  it('an action returning another object admits that one', async () => {
    const { webhook } = bind<V1Pod>((b) =>
      b.isCreated().mutate(() => ({ metadata: { name: 'p', namespace: 'team-a' } })),
    );
    const result = (await webhook.handle(request({ object: pod({ app: 'web' }) }), ctx)) as { patches: unknown[] };
    expect(result.patches).toEqual([{ op: 'remove', path: '/metadata/labels' }]);
  });

  it('validates the object being deleted (the oldObject) on DELETE', async () => {
    const seen: string[] = [];
    const { webhook } = bind<V1ConfigMap>(
      (b) =>
        b.isDeleted().validate((cm) => {
          seen.push(cm.metadata!.name!);
          return cm.metadata?.labels?.keep === 'true' ? deny('kept') : undefined;
        }),
      Kinds.ConfigMap as never,
    );
    const del = (labels: Record<string, string>) =>
      webhook.handle(request({ operation: 'DELETE', object: undefined, oldObject: pod(labels, 'cm') }), ctx);
    expect(await del({ keep: 'true' })).toMatchObject({ allowed: false, message: 'kept' });
    expect(await del({})).toEqual({ allowed: true });
    expect(seen).toEqual(['cm', 'cm']);
  });

  it('leaves alone what its filters leave out, even when a configuration sends it', async () => {
    let calls = 0;
    const { webhook } = bind<V1Pod>((b) =>
      b
        .isCreated()
        .inNamespaces('team-a', 'ops')
        .exceptNamespaces('team-z')
        .withLabels({ app: 'web' })
        .withName('p', 'q')
        .mutate(() => void calls++),
    );
    const admitted = async (r: AdmissionRequest) => expect(await webhook.handle(r, ctx)).toEqual({ allowed: true });
    await admitted(request({ namespace: 'kube-system', object: pod({ app: 'web' }) }));
    await admitted(request({ namespace: 'ops', object: pod({ app: 'web' }) })); // the program's own namespace
    await admitted(request({ namespace: 'team-b', object: pod({ app: 'web' }) }));
    await admitted(request({ namespace: 'team-z', object: pod({ app: 'web' }) }));
    await admitted(request({ object: pod({ app: 'db' }) }));
    await admitted(request({ object: pod({ app: 'web' }, 'r') }));
    await admitted(request({ operation: 'UPDATE', object: pod({ app: 'web' }), oldObject: pod({ app: 'web' }) }));
    expect(calls).toBe(0);
    await webhook.handle(request({ object: pod({ app: 'web' }, 'q') }), ctx);
    expect(calls).toBe(1);
    // With no namespace filter at all, kube-system and the program's own namespace are still left alone.
    let unfiltered = 0;
    const open = bind<V1Pod>((b) => b.isCreated().mutate(() => void unfiltered++)).webhook;
    for (const namespace of ['kube-system', 'ops'])
      expect(await open.handle(request({ namespace, object: pod() }), ctx)).toEqual({ allowed: true });
    expect(unfiltered).toBe(0);
  });

  it('hands the action a copy: the request object stays as the API server sent it', async () => {
    const { webhook } = bind<V1Pod>((b) =>
      b.isCreated().mutate((p) => {
        p.metadata!.name = 'changed';
      }),
    );
    const r = request({ object: pod() });
    await webhook.handle(r, ctx);
    expect((r.object as { metadata: { name: string } }).metadata.name).toBe('p');
  });
});

describe('addController: declared kinds', () => {
  it('records what it watches, reads and writes, and refuses a controller added twice or undeclared', () => {
    const m = manager(['configmap-mirror']);
    m.addController({
      name: 'configmap-mirror',
      watches: [Kinds.ConfigMap],
      reads: [Kinds.Namespace],
      writes: [Kinds.ConfigMap],
      reconcile: () => undefined,
    });
    m.informer(Kinds.Namespace);
    const r = m.registrations();
    expect(r.controllers).toEqual([
      {
        name: 'configmap-mirror',
        watches: [{ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true }],
        reads: [{ group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false }],
        writes: [{ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true }],
      },
    ]);
    expect(r.watches.map((k) => k.kind)).toEqual(['Namespace']);
    expect(r.declaredControllers).toEqual(['configmap-mirror']);
    expect(() => m.addController({ name: 'configmap-mirror', reconcile: () => undefined })).toThrow(/added twice/);
    expect(() => m.addController({ name: 'other', reconcile: () => undefined })).toThrow(
      /not among the program's controllers/,
    );
  });

  it("a client's access check refuses an undeclared kind before anything is sent", async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const calls: string[] = [];
    const client = new Client(kc).withAccess((call) => {
      calls.push(`${call.verb} ${call.kind.kind} ${call.write}`);
      if (call.kind.kind !== 'ConfigMap') throw new Error(`undeclared ${call.kind.kind}`);
    });
    await expect(client.get(Kinds.Secret, 's', { namespace: 'a' })).rejects.toThrow('undeclared Secret');
    await expect(client.delete(Kinds.Secret, 's', { namespace: 'a' })).rejects.toThrow('undeclared Secret');
    await expect(client.list(Kinds.Pod)).rejects.toThrow('undeclared Pod');
    expect(calls).toEqual(['get Secret false', 'delete Secret true', 'list Pod false']);
  });
});

describe('--registrations', () => {
  const program = {
    name: 'team-op',
    controllers: ['configmap-mirror'],
    flags: { 'with-audit': { type: 'boolean', help: 'also validate deletes' } },
    register(m: Manager, flags: { 'with-audit': boolean }) {
      m.when(Kinds.Pod)
        .isCreated()
        .mutate(() => undefined);
      if (flags['with-audit'])
        m.when(Kinds.ConfigMap)
          .isDeleted()
          .validate(() => undefined);
      m.addController({
        name: 'configmap-mirror',
        watches: [Kinds.ConfigMap],
        writes: [Kinds.ConfigMap],
        reconcile: () => undefined,
      });
    },
  } as const;
  const call = async (argv: string[]) => {
    const out = { stdout: '', stderr: '', exits: [] as number[] };
    await run(program, {
      argv,
      env: {},
      stdout: (t) => void (out.stdout += t),
      stderr: (t) => void (out.stderr += t),
      logSink: { write: () => undefined },
      exit: (c) => void out.exits.push(c),
    });
    return out;
  };

  it('prints the registrations under the flags given, and exits 0 without a cluster', async () => {
    const plain = await call(['--registrations']);
    expect(plain.exits).toEqual([0]);
    const r = JSON.parse(plain.stdout) as Registrations;
    expect(r.webhooks.map((w) => w.path)).toEqual(['/mutate--v1-pod']);
    expect(r).toMatchObject({ flags: ['with-audit'], declaredControllers: ['configmap-mirror'] });
    const audited = JSON.parse(
      (await call(['--registrations', '--with-audit=true', '--configmap-mirror-workers=2'])).stdout,
    ) as Registrations;
    expect(audited.webhooks.map((w) => w.path)).toEqual(['/mutate--v1-pod', '/validate--v1-configmap']);
  });

  it('exits 2 on a flag the program would refuse, naming it', async () => {
    const out = await call(['--registrations', '--mirror-workers=2']);
    expect(out.exits).toEqual([2]);
    expect(out.stderr).toMatch(/mirror-workers/);
    expect(out.stdout).toBe('');
  });
});
