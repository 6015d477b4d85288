import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { KRUISE_CONFIGURATION, LabelValues, Labels, Names, WORKLOADSPREAD_WHITELIST_KEY } from '../contract.js';
import { kplus } from './core/api.js';
import { KRUISE_MANAGER_NAMES } from './core/names.js';
import { peersInApp } from './core/app-peers.js';
import { CertificateResources, WebhookCertificates } from './webhooks/certificates.js';
import { CrdSource, KruiseCrds } from './crds/crds.js';
import { checkDaemonOptions, DaemonOptions, KruiseDaemon } from './daemon/daemon.js';
import { labelEveryObject } from './core/labels.js';
import { ManagerDisruptionBudget } from './manager/disruption-budget.js';
import { checkDnsLabel, propError } from './core/errors.js';
import { ManagerImage } from './manager/image.js';
import { resolveLeaderElection } from './manager/manager-args.js';
import { ManagerWorkload } from './manager/manager-workload.js';
import {
  ManagerDeploymentProps,
  renderNetworkPolicy,
  renderWorkloads,
  resolveHa,
  webhookAnnotations,
} from './manager/ha-parts.js';
import { ManagerMonitoring } from './monitoring/monitoring.js';
import { ManagerRbac } from './manager/rbac.js';
import { ManagerTopology } from './manager/scheduling.js';
import { UninstallGuard, UninstallProtection } from './manager/uninstall-guard.js';
import { CustomResourceAccess } from './manager/custom-resource-access.js';
import { UpstreamProfile } from './manager/upstream-profile.js';
import { WebhookConfigurations, WebhookGroupOptions } from './webhooks/webhooks.js';
import type { WorkloadSpreadCustomWorkload } from './features/workloadspread.js';
import { checkCustomWorkload, customWorkloadRules, customWorkloadWhitelist } from './features/workloadspread-custom.js';

/** Webhook settings of {@link KruiseManager}. */
export interface WebhookOptions {
  /**
   * Namespaces the pod webhooks never intercept. Must include `kube-system` and the install namespace.
   * @default ['kube-system', <namespace>]
   */
  readonly podExcludedNamespaces?: string[];
  /**
   * Pod webhooks (sidecar injection, pod validation). FAIL guarantees no pod starts without
   * its sidecars but blocks pod creation while every replica is down; IGNORE keeps pods
   * flowing and silently skips injection.
   * @default - FAIL, 10 s
   */
  readonly pods?: WebhookGroupOptions;
  /** Webhooks on Kruise resources. @default - FAIL, 10 s */
  readonly resources?: WebhookGroupOptions;
  /** Delete-protection webhooks (upstream only); they skip `kube-system`, as the chart's. @default - IGNORE, 10 s */
  readonly deleteProtection?: WebhookGroupOptions;
  /**
   * Extra annotations on both webhook configurations (the chart's `externalCerts.annotations`
   * for an injector other than cert-manager). Keys the chosen certificates set are refused.
   * @default - none
   */
  readonly annotations?: { [key: string]: string };
  /**
   * AKS: exclude the namespaces AKS manages from every webhook (the `next` chart's
   * `webhookConfiguration.aksIntegration`).
   * @default false
   */
  readonly aksIntegration?: boolean;
}

/** Props of {@link KruiseManager}. */
export interface KruiseManagerProps extends ManagerDeploymentProps {
  /** Install namespace. @default 'kruise-system' */
  readonly namespace?: string;
  /** Render the Namespace object. @default true */
  readonly createNamespace?: boolean;
  /** Image and flavor. @default ManagerImage.upstream() */
  readonly image?: ManagerImage;
  /** Webhook settings. @default - see WebhookOptions */
  readonly webhooks?: WebhookOptions;
  /** Deploy kruise-daemon (upstream image only). @default - true for upstream */
  readonly daemon?: boolean;
  /**
   * kruise-daemon's placement, resources, environment, runtime socket, ports, logging and
   * registry credential plugins (the chart's `daemon.*`). Upstream image only.
   * @default - see DaemonOptions
   */
  readonly daemonOptions?: DaemonOptions;
  /**
   * Annotations on the manager's and kruise-daemon's ServiceAccounts (the chart's
   * `serviceAccount.annotations`): IRSA's `eks.amazonaws.com/role-arn`, GKE Workload Identity's
   * `iam.gke.io/gcp-service-account`. `daemonOptions.serviceAccountAnnotations` adds to or
   * overrides them for the daemon.
   * @default - none
   */
  readonly serviceAccountAnnotations?: { [key: string]: string };
  /**
   * client-go's cache mutation detector on the manager and kruise-daemon
   * (`KUBE_CACHE_MUTATION_DETECTOR`, the chart's `enableKubeCacheMutationDetector`): for
   * debugging only, memory doubles and a mutated cache panics. Upstream image only.
   * @default false
   */
  readonly kubeCacheMutationDetector?: boolean;
  /**
   * CRDs, rendered first so that one apply creates a working install. Pass
   * `CrdSource.none()` when the CRDs are managed elsewhere.
   * @default - the flavour's own CRDs: upstream's 18 for the upstream image (from the generated
   * release data), the SidecarSet CRD for the runtime image
   */
  readonly crds?: CrdSource;
  /**
   * Upstream image only: cluster-wide reads that upstream grants with wildcards (scale of any
   * workload, listing any custom resource). See {@link CustomResourceAccess}.
   * @default CustomResourceAccess.kruiseAndBuiltIn()
   */
  readonly customResourceAccess?: CustomResourceAccess;
  /**
   * Custom workload kinds WorkloadSpread may target (target them with
   * `WorkloadSpreadTarget.custom()`): renders ConfigMap kruise-configuration with upstream's
   * `WorkloadSpread_Watch_Custom_Workload_WhiteList` (the manager reads it; if you manage that
   * ConfigMap yourself, leave this unset and add the key there), and lets the manager read them,
   * their scale subresource and their sub-resources.
   * @default - none: WorkloadSpread targets the built-in kinds only
   */
  readonly workloadSpreadCustomWorkloads?: WorkloadSpreadCustomWorkload[];
  /**
   * How uninstalling is kept from deleting Kruise workloads (upstream image only): a guard Job
   * only for deploy tools that run hooks, CRD deletion protection for plain kubectl.
   * @default - UninstallProtection.deletionProtection() for upstream, none for the runtime
   */
  readonly uninstallProtection?: UninstallProtection;
  /** Argo CD sync-wave annotations encoding the apply order. @default false */
  readonly argoCdSyncWaves?: boolean;
}

/** Apply order: CRDs and namespaces, RBAC and certificates, workloads, then webhooks. */
enum Wave {
  FOUNDATION = 0,
  ACCESS = 1,
  WORKLOAD = 2,
  ADMISSION = 3,
}

/**
 * The complete highly available kruise-manager deployment. See the README for the topology
 * and the comparison with the official chart.
 */
export class KruiseManager extends Construct {
  public readonly namespace: string;
  public readonly image: ManagerImage;
  /** One workload (colocated) or two (split: webhook first, controllers second). */
  public readonly workloads: ManagerWorkload[] = [];
  public readonly webhookService: kplus.Service;
  public readonly webhooks: WebhookConfigurations;
  public readonly rbac: ManagerRbac;
  public readonly certificates: CertificateResources;
  public readonly crds: KruiseCrds;
  public readonly disruptionBudgets: ManagerDisruptionBudget[] = [];
  public readonly monitoring: ManagerMonitoring;
  public readonly daemon?: KruiseDaemon;
  public readonly networkPolicy?: kplus.NetworkPolicy;
  public readonly uninstallGuard?: UninstallGuard;
  /**
   * Upstream image only: what the binary will run, resolved from upstream's own definitions
   * (gates, served webhooks, started controllers, permissions).
   * TypeScript only: upstream's release tables have no form in the other languages.
   * @jsii ignore
   */
  public readonly upstreamProfile?: UpstreamProfile;
  private readonly waves = new Map<ApiObject, Wave>();

  constructor(scope: Construct, id: string, props: KruiseManagerProps = {}) {
    super(scope, id);
    // Every default resolved once, here; the constructs below get resolved values only.
    const ns = (this.namespace = props.namespace ?? Names.namespace);
    checkDnsLabel('namespace', ns);
    const image = (this.image = props.image ?? ManagerImage.upstream());
    const flavourProfile = image._flavorProfile();
    const certificates = props.certificates ?? WebhookCertificates.selfManaged();
    const selfManagedCertificates = !certificates.isExternal;
    const flavourInput = {
      namespace: ns,
      featureGates: props.featureGates,
      externalCertificates: certificates.isExternal,
      customResourceAccess: props.customResourceAccess,
      uninstallProtection: props.uninstallProtection,
      split: (props.topology ?? ManagerTopology.colocated()).isSplit,
      daemon: props.daemon,
      daemonOptions: props.daemonOptions !== undefined,
      kubeCacheMutationDetector: props.kubeCacheMutationDetector,
    };
    this.checkProps(props);
    const ha = resolveHa(props);
    flavourProfile._check(flavourInput);
    const flavour = flavourProfile._resolve(flavourInput);
    this.upstreamProfile = flavour.upstreamProfile;
    const leaderElection = resolveLeaderElection(props.leaderElection, ns);

    if (props.createNamespace ?? true) {
      const namespace = new kplus.Namespace(this, 'Namespace', {
        metadata: { name: ns, labels: { [Labels.controlPlane]: LabelValues.openkruise, ...props.labels } },
      });
      this.wave(Wave.FOUNDATION, ApiObject.of(namespace));
    }
    // The daemon reads pull secrets there, and the manager's image-pull controllers (which run
    // with the KruiseDaemon gate, daemon rendered or not) copy them there.
    if (flavour.daemon || Names.daemonConfigNamespace in (flavour.namespacedRules ?? {})) {
      const daemonConfig = new kplus.Namespace(this, 'DaemonConfigNamespace', {
        metadata: { name: Names.daemonConfigNamespace },
      });
      this.wave(Wave.FOUNDATION, ApiObject.of(daemonConfig));
    }
    this.crds = new KruiseCrds(this, 'Crds', props.crds ?? CrdSource.fromManifests(flavour.crds));
    this.wave(Wave.FOUNDATION, ...this.crds.apiObjects);
    const customWorkloads = props.workloadSpreadCustomWorkloads ?? [];
    const names = KRUISE_MANAGER_NAMES;
    this.rbac = ManagerRbac._create(this, 'Rbac', {
      namespace: ns,
      names,
      leaseNamespace: leaderElection.namespace,
      selfManagedCertificates,
      clusterRules: [...flavour.clusterRules, ...customWorkloadRules(customWorkloads)],
      namespacedRules: flavour.namespacedRules,
      leaderElectionRules: flavour.leaderElectionRules,
      conversionCrds: flavour.conversionCrds,
      aggregated: flavour.aggregated,
      serviceAccountAnnotations: props.serviceAccountAnnotations,
    });
    if (props.workloadSpreadCustomWorkloads !== undefined) {
      const configuration = new ApiObject(this, 'Configuration', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: KRUISE_CONFIGURATION, namespace: ns },
        data: { [WORKLOADSPREAD_WHITELIST_KEY]: customWorkloadWhitelist(customWorkloads) },
      });
      this.wave(Wave.FOUNDATION, configuration);
    }
    this.certificates = CertificateResources._create(this, 'Certificates', { namespace: ns, certificates, names });
    this.wave(Wave.ACCESS, ...this.rbac.apiObjects, ...this.certificates.apiObjects);

    const rendered = renderWorkloads(this, props, ha, {
      namespace: ns,
      names,
      image,
      serviceAccount: this.rbac.serviceAccount,
      leaderElection,
      featureGates: flavour.featureGates,
      selfManagedCertificates,
      kubeCacheMutationDetector: props.kubeCacheMutationDetector,
      webhookNames: flavour.webhooks.map((w) => w.name),
    });
    this.workloads.push(...rendered.workloads);
    this.disruptionBudgets.push(...rendered.disruptionBudgets);
    this.webhookService = rendered.webhookService;
    this.monitoring = rendered.monitoring;
    rendered.workloads.forEach((w, i) => this.wave(Wave.WORKLOAD, w.apiObject, rendered.disruptionBudgets[i].pdb));
    this.wave(Wave.WORKLOAD, ApiObject.of(this.webhookService), ...this.monitoring.apiObjects);
    if (flavour.daemon) {
      this.daemon = KruiseDaemon._create(this, 'Daemon', {
        namespace: ns,
        image,
        featureGates: flavour.featureGates,
        imagePullSecrets: props.imagePullSecrets,
        kubeCacheMutationDetector: props.kubeCacheMutationDetector,
        labels: props.labels,
        ...props.daemonOptions,
        // As the chart's serviceAccount.annotations: on both ServiceAccounts (the daemon's may add or override).
        serviceAccountAnnotations: {
          ...props.serviceAccountAnnotations,
          ...props.daemonOptions?.serviceAccountAnnotations,
        },
      });
      this.wave(Wave.WORKLOAD, ...this.daemon.apiObjects);
    }
    if (props.networkPolicy) {
      this.networkPolicy = renderNetworkPolicy(this, ns, names, ha);
      this.wave(Wave.WORKLOAD, ApiObject.of(this.networkPolicy));
    }
    // Only a hook Job: a plain Job would run at install and block re-applies (immutable template).
    this.uninstallGuard = flavour.uninstallProtection._renderGuard(this, 'UninstallGuard', {
      namespace: ns,
      image,
      imagePullSecrets: props.imagePullSecrets,
    });
    if (this.uninstallGuard) this.wave(Wave.ACCESS, ...this.uninstallGuard.accessObjects);
    // Last: the webhook configurations block matching writes until a replica answers.
    const caAnnotations = webhookAnnotations(props.webhooks?.annotations, this.certificates.webhookAnnotations);
    this.webhooks = WebhookConfigurations._create(this, 'Webhooks', {
      ...props.webhooks,
      namespace: ns,
      names,
      definitions: flavour.webhooks,
      template: flavourProfile.webhookTemplate,
      annotations: caAnnotations,
    });
    // A CRD's conversion webhook needs the CA too: with external certificates upstream waits until
    // each such CRD's caBundle matches the CA (pkg/webhook/util/crd), so the injector must fill it.
    for (const crd of this.crds.apiObjects)
      if (flavour.conversionCrds.includes(crd.name))
        for (const [key, value] of Object.entries(caAnnotations)) crd.metadata.addAnnotation(key, value);
    this.wave(Wave.ADMISSION, ...this.webhooks.apiObjects);
    if (props.argoCdSyncWaves) {
      for (const [obj, wave] of this.waves) obj.metadata.addAnnotation('argocd.argoproj.io/sync-wave', String(wave));
    }
    labelEveryObject(this, props.labels);
    this.node.addValidation({ validate: () => this.validateUniqueInApp() });
  }

  private wave(wave: Wave, ...objects: ApiObject[]): void {
    for (const o of objects) this.waves.set(o, wave);
  }

  private checkProps(props: KruiseManagerProps): void {
    const seen = new Set<string>();
    (props.workloadSpreadCustomWorkloads ?? []).forEach((w, i) => {
      const at = `workloadSpreadCustomWorkloads[${i}]`;
      checkCustomWorkload(at, w);
      (w.subResources ?? []).forEach((sub, j) => checkCustomWorkload(`${at}.subResources[${j}]`, sub, true));
      const key = `${w.apiVersion.split('/')[0]}/${w.kind}`;
      if (seen.has(key))
        throw propError(`${at}.kind`, key, 'is listed twice (the manager matches by group and kind)', 'keep one entry');
      seen.add(key);
    });
    if (props.daemonOptions && props.daemon === false) {
      throw propError(
        'daemonOptions',
        'set',
        'configures kruise-daemon, which daemon: false leaves out',
        'remove daemonOptions, or remove daemon: false',
      );
    }
    if (props.daemonOptions) checkDaemonOptions(props.daemonOptions);
  }

  /** Cluster-scoped names (webhook configurations, ClusterRoles) allow one manager per App. */
  private validateUniqueInApp(): string[] {
    const others = peersInApp<KruiseManager>(this, KruiseManager);
    if (others.length === 0) return [];
    const paths = others.map((o) => o.node.path).join(', ');
    return [
      `KruiseManager at ${this.node.path} shares the App with ${paths}: both render the cluster-scoped webhook configurations and ClusterRoles with the same names. Fix: keep one KruiseManager per App (one per cluster).`,
    ];
  }
}
