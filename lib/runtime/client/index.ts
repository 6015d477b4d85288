export * from './client.js';
export * from './kinds.js';
export * from './retry.js';
export * from './finalizers.js';
