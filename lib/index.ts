/**
 * kruise-ha: CDK8s constructs for a highly available OpenKruise control plane.
 *
 * The curated public API, the same in TypeScript, Python, Java and Go (jsii, docs/languages.md): what a user
 * constructs and configures (KruiseManager and its props' union-like classes, RuntimeImage, SidecarSet,
 * WorkloadSpread, the alert and dashboard constructs) and what they read back (the constructs KruiseManager
 * composes, which only it creates). Internals (argument rendering, resolved props, upstream's release tables) stay
 * in their modules. The shared contract is `kruise-ha/contract`; the runtime is the separate package
 * `kruise-ha-runtime`.
 */
export { ManagerAlerts } from './constructs/monitoring/alerts.js';
export type { AlertOptions, AlertRule, ManagerAlertsProps } from './constructs/monitoring/alerts.js';
export { CertificateResources, WebhookCertificates } from './constructs/webhooks/certificates.js';
export type { CertManagerOptions, IssuerRef } from './constructs/webhooks/certificates.js';
export { CrdSource, KruiseCrds } from './constructs/crds/crds.js';
export type { CrdManifest } from './constructs/crds/crds.js';
export { KruiseDaemon } from './constructs/daemon/daemon.js';
export type { DaemonCredentialProvider, DaemonOptions } from './constructs/daemon/daemon.js';
export { ManagerDashboard } from './constructs/monitoring/dashboard.js';
export type { DashboardOptions, ManagerDashboardProps } from './constructs/monitoring/dashboard.js';
export { DisruptionBudget, ManagerDisruptionBudget } from './constructs/manager/disruption-budget.js';
export { ManagerFlavor, ManagerImage } from './constructs/manager/image.js';
export type { IRuntimeImageSource, UpstreamImageOptions } from './constructs/manager/image.js';
export { KruiseManager } from './constructs/kruise-manager.js';
export type { KruiseManagerProps, WebhookOptions } from './constructs/kruise-manager.js';
export { LeaseTiming } from './constructs/manager/lease-timing.js';
export { LogFormat, LogLevel } from './constructs/manager/logging.js';
export { ManagerRole, ManagerWorkload } from './constructs/manager/manager-workload.js';
export { ManagerMonitoring } from './constructs/monitoring/monitoring.js';
export type { MonitoringOptions } from './constructs/monitoring/monitoring.js';
export type { LeaderElectionOptions, ManagerPodOptions, ManagerPorts } from './constructs/manager/options.js';
export { ManagerRbac } from './constructs/manager/rbac.js';
export { Operator, OperatorProgram } from './constructs/operator/operator.js';
export type { OperatorProps } from './constructs/operator/operator.js';
export type { ManagerDeploymentProps } from './constructs/manager/ha-parts.js';
export { RuntimeImage } from './constructs/runtime-image/runtime-image.js';
export type { RuntimeImageProps } from './constructs/runtime-image/runtime-image.js';
export { ManagerTopology, Rollout, ZoneSpread } from './constructs/manager/scheduling.js';
export type {
  ControllerPorts,
  CustomRolloutOptions,
  RequiredZoneSpreadOptions,
  SplitTopologyOptions,
  ZoneSpreadOptions,
} from './constructs/manager/scheduling.js';
export {
  InjectRevision,
  InjectRevisionPolicy,
  IntOrPercent,
  PatchPolicy,
  PodInjectPolicy,
  ShareVolumePolicy,
  SidecarSet,
  SidecarSetUpdateStrategy,
  SourceContainerName,
  UpdatePriority,
} from './constructs/features/sidecarset.js';
export type {
  PatchPodMetadata,
  RollingUpdateOptions,
  ScatterTerm,
  SidecarContainerProps,
  SidecarSetInjectionStrategy,
  SidecarSetProps,
  TransferEnvVar,
  WeightedPriorityTerm,
} from './constructs/features/sidecarset.js';
export { UninstallGuard, UninstallProtection } from './constructs/manager/uninstall-guard.js';
export { FailurePolicy, WebhookConfigurations, WebhookGroup } from './constructs/webhooks/webhooks.js';
export type { WebhookGroupOptions } from './constructs/webhooks/webhooks.js';
export {
  WorkloadSpread,
  WorkloadSpreadScheduleStrategy,
  WorkloadSpreadTarget,
} from './constructs/features/workloadspread.js';
export type {
  AdaptiveScheduleOptions,
  WorkloadSpreadCustomWorkload,
  WorkloadSpreadCustomWorkloadOwner,
  WorkloadSpreadProps,
  WorkloadSpreadSubset,
} from './constructs/features/workloadspread.js';
export { CustomResourceAccess } from './constructs/manager/custom-resource-access.js';
export type { GroupResource } from './upstream/permissions.js';
