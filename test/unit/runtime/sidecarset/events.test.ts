import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { filterUpdates, podChanged, sidecarSetChanged } from '../../../../lib/runtime/sidecarset/events.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { factoryPods } from './upstream-fixtures.js';

describe('rollout event predicates', () => {
  it('reconciles a SidecarSet on a new generation, deletion or labels, not on its status', () => {
    const s: SidecarSet = { metadata: { name: 's', generation: 1 }, spec: {}, status: { matchedPods: 1 } };
    expect(sidecarSetChanged(s, { ...s, status: { matchedPods: 2 } })).toBe(false);
    expect(sidecarSetChanged(s, { ...s, metadata: { ...s.metadata, generation: 2 } })).toBe(true);
    expect(
      sidecarSetChanged(s, {
        ...s,
        metadata: { ...s.metadata, labels: { 'apps.kruise.io/sidecarset-custom-version': 'v2' } },
      }),
    ).toBe(true);
  });

  it('reconciles on the pod changes a rollout reads, not on others', () => {
    const [p] = factoryPods(1, 0, 0);
    const edit = (f: (q: V1Pod) => void) => {
      const q = structuredClone(p);
      f(q);
      return q;
    };
    expect(
      podChanged(
        p,
        edit((q) => {
          q.metadata!.resourceVersion = '9';
          q.metadata!.annotations!.other = 'x';
        }),
      ),
    ).toBe(false);
    expect(
      podChanged(
        p,
        edit((q) => {
          q.status!.conditions![0].status = 'False';
        }),
      ),
    ).toBe(true);
    expect(
      podChanged(
        p,
        edit((q) => {
          q.status!.containerStatuses![1].imageID = 'new';
        }),
      ),
    ).toBe(true);
    expect(
      podChanged(
        p,
        edit((q) => {
          q.spec!.containers[1].image = 'test-image:v2';
        }),
      ),
    ).toBe(true);
    expect(
      podChanged(
        p,
        edit((q) => {
          q.metadata!.annotations!['kruise.io/sidecarset-hash'] = '{}';
        }),
      ),
    ).toBe(true);
    expect(
      podChanged(
        p,
        edit((q) => {
          q.metadata!.labels!.zone = 'a';
        }),
      ),
    ).toBe(true);
  });

  it('passes adds and deletes, and only the relevant updates', () => {
    const seen: string[] = [];
    let handler: Parameters<Parameters<typeof filterUpdates<V1Pod>>[0]['addEventHandler']>[0] = {};
    const source = {
      addEventHandler: (h: typeof handler) => {
        handler = h;
        return () => undefined;
      },
      waitForSync: async () => undefined,
    };
    filterUpdates<V1Pod>(source, (a, b) => a.metadata?.name !== b.metadata?.name).addEventHandler({
      onAdd: () => seen.push('add'),
      onUpdate: () => seen.push('update'),
      onDelete: () => seen.push('delete'),
    });
    const a = { metadata: { name: 'a' } };
    handler.onAdd!(a);
    handler.onUpdate!(a, a);
    handler.onUpdate!(a, { metadata: { name: 'b' } });
    handler.onDelete!(a);
    expect(seen).toEqual(['add', 'update', 'delete']);
  });
});
