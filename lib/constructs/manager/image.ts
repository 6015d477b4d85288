import { propError } from '../core/errors.js';
import { ManagerFlavourProfile, RUNTIME_FLAVOUR, upstreamFlavour } from './flavour.js';
import { DEFAULT_UPSTREAM_RELEASE, UPSTREAM_RELEASES } from '../../upstream/releases.js';

/** The upstream release rendered when no version is given: the newest stable one this library has data for. */
export const UPSTREAM_VERSION = DEFAULT_UPSTREAM_RELEASE;
/** Every upstream release this library renders (each with its own CRDs, webhooks, RBAC, flags, gates), oldest first. */
export const UPSTREAM_VERSIONS: readonly string[] = UPSTREAM_RELEASES;

/** Options for {@link ManagerImage.upstream}. */
export interface UpstreamImageOptions {
  /**
   * Release tag of `openkruise/kruise-manager`: one of the releases this library has
   * upstream's own definitions for ({@link ManagerImage.UPSTREAM_VERSIONS}: the newest patch of each
   * supported minor line). Each renders exactly its own CRDs, webhooks, RBAC, flags and
   * feature gates; another release would serve other webhook paths and need other permissions.
   * Before changing it on a running install, read `npx kruise-ha-upgrade-diff <from> <to>`.
   * @default - the newest stable release (UPSTREAM_VERSION, 'v1.9.1')
   */
  readonly version?: string;
  /**
   * Registry (and path) to pull from instead of Docker Hub, for offline or mirrored clusters.
   * `registry.example.com/mirror` gives `registry.example.com/mirror/kruise-manager:<version>`.
   * @default 'openkruise'
   */
  readonly registry?: string;
  /**
   * The whole repository, for a mirror that renames it (the chart's `manager.image.repository`):
   * `registry.example.com/platform/kruise-manager-fips` gives
   * `registry.example.com/platform/kruise-manager-fips:<version>`. Give this or `registry`.
   * @default - `<registry>/kruise-manager`
   */
  readonly repository?: string;
  /**
   * Pin the image by content (`sha256:<64 hex digits>`): rendered as `<repository>:<version>@<digest>`,
   * so the kubelet pulls exactly that image while the tag still tells people (and the doctor)
   * which release it is.
   * @default - the tag only
   */
  readonly digest?: string;
}

/** Which process the manager image runs; decides flags, webhooks, CRDs and RBAC. */
export enum ManagerFlavor {
  /** openkruise/kruise-manager (Go). */
  UPSTREAM = 'upstream',
  /** This project's TypeScript runtime. */
  RUNTIME = 'runtime',
}

/**
 * A source of the runtime image, such as the `RuntimeImage` construct, which bundles the
 * TypeScript manager and exposes a content-addressed reference.
 */
export interface IRuntimeImageSource {
  /** Full image reference, `repository:tag` or `repository@sha256:...`. */
  readonly imageReference: string;
}

/** The image the manager (and, for upstream, the daemon) runs. */
export class ManagerImage {
  /** The upstream release `upstream()` renders when no version is given: the newest stable one with data here. */
  public static readonly UPSTREAM_VERSION: string = UPSTREAM_VERSION;
  /** Every upstream release `upstream({ version })` renders, oldest first. */
  public static readonly UPSTREAM_VERSIONS: string[] = [...UPSTREAM_VERSIONS];

  /** `openkruise/kruise-manager:<version>`, optionally from a mirror registry. */
  public static upstream(options: UpstreamImageOptions = {}): ManagerImage {
    const version = options.version ?? UPSTREAM_VERSION;
    if (options.registry !== undefined && options.repository !== undefined) {
      throw propError(
        'image.repository',
        options.repository,
        'is given with image.registry, and both name where the image lives',
        'give repository (the whole path) or registry (the path before kruise-manager), not both',
      );
    }
    const registry = (options.registry ?? 'openkruise').replace(/\/+$/, '');
    checkReferencePart('image.registry', registry);
    const repository = options.repository ?? `${registry}/kruise-manager`;
    if (options.repository !== undefined) {
      checkReferencePart('image.repository', repository);
      if (/[:@]/.test(repository.split('/').pop()!))
        throw propError(
          'image.repository',
          repository,
          'carries a tag or digest',
          'give the repository alone; the tag is image.version and the digest image.digest',
        );
    }
    if (options.digest !== undefined && !/^sha256:[0-9a-f]{64}$/.test(options.digest)) {
      throw propError(
        'image.digest',
        options.digest,
        'is not a sha256 digest',
        'give sha256: and 64 lowercase hex digits, as `crane digest` or the registry prints it',
      );
    }
    if (!/^[\w][\w.-]{0,127}$/.test(version)) {
      throw propError(
        'image.version',
        version,
        'is not a valid image tag',
        `use a release tag: ${UPSTREAM_VERSIONS.join(', ')}`,
      );
    }
    if (!UPSTREAM_VERSIONS.includes(version)) {
      throw propError(
        'image.version',
        version,
        `is not a release this library has upstream's own definitions (webhooks, RBAC, CRDs, flags, gates) for; another release serves other webhook paths and needs other permissions`,
        `use one of ${UPSTREAM_VERSIONS.join(', ')} (default ${UPSTREAM_VERSION}), or add ${version} with \`npm run upstream:generate -- --version ${version}\` and its real-binary test (docs/upstream-releases.md)`,
      );
    }
    const reference = `${repository}:${version}${options.digest ? `@${options.digest}` : ''}`;
    return new ManagerImage(ManagerFlavor.UPSTREAM, reference, version);
  }

  /** This project's runtime from an image reference you built and pushed yourself. */
  public static runtime(reference: string): ManagerImage {
    checkReferencePart('image', reference);
    if (!/[:@]/.test(reference.split('/').pop()!)) {
      throw propError(
        'image',
        reference,
        'has no tag or digest',
        'pin the image, e.g. "registry.example.com/kruise-ts:1.0.0" or "...@sha256:<digest>"',
      );
    }
    return new ManagerImage(ManagerFlavor.RUNTIME, reference, undefined);
  }

  /** This project's runtime from a construct that builds it (see `RuntimeImage`). */
  public static fromRuntime(source: IRuntimeImageSource): ManagerImage {
    return ManagerImage.runtime(source.imageReference);
  }

  /**
   * A runtime image whose program is described by `profile` (Operator's, from the program's registrations).
   * @internal
   */
  public static _program(reference: string, profile: ManagerFlavourProfile): ManagerImage {
    const image = ManagerImage.runtime(reference);
    return new ManagerImage(image.flavor, image.reference, undefined, profile);
  }

  private constructor(
    /** Which process the image runs. */
    public readonly flavor: ManagerFlavor,
    /** Full image reference. */
    public readonly reference: string,
    /** Upstream image only: the release whose definitions are rendered, e.g. `v1.9.1`. */
    public readonly upstreamVersion: string | undefined,
    private readonly profile?: ManagerFlavourProfile,
  ) {}

  /**
   * What the flavour renders (container, CRDs, RBAC, webhooks, gates): the one place that
   * knows the difference between the images.
   * @internal
   */
  public _flavorProfile(): ManagerFlavourProfile {
    if (this.profile) return this.profile;
    return this.upstreamVersion !== undefined ? upstreamFlavour(this.upstreamVersion) : RUNTIME_FLAVOUR;
  }
}

function checkReferencePart(prop: string, value: string): void {
  if (value === '' || /\s/.test(value) || value !== value.trim() || /[A-Z]/.test(value.split(/[:@]/)[0])) {
    throw propError(
      prop,
      value,
      'is not a valid image reference',
      'use lower-case "registry/path[:tag]" with no spaces',
    );
  }
}
