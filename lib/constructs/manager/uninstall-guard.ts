import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import { Construct } from 'constructs';
import { kplus } from '../core/api.js';
import { bindRole } from '../core/binding.js';
import { propError } from '../core/errors.js';
import type { ManagerImage } from './image.js';
import { setEphemeralStorage } from './manager-args.js';
import { IMAGE_PULL_POLICY } from './options.js';

/** Label upstream's delete-protection webhooks read (`policy.kruise.io/delete-protection`). */
const DELETE_PROTECTION_LABEL = 'policy.kruise.io/delete-protection';

/**
 * How uninstalling Kruise is kept from deleting the workloads it manages: deleting a Kruise CRD
 * deletes every object of it, so deleting the CloneSet CRD deletes every CloneSet and its pods.
 *
 * Pick by deploy tool. A plain Job cannot do it under `kubectl apply`: it runs at install, and
 * any later change to its template makes the re-apply fail (`field is immutable`); only a tool
 * that runs hooks can run a Job at uninstall.
 */
export class UninstallProtection {
  /**
   * For `kubectl apply`, Flux and any tool without hooks (the default for the upstream image).
   * Renders no Job. The Kruise CRDs carry `policy.kruise.io/delete-protection: Cascading` and
   * the manager runs with the feature gates `ResourcesDeletionProtection` and
   * `DeletionProtectionForCRDCascadingGate`, so upstream's CRD webhook refuses to delete a Kruise
   * CRD while objects of it exist (`kubectl delete -f` then leaves those CRDs, and their
   * workloads, in place, and reports the refusal). Protection lasts while a manager replica
   * answers: the delete-protection webhooks fail open.
   */
  public static deletionProtection(): UninstallProtection {
    return new UninstallProtection('deletionProtection', true);
  }

  /**
   * Argo CD: deletion protection as above, plus the guard Job as a `PreDelete` hook
   * (`hook-delete-policy: BeforeHookCreation`), which Argo CD runs only when the Application is
   * deleted, and which fails while CloneSets, Advanced StatefulSets or Advanced DaemonSets exist.
   * Needs an Argo CD version that supports PreDelete hooks; older ones never run it.
   */
  public static argoCdPreDelete(): UninstallProtection {
    return new UninstallProtection('argoCdPreDelete', true, {
      'argocd.argoproj.io/hook': 'PreDelete',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
  }

  /**
   * Helm (for example the output of `cdk8s synth --format helm`): deletion protection as above,
   * plus the guard Job as a `pre-delete` hook, as in upstream's chart.
   */
  public static helmPreDelete(): UninstallProtection {
    return new UninstallProtection('helmPreDelete', true, {
      'helm.sh/hook': 'pre-delete',
      'helm.sh/hook-delete-policy': 'before-hook-creation',
    });
  }

  /** No protection: deleting the CRDs deletes every Kruise workload and its pods. */
  public static none(): UninstallProtection {
    return new UninstallProtection('none', false);
  }

  private constructor(
    /** Which factory made this, for error messages. */
    public readonly kind: string,
    /** Whether the CRDs carry the delete-protection label and the manager enforces it. */
    public readonly protectsCrds: boolean,
    /** Annotations making the guard Job a hook; undefined renders no Job. */
    public readonly hookAnnotations?: { readonly [key: string]: string },
  ) {}

  /** Labels for every Kruise CRD. */
  public get crdLabels(): { [key: string]: string } {
    return this.protectsCrds ? { [DELETE_PROTECTION_LABEL]: 'Cascading' } : {};
  }

  /**
   * Feature gates the manager needs for the CRD labels to take effect. Without
   * `DeletionProtectionForCRDCascadingGate`, upstream refuses every delete of a `Cascading` CRD.
   */
  public get featureGates(): { [gate: string]: boolean } {
    return this.protectsCrds ? { ResourcesDeletionProtection: true, DeletionProtectionForCRDCascadingGate: true } : {};
  }

  /**
   * The guard Job for hook-running tools, else nothing.
   * @internal
   */
  public _renderGuard(
    scope: Construct,
    id: string,
    props: Omit<UninstallGuardProps, 'protection'>,
  ): UninstallGuard | undefined {
    return this.hookAnnotations ? UninstallGuard._create(scope, id, { ...props, protection: this }) : undefined;
  }
}

/** Props of {@link UninstallGuard}. */
export interface UninstallGuardProps {
  readonly namespace: string;
  /** The manager image; the guard image is taken from the same registry. */
  readonly image: ManagerImage;
  /** @default - none */
  readonly imagePullSecrets?: string[];
  /**
   * Which deploy tool runs the Job at uninstall: `UninstallProtection.argoCdPreDelete()` or
   * `.helmPreDelete()`. A choice without a hook is rejected.
   * @default UninstallProtection.argoCdPreDelete()
   */
  readonly protection?: UninstallProtection;
}

/**
 * A Job that lists CloneSets, Advanced StatefulSets and Advanced DaemonSets cluster-wide and
 * fails while any exist, run by a deploy tool's pre-delete hook, so an uninstall stops before
 * it deletes the CRDs and with them the workloads. Always a hook: never render it for plain
 * `kubectl apply` (see {@link UninstallProtection}).
 */
export class UninstallGuard extends Construct {
  public readonly job: kplus.Job;
  /** ServiceAccount, ClusterRole and binding: ordinary objects the hook Job runs with. */
  public readonly accessObjects: ApiObject[];
  /** Every object rendered, the Job last. */
  public readonly apiObjects: ApiObject[];

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: UninstallGuardProps): UninstallGuard {
    return new UninstallGuard(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: UninstallGuardProps) {
    super(scope, id);
    const protection = props.protection ?? UninstallProtection.argoCdPreDelete();
    if (!protection.hookAnnotations) {
      throw propError(
        'protection',
        `UninstallProtection.${protection.kind}()`,
        'runs no hook: a plain Job runs at install under kubectl apply, and every later change to it fails to re-apply (field is immutable)',
        'use UninstallProtection.argoCdPreDelete() or .helmPreDelete(), or do not render UninstallGuard',
      );
    }
    const sa = new kplus.ServiceAccount(this, 'ServiceAccount', {
      metadata: { name: 'kruise-helm-hook', namespace: props.namespace },
      automountToken: false,
    });
    const role = new kplus.ClusterRole(this, 'Role', { metadata: { name: 'kruise-helm-hook' } });
    role.allow(
      ['get', 'list'],
      ...['clonesets', 'statefulsets', 'daemonsets'].map((p) =>
        kplus.ApiResource.custom({ apiGroup: 'apps.kruise.io', resourceType: p }),
      ),
    );
    const binding = bindRole(this, role, sa);
    const registry = props.image.reference.slice(0, props.image.reference.lastIndexOf('/'));
    this.job = new kplus.Job(this, 'Job', {
      metadata: {
        name: 'kruise-uninstall-guard',
        namespace: props.namespace,
        annotations: { ...protection.hookAnnotations },
      },
      serviceAccount: sa,
      automountServiceAccountToken: true,
      backoffLimit: 0,
      ttlAfterFinished: Duration.hours(1),
      securityContext: { ensureNonRoot: true, user: 65534, group: 65534 },
    });
    this.job.addContainer({
      name: 'guard',
      image: `${registry}/kruise-helm-hook:v0.1.0`,
      imagePullPolicy: IMAGE_PULL_POLICY,
      // Three `limit=1` list calls: a small Go client.
      resources: {
        cpu: { request: kplus.Cpu.millis(10), limit: kplus.Cpu.millis(100) },
        memory: { request: Size.mebibytes(32), limit: Size.mebibytes(64) },
      },
      securityContext: {
        ensureNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: [kplus.Capability.ALL] },
        seccompProfile: { type: kplus.SeccompProfileType.RUNTIME_DEFAULT },
      },
    });
    const job = ApiObject.of(this.job);
    setEphemeralStorage(job, Size.mebibytes(16), Size.mebibytes(64));
    if (props.imagePullSecrets?.length) {
      job.addJsonPatch(
        JsonPatch.add(
          '/spec/template/spec/imagePullSecrets',
          props.imagePullSecrets.map((name) => ({ name })),
        ),
      );
    }
    this.accessObjects = [ApiObject.of(sa), ApiObject.of(role), binding];
    this.apiObjects = [...this.accessObjects, job];
  }
}
