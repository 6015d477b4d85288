/**
 * cert-manager issues the webhook's serving certificate and injects its CA into the webhook
 * configurations, for clusters that already run cert-manager and want one place for
 * certificate rotation and auditing. cert-manager must be installed before this is applied.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager, WebhookCertificates } from 'kruise-ha';

export interface CertManagerChartProps {
  /**
   * An existing ClusterIssuer (e.g. your organisation's internal CA). Without it a private CA
   * is created for the webhook alone, which keeps the CA bundle stable across renewals and
   * trusts nothing else.
   */
  readonly clusterIssuer?: string;
}

export class CertManagerChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string, props: CertManagerChartProps = {}) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      certificates: WebhookCertificates.certManager(
        props.clusterIssuer ? { issuer: { name: props.clusterIssuer, kind: 'ClusterIssuer' } } : {},
      ),
    });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node cert-manager.ts`), not when a test imports the chart.
if (/cert-manager\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  // Set KRUISE_CLUSTER_ISSUER to sign with an existing ClusterIssuer instead of a private CA.
  new CertManagerChart(app, 'kruise-cert-manager', { clusterIssuer: process.env.KRUISE_CLUSTER_ISSUER });
  app.synth();
}
