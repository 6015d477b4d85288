import type { V1Container, V1LocalObjectReference, V1ObjectMeta, V1Volume } from '@kubernetes/client-node';
import type { SelectorLike } from '../../contract/selector.js';

/** A sidecar container: a core Container plus SidecarSet-only fields (upstream names). */
export interface SidecarContainer extends V1Container {
  podInjectPolicy?: 'BeforeAppContainer' | 'AfterAppContainer';
  shareVolumePolicy?: { type?: 'enabled' | 'disabled' };
  transferEnv?: TransferEnvVar[];
  upgradeStrategy?: { upgradeType?: string };
}

/** An env var copied from a pod container; the source named directly or read from a pod label/annotation. */
export interface TransferEnvVar {
  sourceContainerName?: string;
  sourceContainerNameFrom?: { fieldRef?: { apiVersion?: string; fieldPath: string } };
  envName?: string;
  envNames?: string[];
}

/** injectionStrategy.revision: inject a recorded revision instead of the latest (upstream SidecarSetInjectRevision). */
export interface SidecarSetInjectRevision {
  customVersion?: string;
  revisionName?: string;
  policy?: 'Always' | 'Partial';
}

/** Pod annotations a SidecarSet writes at injection (upstream SidecarSetPatchPodMetadata). */
export interface SidecarSetPatchPodMetadata {
  annotations?: Record<string, string>;
  patchPolicy?: 'Retain' | 'Overwrite' | 'MergePatchJson';
}

export interface SidecarSetUpdateStrategy {
  type?: 'RollingUpdate' | 'NotUpdate';
  partition?: number | string;
  maxUnavailable?: number | string;
  paused?: boolean;
  selector?: SelectorLike;
  /** Upstream's appspub.UpdatePriorityStrategy: which pods update first (weights, or ordered label keys). */
  priorityStrategy?: UpdatePriorityStrategy;
  /**
   * Upstream's UpdateScatterStrategy: spread pods with these labels through the rollout (`value: '*'` = every value).
   */
  scatterStrategy?: Array<{ key: string; value: string }>;
}

export interface UpdatePriorityStrategy {
  weightPriority?: Array<{ weight: number; matchSelector: SelectorLike }>;
  orderPriority?: Array<{ orderedKey: string }>;
}

export interface SidecarSetSpec {
  selector?: SelectorLike;
  namespace?: string;
  namespaceSelector?: SelectorLike;
  containers?: SidecarContainer[];
  initContainers?: SidecarContainer[];
  volumes?: V1Volume[];
  imagePullSecrets?: V1LocalObjectReference[];
  updateStrategy?: SidecarSetUpdateStrategy;
  injectionStrategy?: { paused?: boolean; revision?: SidecarSetInjectRevision };
  patchPodMetadata?: SidecarSetPatchPodMetadata[];
  revisionHistoryLimit?: number;
}

export interface SidecarSetStatus {
  observedGeneration?: number;
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
  latestRevision?: string;
  /** Hash collisions met naming ControllerRevisions (upstream's status.collisionCount). */
  collisionCount?: number;
}

export interface SidecarSet {
  apiVersion?: string;
  kind?: string;
  metadata: V1ObjectMeta & { name: string };
  spec: SidecarSetSpec;
  status?: SidecarSetStatus;
}

/** One entry of the pod annotations `kruise.io/sidecarset-hash[-without-image]` (upstream shape). */
export interface SidecarSetHashEntry {
  updateTimestamp: string;
  hash: string;
  sidecarSetName: string;
  sidecarList: string[];
  controllerRevision?: string;
}

/** Fields of a sidecar container that SidecarSet adds and a pod's Container does not have. */
export const SIDECAR_ONLY_FIELDS = [
  'podInjectPolicy',
  'shareVolumePolicy',
  'transferEnv',
  'upgradeStrategy',
  'resourcesPolicy',
] as const;
