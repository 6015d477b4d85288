/**
 * Image references as Docker spells them: `[registry[:port]/]path[:tag][@sha256:hex]`.
 * Pure (no I/O), so the construct can validate its props with the same parser publish uses.
 */

export interface ImageReference {
  /** Registry host as written (`docker.io` when none was). */
  readonly registry: string;
  /** Repository path inside the registry (`library/node` for Docker Hub's official images). */
  readonly repository: string;
  readonly tag?: string;
  readonly digest?: string;
}

const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^[\w][\w.-]{0,127}$/;
const DIGEST = /^sha256:[a-f0-9]{64}$/;
const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:]+\])(?::\d{1,5})?$/;
export const DOCKER_HUB = 'docker.io';

/** Parses a reference; the error says which part is wrong. */
export function parseReference(text: string): ImageReference {
  let rest = text;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) throw new Error(`"${text}": digest "${digest}" is not sha256:<64 hex>`);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag))
      throw new Error(`"${text}": tag "${tag}" is not a valid tag (letters, digits, "_", ".", "-"; at most 128)`);
  }
  const { registry, repository } = splitRepository(rest, text);
  return { registry, repository, tag, digest };
}

/** Splits `host/path` the way Docker does: the first part is a host if it has "." or ":" or is localhost. */
export function splitRepository(name: string, original = name): { registry: string; repository: string } {
  const parts = name.split('/');
  let registry = DOCKER_HUB;
  if (parts.length > 1 && (/[.:]/.test(parts[0]) || parts[0] === 'localhost' || parts[0].startsWith('['))) {
    registry = parts.shift()!;
    if (!HOST.test(registry)) throw new Error(`"${original}": registry "${registry}" is not a host[:port]`);
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift('library');
  for (const part of parts) {
    if (!PATH_COMPONENT.test(part)) {
      throw new Error(
        `"${original}": path component "${part}" must be lower-case letters and digits, separated by ".", "_", "__" or "-"`,
      );
    }
  }
  return { registry, repository: parts.join('/') };
}

/** `registry/repository[:tag][@digest]`, with Docker Hub spelled out. */
export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}

/** Where the distribution API of a registry lives. Loopback registries speak plain HTTP, as in Docker. */
export function registryBaseUrl(registry: string, plainHttp: readonly string[] = []): string {
  const host = registry === DOCKER_HUB ? 'registry-1.docker.io' : registry;
  const name = host.replace(/:\d+$/, '');
  const loopback = name === 'localhost' || name === '127.0.0.1' || name === '[::1]';
  return `${loopback || plainHttp.includes(registry) ? 'http' : 'https'}://${host}`;
}
