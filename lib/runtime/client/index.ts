export * from './client.js';
export * from './kinds.js';
export * from './retry.js';
