import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { App } from 'cdk8s';
import { Construct } from 'constructs';
import {
  APP_DIR,
  BUNDLE_FILE,
  ConfigFragment,
  DOCKERFILE,
  IMAGE_JSON,
  IMAGE_JSON_SCHEMA,
  ImageJson,
  LayerFile,
  RUNTIME_USER,
  SOURCE_MAP_FILE,
  canonicalJson,
  contentTag,
  sha256Hex,
} from '../../image/build-context.js';
import { propError } from '../core/errors.js';
import { peersInApp } from '../core/app-peers.js';
import type { IRuntimeImageSource } from '../manager/image.js';
import { bundleRuntime } from './runtime-bundle.js';
import { readRegistrations } from './registrations.js';
import type { Registrations } from '../../contract.js';
import { renderDockerfile, RUNTIME_ENV, RUNTIME_NODE_FLAGS } from './runtime-dockerfile.js';
import {
  checkBaseImage,
  checkEntrypoint,
  checkEpoch,
  checkLabels,
  checkRepository,
  defaultEntrypoint,
} from './runtime-image-props.js';

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
   * @default - the installed kruise-ha-runtime package's manager (`lib/runtime/main.ts` in a checkout of this
   * repository)
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
   * Image labels, part of the tag. Pass where the image comes from, for example
   * `{ 'org.opencontainers.image.source': 'https://github.com/org/repo', 'org.opencontainers.image.revision':
   * process.env.GITHUB_SHA }`;
   * publish adds `org.opencontainers.image.base.name` and `.base.digest` itself. A per-commit
   * revision gives every commit its own tag; leave it out to change tags only with the content.
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
  private readonly registrations = new Map<string, Registrations>();

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
      entrypoint: ['node', ...RUNTIME_NODE_FLAGS, `${APP_DIR}/${BUNDLE_FILE}`],
      cmd: [],
      workingDir: APP_DIR,
      env: [...RUNTIME_ENV],
      labels,
      created,
    };
    this.tag = contentTag(this.baseImage, files, config);
    this.imageReference = `${this.repository}:${this.tag}`;
    this.bundleSha256 = files[0].sha256;
    this.bundleSize = files[0].size;
    const imageJson: ImageJson = {
      schemaVersion: IMAGE_JSON_SCHEMA,
      repository: this.repository,
      tag: this.tag,
      reference: this.imageReference,
      base: this.baseImage,
      files,
      bundleSha256: this.bundleSha256,
      config,
      configSha256: sha256Hex(canonicalJson(config)),
    };
    mkdirSync(this.contextDir, { recursive: true });
    writeFileSync(join(this.contextDir, BUNDLE_FILE), bundle.code);
    writeFileSync(join(this.contextDir, SOURCE_MAP_FILE), bundle.map);
    writeFileSync(join(this.contextDir, DOCKERFILE), renderDockerfile(imageJson));
    writeFileSync(join(this.contextDir, IMAGE_JSON), `${JSON.stringify(imageJson, null, 2)}\n`);
  }

  /**
   * What the bundled program serves and needs, as its `--registrations` prints it with `args` (the flags the
   * Deployment gives it): the bundle runs once per distinct `args`, in this Node, reaching no cluster.
   * @internal
   */
  public _readRegistrations(args: readonly string[]): Registrations {
    const key = JSON.stringify(args);
    const known = this.registrations.get(key);
    if (known) return known;
    const read = readRegistrations(join(this.contextDir, BUNDLE_FILE), args, this.entrypoint);
    this.registrations.set(key, read);
    return read;
  }

  private resolveOutdir(outdir: string | undefined): string {
    let dir = outdir;
    if (dir === undefined) {
      const root = App.of(this);
      if (!(root instanceof App)) {
        throw propError(
          'outdir',
          undefined,
          "cannot default to the App's outdir: this construct is not inside a cdk8s App",
          'pass outdir',
        );
      }
      dir = join(root.outdir, 'runtime-image');
    } else if (dir.trim() === '') {
      throw propError(
        'outdir',
        dir,
        'is empty',
        'pass a folder path, or leave outdir unset for <app outdir>/runtime-image',
      );
    }
    const absolute = resolve(dir);
    // Two images writing one context would silently publish whichever synthesized last.
    const clash = peersInApp<RuntimeImage>(this, RuntimeImage).find((c) => c.contextDir === join(absolute, 'context'));
    if (clash) {
      throw propError(
        'outdir',
        dir,
        `is already used by the RuntimeImage at ${clash.node.path}`,
        'give each RuntimeImage its own outdir',
      );
    }
    return absolute;
  }
}

function layerFile(name: string, content: Uint8Array): LayerFile {
  return {
    path: `${APP_DIR.slice(1)}/${name}`,
    source: name,
    sha256: sha256Hex(content),
    size: content.byteLength,
    mode: 0o644,
  };
}
