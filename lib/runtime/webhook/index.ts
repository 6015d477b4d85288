export * from './admission.js';
export * from './handler.js';
export * from './jsonpatch.js';
export { WebhookServer, WEBHOOK_HEALTH_PATH, type WebhookServerOptions } from './server.js';
export { CertReloader, type TlsMaterial } from './cert-reloader.js';
export { checkJsonShape, MAX_JSON_DEPTH } from './limits.js';
