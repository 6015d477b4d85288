import { propError } from './errors.js';
import { ManagerFlavourProfile, RUNTIME_FLAVOUR, UPSTREAM_FLAVOUR } from './flavour.js';
import { KRUISE_RELEASE } from './upstream/kruise.generated.js';

/** The upstream release whose definitions (webhooks, RBAC, CRDs) this library renders. */
export const UPSTREAM_VERSION = KRUISE_RELEASE.version;

/** Options for {@link ManagerImage.upstream}. */
export interface UpstreamImageOptions {
  /**
   * Release tag of `openkruise/kruise-manager`. Only the release the library's upstream
   * definitions were generated from is accepted: another release serves other webhook paths
   * and needs other permissions, and the manager would delete or be denied what does not fit.
   * @default 'v1.8.3'
   */
  readonly version?: string;
  /**
   * Registry (and path) to pull from instead of Docker Hub, for offline or mirrored clusters.
   * `registry.example.com/mirror` gives `registry.example.com/mirror/kruise-manager:<version>`.
   * @default 'openkruise'
   */
  readonly registry?: string;
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
  /** `openkruise/kruise-manager:<version>`, optionally from a mirror registry. */
  public static upstream(options: UpstreamImageOptions = {}): ManagerImage {
    const version = options.version ?? UPSTREAM_VERSION;
    const registry = (options.registry ?? 'openkruise').replace(/\/+$/, '');
    checkReferencePart('image.registry', registry);
    if (!/^[\w][\w.-]{0,127}$/.test(version)) {
      throw propError(
        'image.version',
        version,
        'is not a valid image tag',
        `use the release tag "${UPSTREAM_VERSION}"`,
      );
    }
    if (version !== UPSTREAM_VERSION) {
      throw propError(
        'image.version',
        version,
        `is not ${UPSTREAM_VERSION}, the release whose own definitions (webhooks, RBAC, CRDs) this library renders; another release serves other webhook paths and needs other permissions`,
        `use "${UPSTREAM_VERSION}", or regenerate the definitions for ${version} with \`npm run upstream:generate -- --version ${version}\``,
      );
    }
    return new ManagerImage(ManagerFlavor.UPSTREAM, `${registry}/kruise-manager:${version}`);
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
    return new ManagerImage(ManagerFlavor.RUNTIME, reference);
  }

  /** This project's runtime from a construct that builds it (see `RuntimeImage`). */
  public static fromRuntime(source: IRuntimeImageSource): ManagerImage {
    return ManagerImage.runtime(source.imageReference);
  }

  private constructor(
    /** Which process the image runs. */
    public readonly flavor: ManagerFlavor,
    /** Full image reference. */
    public readonly reference: string,
  ) {}

  /**
   * What the flavour renders (container, CRDs, RBAC, webhooks, gates): the one place that
   * knows the difference between the images.
   * @internal
   */
  public _flavour(): ManagerFlavourProfile {
    return this.flavor === ManagerFlavor.UPSTREAM ? UPSTREAM_FLAVOUR : RUNTIME_FLAVOUR;
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
