/**
 * The contract between the constructs (which write the Deployment) and the runtime (which
 * reads it): flag names, env vars, ports, HTTP paths, object names and label keys
 * (contract/names.ts), and the rules both rooms check (the other contract/ modules).
 *
 * Both rooms import this module and nothing else from each other, so a flag the constructs
 * render is always a flag the runtime parses. Names follow upstream kruise-manager wherever
 * upstream has one, so the same Deployment shape configures both images.
 *
 * This module must stay free of I/O and import only lib/contract/ (the rules both rooms check,
 * as pure functions returning problems): it is loaded at synth time.
 */
export * from './contract/names.js';
export * from './contract/problems.js';
export * from './contract/lease.js';
export * from './contract/values.js';
export * from './contract/selector.js';
export * from './contract/sidecarset.js';
export * from './contract/workloadspread.js';
export * from './contract/runtime-api.js';
export * from './contract/registrations.js';
