import { KRUISE_APPS_GROUP } from '../../contract.js';
import { CrdManifest } from './crds.js';
import { upstreamRelease } from '../../upstream/releases.js';

const obj = (properties: object, extra: object = {}) => ({ type: 'object', properties, ...extra });
const open = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const intOrString = { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
const labelSelector = obj(
  {
    matchLabels: { type: 'object', additionalProperties: { type: 'string' } },
    matchExpressions: {
      type: 'array',
      items: obj(
        {
          key: { type: 'string' },
          operator: { type: 'string', enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] },
          values: { type: 'array', items: { type: 'string' } },
        },
        { required: ['key', 'operator'] },
      ),
    },
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

/** A field of upstream's API this runtime does not carry: kept (never pruned) and rejected by name. */
const unsupported = (path: string, field: string) => ({
  rule: `!has(self.${field})`,
  message: `${path}.${field} is not supported by the kruise-ha runtime (upstream-only feature); remove it`,
});

const sidecarContainer = {
  type: 'object',
  // The rest of a core/v1 Container; the API server validates it again when the pod is created.
  'x-kubernetes-preserve-unknown-fields': true,
  required: ['name', 'image'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 63 },
    image: { type: 'string', minLength: 1 },
    podInjectPolicy: { type: 'string', enum: ['BeforeAppContainer', 'AfterAppContainer'] },
    shareVolumePolicy: obj({ type: { type: 'string', enum: ['enabled', 'disabled'] } }),
    transferEnv: {
      type: 'array',
      items: obj({
        sourceContainerName: { type: 'string' },
        envName: { type: 'string' },
        envNames: { type: 'array', items: { type: 'string' } },
        // The pod label or annotation naming the source container (the webhook checks the path).
        sourceContainerNameFrom: obj({
          fieldRef: obj({ apiVersion: { type: 'string' }, fieldPath: { type: 'string' } }, { required: ['fieldPath'] }),
        }),
      }),
    },
    upgradeStrategy: { ...open, properties: { upgradeType: { type: 'string' } } },
    shareVolumeDevicePolicy: open,
    resourcesPolicy: open,
  },
  'x-kubernetes-validations': [
    {
      rule: "!has(self.upgradeStrategy) || !has(self.upgradeStrategy.upgradeType) || self.upgradeStrategy.upgradeType != 'HotUpgrade'",
      message:
        'containers[].upgradeStrategy.upgradeType HotUpgrade is not supported by the kruise-ha runtime; use ColdUpgrade or remove upgradeStrategy',
    },
    unsupported('containers[]', 'shareVolumeDevicePolicy'),
    unsupported('containers[]', 'resourcesPolicy'),
  ],
};

/** The SidecarSet CRD (apps.kruise.io/v1alpha1), the subset our runtime implements. */
export function sidecarSetCrd(): CrdManifest {
  return {
    manifest: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `sidecarsets.${KRUISE_APPS_GROUP}` },
      spec: {
        group: KRUISE_APPS_GROUP,
        names: { kind: 'SidecarSet', listKind: 'SidecarSetList', plural: 'sidecarsets', singular: 'sidecarset' },
        scope: 'Cluster',
        versions: [
          {
            name: 'v1alpha1',
            served: true,
            storage: true,
            subresources: { status: {} },
            additionalPrinterColumns: [
              {
                name: 'MATCHED',
                type: 'integer',
                jsonPath: '.status.matchedPods',
                description: 'Pods matched by the selector',
              },
              {
                name: 'UPDATED',
                type: 'integer',
                jsonPath: '.status.updatedPods',
                description: 'Pods running the latest sidecars',
              },
              {
                name: 'READY',
                type: 'integer',
                jsonPath: '.status.readyPods',
                description: 'Matched pods that are ready',
              },
              { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            ],
            schema: {
              openAPIV3Schema: obj({
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: obj(
                  {
                    selector: labelSelector,
                    // As upstream's v1alpha1: the runtime's defaulting webhook stores `namespace` as upstream
                    // v1.9.1 reads it back, a namespaceSelector on kubernetes.io/metadata.name (defaults.ts).
                    namespace: { type: 'string' },
                    // A plain metav1.LabelSelector, as upstream's (unknown members are pruned, as there).
                    namespaceSelector: labelSelector,
                    containers: { type: 'array', items: sidecarContainer },
                    initContainers: { type: 'array', items: sidecarContainer },
                    volumes: {
                      type: 'array',
                      items: { ...open, required: ['name'], properties: { name: { type: 'string' } } },
                    },
                    imagePullSecrets: { type: 'array', items: obj({ name: { type: 'string' } }) },
                    updateStrategy: obj({
                      type: { type: 'string', enum: ['RollingUpdate', 'NotUpdate'] },
                      partition: intOrString,
                      maxUnavailable: intOrString,
                      paused: { type: 'boolean' },
                      selector: labelSelector,
                      scatterStrategy: { type: 'array', items: open }, // upstream: a list of {key, value} terms
                      priorityStrategy: open,
                    }),
                    injectionStrategy: obj({
                      paused: { type: 'boolean' },
                      revision: obj({
                        customVersion: { type: 'string' },
                        revisionName: { type: 'string' },
                        policy: { type: 'string', enum: ['Always', 'Partial'] },
                      }),
                    }),
                    revisionHistoryLimit: { type: 'integer', format: 'int32' }, // upstream keeps at least 1 whatever the value
                    patchPodMetadata: {
                      type: 'array',
                      items: obj({
                        annotations: { type: 'object', additionalProperties: { type: 'string' } },
                        patchPolicy: { type: 'string', enum: ['Retain', 'Overwrite', 'MergePatchJson'] },
                      }),
                    },
                  },
                  {
                    // Unknown spec fields are kept, not pruned, so the validating webhook can reject
                    // them by name: an upstream manifest never silently loses a field.
                    'x-kubernetes-preserve-unknown-fields': true,
                  },
                ),
                status: obj({
                  observedGeneration: { type: 'integer', format: 'int64' },
                  matchedPods: { type: 'integer', format: 'int32' },
                  updatedPods: { type: 'integer', format: 'int32' },
                  readyPods: { type: 'integer', format: 'int32' },
                  updatedReadyPods: { type: 'integer', format: 'int32' },
                  latestRevision: { type: 'string' },
                  collisionCount: { type: 'integer', format: 'int32' },
                }),
              }),
            },
          },
        ],
      },
    },
  };
}

/** The upstream release whose SidecarSet and WorkloadSpread behaviour the runtime carries (and is judged against). */
const RUNTIME_PARITY_RELEASE = 'v1.9.1';

/**
 * The WorkloadSpread CRD (apps.kruise.io/v1alpha1) exactly as upstream's, from the data generated
 * from the pinned module: the runtime carries WorkloadSpread's whole API.
 */
export function workloadSpreadCrd(): CrdManifest {
  const crd = upstreamRelease(RUNTIME_PARITY_RELEASE).crds.find((c) => c.kind === 'WorkloadSpread');
  if (!crd) throw new Error('the generated upstream release has no WorkloadSpread CRD (run npm run upstream:generate)');
  return { manifest: structuredClone(crd.manifest) as { [key: string]: unknown } };
}

/** Every CRD the runtime serves. */
export function runtimeCrds(): CrdManifest[] {
  return [sidecarSetCrd(), workloadSpreadCrd()];
}
