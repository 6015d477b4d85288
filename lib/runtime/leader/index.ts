export {
  LeaderElector,
  LeadershipLostError,
  type LeaderCallbacks,
  type LeaderElectorOptions,
  type StopReason,
} from './elector.js';
export { LeaseLock, recordOf, type LeaderElectionRecord, type LeaseApi } from './lease-lock.js';
export { resolveTimings, type LeaderElectionTimings } from './config.js';
