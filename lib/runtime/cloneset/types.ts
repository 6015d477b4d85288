import type { V1ObjectMeta, V1PersistentVolumeClaim, V1PodTemplateSpec } from '@kubernetes/client-node';
import type { SelectorLike } from '../../contract/selector.js';
import type { UpdatePriorityStrategy } from '../sidecarset/types.js';

/**
 * apps.kruise.io/v1alpha1 CloneSet as upstream's Go types have it (apis/apps/v1alpha1/cloneset_types.go,
 * v1.9.1), with upstream's JSON names. Int-or-string fields are a whole number or a string such as "20%".
 */
export interface CloneSet {
  apiVersion?: string;
  kind?: string;
  metadata: V1ObjectMeta & { name: string };
  spec: CloneSetSpec;
  status?: CloneSetStatus;
}

export interface CloneSetSpec {
  /** Desired pods; defaulted to 1. */
  replicas?: number;
  /** Must match the template's labels; required and non-empty. */
  selector?: SelectorLike;
  template: V1PodTemplateSpec;
  /** PVCs made per pod (named `<claim>-<cloneset>-<instance-id>`), mounted as the volume of the claim's name. */
  volumeClaimTemplates?: V1PersistentVolumeClaim[];
  scaleStrategy?: CloneSetScaleStrategy;
  updateStrategy?: CloneSetUpdateStrategy;
  /** Revisions kept; defaulted to 10. */
  revisionHistoryLimit?: number;
  minReadySeconds?: number;
  lifecycle?: Lifecycle;
  progressDeadlineSeconds?: number;
}

export interface CloneSetScaleStrategy {
  /** Pods (by name) to delete, even when replicas does not shrink. */
  podsToDelete?: string[];
  /** Pods that may be unavailable while scaling up. */
  maxUnavailable?: number | string;
  disablePVCReuse?: boolean;
}

/** `OnDelete` is one of upstream's constants but its validation refuses it, as it refuses "". */
export type CloneSetUpdateStrategyType = 'ReCreate' | 'InPlaceIfPossible' | 'InPlaceOnly' | 'OnDelete';

export interface CloneSetUpdateStrategy {
  /** Defaulted to ReCreate. */
  type?: CloneSetUpdateStrategyType;
  /** Pods kept at the old revision; defaulted to 0. */
  partition?: number | string;
  /** Defaulted to "20%". */
  maxUnavailable?: number | string;
  /** Defaulted to 0. */
  maxSurge?: number | string;
  paused?: boolean;
  priorityStrategy?: UpdatePriorityStrategy;
  scatterStrategy?: Array<{ key: string; value: string }>;
  /** appspub.InPlaceUpdateStrategy; defaulted to {} for the in-place types. */
  inPlaceUpdateStrategy?: { gracePeriodSeconds?: number };
}

/** appspub.Lifecycle: hooks a pod waits on (labels or finalizers an operator clears). */
export interface Lifecycle {
  preDelete?: LifecycleHook;
  inPlaceUpdate?: LifecycleHook;
  preNormal?: LifecycleHook;
}

export interface LifecycleHook {
  labelsHandler?: Record<string, string>;
  finalizersHandler?: string[];
  markPodNotReady?: boolean;
}

export interface CloneSetStatus {
  observedGeneration?: number;
  replicas: number;
  readyReplicas: number;
  availableReplicas: number;
  updatedReplicas: number;
  updatedReadyReplicas: number;
  updatedAvailableReplicas?: number;
  expectedUpdatedReplicas?: number;
  updateRevision?: string;
  currentRevision?: string;
  collisionCount?: number;
  conditions?: CloneSetCondition[];
  labelSelector?: string;
}

export interface CloneSetCondition {
  type: 'FailedScale' | 'FailedUpdate' | 'Progressing' | string;
  status: 'True' | 'False' | 'Unknown';
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

/** Labels and annotations upstream's CloneSet writes (apis/apps/v1alpha1, pkg/util/volumeclaimtemplate). */
export const CloneSetKeys = {
  /** Each pod's (and its PVCs') instance id. */
  instanceId: 'apps.kruise.io/cloneset-instance-id',
  /** apps/v1 ControllerRevisionHashLabelKey: the pod's revision (its name; its hash under CloneSetShortHash). */
  revisionHash: 'controller-revision-hash',
  /** apps/v1 DefaultDeploymentUniqueLabelKey: always the short hash. */
  podTemplateHash: 'pod-template-hash',
  /** On a revision: the hash of the volumeClaimTemplates ("" for none). */
  volumeClaimTemplateHash: 'kruise.io/cloneset-volumeclaimtemplate-hash',
} as const;
