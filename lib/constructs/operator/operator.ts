import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { registrationsAccess, workersFlag, type Registrations } from '../../contract.js';
import { kplus } from '../core/api.js';
import { peersInApp } from '../core/app-peers.js';
import { checkDnsLabel, propError } from '../core/errors.js';
import { labelEveryObject } from '../core/labels.js';
import { operatorNames } from '../core/names.js';
import { ManagerDisruptionBudget } from '../manager/disruption-budget.js';
import {
  ManagerDeploymentProps,
  renderNetworkPolicy,
  ResolvedHa,
  renderWorkloads,
  resolveHa,
  webhookAnnotations,
} from '../manager/ha-parts.js';
import { ManagerImage } from '../manager/image.js';
import { resolveLeaderElection } from '../manager/manager-args.js';
import { ManagerWorkload } from '../manager/manager-workload.js';
import { ManagerMonitoring } from '../monitoring/monitoring.js';
import { ManagerRbac } from '../manager/rbac.js';
import { ManagerTopology } from '../manager/scheduling.js';
import { RuntimeImage } from '../runtime-image/runtime-image.js';
import { CertificateResources, WebhookCertificates } from '../webhooks/certificates.js';
import { WebhookConfigurations } from '../webhooks/webhooks.js';
import { KruiseManager } from '../kruise-manager.js';
import { operatorFlavour } from './operator-flavour.js';

/**
 * The program an {@link Operator} deploys: your TypeScript program on kruise-ha-runtime, built into an image. Its
 * registrations (name, webhook bindings, controllers and the kinds they use) are read from the program itself at
 * synth, so the webhook configurations and the RBAC follow the code.
 */
export class OperatorProgram {
  /**
   * The program a {@link RuntimeImage} bundles (its `entrypoint`, ending in `run()`): synth runs the bundle with
   * `--registrations` and the flags the Deployment gives it.
   */
  public static fromRuntimeImage(image: RuntimeImage): OperatorProgram {
    return new OperatorProgram(image);
  }

  private constructor(private readonly image: RuntimeImage) {}

  /** The image reference the Deployment runs. */
  public get imageReference(): string {
    return this.image.imageReference;
  }

  /** @internal */
  public _registrations(args: readonly string[]): Registrations {
    return this.image._readRegistrations(args);
  }
}

/** Props of {@link Operator}. */
export interface OperatorProps extends ManagerDeploymentProps {
  /** The program to deploy. */
  readonly program: OperatorProgram;
  /** Install namespace. @default - the program's name */
  readonly namespace?: string;
  /** Render the Namespace object. @default true */
  readonly createNamespace?: boolean;
  /** Annotations on the ServiceAccount (IRSA, Workload Identity). @default - none */
  readonly serviceAccountAnnotations?: { [key: string]: string };
  /** Extra annotations on both webhook configurations. @default - none */
  readonly webhookAnnotations?: { [key: string]: string };
}

/**
 * Your own highly available operator: the HA deployment of KruiseManager (replicas over zones, one per node, surge
 * rollouts, disruption budget, readiness that means "certificates ready and my webhook answers", the Lease, the
 * certificates, host network by default) for a program on kruise-ha-runtime, with its own names (prefixed by the
 * program's name) and its webhooks and RBAC derived from its registrations. No Kruise CRD, webhook or permission.
 * Operators with other names and KruiseManager run side by side.
 */
export class Operator extends Construct {
  /** The program's name: the prefix of every object name. */
  public readonly name: string;
  public readonly namespace: string;
  public readonly workloads: ManagerWorkload[];
  public readonly disruptionBudgets: ManagerDisruptionBudget[];
  public readonly webhookService: kplus.Service;
  public readonly webhooks: WebhookConfigurations;
  public readonly rbac: ManagerRbac;
  public readonly certificates: CertificateResources;
  public readonly monitoring: ManagerMonitoring;
  public readonly networkPolicy?: kplus.NetworkPolicy;
  /**
   * What the program serves and needs, as it printed it at synth.
   * @jsii ignore
   */
  public readonly registrations: Registrations;
  private readonly ha: ResolvedHa;

  constructor(scope: Construct, id: string, props: OperatorProps) {
    super(scope, id);
    if (!(props.program instanceof OperatorProgram))
      throw propError(
        'program',
        props.program,
        'is not an OperatorProgram',
        'use OperatorProgram.fromRuntimeImage(image)',
      );
    for (const flag of ['grafanaDashboard', 'alertRules'] as const) {
      if (props.monitoring?.[flag])
        throw propError(
          `monitoring.${flag}`,
          true,
          "renders kruise-manager's panels and rules, which name Kruise's objects",
          `remove monitoring.${flag} (scrape the ServiceMonitor's metrics: controller_runtime_*, leader election, webhook latency)`,
        );
    }
    // The flags the Deployment gives the program decide what it registers (a binding behind a flag), so the
    // registrations are read with them. Leader election and ports do not change registrations.
    const args = [
      ...Object.entries(props.controllerWorkers ?? {}).map(([c, n]) => `--${workersFlag(c)}=${n}`),
      ...(props.extraArgs ?? []),
    ];
    const registrations = (this.registrations = readWithFlags(props, args));
    const name = (this.name = registrations.name);
    const names = operatorNames(name);
    const ns = (this.namespace = props.namespace ?? name);
    checkDnsLabel('namespace', ns);
    const certificates = props.certificates ?? WebhookCertificates.selfManaged();
    const profile = operatorFlavour(registrations);
    const flavourInput = {
      namespace: ns,
      featureGates: props.featureGates,
      externalCertificates: certificates.isExternal,
      split: (props.topology ?? ManagerTopology.colocated()).isSplit,
    };
    profile._check(flavourInput);
    const ha = (this.ha = resolveHa(props, false));
    const flavour = profile._resolve(flavourInput);
    const image = ManagerImage._program(props.program.imageReference, profile);
    const leaderElection = resolveLeaderElection(props.leaderElection, ns, names.leaderElectionId);

    if (props.createNamespace ?? true) new kplus.Namespace(this, 'Namespace', { metadata: { name: ns } });
    this.rbac = ManagerRbac._create(this, 'Rbac', {
      namespace: ns,
      names,
      leaseNamespace: leaderElection.namespace,
      selfManagedCertificates: !certificates.isExternal,
      clusterRules: flavour.clusterRules,
      leaderElectionRules: flavour.leaderElectionRules,
      conversionCrds: [],
      aggregated: [],
      serviceAccountAnnotations: props.serviceAccountAnnotations,
    });
    this.certificates = CertificateResources._create(this, 'Certificates', { namespace: ns, certificates, names });
    const rendered = renderWorkloads(this, props, ha, {
      namespace: ns,
      names,
      image,
      serviceAccount: this.rbac.serviceAccount,
      leaderElection,
      featureGates: {},
      selfManagedCertificates: !certificates.isExternal,
      webhookNames: flavour.webhooks.map((w) => w.name),
    });
    this.workloads = rendered.workloads;
    this.disruptionBudgets = rendered.disruptionBudgets;
    this.webhookService = rendered.webhookService;
    this.monitoring = rendered.monitoring;
    if (props.networkPolicy) this.networkPolicy = renderNetworkPolicy(this, ns, names, ha);
    this.webhooks = WebhookConfigurations._create(this, 'Webhooks', {
      namespace: ns,
      names,
      definitions: flavour.webhooks,
      annotations: webhookAnnotations(props.webhookAnnotations, this.certificates.webhookAnnotations),
    });
    labelEveryObject(this, props.labels);
    this.node.addValidation({
      validate: () => [...this.validateRendered(), ...this.validateUniqueInApp(), ...this.validateHostPorts()],
    });
  }

  /**
   * What escape hatches could have changed since construction: every registered binding is in a webhook
   * configuration at its path and every rendered entry is registered; every kind the program writes or reads is
   * granted by the ClusterRole as rendered.
   */
  private validateRendered(): string[] {
    const errors: string[] = [];
    const rendered = [this.webhooks.mutating, this.webhooks.validating].flatMap((c) => {
      const type = c === this.webhooks.mutating ? 'mutating' : 'validating';
      const json = c.toJson() as { webhooks?: { name: string; clientConfig?: { service?: { path?: string } } }[] };
      return (json.webhooks ?? []).map((w) => ({ type, name: w.name, path: w.clientConfig?.service?.path }));
    });
    for (const w of this.registrations.webhooks)
      if (!rendered.some((r) => r.type === w.type && r.path === w.path))
        errors.push(
          `Operator ${this.name}: the ${w.type} binding on ${w.resource.kind} is served at ${w.path}, but no entry of ${this.webhooks[w.type].metadata.name} calls it. Fix: remove the patch that dropped entry ${w.name}, or the binding from the program`,
        );
    for (const r of rendered)
      if (!this.registrations.webhooks.some((w) => w.type === r.type && w.path === r.path))
        errors.push(
          `Operator ${this.name}: ${r.type} entry ${r.name} calls ${r.path ?? '(no path)'}, which the program does not serve (its paths: ${this.registrations.webhooks.map((w) => w.path).join(', ') || 'none'}). Fix: remove the entry, or register the binding in the program`,
        );
    const rules = ((ApiObject.of(this.rbac.clusterRole).toJson() as { rules?: RenderedRule[] }).rules ?? []).filter(
      (r) => !r.resourceNames || r.resourceNames.length === 0,
    );
    const access = registrationsAccess(this.registrations);
    for (const [kinds, verbs] of [
      [access.read, ['get', 'list', 'watch']],
      [access.write, ['create', 'update', 'patch', 'delete']],
    ] as const)
      for (const k of kinds)
        for (const verb of verbs)
          if (!rules.some((r) => grants(r, k.group, k.plural, verb)))
            errors.push(
              `Operator ${this.name}: the program uses ${k.kind} (${verb}), but ClusterRole ${this.rbac.clusterRole.name} grants no ${verb} on ${k.plural}. Fix: remove the patch that narrowed the role`,
            );
    return errors;
  }

  /**
   * With host network a pod's ports are its node's: beside KruiseManager or another Operator on host network, a port
   * they share leaves a node to only one of them, and a surge rollout finds no node.
   */
  private validateHostPorts(): string[] {
    if (!this.ha.hostNetwork) return [];
    const mine = new Set(this.workloads.flatMap((w) => listeners(w)));
    const others = [
      ...this.node.root.node
        .findAll()
        .filter((c): c is KruiseManager => c instanceof KruiseManager)
        .flatMap((k) => k.workloads),
      ...peersInApp<Operator>(this, Operator).flatMap((o) => (o.ha.hostNetwork ? o.workloads : [])),
    ];
    return others
      .filter((w) => w.deployment.hostNetwork)
      .flatMap((w) => {
        const shared = listeners(w).filter((p) => mine.has(p));
        return shared.length === 0
          ? []
          : [
              `Operator ${this.name} and ${w.deployment.name} both listen on host port ${shared.join(', ')}: with host network a node can run only one of them, so a rollout waits for nodes that never free. Fix: give the operator other ports (ports: { webhook, metrics, health }), or leave hostNetwork unset (false)`,
            ];
      });
  }

  /** Two operators of one name in an App would render the same cluster-scoped objects. */
  private validateUniqueInApp(): string[] {
    const same = peersInApp<Operator>(this, Operator).filter((o) => o.name === this.name);
    return same.length === 0
      ? []
      : [
          `Operator at ${this.node.path} and ${same.map((o) => o.node.path).join(', ')} both deploy program ${this.name}: they render the same webhook configurations, ClusterRoles and Lease. Fix: deploy each program once per App (give a second copy another run({ name }))`,
        ];
  }
}

/**
 * The registrations under the flags the Deployment gives. When the program refuses one (exit 2), the flags are checked
 * against its defaults' registrations, so the error names the prop that rendered the flag.
 */
function readWithFlags(props: OperatorProps, args: string[]): Registrations {
  try {
    return props.program._registrations(args);
  } catch (err) {
    if (args.length === 0) throw err;
    const plain = operatorFlavour(props.program._registrations([]));
    for (const [controller, workers] of Object.entries(props.controllerWorkers ?? {})) {
      const refused = plain._flagProblem(workersFlag(controller), true);
      if (refused)
        throw propError(
          `controllerWorkers.${controller}`,
          workers,
          `renders --${workersFlag(controller)}, which ${refused.problem}`,
          refused.fix,
        );
    }
    (props.extraArgs ?? []).forEach((arg, i) => {
      const name = /^--?([^=\s]+)/.exec(arg)?.[1];
      const refused = name === undefined ? undefined : plain._flagProblem(name, true);
      if (refused) throw propError(`extraArgs[${i}]`, arg, `--${name} ${refused.problem}`, refused.fix);
    });
    throw err;
  }
}

function listeners(w: ManagerWorkload): number[] {
  return [w.ports.webhook, w.ports.metrics, w.ports.health, w.ports.pprof].filter((p): p is number => p !== undefined);
}

interface RenderedRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}

function grants(rule: RenderedRule, group: string, plural: string, verb: string): boolean {
  const has = (list: string[] | undefined, v: string) => (list ?? []).some((x) => x === v || x === '*');
  return has(rule.apiGroups, group) && has(rule.resources, plural) && has(rule.verbs, verb);
}
