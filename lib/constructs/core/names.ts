/**
 * Every name the HA parts render, resolved once by the construct that owns them: Kruise's fixed names for
 * KruiseManager, names prefixed by the program's name for Operator, so two operators and Kruise run side by side
 * without sharing a Lease, a Service, a Secret, a webhook configuration or a ClusterRole. Internal: the parts take
 * resolved names, users give only a name.
 */
import { KruiseObjectNames, LabelValues, Labels, Names, objectNamesFor, type ObjectNames } from '../../contract.js';

/** Internal to the constructs (not exported by the package index). */
export interface ManagerNames extends ObjectNames {
  /** The colocated Deployment; the split topology's are `${splitPrefix}-webhook` and `${splitPrefix}-controllers`. */
  readonly deployment: string;
  readonly splitPrefix: string;
  readonly serviceAccount: string;
  /** The cluster-wide role of the manager (and its namespaced roles). */
  readonly managerRole: string;
  readonly leaderElectionRole: string;
  readonly webhookRole: string;
  readonly certsRole: string;
  readonly metricsService: string;
  readonly networkPolicy: string;
  /** cert-manager's objects (when it issues): self-signed issuer, CA certificate and Secret, CA issuer. */
  readonly certManager: { readonly selfSigned: string; readonly ca: string; readonly caIssuer: string };
  /** The label every manager pod carries, which the Services, PDBs and spread select on (with the role). */
  readonly podLabel: { readonly key: string; readonly value: string };
}

/** Kruise's names, as upstream's chart renders them. */
export const KRUISE_MANAGER_NAMES: ManagerNames = {
  ...KruiseObjectNames,
  deployment: 'kruise-controller-manager',
  splitPrefix: 'kruise',
  serviceAccount: Names.managerServiceAccount,
  managerRole: 'kruise-manager-role',
  leaderElectionRole: 'kruise-leader-election-role',
  webhookRole: 'kruise-webhook-role',
  certsRole: 'kruise-certs-role',
  metricsService: 'kruise-manager-metrics',
  networkPolicy: 'kruise-manager',
  certManager: { selfSigned: 'kruise-selfsigned', ca: 'kruise-webhook-ca', caIssuer: 'kruise-webhook-ca-issuer' },
  podLabel: { key: Labels.controlPlane, value: LabelValues.controllerManager },
};

/** A program's names from its name (the runtime's objectNamesFor for the ones both rooms use). */
export function operatorNames(name: string): ManagerNames {
  return {
    ...objectNamesFor(name),
    deployment: name,
    splitPrefix: name,
    serviceAccount: name,
    managerRole: `${name}-role`,
    leaderElectionRole: `${name}-leader-election-role`,
    webhookRole: `${name}-webhook-role`,
    certsRole: `${name}-certs-role`,
    metricsService: `${name}-metrics`,
    networkPolicy: name,
    certManager: { selfSigned: `${name}-selfsigned`, ca: `${name}-webhook-ca`, caIssuer: `${name}-webhook-ca-issuer` },
    podLabel: { key: 'app.kubernetes.io/name', value: name },
  };
}
