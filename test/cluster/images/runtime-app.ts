/**
 * The runtime image as a user makes it: a cdk8s app with `RuntimeImage` (as examples/runtime-image.ts),
 * its base and its repository in the local registry, synthesized, then published with
 * `kruise-ha-image publish <outdir>`. The e2e tests build the same chart from the same props, so
 * the Deployment they apply names exactly the image pushed here (the tag hashes the content).
 *
 * Run as an app:
 * `KRUISE_HA_IMAGE_REGISTRY=host:port KRUISE_HA_RUNTIME_BASE=<ref@digest> CDK8S_OUTDIR=dir tsx runtime-app.ts`.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager, ManagerImage, RuntimeImage, type RuntimeImageProps } from '../../../lib/index.js';

/** Repository of the runtime image inside the local registry. */
export const RUNTIME_REPOSITORY = 'kruise-ha/runtime';

/**
 * The RuntimeImage props for a registry: the base pinned by digest, as the construct's docs advise,
 * so the content-addressed tag covers the base too and a rebuilt base never collides with an old tag.
 */
export function runtimeImageProps(registry: string, baseImage: string): RuntimeImageProps {
  return { repository: `${registry}/${RUNTIME_REPOSITORY}`, baseImage };
}

export class RuntimeImageChart extends Chart {
  public readonly image: RuntimeImage;
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string, props: RuntimeImageProps) {
    super(scope, id);
    this.image = new RuntimeImage(this, 'Image', props);
    this.manager = new KruiseManager(this, 'Kruise', { image: ManagerImage.fromRuntime(this.image) });
  }
}

if (/runtime-app\.[jt]s$/.test(process.argv[1] ?? '')) {
  const registry = process.env.KRUISE_HA_IMAGE_REGISTRY;
  const base = process.env.KRUISE_HA_RUNTIME_BASE;
  if (!registry || !base) {
    process.stderr.write(
      'runtime-app: set KRUISE_HA_IMAGE_REGISTRY (host:port) and KRUISE_HA_RUNTIME_BASE (ref@digest)\n',
    );
    process.exit(2);
  }
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new RuntimeImageChart(app, 'kruise-runtime', runtimeImageProps(registry, base));
  app.synth();
}
