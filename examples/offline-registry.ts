/**
 * Air-gapped or mirrored clusters: every image (manager and daemon; the uninstall guard too
 * when a hook-running tool renders it) is pulled from one internal registry with a pull secret.
 * Mirror openkruise/kruise-manager (and openkruise/kruise-helm-hook for the guard) at the
 * pinned tags into that path before applying.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager, ManagerImage } from 'kruise-ha';

export class OfflineRegistryChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      // The registry replaces Docker Hub's `openkruise` path, keeping the upstream image names.
      image: ManagerImage.upstream({ registry: 'registry.internal.example:5000/openkruise' }),
      // The Secret is not rendered: create `regcred` in kruise-system (the pods reference it by
      // name) with your registry credentials, out of band, so no credential lives in the manifest.
      imagePullSecrets: ['regcred'],
    });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node offline-registry.ts`), not when a test imports the chart.
if (/offline-registry\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new OfflineRegistryChart(app, 'kruise-offline-registry');
  app.synth();
}
