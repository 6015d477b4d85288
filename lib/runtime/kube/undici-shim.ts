/**
 * Stands in for `undici` in the bundled runtime (bundleRuntime aliases it here). client-node's
 * config.js imports undici's Agent/ProxyAgent and its fetch-based modules import fetch, but the
 * runtime reaches the API server only through lib/runtime/kube (node:https); bundling undici would
 * cost ~20 MB of idle RSS for code nothing calls. If something does call it, fail loudly and say
 * which client-node path got there, instead of silently talking without our transport.
 */
function reached(what: string, via: string): Error {
  return new Error(
    `undici's ${what} was called through ${via}, but the bundled runtime has no undici: it talks to the API server through lib/runtime/kube. Use that client (or run unbundled).`,
  );
}

const FETCH_PATH =
  "client-node's fetch-based API (a generated *Api class from makeApiClient, Watch, Log, Metrics or Health)";
const DISPATCHER_PATH =
  "client-node's KubeConfig.applySecurityAuthentication (createDispatcher, used by makeApiClient)";

export function fetch(): never {
  throw reached('fetch', FETCH_PATH);
}

export class Agent {
  constructor() {
    throw reached('Agent', DISPATCHER_PATH);
  }
}

export class ProxyAgent {
  constructor() {
    throw reached('ProxyAgent', DISPATCHER_PATH);
  }
}
