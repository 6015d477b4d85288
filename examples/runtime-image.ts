/**
 * This project's TypeScript runtime as the manager image, built without Docker: synth bundles
 * it and writes a build context under cdk8s.out/runtime-image/context; the Deployment gets the
 * content-addressed reference, which `npx kruise-ha-image publish cdk8s.out` then pushes.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager, ManagerImage, RuntimeImage } from 'kruise-ha';

export class RuntimeImageChart extends Chart {
  public readonly image: RuntimeImage;
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.image = new RuntimeImage(this, 'Image', { repository: 'registry.example.com/platform/kruise-ha-manager' });
    this.manager = new KruiseManager(this, 'Kruise', { image: ManagerImage.fromRuntime(this.image), replicas: 3 });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node runtime-image.ts`), not when a test imports the chart.
if (/runtime-image\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new RuntimeImageChart(app, 'kruise-runtime-image');
  app.synth();
}
