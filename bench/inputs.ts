/**
 * The benchmarks' inputs as a real cluster has them (issue #29): every benchmark pod is made from a workload that
 * exists in the API server before the clock starts, shaped as that workload's controller makes its pods.
 *
 * - `Deployment` (what almost every pod in a cluster is): a Deployment and its ReplicaSet (owned by the Deployment,
 *   `pod-template-hash` label, revision annotations), pods owned by the ReplicaSet with its real UID, named
 *   `<replicaset>-<random>` by `generateName`, carrying the template's labels plus `pod-template-hash`. Upstream's
 *   pod webhook resolves such a pod's owner chain (ReplicaSet → Deployment) from its informer caches.
 * - `Job`, `DaemonSet` and `Custom` (a namespaced custom resource without a scale subresource): pods owned by those.
 *   Upstream's controller finder has no cached lookup for these kinds: it asks the API server (a scale subresource
 *   GET, then an unstructured GET), under its client-side rate limiter. The benchmark measures that case separately and
 *   labels it "upstream's real limit".
 *
 * No kube-controller-manager runs next to the envtest API server, so the benchmark writes what the controllers would
 * (the ReplicaSet a Deployment controller creates); nothing else differs from a cluster's objects. The ReplicaSet's
 * hash is derived from its template (sha256, in the controller's alphabet), not the controller's fnv of Go's struct
 * dump: a name, never compared with anything.
 */
import {
  ApiextensionsV1Api,
  KubernetesObjectApi,
  type KubeConfig,
  type KubernetesObject,
  type V1ObjectMeta,
  type V1OwnerReference,
  type V1Pod,
  type V1PodSpec,
} from '@kubernetes/client-node';
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { podReview } from '../test/integration/support/ha.js';

export type OwnerKind = 'Deployment' | 'Job' | 'DaemonSet' | 'Custom';

/** The custom workload kind (a CRD the benchmark installs): no scale subresource, as many operators' workloads. */
export const CUSTOM_WORKLOAD = { group: 'bench.kruise-ha.dev', version: 'v1', kind: 'Worker', plural: 'workers' };

/** The service account whose controller creates each kind's pods (the AdmissionReview's userInfo). */
const CREATORS: Record<OwnerKind, string> = {
  Deployment: 'system:serviceaccount:kube-system:replicaset-controller',
  Job: 'system:serviceaccount:kube-system:job-controller',
  DaemonSet: 'system:serviceaccount:kube-system:daemon-set-controller',
  Custom: 'system:serviceaccount:bench-operators:worker-operator',
};

export interface WorkloadOptions {
  kind?: OwnerKind;
  /** Whether the pods carry `mesh: on`, which the benchmark SidecarSet selects (the answer injects a sidecar). */
  mesh?: boolean;
  replicas?: number;
}

/** A workload created in the API server, and the pods its controller would create. */
export interface Workload {
  kind: OwnerKind;
  namespace: string;
  /** Every object created for it, top first (Deployment, then ReplicaSet), with the UIDs the API server gave them. */
  objects: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
  /** The pods' controller reference (the ReplicaSet for a Deployment). */
  owner: V1OwnerReference;
  /** The user whose controller creates these pods. */
  creator: string;
  /** Pod number `i` as the owner's controller creates it (not stored: `generateName`, no name). */
  pod(i: number): V1Pod;
}

/** A pod template as a realistic app's Deployment carries it (~4 KiB as an AdmissionReview). */
export function appTemplate(app: string, mesh: boolean): { metadata: V1ObjectMeta; spec: V1PodSpec } {
  return {
    metadata: {
      labels: {
        app,
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/version': '1.4.2',
        tier: 'backend',
        ...(mesh ? { mesh: 'on' } : {}),
      },
      annotations: {
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
        'kubectl.kubernetes.io/restartedAt': '2026-11-20T10:00:00Z',
      },
    },
    spec: {
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 1000,
        fsGroup: 2000,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'app',
          image: `registry.example.com/${app}:1.4.2`,
          imagePullPolicy: 'IfNotPresent',
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'metrics', containerPort: 9090 },
          ],
          env: [
            { name: 'TZ', value: 'UTC' },
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
            { name: 'DB_PASSWORD', valueFrom: { secretKeyRef: { name: `${app}-db`, key: 'password' } } },
          ],
          resources: { requests: { cpu: '250m', memory: '256Mi' }, limits: { cpu: '1', memory: '512Mi' } },
          readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
          livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10, failureThreshold: 3 },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/app' },
            { name: 'tmp', mountPath: '/tmp' },
          ],
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
        },
        {
          name: 'log-shipper',
          image: 'registry.example.com/shipper:2.1',
          args: ['--path=/var/log/app'],
          resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '128Mi' } },
          volumeMounts: [{ name: 'tmp', mountPath: '/var/log/app' }],
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: `${app}-config` } },
        { name: 'tmp', emptyDir: {} },
      ],
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
  };
}

/** A small pod template (one container), for fleets of stored pods. */
export function smallTemplate(
  app: string,
  labels: Record<string, string>,
): { metadata: V1ObjectMeta; spec: V1PodSpec } {
  return {
    metadata: { labels: { app, ...labels } },
    spec: { containers: [{ name: 'app', image: `${app}:1` }] },
  };
}

/** The 10-character `pod-template-hash` of a template, in the ReplicaSet controller's alphabet. */
export function templateHash(template: unknown): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  const digest = createHash('sha256').update(JSON.stringify(template)).digest();
  return Array.from(digest.subarray(0, 10), (b) => alphabet[b % alphabet.length]).join('');
}

const controllerRef = (o: KubernetesObject): V1OwnerReference => ({
  apiVersion: o.apiVersion!,
  kind: o.kind!,
  name: o.metadata!.name!,
  uid: o.metadata!.uid!,
  controller: true,
  blockOwnerDeletion: true,
});

const clone = <T>(x: T): T => JSON.parse(JSON.stringify(x)) as T;

/** Installs the custom workload's CRD (once per API server) and waits until it is served. */
export async function ensureCustomWorkloadCrd(kc: KubeConfig): Promise<void> {
  const ext = kc.makeApiClient(ApiextensionsV1Api);
  const name = `${CUSTOM_WORKLOAD.plural}.${CUSTOM_WORKLOAD.group}`;
  await ext
    .createCustomResourceDefinition({
      body: {
        metadata: { name },
        spec: {
          group: CUSTOM_WORKLOAD.group,
          scope: 'Namespaced',
          names: {
            kind: CUSTOM_WORKLOAD.kind,
            plural: CUSTOM_WORKLOAD.plural,
            singular: CUSTOM_WORKLOAD.kind.toLowerCase(),
            listKind: `${CUSTOM_WORKLOAD.kind}List`,
          },
          versions: [
            {
              name: CUSTOM_WORKLOAD.version,
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', x_kubernetes_preserve_unknown_fields: true } },
            },
          ],
        },
      },
    })
    .catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
    });
  const objects = KubernetesObjectApi.makeApiClient(kc);
  for (const deadline = Date.now() + 60_000; ;) {
    const crd = await ext.readCustomResourceDefinition({ name });
    const established = crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    // Established, and discovery (which KubernetesObjectApi uses) knows the kind.
    if (established) {
      const listed = await objects
        .list(`${CUSTOM_WORKLOAD.group}/${CUSTOM_WORKLOAD.version}`, CUSTOM_WORKLOAD.kind, 'default')
        .then(
          () => true,
          () => false,
        );
      if (listed) return;
    }
    if (Date.now() > deadline) throw new Error(`CRD ${name} was not served within 60 s`);
    await sleep(200);
  }
}

/**
 * Creates workload `app` of `kind` in `namespace` (which must exist) and returns it: what a cluster has before any of
 * its pods is admitted.
 */
export async function createWorkload(
  kc: KubeConfig,
  namespace: string,
  app: string,
  options: WorkloadOptions & { template?: { metadata: V1ObjectMeta; spec: V1PodSpec } } = {},
): Promise<Workload> {
  const kind = options.kind ?? 'Deployment';
  const replicas = options.replicas ?? 64;
  const template = clone(options.template ?? appTemplate(app, options.mesh ?? false));
  const api = KubernetesObjectApi.makeApiClient(kc);
  const create = async (o: KubernetesObject) => api.create(o);
  const objects: Workload['objects'] = [];
  const record = (o: KubernetesObject) => {
    objects.push({ apiVersion: o.apiVersion!, kind: o.kind!, name: o.metadata!.name!, uid: o.metadata!.uid! });
    return o;
  };
  const selector = { matchLabels: { app } };
  // The pod's metadata as the owner's controller builds it from the template (k8s.io/kubernetes pkg/controller
  // GetPodFromTemplate: template labels, annotations and finalizers; generateName `<owner>-`; the controller ref).
  let podMeta: V1ObjectMeta;
  let podSpec: V1PodSpec = template.spec;
  switch (kind) {
    case 'Deployment': {
      const deployment = record(
        await create({
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: app, namespace, annotations: { 'deployment.kubernetes.io/revision': '1' } },
          spec: { replicas, selector, template },
        } as KubernetesObject),
      );
      const hash = templateHash(template);
      const rsTemplate = clone(template);
      rsTemplate.metadata.labels = { ...rsTemplate.metadata.labels, 'pod-template-hash': hash };
      const replicaSet = record(
        await create({
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name: `${app}-${hash}`,
            namespace,
            labels: rsTemplate.metadata.labels,
            annotations: {
              'deployment.kubernetes.io/desired-replicas': String(replicas),
              'deployment.kubernetes.io/max-replicas': String(replicas + Math.ceil(replicas / 4)),
              'deployment.kubernetes.io/revision': '1',
            },
            ownerReferences: [controllerRef(deployment)],
          },
          spec: {
            replicas,
            selector: { matchLabels: { ...selector.matchLabels, 'pod-template-hash': hash } },
            template: rsTemplate,
          },
        } as KubernetesObject),
      );
      podMeta = {
        generateName: `${replicaSet.metadata!.name}-`,
        labels: rsTemplate.metadata.labels,
        annotations: rsTemplate.metadata.annotations,
        ownerReferences: [controllerRef(replicaSet)],
      };
      break;
    }
    case 'Job': {
      const job = record(
        await create({
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: app, namespace },
          // Suspended: nothing here would run its pods anyway. The API server adds the controller-uid selector and
          // labels to the template, which the pods then carry.
          spec: {
            suspend: true,
            parallelism: replicas,
            completions: replicas,
            template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } },
          },
        } as KubernetesObject),
      );
      const stored = job as unknown as { spec: { template: { metadata: V1ObjectMeta; spec: V1PodSpec } } };
      podMeta = {
        generateName: `${app}-`,
        labels: stored.spec.template.metadata.labels,
        annotations: stored.spec.template.metadata.annotations,
        finalizers: ['batch.kubernetes.io/job-tracking'],
        ownerReferences: [controllerRef(job)],
      };
      podSpec = stored.spec.template.spec;
      break;
    }
    case 'DaemonSet': {
      const daemonSet = record(
        await create({
          apiVersion: 'apps/v1',
          kind: 'DaemonSet',
          metadata: { name: app, namespace },
          spec: { selector, template },
        } as KubernetesObject),
      );
      podMeta = {
        generateName: `${app}-`,
        labels: {
          ...template.metadata.labels,
          'controller-revision-hash': templateHash(template).slice(0, 10),
          'pod-template-generation': '1',
        },
        annotations: template.metadata.annotations,
        ownerReferences: [controllerRef(daemonSet)],
      };
      break;
    }
    case 'Custom': {
      const worker = record(
        await create({
          apiVersion: `${CUSTOM_WORKLOAD.group}/${CUSTOM_WORKLOAD.version}`,
          kind: CUSTOM_WORKLOAD.kind,
          metadata: { name: app, namespace },
          spec: { replicas, selector, template },
        } as KubernetesObject),
      );
      podMeta = {
        generateName: `${app}-`,
        labels: template.metadata.labels,
        annotations: template.metadata.annotations,
        ownerReferences: [controllerRef(worker)],
      };
      break;
    }
  }
  const metaJson = JSON.stringify(podMeta);
  const specJson = JSON.stringify(podSpec);
  return {
    kind,
    namespace,
    objects,
    owner: podMeta.ownerReferences![0],
    creator: CREATORS[kind],
    pod: (i: number) => {
      const spec = JSON.parse(specJson) as V1PodSpec;
      // A DaemonSet's pod is bound to its node by affinity on the node's name.
      if (kind === 'DaemonSet')
        spec.affinity = {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchFields: [{ key: 'metadata.name', operator: 'In', values: [`bench-node-${i % 16}`] }] },
              ],
            },
          },
        };
      return { metadata: JSON.parse(metaJson) as V1ObjectMeta, spec };
    },
  };
}

/**
 * What is wrong with `pod`'s owner references against the API server: for each reference, the object it names must
 * exist with that UID, and so must that object's own controller (a ReplicaSet's Deployment). Empty when all is well.
 */
export async function missingOwners(kc: KubeConfig, namespace: string, pod: V1Pod): Promise<string[]> {
  const api = KubernetesObjectApi.makeApiClient(kc);
  const problems: string[] = [];
  const check = async (refs: V1OwnerReference[] | undefined, of: string, depth: number): Promise<void> => {
    for (const ref of refs ?? []) {
      const what = `${of} names owner ${ref.kind} ${namespace}/${ref.name} (uid ${ref.uid})`;
      let owner: KubernetesObject;
      try {
        owner = await api.read({ apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name, namespace } });
      } catch (e) {
        problems.push(`${what}, which does not exist (${(e as { code?: number }).code ?? (e as Error).message})`);
        continue;
      }
      if (owner.metadata?.uid !== ref.uid) {
        problems.push(`${what}, but that object's uid is ${owner.metadata?.uid}`);
        continue;
      }
      if (depth < 3) await check(owner.metadata?.ownerReferences, `${ref.kind} ${ref.name}`, depth + 1);
    }
  };
  await check(pod.metadata?.ownerReferences, `pod ${pod.metadata?.name ?? `${pod.metadata?.generateName}…`}`, 0);
  return problems;
}

/**
 * An AdmissionReview v1 of a CREATE of `pod` in `namespace` by `username` (its controller's service account), as the
 * API server sends it: ha.ts's review with that user and the namespace in the object.
 */
export function podCreateReview(pod: V1Pod, namespace: string, username: string): string {
  const review = podReview({ ...pod, metadata: { ...pod.metadata, namespace } }, namespace) as {
    request: { userInfo: object };
  };
  const serviceAccountNamespace = username.split(':')[2] ?? 'kube-system';
  review.request.userInfo = {
    username,
    uid: randomUUID(),
    groups: ['system:serviceaccounts', `system:serviceaccounts:${serviceAccountNamespace}`, 'system:authenticated'],
  };
  return JSON.stringify(review);
}
