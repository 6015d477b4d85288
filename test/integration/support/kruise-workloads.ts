/**
 * One minimal, valid object of every Kruise kind (after upstream's config/samples, trimmed to what
 * v1.8.3's validating webhooks require), for exercising the real manager's webhooks, controllers
 * and RBAC. Pods use an unpullable image: nothing runs them here.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

const APPS = 'apps.kruise.io/v1alpha1';

export interface WorkloadNames {
  namespace: string;
  /** Unique per run, so cluster-scoped selectors never reach other suites' pods. */
  app: string;
}

const podTemplate = (app: string, restartPolicy?: 'Never') => ({
  metadata: { labels: { app } },
  spec: {
    containers: [{ name: 'main', image: 'registry.invalid/app:1' }],
    ...(restartPolicy ? { restartPolicy } : {}),
  },
});

/** Keyed by `<plural>.<group>`, the CRD that must be installed for the object to exist. */
export function kruiseWorkloads(n: WorkloadNames): Record<string, KubernetesObject & { spec?: unknown }> {
  const ns = n.namespace;
  const meta = (name: string) => ({ name, namespace: ns });
  const selector = { matchLabels: { app: n.app } };
  return {
    'clonesets.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'CloneSet',
      metadata: meta('cs'),
      spec: { replicas: 1, selector, template: podTemplate(n.app) },
    },
    'statefulsets.apps.kruise.io': {
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'StatefulSet',
      metadata: meta('asts'),
      spec: {
        replicas: 1,
        serviceName: 'asts',
        selector: { matchLabels: { app: `${n.app}-asts` } },
        template: podTemplate(`${n.app}-asts`),
      },
    },
    'sidecarsets.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'SidecarSet',
      metadata: { name: `${n.app}-sidecar` },
      spec: { selector, containers: [{ name: 'sidecar', image: 'registry.invalid/sidecar:1' }] },
    },
    'broadcastjobs.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'BroadcastJob',
      metadata: meta('bcj'),
      spec: {
        template: podTemplate(`${n.app}-bcj`, 'Never'),
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 600 },
      },
    },
    'advancedcronjobs.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'AdvancedCronJob',
      metadata: meta('acj'),
      spec: {
        schedule: '0 0 1 1 *',
        template: { jobTemplate: { spec: { template: podTemplate(`${n.app}-acj`, 'Never') } } },
      },
    },
    'daemonsets.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'DaemonSet',
      metadata: meta('ads'),
      spec: { selector: { matchLabels: { app: `${n.app}-ads` } }, template: podTemplate(`${n.app}-ads`) },
    },
    'uniteddeployments.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'UnitedDeployment',
      metadata: meta('ud'),
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: `${n.app}-ud` } },
        template: {
          statefulSetTemplate: {
            metadata: { labels: { app: `${n.app}-ud` } },
            spec: { selector: { matchLabels: { app: `${n.app}-ud` } }, template: podTemplate(`${n.app}-ud`) },
          },
        },
        topology: {
          subsets: [
            {
              name: 'subset-a',
              nodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
            },
          ],
        },
      },
    },
    'workloadspreads.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'WorkloadSpread',
      metadata: meta('wss'),
      spec: {
        targetRef: { apiVersion: APPS, kind: 'CloneSet', name: 'cs' },
        subsets: [
          {
            name: 'subset-a',
            requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
            maxReplicas: 1,
          },
        ],
      },
    },
    'podunavailablebudgets.policy.kruise.io': {
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: meta('pub'),
      spec: { selector: { matchLabels: { app: `${n.app}-pub` } }, maxUnavailable: 1 },
    },
    'imagepulljobs.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'ImagePullJob',
      metadata: meta('ipj'),
      spec: {
        image: 'registry.invalid/app:1',
        // Copied into kruise-daemon-config by the controller (a write upstream grants without a marker).
        pullSecrets: [pullSecretName(n)],
        completionPolicy: { type: 'Always', activeDeadlineSeconds: 600 },
      },
    },
    'imagelistpulljobs.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'ImageListPullJob',
      metadata: meta('ilpj'),
      spec: { images: ['registry.invalid/app:1'], completionPolicy: { type: 'Always', activeDeadlineSeconds: 600 } },
    },
    'resourcedistributions.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'ResourceDistribution',
      metadata: { name: `${n.app}-rd` },
      spec: {
        resource: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${n.app}-rd` }, data: { k: 'v' } },
        targets: { includedNamespaces: { list: [{ name: ns }] } },
      },
    },
    'ephemeraljobs.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'EphemeralJob',
      metadata: meta('ej'),
      spec: {
        selector: { matchLabels: { app: `${n.app}-ej` } },
        replicas: 1,
        parallelism: 1,
        template: {
          ephemeralContainers: [
            {
              name: 'debug',
              image: 'registry.invalid/debug:1',
              imagePullPolicy: 'IfNotPresent',
              terminationMessagePolicy: 'File',
            },
          ],
        },
      },
    },
    'persistentpodstates.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'PersistentPodState',
      metadata: meta('pps'),
      spec: {
        targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'asts' },
        requiredPersistentTopology: { nodeTopologyKeys: ['kubernetes.io/hostname'] },
      },
    },
    'podprobemarkers.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'PodProbeMarker',
      metadata: meta('ppm'),
      spec: {
        selector: { matchLabels: { app: `${n.app}-ppm` } },
        probes: [
          {
            name: 'healthy',
            containerName: 'main',
            podConditionType: 'game.io/healthy',
            probe: { exec: { command: ['true'] } },
            markerPolicy: [{ state: 'Succeeded', labels: { healthy: 'true' } }],
          },
        ],
      },
    },
    'containerrecreaterequests.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'ContainerRecreateRequest',
      metadata: meta('crr'),
      spec: { podName: 'crr-target', containers: [{ name: 'main' }], strategy: { failurePolicy: 'Fail' } },
    },
    'nodeimages.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'NodeImage',
      metadata: { name: `${n.app}-node` },
      spec: {},
    },
    'nodepodprobes.apps.kruise.io': {
      apiVersion: APPS,
      kind: 'NodePodProbe',
      metadata: { name: `${n.app}-node` },
      spec: {},
    },
  };
}

/**
 * The pod a ContainerRecreateRequest targets: upstream's webhook wants it bound to a node with a
 * started container, so the test writes that status itself (no kubelet here), see {@link runningStatus}.
 */
export function crrTargetPod(n: WorkloadNames): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'crr-target', namespace: n.namespace, labels: { app: `${n.app}-crr` } },
    spec: { nodeName: CRR_NODE, containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
  } as KubernetesObject;
}

const CRR_NODE = 'envtest-node';

/**
 * The Node the CRR target pod runs on. kruise-manager v1.9's ContainerRecreateRequest webhook
 * reads it (v1.7/v1.8 did not); no kubelet runs here, so the object stands alone.
 */
export function crrTargetNode(): KubernetesObject {
  return { apiVersion: 'v1', kind: 'Node', metadata: { name: CRR_NODE } } as KubernetesObject;
}

/** A status as a kubelet would report for a running single-container pod. */
export function runningStatus(container: string): Record<string, unknown> {
  const now = new Date();
  return {
    phase: 'Running',
    startTime: now,
    conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: now }],
    containerStatuses: [
      {
        name: container,
        ready: true,
        started: true,
        restartCount: 0,
        image: 'registry.invalid/app:1',
        imageID: '',
        containerID: 'containerd://0000000000000000000000000000000000000000000000000000000000000000',
        state: { running: { startedAt: now } },
      },
    ],
  };
}

/** The pull Secret the sample ImagePullJob names; create it (pullSecret()) before the job. */
export function pullSecretName(n: { app: string }): string {
  return `${n.app}-pull`;
}

/** A docker-registry Secret for the sample ImagePullJob. */
export function pullSecret(n: { namespace: string; app: string }): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: pullSecretName(n), namespace: n.namespace },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(JSON.stringify({ auths: {} })).toString('base64') },
  } as KubernetesObject;
}
