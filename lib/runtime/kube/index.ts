export * from './apis.js';
export * from './client.js';
