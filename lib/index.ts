/**
 * kruise-ha: CDK8s constructs for a highly available OpenKruise control plane.
 * The shared contract is `kruise-ha/contract`; the runtime is the separate package `kruise-ha-runtime`.
 */
export * from './constructs/alerts.js';
export * from './constructs/certificates.js';
export * from './constructs/dashboard.js';
export * from './constructs/crds.js';
export { KruiseDaemon } from './constructs/daemon.js';
export type { DaemonCredentialProvider, DaemonOptions, KruiseDaemonProps } from './constructs/daemon.js';
export * from './constructs/disruption-budget.js';
export * from './constructs/image.js';
export * from './constructs/kruise-manager.js';
export * from './constructs/lease-timing.js';
export { LogFormat, LogLevel } from './constructs/logging.js';
export { ManagerRole, ManagerWorkload } from './constructs/manager-workload.js';
export type { ManagerWorkloadPodOptions, ManagerWorkloadProps, ResolvedPorts } from './constructs/manager-workload.js';
export * from './constructs/monitoring.js';
export type { LeaderElectionOptions, ManagerPodOptions, ManagerPorts } from './constructs/options.js';
export { ManagerRbac } from './constructs/rbac.js';
export type { AggregatedResource, ManagerRbacProps } from './constructs/rbac.js';
export * from './constructs/runtime-crds.js';
export * from './constructs/runtime-image.js';
export * from './constructs/scheduling.js';
export * from './constructs/sidecarset.js';
export * from './constructs/uninstall-guard.js';
export * from './constructs/webhooks.js';
export * from './constructs/workloadspread.js';
export { CustomResourceAccess } from './constructs/upstream/permissions.js';
export type { GroupResource } from './constructs/upstream/permissions.js';
export type { UpstreamProfile } from './constructs/upstream/profile.js';
export type {
  Condition,
  PolicyRule,
  UpstreamController,
  UpstreamCrd,
  UpstreamFeatureGate,
  UpstreamRelease,
  UpstreamWebhook,
  WebhookRule,
} from './constructs/upstream/release.js';
export { resolveLeaderElection, renderManagerArgs } from './constructs/manager-args.js';
export type { ResolvedLeaderElection, ManagerArgsInput } from './constructs/manager-args.js';
