/**
 * Your own highly available operator on kruise-ha-runtime (docs/sdk.md): a webhook that labels every pod created in
 * a namespace labelled team=x, and a leader-only controller that copies `*-mirror` ConfigMaps into another
 * namespace. Both replicas serve the webhook; only the Lease holder runs the controller. main.ts runs it.
 */
import {
  ignoreNotFound,
  Kinds,
  type ObjectOf,
  type ReconcileContext,
  type Request,
  type RunOptions,
} from 'kruise-ha-runtime';

const flags = { 'mirror-namespace': { type: 'string', default: 'mirror', help: 'where the copies go' } } as const;

/** The mutation: the pod of a team=x namespace gets the label too. */
export function labelPod(pod: ObjectOf<typeof Kinds.Pod>): void {
  pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, team: 'x' } };
}

/** Copies ConfigMap `name` into `into` as `<namespace>.<name>` while it exists; deletes the copy once it is gone. */
export async function mirror({ namespace, name }: Request, { client }: ReconcileContext, into: string): Promise<void> {
  if (!name.endsWith('-mirror') || namespace === into) return;
  const copy = { name: `${namespace}.${name}`, namespace: into, fieldManager: 'team-operator', force: true };
  const source = await client.get(Kinds.ConfigMap, name, { namespace }).catch(ignoreNotFound);
  if (!source) return void (await client.delete(Kinds.ConfigMap, copy.name, copy).catch(ignoreNotFound));
  const body = { metadata: { name: copy.name, namespace: into }, data: source.data };
  await client.patch(Kinds.ConfigMap, copy.name, { type: 'apply', body }, copy);
}

export const teamOperator: RunOptions<typeof flags> = {
  name: 'team-operator',
  controllers: ['configmap-mirror'],
  flags,
  register(manager, values) {
    manager.when(Kinds.Pod).isCreated().inNamespacesLabelled({ team: 'x' }).mutate(labelPod);
    manager.addController({
      name: 'configmap-mirror',
      watches: [Kinds.ConfigMap],
      writes: [Kinds.ConfigMap],
      reconcile: (request, context) => mirror(request, context, values['mirror-namespace']),
    });
  },
};
