/**
 * CloneSet's cluster-free core, as upstream v1.9.1 has it: types, the defaulting and validating
 * webhooks' rules, and revisions (ControllerRevision data, name and hash; the pods' revision
 * labels). Not served yet: no webhook or controller of the manager uses it.
 */
export * from './defaults.js';
export * from './revision.js';
export * from './types.js';
export * from './validate.js';
