/**
 * The application side of the e2e tier: a namespace whose pods go through the pod webhook, and
 * one object per Kruise behaviour the tier checks on real kubelets, each running the e2e app
 * images (see app-images.ts).
 */
import type { AppImages } from './app-images.js';

const APPS = 'apps.kruise.io/v1alpha1';
/** busybox as PID 1 of every app container: sleeps until stopped, answers SIGTERM at once. */
const SLEEP = ['/bin/busybox', 'sh', '-c', 'trap "exit 0" TERM; while true; do /bin/busybox sleep 1; done'];

const container = (name: string, image: string) => ({
  name,
  image,
  command: SLEEP,
  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
});
const podSpec = (image: string) => ({
  securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
  terminationGracePeriodSeconds: 5,
  automountServiceAccountToken: false,
  containers: [container('main', image)],
});

export const APP_NAMESPACE = 'e2e-apps';
/** Label on APP_NAMESPACE that the tier's SidecarSet selects on. */
export const SIDECAR_NS_LABEL = { 'e2e.kruise-ha.io/sidecars': 'true' };

export function appNamespace(): object {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name: APP_NAMESPACE, labels: SIDECAR_NS_LABEL } };
}

/** CloneSet that updates in place when only the image changes. */
export function inPlaceCloneSet(images: AppImages, image = images.v1): object {
  return {
    apiVersion: APPS,
    kind: 'CloneSet',
    metadata: { name: 'inplace', namespace: APP_NAMESPACE },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'inplace' } },
      template: { metadata: { labels: { app: 'inplace' } }, spec: podSpec(image) },
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1 },
    },
  };
}

export const SIDECARSET_NAME = 'e2e-sidecar';

/** Injects `sidecar` into pods labelled app=with-sidecar in the app namespace; upgrades it in place. */
export function sidecarSet(images: AppImages, image = images.v1): object {
  return {
    apiVersion: APPS,
    kind: 'SidecarSet',
    metadata: { name: SIDECARSET_NAME },
    spec: {
      selector: { matchLabels: { app: 'with-sidecar' } },
      namespaceSelector: { matchLabels: SIDECAR_NS_LABEL },
      containers: [{ ...container('sidecar', image), podInjectPolicy: 'BeforeAppContainer' }],
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: 1 },
    },
  };
}

/** A plain Deployment whose pods the SidecarSet selects. */
export function sidecarDeployment(images: AppImages): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'with-sidecar', namespace: APP_NAMESPACE },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'with-sidecar' } },
      template: { metadata: { labels: { app: 'with-sidecar' } }, spec: podSpec(images.v1) },
    },
  };
}

/** Advanced StatefulSet (v1beta1) with in-place rolling updates. */
export function advancedStatefulSet(images: AppImages, image = images.v1): object {
  return {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'asts', namespace: APP_NAMESPACE },
    spec: {
      replicas: 3,
      serviceName: 'asts',
      podManagementPolicy: 'Parallel',
      selector: { matchLabels: { app: 'asts' } },
      template: {
        metadata: { labels: { app: 'asts' } },
        spec: { ...podSpec(image), readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
      },
      updateStrategy: {
        type: 'RollingUpdate',
        rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 1 },
      },
    },
  };
}

export function headlessService(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: APP_NAMESPACE },
    spec: { clusterIP: 'None', selector: { app: name }, ports: [{ port: 80, name: 'http' }] },
  };
}

/** Pulls `image` onto every node through kruise-daemon. */
export function imagePullJob(image: string): object {
  return {
    apiVersion: APPS,
    kind: 'ImagePullJob',
    metadata: { name: 'pull-everywhere', namespace: APP_NAMESPACE },
    spec: {
      image,
      parallelism: 3,
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 600 },
      pullPolicy: { backoffLimit: 3, timeoutSeconds: 300 },
    },
  };
}

/** A Deployment the delete-protection webhook guards while it has replicas. */
export function protectedDeployment(images: AppImages): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'protected',
      namespace: APP_NAMESPACE,
      labels: { 'policy.kruise.io/delete-protection': 'Cascading' },
    },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'protected' } },
      template: { metadata: { labels: { app: 'protected' } }, spec: podSpec(images.v1) },
    },
  };
}

/** Objects as one YAML-free apply stream (kubectl accepts a JSON List). */
export const asList = (...items: object[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

/** A plain Deployment whose pods a WorkloadSpread spreads over the zones (workloadspread.test.ts). */
export function spreadDeployment(images: AppImages, replicas: number): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'spread', namespace: APP_NAMESPACE },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'spread' } },
      template: { metadata: { labels: { app: 'spread' } }, spec: podSpec(images.v1) },
    },
  };
}
