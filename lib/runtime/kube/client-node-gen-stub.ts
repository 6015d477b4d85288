/**
 * Stands in for client-node's generated code (`dist/gen/index.js`: every model and API class) in
 * the bundled runtime; bundleRuntime redirects config.js's `./gen/index.js` import here. config.js
 * takes from it only `createConfiguration` and `ServerConfiguration`, both for
 * `KubeConfig.makeApiClient`, which the runtime never calls (it talks to the API server through
 * lib/runtime/kube): the generated code costs ~340 KB of bundle and ~8 MB of RSS for nothing. If
 * something does call it, fail loudly and name the path instead of half-working.
 */
function reached(what: string): Error {
  return new Error(
    `client-node's generated ${what} was reached through KubeConfig.makeApiClient (client-node dist/config.js), but the bundled runtime has no generated client-node API: it talks to the API server through lib/runtime/kube. Use that client (or run unbundled).`,
  );
}

export function createConfiguration(): never {
  throw reached('createConfiguration');
}

export class ServerConfiguration {
  constructor() {
    throw reached('ServerConfiguration');
  }
}
