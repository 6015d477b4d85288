/**
 * Your own highly available operator on kruise-ha-runtime (docs/sdk.md): a webhook that labels every pod created in
 * a namespace labelled team=x, and a leader-only controller that copies `*-mirror` ConfigMaps into another
 * namespace. Both replicas serve the webhook; only the Lease holder runs the controller.
 */
import { ignoreNotFound, Kinds, run } from 'kruise-ha-runtime';

await run({
  name: 'team-operator',
  controllers: ['configmap-mirror'],
  flags: { 'mirror-namespace': { type: 'string', default: 'mirror', help: 'where the copies go' } },
  register(manager, flags) {
    manager
      .when(Kinds.Pod)
      .isCreated()
      .inNamespacesLabelled({ team: 'x' })
      .mutate((pod) => {
        pod.metadata = { ...pod.metadata, labels: { ...pod.metadata?.labels, team: 'x' } };
      });
    manager.addController({
      name: 'configmap-mirror',
      watches: [Kinds.ConfigMap],
      writes: [Kinds.ConfigMap],
      async reconcile({ namespace, name }, { client }) {
        const into = { namespace: flags['mirror-namespace'], fieldManager: 'team-operator', force: true };
        if (!name.endsWith('-mirror') || namespace === into.namespace) return;
        const copy = `${namespace}.${name}`;
        const source = await client.get(Kinds.ConfigMap, name, { namespace }).catch(ignoreNotFound);
        if (!source) return void (await client.delete(Kinds.ConfigMap, copy, into).catch(ignoreNotFound));
        const body = { metadata: { name: copy, namespace: into.namespace }, data: source.data };
        await client.patch(Kinds.ConfigMap, copy, { type: 'apply', body }, into);
      },
    });
  },
});
