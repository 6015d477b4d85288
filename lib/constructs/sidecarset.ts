import { ApiObject, ApiObjectMetadata } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import {
  isEmptySelector, KRUISE_APPS_GROUP, selectorProblems, SIDECARSET_SELECTOR_FIX, sidecarSetConflicts, SidecarSetRules,
  type SidecarSetConflictView, volumeSourceProblem, withoutUndefined,
} from '../contract.js';
import { k8s } from './api.js';
import { checkDnsLabel, checkDnsSubdomain, checkPositiveInt, propError, throwProblems } from './errors.js';
import { renderPatchPodMetadata, type InjectRevision, type PatchPodMetadata, type SourceContainerName } from './sidecarset-injection.js';

export * from './sidecarset-injection.js';

/** Where a sidecar container goes in the pod's `spec.containers`. */
export enum PodInjectPolicy {
  /** In front of the app containers (upstream's default): the sidecar starts first. */
  BEFORE_APP_CONTAINER = 'BeforeAppContainer',
  /** Behind the app containers. */
  AFTER_APP_CONTAINER = 'AfterAppContainer',
}

/** Whether a sidecar container also mounts the app containers' volume mounts. */
export enum ShareVolumePolicy {
  /** The sidecar gets every volume mount of the app containers it does not already have. */
  ENABLED = 'enabled',
  /** Only the sidecar's own volume mounts (upstream's default). */
  DISABLED = 'disabled',
}

/** An int-or-percent value (`3` or `"25%"`), as Kubernetes rollouts use. */
export class IntOrPercent {
  /** A number of pods. */
  public static count(count: number): IntOrPercent {
    if (!Number.isInteger(count) || count < 0) {
      throw propError('IntOrPercent.count', count, 'must be a whole number >= 0', 'use e.g. IntOrPercent.count(1)');
    }
    return new IntOrPercent(count, false);
  }

  /** A percentage (0-100) of the matched pods. */
  public static percent(percent: number): IntOrPercent {
    if (!Number.isInteger(percent) || percent < 0 || percent > 100) {
      throw propError('IntOrPercent.percent', percent, 'must be a whole percentage from 0 to 100', 'use e.g. IntOrPercent.percent(25)');
    }
    return new IntOrPercent(percent, true);
  }

  private constructor(
    /** The number, or the percentage when `isPercent`. */
    public readonly value: number,
    /** True for a percentage. */
    public readonly isPercent: boolean,
  ) {}

  /** `"3"` or `"25%"`. */
  public toString(): string {
    return this.isPercent ? `${this.value}%` : String(this.value);
  }

  /** True for `count(0)` and `percent(0)`. */
  public get isZero(): boolean {
    return this.value === 0;
  }

  /** As Kubernetes renders it: a number, or a string like `"25%"`. @internal */
  public _toKube(): unknown {
    return this.isPercent ? `${this.value}%` : this.value;
  }
}

/** Options for {@link SidecarSetUpdateStrategy.rollingUpdate}. */
export interface RollingUpdateOptions {
  /**
   * How many matched pods may be unavailable (not ready, or not yet running the new sidecar
   * image) at once. Percentages count the matched pods and round down, never below 1.
   * @default IntOrPercent.count(1)
   */
  readonly maxUnavailable?: IntOrPercent;
  /**
   * How many matched pods stay on the old sidecar images (a canary: the rest are updated).
   * Percentages count the matched pods and round down.
   * @default IntOrPercent.count(0)
   */
  readonly partition?: IntOrPercent;
  /**
   * Stop updating pods (injection into new pods goes on). Resume by setting it back to false.
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Update only the matched pods with these labels.
   * @default - every matched pod
   */
  readonly selector?: k8s.LabelSelector;
}

/**
 * How running pods follow a change of the sidecar images. Only image changes are applied in
 * place; any other change reaches pods when they are recreated.
 */
export class SidecarSetUpdateStrategy {
  /** Update the sidecar images of running pods in place, in batches (upstream's default). */
  public static rollingUpdate(options: RollingUpdateOptions = {}): SidecarSetUpdateStrategy {
    if (options.maxUnavailable?.isZero) {
      throw propError('updateStrategy.maxUnavailable', options.maxUnavailable.toString(), 'would never let a ready pod be updated',
        'use at least IntOrPercent.count(1) (or a percentage above 0); use SidecarSetUpdateStrategy.notUpdate() to leave pods alone');
    }
    if (options.selector) checkSelector('updateStrategy.selector', options.selector);
    if (options.selector && options.partition && !options.partition.isZero) {
      throw propError('updateStrategy.partition', options.partition.toString(), SidecarSetRules.partitionWithSelector, 'drop the partition or the selector');
    }
    return new SidecarSetUpdateStrategy('RollingUpdate', options);
  }

  /** Never update running pods: new images reach only newly created pods. */
  public static notUpdate(): SidecarSetUpdateStrategy {
    return new SidecarSetUpdateStrategy('NotUpdate', {});
  }

  private constructor(
    /** `RollingUpdate` or `NotUpdate`. */
    public readonly type: string,
    private readonly options: RollingUpdateOptions,
  ) {}

  /** @internal */
  public _toKube(): Record<string, unknown> {
    const o = this.options;
    return withoutUndefined({
      type: this.type,
      partition: o.partition?._toKube(),
      maxUnavailable: o.maxUnavailable?._toKube(),
      paused: o.paused,
      selector: o.selector ? k8s.toJson_LabelSelector(o.selector) : undefined,
    });
  }
}

/** Env vars a sidecar copies from an app container of the pod it is injected into. */
export interface TransferEnvVar {
  /**
   * The app container to copy from.
   * @default - set sourceContainerNameFrom
   */
  readonly sourceContainerName?: string;
  /**
   * The pod label or annotation naming the app container to copy from (per pod). Wins over
   * sourceContainerName, as upstream.
   * @default - set sourceContainerName
   */
  readonly sourceContainerNameFrom?: SourceContainerName;
  /**
   * One variable to copy.
   * @default - set envNames
   */
  readonly envName?: string;
  /**
   * Several variables to copy.
   * @default - set envName
   */
  readonly envNames?: string[];
}

/**
 * A sidecar container: a core Container (name, image, env, volumeMounts, resources, ...) plus
 * where and how it is injected.
 */
export interface SidecarContainerProps extends k8s.Container {
  /**
   * Where the sidecar goes in `spec.containers`.
   * @default PodInjectPolicy.BEFORE_APP_CONTAINER
   */
  readonly podInjectPolicy?: PodInjectPolicy;
  /**
   * Also mount every volume mount of the app containers.
   * @default ShareVolumePolicy.DISABLED
   */
  readonly shareVolumePolicy?: ShareVolumePolicy;
  /**
   * Env vars copied from the app containers.
   * @default - none
   */
  readonly transferEnv?: TransferEnvVar[];
}

/** Injection settings of a {@link SidecarSet}. */
export interface SidecarSetInjectionStrategy {
  /**
   * Stop injecting into new pods; pods that have the sidecars keep them (and are still updated).
   * @default false
   */
  readonly paused?: boolean;
  /**
   * Inject a recorded revision into new pods instead of the latest (canary injection).
   * @default - the latest revision
   */
  readonly revision?: InjectRevision;
}

/** Props of {@link SidecarSet}. */
export interface SidecarSetProps {
  /**
   * Metadata. SidecarSets are cluster-scoped, so no namespace.
   * @default - a name generated by the chart
   */
  readonly metadata?: ApiObjectMetadata;
  /**
   * The pods to inject and update. Must select by at least one label or expression: as upstream,
   * an empty selector is refused.
   */
  readonly selector: k8s.LabelSelector;
  /**
   * Only pods in this namespace.
   * @default - every namespace but kube-system and the manager's own
   */
  readonly namespace?: string;
  /**
   * Only pods in namespaces with these labels. Cannot be combined with `namespace`.
   * @default - every namespace but kube-system and the manager's own
   */
  readonly namespaceSelector?: k8s.LabelSelector;
  /**
   * Sidecar containers. At least one container or init container is required.
   * @default - none
   */
  readonly containers?: SidecarContainerProps[];
  /**
   * Init containers, appended to the pod's.
   * @default - none
   */
  readonly initContainers?: k8s.Container[];
  /**
   * Volumes the sidecars mount (every mount must name one). As upstream, a pod gets those its
   * injected sidecars mount, unless it has a volume of the same name.
   * @default - none
   */
  readonly volumes?: k8s.Volume[];
  /**
   * Names of Secrets to pull the sidecar images with, added to the pod's.
   * @default - none
   */
  readonly imagePullSecrets?: string[];
  /**
   * How running pods follow an image change.
   * @default SidecarSetUpdateStrategy.rollingUpdate()
   */
  readonly updateStrategy?: SidecarSetUpdateStrategy;
  /**
   * Injection settings.
   * @default - injection on
   */
  readonly injectionStrategy?: SidecarSetInjectionStrategy;
  /**
   * How many old revisions (ControllerRevisions) to keep.
   * @default 10
   */
  readonly revisionHistoryLimit?: number;
  /**
   * Pod annotations written at injection (allowed keys only: the manager's whitelist).
   * @default - none
   */
  readonly patchPodMetadata?: PatchPodMetadata[];
}

/**
 * An OpenKruise SidecarSet (`apps.kruise.io/v1alpha1`): injects sidecar containers into the
 * matching pods when they are created, and rolls image changes through running pods in place.
 *
 * The rendered object is the subset of the upstream API that the kruise-ha runtime serves (the
 * same fields as its CRD), so it also works unchanged with upstream kruise-manager. Apply it
 * after the manager is up: its webhooks default and validate SidecarSets (in one chart,
 * `sidecarSet.node.addDependency(kruiseManager)` orders it after the manager's objects).
 */
export class SidecarSet extends Construct {
  /** The rendered SidecarSet. */
  public readonly apiObject: ApiObject;
  /** Container names this SidecarSet injects (containers and init containers). */
  public readonly containerNames: string[];
  /** @internal */
  public readonly _props: SidecarSetProps;

  constructor(scope: Construct, id: string, props: SidecarSetProps) {
    super(scope, id);
    this._props = props;
    this.containerNames = checkProps(props);
    const spec = withoutUndefined({
      selector: k8s.toJson_LabelSelector(props.selector),
      namespace: props.namespace,
      namespaceSelector: props.namespaceSelector ? k8s.toJson_LabelSelector(props.namespaceSelector) : undefined,
      containers: props.containers?.map(renderSidecar),
      initContainers: props.initContainers?.map((c) => k8s.toJson_Container(c)),
      volumes: props.volumes?.map((v) => k8s.toJson_Volume(v)),
      imagePullSecrets: props.imagePullSecrets?.map((name) => ({ name })),
      updateStrategy: props.updateStrategy?._toKube(),
      injectionStrategy: renderInjectionStrategy(props.injectionStrategy),
      revisionHistoryLimit: props.revisionHistoryLimit,
      patchPodMetadata: renderPatchPodMetadata(props.patchPodMetadata),
    });
    this.apiObject = new ApiObject(this, 'Resource', {
      apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
      kind: 'SidecarSet',
      metadata: props.metadata,
      spec,
    });
    this.node.addValidation({ validate: () => this.conflicts() });
  }

  /** The object's name. */
  public get name(): string {
    return this.apiObject.name;
  }

  /**
   * Upstream's conflicts between SidecarSets that may select the same pods (same-named
   * containers, or init containers, and same-named volumes that differ): the manager's
   * validating webhook rejects the second one at apply time, so synth does too.
   */
  private conflicts(): string[] {
    const others = this.node.root.node.findAll().filter((c: IConstruct): c is SidecarSet => c instanceof SidecarSet && c !== this);
    return others.flatMap((other) => sidecarSetConflicts(conflictView(this._props), conflictView(other._props)).map(({ field, names }) => field === 'patchPodMetadata'
      ? `patchPodMetadata: annotation ${names.map((n) => `"${n}"`).join(', ')} of SidecarSet ${this.node.path} is also patched by ${other.node.path} in pods both select, one of them with Overwrite; `
        + `the manager rejects the second SidecarSet. Fix: ${SidecarSetRules.patchConflictFix}`
      : `${field}: ${names.map((n) => `"${n}"`).join(', ')} of SidecarSet ${this.node.path} ${field === 'volumes' ? 'differs from the volume of that name in' : 'is also injected by'} ${other.node.path} into pods both select; `
      + `the manager rejects the second SidecarSet. Fix: ${field === 'volumes' ? 'make the volumes identical or rename one' : 'rename the container'}, or make the selectors (or namespaces) disjoint`));
  }
}

/** What the shared conflict rules compare. */
function conflictView(p: SidecarSetProps): SidecarSetConflictView {
  return {
    namespace: p.namespace, namespaceSelector: p.namespaceSelector, selector: p.selector,
    containers: (p.containers ?? []).map((c) => c.name), initContainers: (p.initContainers ?? []).map((c) => c.name),
    volumes: (p.volumes ?? []).map((v) => k8s.toJson_Volume(v) as { name: string }),
    patchPodMetadata: p.patchPodMetadata?.map((m) => ({ annotations: m.annotations, patchPolicy: m.patchPolicy ?? 'Retain' })),
  };
}

function renderSidecar(c: SidecarContainerProps): Record<string, unknown> {
  return withoutUndefined({
    ...k8s.toJson_Container(c),
    // Rendered even when defaulted: the position must not depend on whether the manager's
    // defaulting webhook saw the object (an undefaulted sidecar would go after the apps).
    podInjectPolicy: c.podInjectPolicy ?? PodInjectPolicy.BEFORE_APP_CONTAINER,
    shareVolumePolicy: c.shareVolumePolicy ? { type: c.shareVolumePolicy } : undefined,
    transferEnv: c.transferEnv?.map((t) => withoutUndefined({
      sourceContainerName: t.sourceContainerName, sourceContainerNameFrom: t.sourceContainerNameFrom?._toKube(), envName: t.envName, envNames: t.envNames,
    })),
  });
}

function renderInjectionStrategy(s: SidecarSetInjectionStrategy | undefined): Record<string, unknown> | undefined {
  if (s?.paused === undefined && s?.revision === undefined) return undefined;
  return withoutUndefined({ paused: s.paused, revision: s.revision?._toKube() });
}

/** Validates every prop; returns the container names. */
function checkProps(props: SidecarSetProps): string[] {
  const meta = props.metadata ?? {};
  if (meta.namespace !== undefined) {
    throw propError('metadata.namespace', meta.namespace, 'is set, but a SidecarSet is cluster-scoped',
      'remove metadata.namespace; to limit the pods it injects, set namespace or namespaceSelector');
  }
  if (meta.name !== undefined) checkDnsSubdomain('metadata.name', meta.name);
  if (!props.selector) throw propError('selector', props.selector, 'is required', SIDECARSET_SELECTOR_FIX);
  if (isEmptySelector(props.selector)) throw propError('selector', props.selector, 'is empty', SIDECARSET_SELECTOR_FIX);
  checkSelector('selector', props.selector);
  if (props.namespace !== undefined) {
    checkDnsLabel('namespace', props.namespace);
    if (props.namespace === 'kube-system') {
      throw propError('namespace', props.namespace, 'is never injected: the manager leaves kube-system (and its own namespace) alone so the cluster can always start its pods',
        'choose an application namespace');
    }
  }
  if (props.namespaceSelector !== undefined) {
    if (props.namespace !== undefined) {
      throw propError('namespaceSelector', props.namespaceSelector, 'cannot be combined with namespace', 'set either namespace or namespaceSelector');
    }
    checkSelector('namespaceSelector', props.namespaceSelector);
  }
  const names = new Map<string, string>();
  const checkContainer = (c: k8s.Container, at: string) => {
    if (typeof c.name !== 'string') throw propError(`${at}.name`, c.name, 'is required', 'name the container, e.g. "proxy"');
    checkDnsLabel(`${at}.name`, c.name);
    const previous = names.get(c.name);
    if (previous) throw propError(`${at}.name`, c.name, `is already used by ${previous}`, 'give every container and init container its own name');
    names.set(c.name, at);
    if (typeof c.image !== 'string' || c.image.trim() === '') {
      throw propError(`${at}.image`, c.image, 'is required: a sidecar without an image cannot start', 'set image, e.g. "envoyproxy/envoy:v1.31.0"');
    }
  };
  (props.containers ?? []).forEach((c, i) => {
    const at = `containers[${i}]`;
    checkContainer(c, at);
    (c.transferEnv ?? []).forEach((t, j) => {
      if (!t.sourceContainerName && !t.sourceContainerNameFrom) {
        throw propError(`${at}.transferEnv[${j}].sourceContainerName`, t.sourceContainerName, 'is required',
          'name the app container to copy the env vars from, or set sourceContainerNameFrom to a pod label or annotation naming it');
      }
      if (t.envName === undefined && (t.envNames ?? []).length === 0) {
        throw propError(`${at}.transferEnv[${j}]`, t, 'names no env var to copy', 'set envName, or envNames with at least one name');
      }
    });
  });
  (props.initContainers ?? []).forEach((c, i) => {
    checkContainer(c, `initContainers[${i}]`);
    if (c.restartPolicy === 'Always' && (props.updateStrategy?.type ?? 'RollingUpdate') === 'RollingUpdate') {
      throw propError(`initContainers[${i}].restartPolicy`, c.restartPolicy, SidecarSetRules.nativeSidecarRolling, 'set updateStrategy: SidecarSetUpdateStrategy.notUpdate()');
    }
  });
  if (names.size === 0) {
    throw propError('containers', props.containers ?? [], 'is empty, and so is initContainers: the SidecarSet would inject nothing',
      'add at least one container (or init container)');
  }
  const volumes = new Set<string>();
  (props.volumes ?? []).forEach((v, i) => {
    checkDnsLabel(`volumes[${i}].name`, v.name);
    if (volumes.has(v.name)) throw propError(`volumes[${i}].name`, v.name, 'is duplicated', 'give every volume its own name');
    const problem = volumeSourceProblem(k8s.toJson_Volume(v) ?? {});
    if (problem) throw propError(`volumes[${i}]`, v, `${problem} (the manager refuses it, as upstream)`, 'give the volume exactly one source, e.g. emptyDir: {} or configMap: { name }');
    volumes.add(v.name);
  });
  [...(props.containers ?? []).map((c, i) => [c, `containers[${i}]`] as const), ...(props.initContainers ?? []).map((c, i) => [c, `initContainers[${i}]`] as const)]
    .forEach(([c, at]) => (c.volumeMounts ?? []).forEach((m, j) => {
      if (!volumes.has(m.name)) throw propError(`${at}.volumeMounts[${j}].name`, m.name, SidecarSetRules.mountWithoutVolume, `add a volume named ${m.name} to volumes`);
    }));
  (props.imagePullSecrets ?? []).forEach((s, i) => checkDnsSubdomain(`imagePullSecrets[${i}]`, s));
  if (props.revisionHistoryLimit !== undefined) checkPositiveInt('revisionHistoryLimit', props.revisionHistoryLimit, 0);
  return [...names.keys()];
}

/** Kubernetes' label selector rules (the contract's), so a bad selector fails at synth rather than at apply. */
function checkSelector(prop: string, selector: k8s.LabelSelector): void {
  throwProblems(selectorProblems(prop, selector));
}
