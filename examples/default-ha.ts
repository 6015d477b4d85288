/**
 * The default app (cdk8s.yaml): KruiseManager with its defaults, the complete HA deployment
 * of upstream kruise-manager that a cluster operator applies.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager } from 'kruise-ha';

export class DefaultHaChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise');
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node default-ha.ts`), not when a test imports the chart.
if (/default-ha\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new DefaultHaChart(app, 'kruise');
  app.synth();
}
