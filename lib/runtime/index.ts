/**
 * kruise-ha-runtime: a controller-runtime-style manager in TypeScript. What a user of the package builds on: run
 * (the entrypoint: flags, signals, exit codes), the Manager (its options, controllers, webhooks and events), the
 * typed API client, the webhook handler API, and Kruise's features as registrations on a Manager. The machinery
 * under them (informers, work queues, leader election, certificates, the webhook server, SidecarSet's and
 * WorkloadSpread's internals) stays in its modules, for this repository's own code and tests.
 */
export { Manager, type ControllerAccess, type ExitCode, type ManagerDeps } from './manager.js';
export { AdmissionBinding, type MutateAction, type ValidateAction } from './bindings/admission.js';
export { helpText, parseOptions, type FlagSet, type HelpProgram, type ManagerOptions } from './options.js';
export type { HostPort } from './option-parsers.js';
export type { Role } from '../contract/names.js';
export { OptionsError } from './option-parsers.js';
export {
  Controller,
  type ControllerOptions,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type Result,
} from './controller.js';
export {
  addFinalizer,
  Client,
  defineKind,
  hasFinalizer,
  removeFinalizer,
  type ClientCall,
  DefaultBackoff,
  DefaultRetry,
  kindPath,
  Kinds,
  retryOnConflict,
  retryOnError,
  type Backoff,
  type CallOptions,
  type DeleteOptions,
  type GetOptions,
  type JsonPatchOperation,
  type Kind,
  type KindSpec,
  type ListMeta,
  type ListOptions,
  type ObjectOf,
  type ObjectList,
  type Patch,
  type PatchOptions,
  type PathTarget,
  type RetryOptions,
  type WriteOptions,
} from './client/index.js';
export {
  ignoreNotFound,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isInvalid,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
  reasonOf,
  StatusError,
  StatusReasons,
  type StatusReason,
} from './kube/errors.js';
export { LeadershipLostError } from './leader/elector.js';
export type { EventHandler, EventSource, WatchEvent, WatchEventType } from './informer/types.js';
export type { EventRecorder, EventType, ObjectReference } from './events/recorder.js';
export { Logger, type LogLevel, type LogSink } from './log.js';
export { FakeClock, realClock, type Clock } from './clock.js';
export {
  allow,
  deny,
  exemptSystemNamespaces,
  mutating,
  patch,
  validating,
  type AdmissionContext,
  type Allowed,
  type Awaitable,
  type Denied,
  type MutatingWebhook,
  type Patched,
  type MutationResult,
  type ValidatingWebhook,
  type ValidationResult,
  type Webhook,
} from './webhook/handler.js';
export type {
  AdmissionRequest,
  GroupVersionKind,
  GroupVersionResource,
  KubeObject,
  Operation,
  UserInfo,
} from './webhook/admission.js';
export { createPatch, pointer } from './webhook/jsonpatch.js';
export type { Informer, InformerHealth, InformerOptions } from './informer/informer.js';
export type { Delta, IndexFunc, Store } from './informer/store.js';
export type { ListWatcher } from './informer/types.js';
export type { BackoffOptions } from './informer/backoff.js';
export type { RateLimiter } from './workqueue/index.js';
export type {
  ControllerRegistration,
  Registrations,
  ResourceRef,
  WebhookRegistration,
} from '../contract/registrations.js';
export { matchesSelector, validateSelector, type SelectorLike } from '../contract/selector.js';
export { KruiseObjectNames, objectNamesFor, type ObjectNames } from '../contract/names.js';
export { run, type FlagDefinition, type FlagValue, type FlagValues, type RunDeps, type RunOptions } from './run.js';
export type { HealthCheck } from './health/checks.js';
export { registerSidecarSet, type PodCreateStep } from './sidecarset/index.js';
export { registerWorkloadSpread } from './workloadspread/index.js';
