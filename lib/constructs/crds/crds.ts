import { ApiObject, Include } from 'cdk8s';
import { Construct } from 'constructs';
import { propError } from '../core/errors.js';

/**
 * A CRD definition provided as an object. The runtime's own CRDs are declared this way,
 * so synth needs no file or network.
 */
export interface CrdManifest {
  /** A complete `apiextensions.k8s.io/v1` CustomResourceDefinition. */
  readonly manifest: { [key: string]: unknown };
}

/** Where the CRDs come from. */
export class CrdSource {
  /**
   * Include a YAML file (one or more CRDs), for example the release's CRD bundle saved next
   * to your app. Read at synth time.
   */
  public static fromFile(path: string): CrdSource {
    if (!/\.ya?ml$/.test(path)) throw propError('crds', path, 'is not a .yaml/.yml file', 'point at the CRD YAML file');
    return new CrdSource(path, undefined);
  }

  /**
   * Include a URL. cdk8s downloads it at every synth, so synth then needs network; prefer
   * `fromFile` in CI.
   */
  public static fromUrl(url: string): CrdSource {
    if (!/^https:\/\//.test(url))
      throw propError(
        'crds',
        url,
        'is not an https URL',
        'use an https:// URL of a CRD YAML file, or CrdSource.fromFile',
      );
    return new CrdSource(url, undefined);
  }

  /** The given CRD objects. */
  public static fromManifests(manifests: CrdManifest[]): CrdSource {
    return new CrdSource(undefined, manifests);
  }

  /** Render no CRDs (you install them some other way). */
  public static none(): CrdSource {
    return new CrdSource(undefined, []);
  }

  private constructor(
    private readonly location: string | undefined,
    private readonly manifests: CrdManifest[] | undefined,
  ) {}

  /** @internal */
  public _render(scope: Construct): ApiObject[] {
    if (this.location) {
      const include = new Include(scope, 'Include', { url: this.location });
      const objects = include.apiObjects;
      const notCrd = objects.find((o) => o.kind !== 'CustomResourceDefinition');
      if (notCrd) {
        throw propError(
          'crds',
          this.location,
          `contains a ${notCrd.kind} "${notCrd.name}", not only CustomResourceDefinitions`,
          'point at a file with CRDs only',
        );
      }
      return objects;
    }
    return (this.manifests ?? []).map((m, i) => {
      if (m.manifest.kind !== 'CustomResourceDefinition') {
        throw propError(
          `crds[${i}].kind`,
          m.manifest.kind,
          'is not CustomResourceDefinition',
          'pass CRD manifests only',
        );
      }
      const { apiVersion, kind, ...rest } = m.manifest as { apiVersion: string; kind: string };
      return new ApiObject(scope, `Crd${i}`, { apiVersion, kind, ...(rest as object) });
    });
  }
}

/** The CRDs of the chosen flavor. */
export class KruiseCrds extends Construct {
  public readonly apiObjects: ApiObject[];

  constructor(scope: Construct, id: string, source: CrdSource) {
    super(scope, id);
    this.apiObjects = source._render(this);
  }
}
