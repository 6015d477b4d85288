/** `kruise-ha doctor` as a library: read a cluster, judge the kruise-manager install. */
export { evaluate, runDoctor } from './doctor.js';
export type { DoctorOptions, DoctorReport } from './doctor.js';
export { expectations } from './expectations.js';
export type { Expectations, ExpectedCrd, ExpectedWebhook, Flavour } from './expectations.js';
export type { CheckResult, ClusterSnapshot, Permission, PermissionResult, Status } from './model.js';
export { renderJson, renderTable } from './report.js';
