// The own-operator example's handlers as a user unit-tests them (docs/sdk.md): the mutation on a pod object, the
// reconcile on a fake client, and the registrations the program prints for its chart.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { labelPod, mirror, teamOperator } from '../../../examples/own-operator/team-operator.js';
import { Client, Logger, run, StatusError, type ReconcileContext, type Registrations } from 'kruise-ha-runtime';

type Call = [string, ...unknown[]];

/** A client whose reads answer from `store` (ConfigMaps by namespace/name) and whose writes are recorded. */
function fakeContext(store: Record<string, { data?: Record<string, string> }>): {
  context: ReconcileContext;
  calls: Call[];
} {
  const calls: Call[] = [];
  const notFound = () => new StatusError(404, 'not found', { kind: 'Status', reason: 'NotFound', code: 404 }, {});
  const client = {
    get: async (_k: unknown, name: string, o: { namespace: string }) => {
      const found = store[`${o.namespace}/${name}`];
      if (!found) throw notFound();
      return { metadata: { name, namespace: o.namespace }, ...found };
    },
    delete: async (_k: unknown, name: string, o: { namespace: string }) => {
      calls.push(['delete', `${o.namespace}/${name}`]);
      if (!store[`${o.namespace}/${name}`]) throw notFound();
    },
    patch: async (_k: unknown, name: string, patch: unknown, o: object) => {
      calls.push(['patch', name, patch, o]);
      return {};
    },
  } as unknown as Client;
  const logger = new Logger({}, 'error', { write: () => undefined });
  return { context: { client, logger, signal: new AbortController().signal }, calls };
}

describe('examples/own-operator', () => {
  it('labelPod adds team=x and keeps the other labels', () => {
    const pod = { metadata: { name: 'p', labels: { app: 'web' } } };
    labelPod(pod);
    expect(pod.metadata.labels).toEqual({ app: 'web', team: 'x' });
    const bare: { metadata?: { labels?: Record<string, string> } } = {};
    labelPod(bare);
    expect(bare.metadata?.labels).toEqual({ team: 'x' });
  });

  it('mirror applies the copy of a *-mirror ConfigMap into the mirror namespace', async () => {
    const { context, calls } = fakeContext({ 'team-a/app-mirror': { data: { k: 'v' } } });
    await mirror({ namespace: 'team-a', name: 'app-mirror' }, context, 'mirror');
    expect(calls).toEqual([
      [
        'patch',
        'team-a.app-mirror',
        { type: 'apply', body: { metadata: { name: 'team-a.app-mirror', namespace: 'mirror' }, data: { k: 'v' } } },
        { name: 'team-a.app-mirror', namespace: 'mirror', fieldManager: 'team-operator', force: true },
      ],
    ]);
  });

  it('mirror deletes the copy once the source is gone, and a missing copy is no error', async () => {
    const { context, calls } = fakeContext({});
    await mirror({ namespace: 'team-a', name: 'app-mirror' }, context, 'mirror');
    expect(calls).toEqual([['delete', 'mirror/team-a.app-mirror']]);
  });

  it('mirror leaves other ConfigMaps and the copies themselves alone', async () => {
    const { context, calls } = fakeContext({ 'team-a/plain': {}, 'mirror/x-mirror': {} });
    await mirror({ namespace: 'team-a', name: 'plain' }, context, 'mirror');
    await mirror({ namespace: 'mirror', name: 'x-mirror' }, context, 'mirror');
    expect(calls).toEqual([]);
  });

  it("is the program docs/sdk.md shows, line for line (the guide's team-operator.ts block)", () => {
    const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8');
    const guide = /```ts\n\/\/ team-operator\.ts\n([\s\S]*?)```/.exec(read('docs/sdk.md'))?.[1];
    const example = read('examples/own-operator/team-operator.ts').replace(/^\/\*\*[\s\S]*?\*\/\n/, '');
    expect(guide).toBe(example);
  });

  it('registers one pod binding and one controller, as its chart renders them', async () => {
    let printed = '';
    await run(teamOperator, { argv: ['--registrations'], env: {}, stdout: (t) => (printed += t), exit: () => {} });
    const r = JSON.parse(printed) as Registrations;
    expect(r.webhooks.map((w) => [w.path, w.operations, w.namespaceLabels])).toEqual([
      ['/mutate--v1-pod', ['CREATE'], { team: 'x' }],
    ]);
    expect(r.controllers.map((c) => [c.name, c.watches.map((k) => k.kind), c.writes.map((k) => k.kind)])).toEqual([
      ['configmap-mirror', ['ConfigMap'], ['ConfigMap']],
    ]);
    expect(r.flags).toEqual(['mirror-namespace']);
  });
});
