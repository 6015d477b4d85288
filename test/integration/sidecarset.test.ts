// SidecarSet end to end: the real manager runs as child processes against the envtest API
// server, installed from the constructs (runtime flavor), its webhook Service routed to the
// replicas on loopback. Pods are created through the API server; this file acts as the kubelet
// (pod status: Ready condition and the images containers run, in containerd's normalized form).
//
// Phases share one install: m0 leads and serves admission throughout; m1 stands by (no
// endpoint) until the last test SIGKILLs m0 mid-rollout and m1 takes over.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AppsV1Api, CoreV1Api, PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse } from 'yaml';
import { SidecarSetAnnotations } from '../../lib/contract.js';
import { envtest } from '../envtest/state.js';
import { ManagerProcess } from './support/manager-process.js';
import {
  addEndpoint,
  installRuntime,
  kubeConfig,
  removeEndpoint,
  uninstallWebhooks,
} from './support/runtime-cluster.js';
import {
  Fatal,
  isReady,
  kubeletStatus,
  patchPodStatus,
  rejection,
  reportedImage,
  sidecarSetClient,
  waitFor,
  type SidecarSetObject,
} from './support/sidecarset.js';

const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const sidecarSets = sidecarSetClient(kc);
const INSTALL_NS = 'kruise-it-sidecarset';
const APPS_NS = 'sidecarset-it-apps';
const MESH_NS = 'sidecarset-it-mesh';
const ROLL_NS = 'sidecarset-it-roll';
const created: string[] = []; // SidecarSets to delete in afterAll
/** Short leases, so the takeover after a SIGKILL takes seconds (the bounds below allow for them). */
const LEADER_ARGS = [
  '--leader-election-lease-duration=6s',
  '--leader-election-renew-deadline=4s',
  '--leader-election-retry-period=1s',
];

let m0: ManagerProcess;
let m1: ManagerProcess;

/** How many reconciles the SidecarSet controller of `m` has finished (any result), from its metrics. */
async function sidecarSetReconciles(m: ManagerProcess): Promise<number> {
  const { body } = await m.get('/metrics', m.ports.metrics);
  return [...body.matchAll(/^controller_runtime_reconcile_total\{controller="sidecarset",[^}]*\} (\d+)$/gm)].reduce(
    (sum, x) => sum + Number(x[1]),
    0,
  );
}

/** A SidecarSet `name` injecting one container `container` into pods labelled app=`app`, with `spec` besides. */
function oneSidecar(name: string, app: string, container: string, spec: object): SidecarSetObject {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app } }, containers: [{ name: container, image: 'envoy:1' }], ...spec },
  };
}

async function createSidecarSet(body: SidecarSetObject): Promise<SidecarSetObject> {
  created.push(body.metadata.name);
  return sidecarSets.create(body);
}

function podBody(
  name: string,
  labels: Record<string, string>,
  extra: Partial<V1Pod['spec']> = {},
  annotations?: Record<string, string>,
): V1Pod {
  return {
    metadata: { name, labels, ...(annotations ? { annotations } : {}) },
    spec: {
      containers: [
        {
          name: 'app',
          image: 'shop:1',
          env: [{ name: 'APP_NAME', value: name }],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
      volumes: [{ name: 'data', emptyDir: {} }],
      ...extra,
    },
  };
}

const containerNames = (pod: V1Pod) => pod.spec!.containers.map((c) => c.name);

/** Creates pods through the admission chain with dry-run until `check` holds: the webhook's caches have caught up. */
async function waitForInjection(
  namespace: string,
  labels: Record<string, string>,
  check: (pod: V1Pod) => boolean,
  what: string,
): Promise<void> {
  await waitFor(what, async () => {
    const pod = await core.createNamespacedPod({ namespace, body: podBody('probe', labels), dryRun: 'All' });
    return check(pod) ? true : undefined;
  });
}

beforeAll(async () => {
  await installRuntime(kc, INSTALL_NS);
  for (const [name, labels] of [
    [APPS_NS, {}],
    [MESH_NS, { mesh: 'on' }],
    [ROLL_NS, {}],
  ] as const) {
    await core.createNamespace({ body: { metadata: { name, labels } } });
  }
  m0 = await ManagerProcess.start({
    name: 'ss-m0',
    kubeconfigPath: envtest().kubeconfigPath,
    namespace: INSTALL_NS,
    args: LEADER_ARGS,
  });
  await m0.waitReady();
  await waitFor('m0 to lead', async () => ((await m0.leading()) ? true : undefined));
  await addEndpoint(kc, INSTALL_NS, m0.name, m0.ports.webhook);
  // The standby: same Lease, no endpoint (admission stays on m0, so the caches the tests wait for are m0's).
  m1 = await ManagerProcess.start({
    name: 'ss-m1',
    kubeconfigPath: envtest().kubeconfigPath,
    namespace: INSTALL_NS,
    args: LEADER_ARGS,
  });
  await m1.waitReady();
}, 120_000);

afterAll(async () => {
  await Promise.all([m0?.stop(), m1?.stop()]);
  await uninstallWebhooks(kc);
  for (const name of created) await sidecarSets.delete(name).catch(() => undefined);
  for (const namespace of [APPS_NS, MESH_NS, ROLL_NS, INSTALL_NS]) {
    // Unscheduled pods go at once; namespaces stay Terminating (no namespace controller here).
    await core.deleteCollectionNamespacedPod({ namespace }).catch(() => undefined);
    await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  }
}, 60_000);

describe('SidecarSet injection', () => {
  // An upstream example manifest, unchanged but for names (kruise docs: SidecarSet).
  const upstream = parse(`
apiVersion: apps.kruise.io/v1alpha1
kind: SidecarSet
metadata:
  name: it-inject
spec:
  selector:
    matchLabels:
      app: shop
  updateStrategy:
    type: RollingUpdate
    maxUnavailable: 1
  containers:
  - name: sidecar1
    image: centos:6.7
    command: ["sleep", "999d"] # do nothing at all
    volumeMounts:
    - name: log-volume
      mountPath: /var/log
  - name: log-agent
    image: fluent/fluent-bit:3.1
    podInjectPolicy: AfterAppContainer
    shareVolumePolicy:
      type: enabled
    transferEnv:
    - sourceContainerName: app
      envName: APP_NAME
  volumes: # this field will be merged into pod.spec.volumes
  - name: log-volume
    emptyDir: {}
  imagePullSecrets:
  - name: regcred
`) as SidecarSetObject;

  beforeAll(async () => {
    await createSidecarSet(upstream);
    await waitForInjection(
      APPS_NS,
      { app: 'shop' },
      (p) => containerNames(p).includes('sidecar1'),
      'it-inject to reach the webhook cache',
    );
  }, 60_000);

  it('accepts an upstream manifest unchanged, keeping every field and filling upstream defaults', async () => {
    const stored = await sidecarSets.get('it-inject');
    expect(stored.spec.containers[0]).toMatchObject({
      ...upstream.spec.containers[0],
      podInjectPolicy: 'BeforeAppContainer',
      shareVolumePolicy: { type: 'disabled' },
      imagePullPolicy: 'IfNotPresent',
    });
    expect(stored.spec.containers[1]).toMatchObject(upstream.spec.containers[1]);
    expect(stored.spec).toMatchObject({
      selector: upstream.spec.selector,
      volumes: upstream.spec.volumes,
      imagePullSecrets: upstream.spec.imagePullSecrets,
      revisionHistoryLimit: 10,
    });
    // apis/apps/defaults/v1alpha1.go setSidecarSetUpdateStrategy: partition defaults to 0 too.
    expect(stored.spec.updateStrategy).toEqual({ type: 'RollingUpdate', maxUnavailable: 1, partition: 0 });
  });

  it('injects into a pod created through the API server: position, shared volumes, transferred env, volumes, pull secrets', async () => {
    const pod = await core.createNamespacedPod({ namespace: APPS_NS, body: podBody('shop-1', { app: 'shop' }) });
    expect(containerNames(pod)).toEqual(['sidecar1', 'app', 'log-agent']); // upstream default: BeforeAppContainer
    const [sidecar1, , agent] = pod.spec!.containers;
    expect(sidecar1).toMatchObject({
      image: 'centos:6.7',
      command: ['sleep', '999d'],
      volumeMounts: [{ name: 'log-volume', mountPath: '/var/log' }],
    });
    expect(agent.volumeMounts).toEqual([{ name: 'data', mountPath: '/data' }]);
    // upstream pkg/webhook/pod/mutating/sidecarset.go: IS_INJECTED=true on every sidecar, then the transferred env.
    expect(agent.env).toEqual([
      { name: 'IS_INJECTED', value: 'true' },
      { name: 'APP_NAME', value: 'shop-1' },
    ]);
    expect(sidecar1.volumeMounts).toHaveLength(1); // shareVolumePolicy disabled (the default)
    expect(pod.spec!.volumes!.map((v) => v.name)).toEqual(['data', 'log-volume']);
    expect(pod.spec!.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    const annotations = pod.metadata!.annotations!;
    expect(annotations[SidecarSetAnnotations.injectedList]).toBe('it-inject');
    expect(JSON.parse(annotations[SidecarSetAnnotations.hash])['it-inject']).toMatchObject({
      sidecarSetName: 'it-inject',
      sidecarList: ['log-agent', 'sidecar1'],
    }); // upstream: a sorted set
  });

  it('is idempotent: a pod re-submitted with its sidecars and annotations is not injected twice', async () => {
    const first = await core.readNamespacedPod({ name: 'shop-1', namespace: APPS_NS });
    const copy = await core.createNamespacedPod({
      namespace: APPS_NS,
      body: {
        metadata: { name: 'shop-1-copy', labels: first.metadata!.labels, annotations: first.metadata!.annotations },
        spec: { ...first.spec!, nodeName: undefined },
      },
    });
    expect(containerNames(copy)).toEqual(['sidecar1', 'app', 'log-agent']);
    expect(copy.spec!.volumes!.map((v) => v.name)).toEqual(['data', 'log-volume']);
  });

  it("leaves kube-system, the manager's namespace, opted-out and non-matching pods alone", async () => {
    const untouched = async (namespace: string, body: V1Pod) => {
      const pod = await core.createNamespacedPod({ namespace, body });
      expect([namespace, containerNames(pod), pod.metadata!.annotations?.[SidecarSetAnnotations.hash]]).toEqual([
        namespace,
        ['app'],
        undefined,
      ]);
    };
    await untouched('kube-system', podBody('it-shop-system', { app: 'shop' }));
    await untouched(INSTALL_NS, podBody('shop-manager-ns', { app: 'shop' }));
    await untouched(
      APPS_NS,
      podBody('shop-opted-out', { app: 'shop' }, {}, { [SidecarSetAnnotations.injectIgnore]: 'true' }),
    );
    await untouched(APPS_NS, podBody('redis', { app: 'redis' }));
    await core.deleteNamespacedPod({ name: 'it-shop-system', namespace: 'kube-system' });
  });

  it('honours namespace, namespaceSelector and a paused injection', async () => {
    await createSidecarSet(
      oneSidecar('it-mesh', 'shop', 'mesh-proxy', { namespaceSelector: { matchLabels: { mesh: 'on' } } }),
    );
    await createSidecarSet(
      oneSidecar('it-paused', 'shop', 'paused-proxy', { namespace: MESH_NS, injectionStrategy: { paused: true } }),
    );
    await waitForInjection(
      MESH_NS,
      { app: 'shop' },
      (p) => containerNames(p).includes('mesh-proxy'),
      'it-mesh to reach the webhook cache',
    );
    await waitFor('it-paused to reach the webhook cache', async () =>
      (await sidecarSets.get('it-paused')).status?.observedGeneration ? true : undefined,
    );
    const inMesh = await core.createNamespacedPod({ namespace: MESH_NS, body: podBody('shop-mesh', { app: 'shop' }) });
    expect(containerNames(inMesh)).toEqual(['sidecar1', 'mesh-proxy', 'app', 'log-agent']); // SidecarSets applied in name order
    const outside = await core.createNamespacedPod({ namespace: APPS_NS, body: podBody('shop-2', { app: 'shop' }) });
    expect(containerNames(outside)).toEqual(['sidecar1', 'app', 'log-agent']);
  });

  it('namespace beside namespaceSelector: the namespace wins, stored as upstream v1.9.1 reads it back', async () => {
    const spec = { namespace: MESH_NS, namespaceSelector: { matchLabels: { selects: 'nothing' } } };
    const stored = await createSidecarSet(oneSidecar('it-ns-wins', 'ns-wins', 'ns-proxy', spec));
    expect(stored.spec.namespace).toBeUndefined();
    expect(stored.spec.namespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': MESH_NS } });
    await waitForInjection(
      MESH_NS,
      { app: 'ns-wins' },
      (p) => containerNames(p).includes('ns-proxy'),
      'it-ns-wins to reach the webhook cache',
    );
    const outside = await core.createNamespacedPod({
      namespace: APPS_NS,
      body: podBody('ns-wins-outside', { app: 'ns-wins' }),
      dryRun: 'All',
    });
    expect(containerNames(outside)).not.toContain('ns-proxy');
  });

  it("injects the revision injectionStrategy.revision pins, read from the ControllerRevisions of the manager's namespace", async () => {
    // Recorded as upstream records one: labelled with the SidecarSet, its spec replaced wholesale.
    await kc.makeApiClient(AppsV1Api).createNamespacedControllerRevision({
      namespace: INSTALL_NS,
      body: {
        metadata: { name: 'it-canary-stable', labels: { 'kruise.io/sidecarset-name': 'it-canary' } },
        revision: 1,
        data: {
          spec: {
            $patch: 'replace',
            containers: [{ name: 'canary-proxy', image: 'envoy:stable', podInjectPolicy: 'AfterAppContainer' }],
          },
        },
      },
    });
    const body: SidecarSetObject = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'it-canary' },
      spec: {
        selector: { matchLabels: { app: 'canary' } },
        containers: [{ name: 'canary-proxy', image: 'envoy:canary' }],
        injectionStrategy: { revision: { revisionName: 'it-canary-stable' } },
      },
    };
    // The validating webhook refuses it until its ControllerRevision cache has the revision.
    await waitFor('the revision to reach the webhook cache', () =>
      createSidecarSet(body).then(
        () => true,
        () => undefined,
      ),
    );
    await waitForInjection(
      APPS_NS,
      { app: 'canary' },
      (p) => containerNames(p).includes('canary-proxy'),
      'it-canary to reach the webhook cache',
    );
    const pod = await core.createNamespacedPod({ namespace: APPS_NS, body: podBody('canary-1', { app: 'canary' }) });
    expect(pod.spec!.containers.map((c) => `${c.name}=${c.image}`)).toEqual([
      'app=shop:1',
      'canary-proxy=envoy:stable',
    ]);
    expect(JSON.parse(pod.metadata!.annotations![SidecarSetAnnotations.hash])['it-canary'].controllerRevision).toBe(
      'it-canary-stable',
    );
  });
});

describe('SidecarSet admission', () => {
  const valid = (name: string, spec: object = {}): SidecarSetObject => ({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: 'admission' } },
      containers: [{ name: 'proxy', image: 'envoy:1' }],
      ...spec,
    },
  });
  const create = (body: SidecarSetObject) => rejection(() => createSidecarSet(body));

  it("rejects upstream-only fields by name through the CRD's CEL rules, never pruning them", async () => {
    // priorityStrategy is served now (upstream semantics); the webhook applies upstream's rules to it.
    expect(
      await create(
        valid('it-bad-priority', {
          updateStrategy: {
            priorityStrategy: { weightPriority: [{ weight: 101, matchSelector: { matchLabels: { a: 'b' } } }] },
          },
        }),
      ),
    ).toMatch(
      /spec\.updateStrategy\.priorityStrategy\.weightPriority\[0\]\.weight: must be a whole number from 0 to 100/,
    );
    expect(
      await create(
        valid('it-bad-hot', {
          containers: [
            {
              name: 'proxy',
              image: 'envoy:1',
              upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' },
            },
          ],
        }),
      ),
    ).toMatch(/HotUpgrade is not supported by the kruise-ha runtime; use ColdUpgrade or remove upgradeStrategy/);
    expect(
      await create(
        valid('it-bad-device', {
          containers: [{ name: 'proxy', image: 'envoy:1', shareVolumeDevicePolicy: { type: 'enabled' } }],
        }),
      ),
    ).toMatch(
      /spec\.containers\[0\]: Invalid value: containers\[\]\.shareVolumeDevicePolicy is not supported by the kruise-ha runtime/,
    );
    // namespaceSelector is a plain label selector, as upstream's: a member it does not have is pruned, and the empty
    // selector left is refused, as upstream v1.9.1 refuses it.
    expect(await create(valid('it-bad-namespaces', { namespaceSelector: { namespaces: ['a', 'b'] } }))).toMatch(
      /spec\.namespaceSelector: is empty; upstream refuses an empty selector/,
    );
  });

  it('rejects malformed fields through the CRD schema, with the field and the allowed values', async () => {
    expect(
      await create(
        valid('it-bad-policy', { containers: [{ name: 'proxy', image: 'envoy:1', podInjectPolicy: 'First' }] }),
      ),
    ).toMatch(
      /spec\.containers\[0\]\.podInjectPolicy: Unsupported value: "First": supported values: "BeforeAppContainer", "AfterAppContainer"/,
    );
    expect(await create(valid('it-bad-image', { containers: [{ name: 'proxy' }] }))).toMatch(
      /spec\.containers\[0\]\.image: Required value/,
    );
    expect(
      await create(valid('it-bad-op', { selector: { matchExpressions: [{ key: 'app', operator: 'Equals' }] } })),
    ).toMatch(/spec\.selector\.matchExpressions\[0\]\.operator: Unsupported value: "Equals"/);
    // Wrong types reach the mutating (defaulting) webhook before the schema is checked: it
    // must leave them for the schema to name, not fail the request.
    expect(await create(valid('it-bad-strategy', { updateStrategy: 'fast' }))).toMatch(
      /spec\.updateStrategy: Invalid value: "string": spec\.updateStrategy in body must be of type object/,
    );
    expect(await create(valid('it-bad-containers', { containers: ['proxy'] }))).toMatch(
      /spec\.containers\[0\]: Invalid value: "string": spec\.containers\[0\] in body must be of type object/,
    );
  });

  it('rejects what only the validating webhook can judge, naming the field and the fix', async () => {
    const message = await create(
      valid('it-bad-webhook', {
        selector: undefined,
        unknownField: true,
        containers: [
          { name: 'proxy', image: 'envoy:1' },
          { name: 'proxy', image: 'envoy:2' },
        ],
      }),
    );
    expect(message).toMatch(
      /^admission webhook "vsidecarset\.kb\.io" denied the request: SidecarSet it-bad-webhook is invalid: /,
    );
    expect(message).toMatch(
      /spec\.unknownField: is not supported by this runtime \(upstream-only feature\); remove it/,
    );
    expect(message).toContain(
      'spec.selector: is required; select the pods to inject, e.g. { matchLabels: { app: "web" } }; an empty selector selects no pod (upstream refuses it)',
    );
    expect(message).toMatch(
      /spec\.containers\[1\]\.name: "proxy" is already used by spec\.containers\[0\]; container names must be unique/,
    );
    // transferEnv by fieldRef: upstream's rules (validateDownwardAPI), applied by the webhook.
    expect(
      await create(
        valid('it-bad-from', {
          containers: [
            {
              name: 'proxy',
              image: 'envoy:1',
              transferEnv: [
                { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['main']" } }, envName: 'TZ' },
              ],
            },
          ],
        }),
      ),
    ).toMatch(
      /spec\.containers\[0\]\.transferEnv\[0\]\.sourceContainerNameFrom\.fieldRef\.apiVersion: is required \(v1\)/,
    );
    // A pinned revision must exist (read from the ControllerRevision cache); patchPodMetadata needs the whitelist.
    expect(
      await create(valid('it-bad-revision', { injectionStrategy: { revision: { revisionName: 'nope' } } })),
    ).toMatch(
      /spec\.injectionStrategy\.revision: ControllerRevision "nope" \(spec\.injectionStrategy\.revision\.revisionName of SidecarSet it-bad-revision\) not found/,
    );
    expect(await create(valid('it-bad-patch', { patchPodMetadata: [{ annotations: { a: 'b' } }] }))).toMatch(
      /spec\.patchPodMetadata: no patch metadata whitelist is configured/,
    );
    expect(await create(valid('it-bad-key', { selector: { matchLabels: { 'bad key': 'x' } } }))).toMatch(
      /spec\.selector\.matchLabels: is not a valid label key \(got "bad key"\)/,
    );
    // As upstream (ValidatePositiveIntOrPercent), 120% is a valid partition (clamped to the pods); a word is not.
    expect(await create(valid('it-bad-partition', { updateStrategy: { partition: 'half' } }))).toMatch(
      /spec\.updateStrategy\.partition: "half" must be a whole number >= 0 or a percentage/,
    );
  });

  it('rejects a second SidecarSet injecting the same container into overlapping pods, on create and on update', async () => {
    await createSidecarSet(valid('it-first'));
    const conflict =
      /SidecarSet it-second is invalid: spec\.containers: container "proxy" is also injected by SidecarSet "it-first" into pods both select; rename the container or make the selectors disjoint/;
    // The webhook reads its SidecarSet cache: wait until it has it-first (the first attempt may race it).
    const message = await waitFor('the conflict to be detected', async () => {
      const m = await rejection(() =>
        sidecarSets.create(
          valid('it-second', { selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] } }),
        ),
      ).catch(() => undefined);
      if (m === undefined) await sidecarSets.delete('it-second');
      return m;
    });
    expect(message).toMatch(conflict);
    // Disjoint selectors are fine; moving onto the first one's pods is not.
    await createSidecarSet(valid('it-second', { selector: { matchLabels: { app: 'other' } } }));
    expect(
      await rejection(() =>
        sidecarSets.jsonPatch('it-second', [
          { op: 'replace', path: '/spec/selector', value: { matchLabels: { app: 'admission' } } },
        ]),
      ),
    ).toMatch(conflict);
  });
});

/** One sample of the rolling pods as the kubelet sees them. */
interface Sample {
  total: number;
  updated: number;
  ready: number;
  updatedReady: number;
  unavailable: number;
  patchedNotRunning: number;
}

/**
 * Drives an image rollout as the kubelet: a pod whose sidecar spec image changed first goes
 * not-ready (container restarting), then ready running the new image. After each step it
 * waits until the SidecarSet status matches the pods (so the manager has seen the step and made
 * its next move), and it checks maxUnavailable on every list of pods it reads.
 */
class RolloutDriver {
  readonly samples: Sample[] = [];
  maxUnavailableSeen = 0;

  constructor(
    readonly sidecarSet: string,
    readonly namespace: string,
    readonly selector: string,
    readonly container: string,
    readonly maxUnavailable: number,
  ) {}

  async pods(): Promise<V1Pod[]> {
    return (await core.listNamespacedPod({ namespace: this.namespace, labelSelector: this.selector })).items;
  }

  /** Counts as the status should; asserts the bound on every read. */
  sample(pods: V1Pod[], image: string): Sample {
    const sidecar = (p: V1Pod) => p.spec!.containers.find((c) => c.name === this.container)!;
    const reported = (p: V1Pod) => p.status?.containerStatuses?.find((c) => c.name === this.container)?.image;
    const consistent = (p: V1Pod) => reported(p) === reportedImage(sidecar(p).image!);
    const updated = pods.filter((p) => sidecar(p).image === image);
    const s: Sample = {
      total: pods.length,
      updated: updated.length,
      // Upstream counts a pod ready when it is Ready and its sidecars run what the spec asks for.
      ready: pods.filter((p) => isReady(p) && consistent(p)).length,
      updatedReady: updated.filter((p) => isReady(p) && consistent(p)).length,
      unavailable: pods.filter((p) => !isReady(p) || !consistent(p)).length,
      patchedNotRunning: pods.filter((p) => !consistent(p)).length,
    };
    this.samples.push(s);
    this.maxUnavailableSeen = Math.max(this.maxUnavailableSeen, s.unavailable);
    if (s.unavailable > this.maxUnavailable) {
      throw new Fatal(
        `maxUnavailable ${this.maxUnavailable} exceeded: ${s.unavailable} pods unavailable at once ${JSON.stringify(s)}`,
      );
    }
    return s;
  }

  /** Waits until status and pods agree; returns the agreed sample. */
  async settle(image: string, timeoutMs = 15_000): Promise<Sample> {
    let last = '';
    return waitFor(
      `SidecarSet ${this.sidecarSet} status to match its pods`,
      async () => {
        const [s, pods] = await Promise.all([sidecarSets.get(this.sidecarSet), this.pods()]);
        const sample = this.sample(pods, image);
        const status = s.status ?? {};
        const expected = {
          observedGeneration: s.metadata.generation,
          matchedPods: sample.total,
          updatedPods: sample.updated,
          readyPods: sample.ready,
          updatedReadyPods: sample.updatedReady,
        };
        const actual = {
          observedGeneration: status.observedGeneration,
          matchedPods: status.matchedPods,
          updatedPods: status.updatedPods,
          readyPods: status.readyPods,
          updatedReadyPods: status.updatedReadyPods,
        };
        last = JSON.stringify({ expected, actual });
        return JSON.stringify(expected) === JSON.stringify(actual) ? sample : undefined;
      },
      timeoutMs,
    ).catch((err: Error) => {
      throw new Error(`${err.message}: ${last}`);
    });
  }

  /**
   * One kubelet step: restarting pods come up with the new image, freshly patched pods go down. Returns whether
   * anything changed.
   */
  async kubeletStep(): Promise<boolean> {
    const pods = await this.pods();
    let changed = false;
    for (const pod of pods) {
      const spec = pod.spec!.containers.find((c) => c.name === this.container)!.image!;
      const reported = pod.status?.containerStatuses?.find((c) => c.name === this.container)?.image;
      if (reported === reportedImage(spec)) continue;
      const oldImage = reported!.replace(/^docker\.io\/library\//, '');
      // Ready and still running the old image: the container restarts. Not ready: it is back, on the new image.
      await patchPodStatus(
        core,
        pod,
        isReady(pod) ? kubeletStatus(pod, false, { [this.container]: oldImage }) : kubeletStatus(pod, true),
      );
      changed = true;
    }
    return changed;
  }

  /**
   * Runs kubelet steps until `updated` pods run `image` and everything is ready and settled,
   * calling `afterStep` with each settled sample.
   */
  async run(
    image: string,
    updated: number,
    timeoutMs: number,
    afterStep?: (s: Sample) => Promise<void>,
    settleTimeoutMs?: number,
  ): Promise<Sample> {
    const deadline = Date.now() + timeoutMs;
    let sample = await this.settle(image, settleTimeoutMs);
    while (!(sample.updated === updated && sample.updatedReady === updated && sample.unavailable === 0)) {
      if (Date.now() > deadline)
        throw new Error(`rollout of ${image} did not finish within ${timeoutMs}ms: ${JSON.stringify(sample)}`);
      if (sample.updated > updated) throw new Error(`rollout went past ${updated} pods: ${JSON.stringify(sample)}`);
      if (!(await this.kubeletStep())) await sleep(100); // nothing to do: the manager's move
      sample = await this.settle(image, settleTimeoutMs);
      await afterStep?.(sample);
    }
    return sample;
  }

  /** For `ms`, nothing more may be updated (partition, paused); the bound and the status hold. */
  async holdsStill(image: string, updated: number, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      const sample = this.sample(await this.pods(), image);
      expect(sample.updated).toBe(updated);
      await sleep(200);
    }
    expect((await this.settle(image)).updated).toBe(updated);
  }
}

async function rollingPods(sidecarSet: string, app: string, count: number): Promise<void> {
  await waitForInjection(
    ROLL_NS,
    { app },
    (p) => containerNames(p).includes(`${app}-proxy`),
    `${sidecarSet} to reach the webhook cache`,
  );
  for (let i = 0; i < count; i++) {
    const pod = await core.createNamespacedPod({ namespace: ROLL_NS, body: podBody(`${app}-${i}`, { app }) });
    expect(containerNames(pod)).toEqual([`${app}-proxy`, 'app']);
    await patchPodStatus(core, pod, kubeletStatus(pod, true));
  }
}

describe('SidecarSet in-place rollout', () => {
  const driver = new RolloutDriver('it-roll', ROLL_NS, 'app=roll', 'roll-proxy', 2);

  beforeAll(async () => {
    await createSidecarSet({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'it-roll' },
      spec: {
        selector: { matchLabels: { app: 'roll' } },
        namespace: ROLL_NS,
        containers: [{ name: 'roll-proxy', image: 'proxy:1' }],
        updateStrategy: { maxUnavailable: 2, partition: 3 },
      },
    });
    await rollingPods('it-roll', 'roll', 10);
  }, 60_000);

  it('counts the pods exactly before any change', async () => {
    expect(await driver.settle('proxy:1')).toMatchObject({
      total: 10,
      updated: 10,
      ready: 10,
      updatedReady: 10,
      unavailable: 0,
    });
    // As upstream: the name of the latest ControllerRevision, `<sidecarset>-<safe-encoded FNV hash>`.
    const stored = await sidecarSets.get('it-roll');
    expect(stored.status.latestRevision).toMatch(/^it-roll-[bcdfghjklmnpqrstvwxz2456789]+$/);
  });

  it('rolls a new image through in place, at most maxUnavailable at once, stopping at the partition', async () => {
    await sidecarSets.jsonPatch('it-roll', [{ op: 'replace', path: '/spec/containers/0/image', value: 'proxy:2' }]);
    const before = await driver.pods();
    const final = await driver.run('proxy:2', 7, 60_000);
    expect(final).toMatchObject({ total: 10, updated: 7, ready: 10, updatedReady: 7 });
    expect(driver.maxUnavailableSeen).toBe(2); // batches did use the budget, and never more
    // In place: same pods (uid), only the sidecar image changed in the spec.
    const after = await driver.pods();
    expect(after.map((p) => p.metadata!.uid).sort()).toEqual(before.map((p) => p.metadata!.uid).sort());
    for (const pod of after) expect(pod.spec!.containers.find((c) => c.name === 'app')!.image).toBe('shop:1');
    await driver.holdsStill('proxy:2', 7, 3_000);
  }, 90_000);

  it('paused halts the rollout; resuming finishes it', async () => {
    await sidecarSets.jsonPatch('it-roll', [
      { op: 'add', path: '/spec/updateStrategy/paused', value: true },
      { op: 'replace', path: '/spec/updateStrategy/partition', value: 0 },
    ]);
    await driver.holdsStill('proxy:2', 7, 3_000);
    await sidecarSets.jsonPatch('it-roll', [{ op: 'replace', path: '/spec/updateStrategy/paused', value: false }]);
    expect(await driver.run('proxy:2', 10, 60_000)).toMatchObject({
      total: 10,
      updated: 10,
      ready: 10,
      updatedReady: 10,
    });
  }, 90_000);

  it("records each revision as a ControllerRevision in the manager's namespace", async () => {
    const { status } = await sidecarSets.get('it-roll');
    const revisions = (
      await kc
        .makeApiClient(AppsV1Api)
        .listNamespacedControllerRevision({ namespace: INSTALL_NS, labelSelector: 'kruise.io/sidecarset-name=it-roll' })
    ).items;
    expect(revisions.map((r) => [r.revision, r.data.spec.containers[0].image])).toEqual([
      [1, 'proxy:1'],
      [2, 'proxy:2'],
    ]);
    expect(revisions[1].metadata!.name).toBe(status.latestRevision);
    // Each revision records the SidecarSet's revision hash it was taken at, as upstream's NewRevision.
    expect(revisions.map((r) => r.metadata!.annotations![SidecarSetAnnotations.hash])).toEqual([
      expect.stringMatching(/^[bcdfghjklmnpqrstvwxz2456789]{64}$/),
      (await sidecarSets.get('it-roll')).metadata.annotations[SidecarSetAnnotations.hash],
    ]);
  });

  it('updates only the pods the update selector picks', async () => {
    for (const name of ['roll-3', 'roll-8']) {
      await core.patchNamespacedPod(
        { name, namespace: ROLL_NS, body: { metadata: { labels: { canary: 'true' } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    }
    await sidecarSets.jsonPatch('it-roll', [
      { op: 'replace', path: '/spec/containers/0/image', value: 'proxy:3' },
      { op: 'add', path: '/spec/updateStrategy/selector', value: { matchLabels: { canary: 'true' } } },
    ]);
    expect(await driver.run('proxy:3', 2, 60_000)).toMatchObject({ total: 10, updated: 2, updatedReady: 2 });
    const canaries = (await driver.pods())
      .filter((p) => p.spec!.containers[0].image === 'proxy:3')
      .map((p) => p.metadata!.name);
    expect(canaries.sort()).toEqual(['roll-3', 'roll-8']);
    await driver.holdsStill('proxy:3', 2, 2_000);
    await sidecarSets.jsonPatch('it-roll', [{ op: 'remove', path: '/spec/updateStrategy/selector' }]);
    expect(await driver.run('proxy:3', 10, 60_000)).toMatchObject({ total: 10, updated: 10, updatedReady: 10 });
  }, 90_000);

  it('leaves pods whose sidecar changed beyond its image for recreation', async () => {
    const { metadata } = await sidecarSets.jsonPatch('it-roll', [
      { op: 'add', path: '/spec/containers/0/args', value: ['--verbose'] },
    ]);
    // The status counts every pod as not updated, and nothing is patched.
    await waitFor('the status of the new revision', async () => {
      const { status } = await sidecarSets.get('it-roll');
      return status.observedGeneration === metadata.generation && status.matchedPods === 10 && status.updatedPods === 0
        ? true
        : undefined;
    });
    await sleep(1_000);
    for (const pod of await driver.pods())
      expect(pod.spec!.containers[0]).toEqual(expect.not.objectContaining({ args: expect.anything() }));
    expect(driver.sample(await driver.pods(), 'proxy:3')).toMatchObject({ updated: 10, unavailable: 0 });
  });

  it('deleting the SidecarSet leaves the pods untouched', async () => {
    const before = await driver.pods();
    expect(await m0.leading()).toBe(true);
    const reconciled = await sidecarSetReconciles(m0);
    await sidecarSets.delete('it-roll');
    await waitForInjection(
      ROLL_NS,
      { app: 'roll' },
      (p) => !containerNames(p).includes('roll-proxy'),
      'the deletion to reach the webhook cache',
    );
    // The leader's controller has handled the deletion (a reconcile ended after it), so an unwanted write would be
    // in the API server by now: no fixed sleep stands in for that.
    await waitFor('the leader to reconcile the deletion', async () =>
      (await sidecarSetReconciles(m0)) > reconciled ? true : undefined,
    );
    const after = await driver.pods();
    expect(after.map((p) => [p.metadata!.name, p.metadata!.resourceVersion])).toEqual(
      before.map((p) => [p.metadata!.name, p.metadata!.resourceVersion]),
    );
  });
});

describe('SidecarSet rollout across a leader crash', () => {
  const driver = new RolloutDriver('it-failover', ROLL_NS, 'app=failover', 'failover-proxy', 2);

  beforeAll(async () => {
    await createSidecarSet({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: 'it-failover' },
      spec: {
        selector: { matchLabels: { app: 'failover' } },
        namespace: ROLL_NS,
        containers: [{ name: 'failover-proxy', image: 'proxy:1' }],
        updateStrategy: { maxUnavailable: 2 },
      },
    });
    await rollingPods('it-failover', 'failover', 10);
    await driver.settle('proxy:1');
  }, 60_000);

  it('the new leader finishes the rollout without overshooting maxUnavailable', async () => {
    expect([await m0.leading(), await m1.leading()]).toEqual([true, false]);
    await sidecarSets.jsonPatch('it-failover', [{ op: 'replace', path: '/spec/containers/0/image', value: 'proxy:2' }]);
    let killedAt: Sample | undefined;
    // Kill the leader right after it has patched a batch that is not running yet.
    const final = await driver.run(
      'proxy:2',
      10,
      90_000,
      async (s) => {
        if (killedAt || s.updated < 3 || s.patchedNotRunning === 0) return;
        killedAt = s;
        m0.signal('SIGKILL');
        await m0.exited;
        await removeEndpoint(kc, INSTALL_NS, m0.name);
        await addEndpoint(kc, INSTALL_NS, m1.name, m1.ports.webhook);
      },
      30_000,
    );
    expect(killedAt).toBeDefined();
    expect(killedAt!.updated).toBeLessThan(10);
    expect(final).toMatchObject({ total: 10, updated: 10, ready: 10, updatedReady: 10 });
    expect(driver.maxUnavailableSeen).toBeLessThanOrEqual(2);
    expect(await m1.leading()).toBe(true);
    // Both leaders did part of the work.
    expect(m0.logs()).toMatch(/"msg":"updated sidecar images in place"/);
    expect(m1.logs()).toMatch(/"msg":"updated sidecar images in place"/);
  }, 120_000);
});
