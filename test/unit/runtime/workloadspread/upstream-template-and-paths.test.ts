/**
 * Two things upstream OpenKruise v1.8.3 refuses that this runtime once admitted (issue #37):
 *
 * - a subset patch whose merge into the target's pod template fails core pod validation
 *   (pkg/webhook/workloadspread/validating validateWorkloadSpreadSubsets: StrategicMergePatch,
 *   convertor.ConvertPod, corevalidation.ValidatePodSpec). The expected errors are upstream's own
 *   answers (tools/upstream/sidecarset-oracle `wsvalidate`, run on these inputs), field paths and
 *   messages as it words them;
 * - a replicas path the workload does not have (pkg/util/workloadspread GetReplicasFromObject,
 *   NestedField): an error, not 0. Upstream's pod webhook then answers 500 (getWorkloadReplicas ←
 *   initializedSubsetStatuses ← updateSubsetForPod) and its controller writes no status and no
 *   deletion cost (filterWorkload ← getPodsForWorkloadSpread ← syncWorkloadSpread). The error texts
 *   are upstream's (oracle `wssubset` with targetFilter.replicasPathList).
 */
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { replicasAtPath } from '../../../../lib/runtime/workloadspread/api.js';
import { workloadSpreadReconciler } from '../../../../lib/runtime/workloadspread/controller.js';
import { patchCheckTarget, validateWorkloadSpread } from '../../../../lib/runtime/workloadspread/validate.js';
import {
  podSelectedByFilter,
  WorkloadSpreadPodHandler,
  workloadSpreadPodMutation,
  workloadSpreadValidatingWebhook,
} from '../../../../lib/runtime/workloadspread/webhooks.js';
import type { AdmissionRequest } from '../../../../lib/runtime/webhook/index.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', namespace: 'default' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { a: 'b' } },
    template: {
      metadata: { labels: { a: 'b' } },
      spec: {
        containers: [{ name: 'main', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [
          { name: 'data', emptyDir: {} },
          { name: 'claim', persistentVolumeClaim: { claimName: 'c' } },
        ],
      },
    },
  },
};

const spreadWith = (patch: Json, kind = 'Deployment', apiVersion = 'apps/v1') => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'ws', namespace: 'default' },
  spec: { targetRef: { apiVersion, kind, name: 'd' }, subsets: [{ name: 'a', patch }] },
});

const at = 'spec.subsets[0].patch';
const DNS_LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

describe('a subset patch merged into the pod template: upstream v1.9.1 ValidatePodSpec', () => {
  // [label, patch, upstream's errors]
  const cases: Array<[string, Json, string[]]> = [
    ['labels only', { metadata: { labels: { x: 'y' } } }, []],
    [
      'a mount of a volume the template does not have',
      { spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] } },
      [`${at}.containers[0].volumeMounts[0].name: Not found: "nope"`],
    ],
    [
      'a second source merged onto a volume (then not declared: its mount is not found)',
      { spec: { volumes: [{ name: 'data', configMap: { name: 'c' } }] } },
      [
        `${at}.volumes[0].configMap: Forbidden: may not specify more than 1 volume type`,
        `${at}.containers[0].volumeMounts[0].name: Not found: "data"`,
      ],
    ],
    [
      'a volume deleted by the patch',
      { spec: { volumes: [{ $patch: 'delete', name: 'data' }] } },
      [`${at}.containers[0].volumeMounts[0].name: Not found: "data"`],
    ],
    [
      'an invalid volume name, mounted',
      {
        spec: {
          volumes: [{ name: 'Bad_V' }],
          containers: [{ name: 'main', volumeMounts: [{ name: 'Bad_V', mountPath: '/x' }] }],
        },
      },
      [
        `${at}.volumes[0].name: Invalid value: "Bad_V": ${DNS_LABEL}`,
        `${at}.containers[0].volumeMounts[0].name: Not found: "Bad_V"`,
      ],
    ],
    [
      'an invalid container name',
      { spec: { containers: [{ name: 'Side_car', image: 'x' }] } },
      [`${at}.containers[0].name: Invalid value: "Side_car": ${DNS_LABEL}`],
    ],
    [
      'a container name over 63 characters',
      { spec: { containers: [{ name: 'c'.repeat(64), image: 'i' }] } },
      [`${at}.containers[0].name: Invalid value: "${'c'.repeat(64)}": must be no more than 63 characters`],
    ],
    [
      'a container without image',
      { spec: { containers: [{ name: 'side' }] } },
      [`${at}.containers[0].image: Required value`],
    ],
    [
      'an init container named as a container',
      { spec: { initContainers: [{ name: 'main', image: 'x' }] } },
      [`${at}.initContainers[0].name: Duplicate value: "main"`],
    ],
    [
      'an init container mounting a volume the template does not have',
      { spec: { initContainers: [{ name: 'init', image: 'x', volumeMounts: [{ name: 'gone', mountPath: '/g' }] }] } },
      [`${at}.initContainers[0].volumeMounts[0].name: Not found: "gone"`],
    ],
    [
      'every container replaced away',
      { spec: { containers: [{ $patch: 'replace' }] } },
      [`${at}.containers: Required value`],
    ],
    [
      'a block device on an emptyDir volume that is also mounted',
      { spec: { containers: [{ name: 'main', volumeDevices: [{ name: 'data', devicePath: '/dev/x' }] }] } },
      [
        `${at}.containers[0].volumeMounts[0].name: Invalid value: "data": must not already exist in volumeDevices`,
        `${at}.containers[0].volumeDevices[0].name: Invalid value: "data": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode`,
        `${at}.containers[0].volumeDevices[0].name: Invalid value: "data": must not already exist in volumeMounts`,
      ],
    ],
    [
      'a block device on the claim',
      { spec: { containers: [{ name: 'main', volumeDevices: [{ name: 'claim', devicePath: '/dev/x' }] }] } },
      [],
    ],
    [
      'a restart policy that does not exist',
      { spec: { restartPolicy: 'Sometimes' } },
      [`${at}.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"`],
    ],
    [
      'a DNS policy that does not exist',
      { spec: { dnsPolicy: 'Weird' } },
      [
        `${at}.dnsPolicy: Unsupported value: "Weird": supported values: "ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"`,
      ],
    ],
    [
      'a hostname that is no DNS label',
      { spec: { hostname: 'Bad.Host' } },
      [`${at}.hostname: Invalid value: "Bad.Host": ${DNS_LABEL}`],
    ],
    [
      'activeDeadlineSeconds 0',
      { spec: { activeDeadlineSeconds: 0 } },
      [`${at}.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive`],
    ],
    ['a priority class', { spec: { priorityClassName: 'high' } }, []],
  ];
  it.each(cases)('%s', (_label, patch, upstream) => {
    expect(validateWorkloadSpread(spreadWith(patch), { workload: deployment })).toEqual(upstream);
  });

  it('refuses (as upstream, words of its own) what the per-container rules find: a port, an invalid node selector key, a toleration', () => {
    const refused = (patch: Json) => validateWorkloadSpread(spreadWith(patch), { workload: deployment });
    expect(refused({ spec: { containers: [{ name: 'main', ports: [{ containerPort: 70000 }] }] } })).toEqual([
      expect.stringMatching(/^spec\.subsets\[0\]\.patch\.containers\[0\]\.ports\[0\]\.containerPort: /),
    ]);
    expect(refused({ spec: { nodeSelector: { 'bad key!': 'v' } } })).toEqual([
      expect.stringMatching(/^spec\.subsets\[0\]\.patch\.nodeSelector: Invalid value: "bad key!"/),
    ]);
    expect(refused({ spec: { tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] } })).toHaveLength(1);
  });

  it('checks nothing without the workload, nor for a kind of another group', () => {
    const bad = { spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] } };
    expect(validateWorkloadSpread(spreadWith(bad))).toEqual([]);
    expect(validateWorkloadSpread(spreadWith(bad, 'StatefulSet'))).toEqual([]);
    expect(patchCheckTarget(spreadWith(bad, 'Deployment', 'extensions/v1beta1'))).toBeUndefined();
    expect(patchCheckTarget(spreadWith(bad))).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' });
  });

  it("checks a StatefulSet target's template, read as apps/v1 whatever its group (v1.9.1; v1.8.3 never read it)", () => {
    const bad = { spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] } };
    const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'd' };
    expect(patchCheckTarget(spreadWith(bad, 'StatefulSet'))).toEqual(sts);
    expect(patchCheckTarget(spreadWith(bad, 'StatefulSet', 'apps.kruise.io/v1beta1'))).toEqual(sts);
    expect(patchCheckTarget(spreadWith(bad, 'StatefulSet', 'apps.kruise.io/v1alpha1'))).toEqual(sts);
    const statefulSet = {
      ...deployment,
      kind: 'StatefulSet',
      spec: { ...deployment.spec, volumeClaimTemplates: [{ metadata: { name: 'vct' } }] },
    };
    expect(validateWorkloadSpread(spreadWith(bad, 'StatefulSet'), { workload: statefulSet })).toEqual([
      `${at}.containers[0].volumeMounts[0].name: Not found: "nope"`,
    ]);
    // Its claims are volumes of the template: mounting one is valid.
    const claim = { spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'vct', mountPath: '/c' }] }] } };
    expect(validateWorkloadSpread(spreadWith(claim, 'StatefulSet'), { workload: statefulSet })).toEqual([]);
  });

  it('the webhook reads the target and answers 400 naming the field', async () => {
    const bad = spreadWith({
      spec: { containers: [{ name: 'main', volumeMounts: [{ name: 'nope', mountPath: '/x' }] }] },
    });
    const read: string[] = [];
    const webhook = workloadSpreadValidatingWebhook(
      { list: () => [], get: () => undefined },
      {
        getWorkload: async (apiVersion: string, kind: string, namespace: string, name: string) => {
          read.push(`${apiVersion} ${kind} ${namespace}/${name}`);
          return deployment;
        },
      },
    );
    const request = {
      uid: '1',
      operation: 'CREATE',
      namespace: 'default',
      name: 'ws',
      object: bad,
      resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'workloadspreads' },
    } as unknown as AdmissionRequest;
    const answer: Json = await webhook.handle(request, {} as never);
    expect(read).toEqual(['apps/v1 Deployment default/d']);
    expect(answer).toMatchObject({ allowed: false, code: 400 });
    expect(answer.message).toContain('spec.subsets[0].patch.containers[0].volumeMounts[0].name: Not found: "nope"');
  });
});

describe('replicasAtPath = upstream GetReplicasFromObject', () => {
  const rs = {
    spec: { replicas: 4, selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c' }] } } },
    status: { replicas: null, big: 2 ** 32 + 3 },
  };
  it.each<[string, number]>([
    ['', 0],
    ['spec.replicas', 4],
    ['status.big', 3],
  ])('%s reads %d', (path, value) => expect(replicasAtPath(rs, path)).toBe(value));
  it.each<[string, string]>([
    ['spec.nope', 'path "nope" not exists'],
    ['spec.template.spec.containers.1.name', 'index 1 out of range'],
    ['spec.template.spec.containers.-1.name', 'index -1 out of range'],
    ['spec.template.spec.containers.x.name', 'strconv.Atoi: parsing "x": invalid syntax'],
    ['spec.template.spec.containers.+0.name', 'object type error'],
    ['spec.replicas.x', 'object is not deep enough'],
    ['status.replicas', 'object type error'],
    ['status.replicas.x', 'object is not deep enough'],
    ['spec.selector', 'object type error'],
  ])('%s is an error: %s', (path, message) => expect(() => replicasAtPath(rs, path)).toThrow(message));
});

const replicaSet = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'rs', namespace: 'default', uid: 'rs-uid' },
  spec: { replicas: 4, selector: { matchLabels: { a: 'b' } }, template: { spec: { containers: [{ name: 'c' }] } } },
};
/** A WorkloadSpread on the ReplicaSet with the paths; its filter selects its pods unless `selector` is null. */
const spreadOnRs = (paths: string[], selector: Json = { matchLabels: { app: 'web' } }) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'ws', namespace: 'default', resourceVersion: '1' },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs' },
    targetFilter: { ...(selector ? { selector } : {}), replicasPathList: paths },
    subsets: [{ name: 'a', maxReplicas: '50%' }, { name: 'b' }],
  },
});
/** A running pod of the ReplicaSet. */
const podOfRs = (): Json => ({
  metadata: {
    name: 'p',
    namespace: 'default',
    labels: { app: 'web' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs-uid', controller: true }],
  },
  spec: { containers: [{ name: 'c', image: 'i' }] },
  status: { phase: 'Running' },
});
/** The pod CREATE the pod webhook answers. */
const podCreate = {
  uid: '1',
  operation: 'CREATE',
  namespace: 'default',
  resource: { group: '', version: 'v1', resource: 'pods' },
} as unknown as AdmissionRequest;
const logger: Json = { warn: () => undefined, info: () => undefined, error: () => undefined, debug: () => undefined };
const clock: Json = { now: () => Date.parse('2026-01-01T00:00:00Z') };

describe('a replicas path the workload does not have: the pod webhook answers 500', () => {
  const mutate = async (paths: string[]) => {
    const ws = spreadOnRs(paths);
    const writes: Json[] = [];
    const handler = new WorkloadSpreadPodHandler({
      cache: { list: () => [ws], get: () => ws },
      api: {
        getWorkloadSpread: async () => ws,
        updateStatus: async (o: Json) => {
          writes.push(o);
          return { ...o, metadata: { ...o.metadata, resourceVersion: '2' } };
        },
        getWorkload: async () => replicaSet,
        getPod: async () => undefined,
      },
      clock,
      logger,
      newUID: () => 'uid',
    });
    const pod = podOfRs() as V1Pod;
    return { answer: (await workloadSpreadPodMutation(handler)(pod, podCreate)) as Json, writes };
  };

  it('spreads the pod by the percentage of the replicas at an existing path', async () => {
    const { answer, writes } = await mutate(['spec.replicas']);
    expect(answer.metadata.annotations['apps.kruise.io/matched-workloadspread']).toContain('"subset":"a"');
    expect(writes).toHaveLength(1);
  });

  it.each([['spec.nope'], ['spec.template.spec.containers.3.name'], ['spec.replicas.x']])(
    '%s: 500, nothing booked',
    async (path) => {
      const { answer, writes } = await mutate([path]);
      expect(answer).toMatchObject({ allowed: false, code: 500 });
      expect(writes).toEqual([]);
    },
  );
});

describe('a replicas path the workload does not have: the controller writes no status and no deletion cost', () => {
  const reconcile = async (paths: string[]) => {
    const ws = spreadOnRs(paths);
    const writes: string[] = [];
    const informer = (items: Json[]): Json => ({
      store: {
        getByName: (name: string) => items.find((o) => o.metadata.name === name),
        listNamespace: () => items,
      },
    });
    const pod = podOfRs();
    const reconciler = workloadSpreadReconciler({
      workloadSpreads: informer([ws]),
      pods: informer([pod]),
      api: {
        getWorkload: async () => replicaSet,
        getScale: async () => undefined,
        listReplicaSets: async () => [],
        getNode: async () => undefined,
        patchPod: async () => {
          writes.push('patchPod');
          return {};
        },
        deletePod: async () => {
          writes.push('deletePod');
        },
        updateStatus: async (o: Json) => {
          writes.push('updateStatus');
          return o;
        },
      } as Json,
      checkStillLeader: () => undefined,
      clock,
      logger,
      recorder: { event: () => undefined },
    });
    return { run: reconciler({ namespace: 'default', name: 'ws' }), writes };
  };

  it('writes a status (and costs) with an existing path', async () => {
    const { run, writes } = await reconcile(['spec.replicas']);
    await run;
    expect(writes).toContain('updateStatus');
  });

  it.each([['spec.nope'], ['spec.template.spec.containers.3.name'], ['metadata.name']])(
    '%s: an error, nothing written',
    async (path) => {
      const { run, writes } = await reconcile([path]);
      await expect(run).rejects.toThrow();
      expect(writes).toEqual([]);
    },
  );
});

describe('a targetFilter without a selector (replicasPathList only): upstream IsPodSelected selects no pod', () => {
  it('matches as util.ValidatedLabelSelectorAsSelector: nil filter all, nil selector none, empty selector all', () => {
    const labels = { app: 'web' };
    expect(podSelectedByFilter(undefined, labels)).toBe(true);
    expect(podSelectedByFilter(null, labels)).toBe(true);
    expect(podSelectedByFilter({ replicasPathList: ['spec.replicas'] }, labels)).toBe(false);
    expect(podSelectedByFilter({}, labels)).toBe(false);
    expect(podSelectedByFilter({ selector: {} }, labels)).toBe(true);
    expect(podSelectedByFilter({ selector: { matchLabels: { app: 'web' } } }, labels)).toBe(true);
    expect(podSelectedByFilter({ selector: { matchLabels: { app: 'db' } } }, labels)).toBe(false);
  });

  it('the pod webhook leaves the pod unspread, even with a path the workload does not have', async () => {
    const ws: Json = spreadOnRs(['spec.nope'], null);
    const handler = new WorkloadSpreadPodHandler({
      cache: { list: () => [ws], get: () => ws },
      api: {
        getWorkloadSpread: async () => ws,
        updateStatus: async (o: Json) => o,
        getWorkload: async () => replicaSet,
        getPod: async () => undefined,
      },
      clock,
      logger,
    });
    expect(await workloadSpreadPodMutation(handler)(podOfRs() as V1Pod, podCreate)).toBeUndefined();
  });
});
