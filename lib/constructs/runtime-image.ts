import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { App } from 'cdk8s';
import { Construct } from 'constructs';
import {
  APP_DIR, BUNDLE_FILE, ConfigFragment, DOCKERFILE, IMAGE_JSON, IMAGE_JSON_SCHEMA, ImageJson, LayerFile, RUNTIME_USER,
  SOURCE_MAP_FILE, canonicalJson, contentTag, sha256Hex,
} from '../image/build-context.js';
import { parseReference } from '../image/reference.js';
import { propError } from './errors.js';
import type { IRuntimeImageSource } from './image.js';
import { bundleRuntime } from './runtime-bundle.js';
import { renderDockerfile } from './runtime-dockerfile.js';

/**
 * Default base: Debian slim with the same Node release as the `node` devDependency the tests
 * run on. A tag, not a digest, because synth never touches the network: `image publish`
 * resolves it, records the digest in the image's `org.opencontainers.image.base.digest`
 * label and prints it, so you can pin `baseImage: '...@sha256:<digest>'`.
 */
export const DEFAULT_RUNTIME_BASE_IMAGE = 'docker.io/library/node:24.21.0-bookworm-slim';

/** Props of {@link RuntimeImage}. */
export interface RuntimeImageProps {
  /** Repository to publish to, without a tag (`registry.example.com/team/kruise-manager`). */
  readonly repository: string;
  /**
   * Module to bundle.
   * @default - this package's runtime: `lib/runtime/main.ts` from a source checkout, else `dist/lib/runtime/main.js`
   */
  readonly entrypoint?: string;
  /**
   * Base image with `node` on its PATH. Pin by digest (`name:tag@sha256:...`) to make the
   * image, not only the app layer, reproducible.
   * @default DEFAULT_RUNTIME_BASE_IMAGE
   */
  readonly baseImage?: string;
  /**
   * Folder for the build context (written at synth).
   * @default - `<app outdir>/runtime-image`
   */
  readonly outdir?: string;
  /**
   * Image labels, for example `org.opencontainers.image.revision`. Part of the tag.
   * @default - org.opencontainers.image.title only
   */
  readonly labels?: { [key: string]: string };
  /**
   * Seconds since the epoch for the image's `created` and the layer's file times.
   * Part of the tag; pass your commit time for a meaningful date.
   * @default 0
   */
  readonly sourceDateEpoch?: number;
}

/**
 * The runtime's container image, built without Docker: at synth it bundles the entrypoint
 * with esbuild and writes a build context (`context/`: bundle, source map, Dockerfile,
 * `image.json`); `image publish <outdir>` pushes it. The tag is a hash of the content, so
 * `imageReference` is known at synth and only changes when the image does.
 */
export class RuntimeImage extends Construct implements IRuntimeImageSource {
  public readonly imageReference: string;
  public readonly repository: string;
  public readonly tag: string;
  public readonly baseImage: string;
  public readonly entrypoint: string;
  public readonly contextDir: string;
  public readonly bundleSha256: string;
  public readonly bundleSize: number;

  constructor(scope: Construct, id: string, props: RuntimeImageProps) {
    super(scope, id);
    this.repository = checkRepository(props.repository);
    this.baseImage = checkBaseImage(props.baseImage ?? DEFAULT_RUNTIME_BASE_IMAGE);
    this.entrypoint = props.entrypoint === undefined ? defaultEntrypoint() : checkEntrypoint(props.entrypoint);
    const created = checkEpoch(props.sourceDateEpoch ?? 0);
    const labels = checkLabels({ 'org.opencontainers.image.title': 'kruise-ha runtime', ...props.labels });
    this.contextDir = join(this.resolveOutdir(props.outdir), 'context');

    const bundle = bundleRuntime(this.entrypoint, BUNDLE_FILE);
    const files: LayerFile[] = [layerFile(BUNDLE_FILE, bundle.code), layerFile(SOURCE_MAP_FILE, bundle.map)];
    const config: ConfigFragment = {
      user: RUNTIME_USER,
      entrypoint: ['node', '--enable-source-maps', `${APP_DIR}/${BUNDLE_FILE}`],
      cmd: [],
      workingDir: APP_DIR,
      env: ['NODE_ENV=production'],
      labels,
      created,
    };
    this.tag = contentTag(this.baseImage, files, config);
    this.imageReference = `${this.repository}:${this.tag}`;
    this.bundleSha256 = files[0].sha256;
    this.bundleSize = files[0].size;
    const imageJson: ImageJson = {
      schemaVersion: IMAGE_JSON_SCHEMA, repository: this.repository, tag: this.tag, reference: this.imageReference,
      base: this.baseImage, files, bundleSha256: this.bundleSha256, config, configSha256: sha256Hex(canonicalJson(config)),
    };
    mkdirSync(this.contextDir, { recursive: true });
    writeFileSync(join(this.contextDir, BUNDLE_FILE), bundle.code);
    writeFileSync(join(this.contextDir, SOURCE_MAP_FILE), bundle.map);
    writeFileSync(join(this.contextDir, DOCKERFILE), renderDockerfile(imageJson));
    writeFileSync(join(this.contextDir, IMAGE_JSON), `${JSON.stringify(imageJson, null, 2)}\n`);
  }

  private resolveOutdir(outdir: string | undefined): string {
    let dir = outdir;
    if (dir === undefined) {
      const root = App.of(this);
      if (!(root instanceof App)) {
        throw propError('outdir', undefined, 'cannot default to the App\'s outdir: this construct is not inside a cdk8s App', 'pass outdir');
      }
      dir = join(root.outdir, 'runtime-image');
    } else if (dir.trim() === '') {
      throw propError('outdir', dir, 'is empty', 'pass a folder path, or leave outdir unset for <app outdir>/runtime-image');
    }
    const absolute = resolve(dir);
    // Two images writing one context would silently publish whichever synthesized last.
    const clash = this.node.root.node.findAll().find((c) => c !== this && c instanceof RuntimeImage && c.contextDir === join(absolute, 'context'));
    if (clash) {
      throw propError('outdir', dir, `is already used by the RuntimeImage at ${clash.node.path}`, 'give each RuntimeImage its own outdir');
    }
    return absolute;
  }
}

function layerFile(name: string, content: Uint8Array): LayerFile {
  return { path: `${APP_DIR.slice(1)}/${name}`, source: name, sha256: sha256Hex(content), size: content.byteLength, mode: 0o644 };
}

/** This package's runtime: the TypeScript source in a checkout, the compiled module in a built package. */
function defaultEntrypoint(): string {
  const candidates = ['../runtime/main.ts', '../runtime/main.js'].map((p) => fileURLToPath(new URL(p, import.meta.url)));
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw propError('entrypoint', undefined, `has no default: neither ${candidates.join(' nor ')} exists`,
      'build the package (npm run compile), or pass entrypoint: "<path to your main module>"');
  }
  return found;
}

function checkEntrypoint(entrypoint: string): string {
  if (!isAbsolute(entrypoint) && !entrypoint.startsWith('.')) {
    // A bare name would be resolved against node_modules by esbuild: refuse the ambiguity.
    throw propError('entrypoint', entrypoint, 'is not a file path', 'pass an absolute path or one starting with "./"');
  }
  const path = resolve(entrypoint);
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw propError('entrypoint', entrypoint, `does not exist (resolved to ${path})`, 'pass the path of a .ts or .js module');
  }
  if (!/\.(m|c)?[jt]s$/.test(path)) {
    throw propError('entrypoint', entrypoint, 'is not a JavaScript or TypeScript module', 'pass a .ts, .mts, .js or .mjs file');
  }
  return path;
}

function checkRepository(repository: string): string {
  const fix = 'use a lower-case repository without tag or digest, such as "registry.example.com/team/kruise-manager"; the tag is computed from the content';
  if (typeof repository !== 'string' || repository === '') throw propError('repository', repository, 'is required', fix);
  let ref;
  try {
    ref = parseReference(repository);
  } catch (e) {
    throw propError('repository', repository, `is not a valid repository: ${(e as Error).message}`, fix);
  }
  if (ref.tag || ref.digest) throw propError('repository', repository, 'has a tag or digest', fix);
  return repository;
}

function checkBaseImage(base: string): string {
  const fix = 'pin the base, such as "docker.io/library/node:24-bookworm-slim" or "...@sha256:<digest>"';
  let ref;
  try {
    ref = parseReference(base);
  } catch (e) {
    throw propError('baseImage', base, `is not a valid image reference: ${(e as Error).message}`, fix);
  }
  if (!ref.tag && !ref.digest) throw propError('baseImage', base, 'has no tag or digest, so it would float', fix);
  return base;
}

function checkLabels(labels: Record<string, string>): Record<string, string> {
  for (const [key, value] of Object.entries(labels)) {
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/i.test(key)) {
      throw propError(`labels["${key}"]`, key, 'is not a label key', 'use reverse-DNS keys such as "org.opencontainers.image.revision"');
    }
    if (typeof value !== 'string') throw propError(`labels["${key}"]`, value, 'is not a string', 'pass string values only');
  }
  return labels;
}

function checkEpoch(seconds: number): string {
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 253402300799) {
    throw propError('sourceDateEpoch', seconds, 'is not whole seconds since 1970', 'pass e.g. the commit time: git log -1 --format=%ct');
  }
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
