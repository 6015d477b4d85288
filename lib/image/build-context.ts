/**
 * The build context handed from synth (`RuntimeImage`) to `image publish`: file names, the
 * `image.json` schema and the content-addressed tag. Both sides import this module, so the
 * tag the Deployment names is exactly the image publish builds.
 *
 * Must stay free of I/O: the construct loads it at synth.
 */
import { createHash } from 'node:crypto';
import { RUNTIME_UID } from '../contract.js';

export const IMAGE_JSON = 'image.json';
export const BUNDLE_FILE = 'main.mjs';
export const SOURCE_MAP_FILE = 'main.mjs.map';
export const DOCKERFILE = 'Dockerfile';
/** Where the bundle lives in the image. */
export const APP_DIR = '/app';
/** distroless' `nonroot`: a numeric user needs no /etc/passwd entry in the base. */
export const RUNTIME_USER = `${RUNTIME_UID}:${RUNTIME_UID}`;
/** Hex digits of the tag: 80 bits, far beyond any collision risk for one repository. */
export const TAG_HEX_LENGTH = 20;
export const IMAGE_JSON_SCHEMA = 1;

/** One file of the app layer. */
export interface LayerFile {
  /** Path inside the image, without the leading slash (`app/main.mjs`). */
  readonly path: string;
  /** File name inside the context directory. */
  readonly source: string;
  readonly sha256: string;
  readonly size: number;
  /** Unix permission bits. */
  readonly mode: number;
}

/** What the app layer changes in the base image's config. Everything else is inherited. */
export interface ConfigFragment {
  readonly user: string;
  readonly entrypoint: string[];
  /** Always empty: the base's CMD (`node` in node images) would become extra argv. */
  readonly cmd: string[];
  readonly workingDir: string;
  /** Appended to the base's Env (same-name entries replace the base's). */
  readonly env: string[];
  readonly labels: Record<string, string>;
  /** RFC 3339 `created` of the image and of its history entry. */
  readonly created: string;
}

/** `image.json`: everything publish needs besides the base image itself. */
export interface ImageJson {
  readonly schemaVersion: number;
  readonly repository: string;
  readonly tag: string;
  /** `repository:tag`, what the Deployment runs. */
  readonly reference: string;
  /** Base image reference as written (tag, or tag@digest); publish resolves the digest. */
  readonly base: string;
  readonly files: LayerFile[];
  readonly bundleSha256: string;
  readonly config: ConfigFragment;
  /** sha256 of the canonical JSON of `config`. */
  readonly configSha256: string;
}

/** JSON with sorted keys and no whitespace: the same value always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function sha256Hex(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * The tag: a hash of every input of the image except the base's digest, which only publish
 * can resolve (pin `base` by digest to cover it too). Layer files enter by content hash, path
 * and mode, so renaming or re-moding a file changes the tag as much as editing it.
 */
export function contentTag(base: string, files: readonly LayerFile[], config: ConfigFragment): string {
  const input = canonicalJson({
    schema: IMAGE_JSON_SCHEMA,
    base,
    files: files.map((f) => ({ path: f.path, sha256: f.sha256, mode: f.mode })),
    config,
  });
  return sha256Hex(input).slice(0, TAG_HEX_LENGTH);
}

/** Checks a parsed `image.json` and that its tag matches its content (a stale or edited file fails). */
export function checkImageJson(value: unknown, where: string): ImageJson {
  const json = value as Partial<ImageJson>;
  if (json?.schemaVersion !== IMAGE_JSON_SCHEMA) {
    throw new Error(
      `${where}: schemaVersion ${JSON.stringify(json?.schemaVersion)} is not ${IMAGE_JSON_SCHEMA}. Fix: re-run synth with this version of kruise-ha`,
    );
  }
  for (const key of ['repository', 'tag', 'base', 'bundleSha256', 'configSha256'] as const) {
    if (typeof json[key] !== 'string' || json[key] === '')
      throw new Error(`${where}: ${key} is missing. Fix: re-run synth`);
  }
  if (!Array.isArray(json.files) || json.files.length === 0 || typeof json.config !== 'object') {
    throw new Error(`${where}: files or config is missing. Fix: re-run synth`);
  }
  const full = json as ImageJson;
  const expected = contentTag(full.base, full.files, full.config);
  if (expected !== full.tag) {
    throw new Error(
      `${where}: tag ${full.tag} does not match its content (expected ${expected}); the file was edited by hand. Fix: re-run synth`,
    );
  }
  return full;
}
