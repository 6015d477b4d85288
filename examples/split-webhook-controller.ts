/**
 * This project's runtime with the webhook and the controllers in separate Deployments:
 * admission scales and rolls independently of the leader-elected controllers, and a
 * controller crash loop never takes admission down with it.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager, ManagerImage, ManagerTopology } from 'kruise-ha';

export class SplitWebhookControllerChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      // Split mode needs a manager that can serve webhooks without running controllers; only
      // the runtime image can. Pin a tag (or digest) so every replica runs the same build.
      image: ManagerImage.runtime('registry.example.com/kruise-ha/manager:0.1.0'),
      // Every webhook replica serves (no leader election), so 3 tolerate a node loss during a
      // rollout; the controllers only need a standby for a fast takeover.
      topology: ManagerTopology.split({ webhookReplicas: 3, controllerReplicas: 2 }),
    });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node split-webhook-controller.ts`), not when a test imports
// the chart.
if (/split-webhook-controller\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new SplitWebhookControllerChart(app, 'kruise-split-webhook-controller');
  app.synth();
}
