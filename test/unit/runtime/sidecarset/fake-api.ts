/** In-memory stand-ins for the API calls the SidecarSet controller makes (as upstream's tests use a fake client). */
import type { V1ControllerRevision } from '@kubernetes/client-node';
import type { HistoryDeps } from '../../../../lib/runtime/sidecarset/history.js';

export const NS = 'kruise-system';

/**
 * The ControllerRevision calls the history code makes, on an in-memory store (as upstream's tests use a fake client).
 */
export function fakeApps() {
  const store = new Map<string, V1ControllerRevision>();
  let created = 0;
  const matches = (r: V1ControllerRevision, selector?: string) =>
    (selector ?? '')
      .split(',')
      .filter(Boolean)
      .every((term) => {
        const [k, v] = term.split('=');
        return r.metadata?.labels?.[k] === v;
      });
  const notFound = () => Object.assign(new Error('not found'), { code: 404 });
  const apps = {
    listNamespacedControllerRevision: async ({ labelSelector }: { labelSelector?: string }) => ({
      items: [...store.values()].filter((r) => matches(r, labelSelector)).map((r) => structuredClone(r)),
    }),
    readNamespacedControllerRevision: async ({ name }: { name: string }) => {
      const r = store.get(name);
      if (!r) throw notFound();
      return structuredClone(r);
    },
    createNamespacedControllerRevision: async ({ body }: { body: V1ControllerRevision }) => {
      if (store.has(body.metadata!.name!)) throw Object.assign(new Error('exists'), { code: 409 });
      const r = structuredClone({
        ...body,
        metadata: { ...body.metadata, creationTimestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, created++)) },
      });
      store.set(r.metadata!.name!, r);
      return structuredClone(r);
    },
    patchNamespacedControllerRevision: async ({
      name,
      body,
    }: {
      name: string;
      body: { revision?: number; metadata?: { labels?: Record<string, string> } };
    }) => {
      const r = store.get(name);
      if (!r) throw notFound();
      if (body.revision !== undefined) r.revision = body.revision;
      if (body.metadata?.labels) r.metadata!.labels = { ...r.metadata!.labels, ...body.metadata.labels };
      return structuredClone(r);
    },
    deleteNamespacedControllerRevision: async ({ name }: { name: string }) => {
      if (!store.delete(name)) throw notFound();
      return {};
    },
  };
  return { store, deps: { apps: apps as unknown as HistoryDeps['apps'], namespace: NS, mayWrite: () => undefined } };
}
