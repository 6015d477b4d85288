export * from './apis.js';
export * from './client.js';
export * from './errors.js';
