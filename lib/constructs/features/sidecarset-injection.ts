import { patchPodMetadataProblems, sourceContainerFieldRefProblem } from '../../contract.js';
import { propError } from '../core/errors.js';

/** When a pinned revision is injected instead of the latest (upstream SidecarSetInjectRevisionPolicy). */
export enum InjectRevisionPolicy {
  /** Every new pod gets the pinned revision. */
  ALWAYS = 'Always',
  /**
   * Pods outside `updateStrategy.selector` get the pinned revision; pods inside it get the latest,
   * or the pinned one with the probability a percentage `updateStrategy.partition` gives.
   */
  PARTIAL = 'Partial',
}

/** A recorded revision (ControllerRevision) to inject instead of the latest: canary injection. */
export class InjectRevision {
  /** The ControllerRevision of this name, in the manager's namespace. */
  public static revisionName(name: string, policy?: InjectRevisionPolicy): InjectRevision {
    if (!name)
      throw propError(
        'injectionStrategy.revision.revisionName',
        name,
        'is empty',
        'name a ControllerRevision of this SidecarSet',
      );
    return new InjectRevision({ revisionName: name }, policy);
  }

  /**
   * The newest ControllerRevision of this SidecarSet labelled
   * `apps.kruise.io/sidecarset-custom-version: <version>` (the SidecarSet's own label when it was recorded).
   */
  public static customVersion(version: string, policy?: InjectRevisionPolicy): InjectRevision {
    if (!version)
      throw propError(
        'injectionStrategy.revision.customVersion',
        version,
        'is empty',
        'give the custom version label value of a recorded revision',
      );
    return new InjectRevision({ customVersion: version }, policy);
  }

  private constructor(
    private readonly ref: { revisionName?: string; customVersion?: string },
    private readonly policy?: InjectRevisionPolicy,
  ) {}

  /** @internal */
  public _toKube(): Record<string, string> {
    return { ...this.ref, policy: this.policy ?? InjectRevisionPolicy.ALWAYS };
  }
}

/** How a SidecarSet writes a pod annotation (upstream SidecarSetPatchPolicyType). */
export enum PatchPolicy {
  /** Only when the pod does not have the annotation. */
  RETAIN = 'Retain',
  /** Always, replacing the pod's value. */
  OVERWRITE = 'Overwrite',
  /** JSON merge (RFC 7386) into the pod's value; set when the pod has none. */
  MERGE_PATCH_JSON = 'MergePatchJson',
}

/**
 * Pod annotations a SidecarSet writes at injection. The manager accepts only keys its
 * patch-metadata whitelist allows (ConfigMap kruise-configuration, key
 * SidecarSet_PatchPodMetadata_WhiteList), as upstream.
 */
export interface PatchPodMetadata {
  /** Annotations to write. */
  readonly annotations: { [key: string]: string };
  /**
   * How each is written.
   * @default PatchPolicy.RETAIN
   */
  readonly patchPolicy?: PatchPolicy;
}

/** A pod label or annotation whose value names the app container a transferEnv rule copies from. */
export class SourceContainerName {
  /** The value of the pod label `key`. */
  public static fromLabel(key: string): SourceContainerName {
    return new SourceContainerName(`metadata.labels['${key}']`);
  }

  /** The value of the pod annotation `key`. */
  public static fromAnnotation(key: string): SourceContainerName {
    return new SourceContainerName(`metadata.annotations['${key}']`);
  }

  private constructor(private readonly fieldPath: string) {
    const problem = sourceContainerFieldRefProblem({ apiVersion: 'v1', fieldPath });
    if (problem)
      throw propError(
        'transferEnv[].sourceContainerNameFrom',
        fieldPath,
        problem,
        'use a valid label or annotation key, e.g. "sidecar-source"',
      );
  }

  /** @internal */
  public _toKube(): Record<string, unknown> {
    return { fieldRef: { apiVersion: 'v1', fieldPath: this.fieldPath } };
  }
}

/** Upstream's patchPodMetadata rules (the contract's), thrown at synth; returns the rendered list. */
export function renderPatchPodMetadata(
  list: PatchPodMetadata[] | undefined,
): Array<Record<string, unknown>> | undefined {
  if (list === undefined) return undefined;
  const rendered = list.map((p) => ({
    annotations: { ...p.annotations },
    patchPolicy: p.patchPolicy ?? PatchPolicy.RETAIN,
  }));
  const [problem] = patchPodMetadataProblems(rendered);
  if (problem) {
    throw propError(
      problem[0].replace(/^spec\./, ''),
      list,
      problem[1],
      'patch each annotation once, with valid keys and a PatchPolicy',
    );
  }
  return rendered;
}
