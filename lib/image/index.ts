/**
 * Build tooling for the runtime image (not loaded at synth or by the runtime): publish a
 * `RuntimeImage` build context to a registry without Docker. The CLI is `cli.ts`.
 */
export { publishImage, type PublishOptions, type PublishResult, type PublishedPlatform } from './publish.js';
export { findBuildContexts, readBuildContext, type BuildContext } from './context-files.js';
export { type ImageJson, type ConfigFragment, type LayerFile, contentTag } from './build-context.js';
export { type Credentials, type CredentialSource, dockerConfigCredentials, dockerConfigPath } from './docker-config.js';
export { RegistryError } from './registry-http.js';
export { parseReference, type ImageReference } from './reference.js';
