/**
 * A three-node cluster: two replicas and a one-pod surge fit on three nodes with host
 * network, where the default 100% surge would need four.
 */
import { App, Chart, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { FailurePolicy, KruiseManager, Rollout } from 'kruise-ha';

export class SmallClusterChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      replicas: 2,
      // One new pod at a time, never below two ready: 2 + 1 nodes during a rollout.
      rollout: Rollout.surge(1),
      expectedNodes: 3,
      webhooks: {
        // Trade-off: with so few nodes, a node drain or reboot can leave no manager replica for
        // a while. FAIL (the default) would then block every pod creation outside the excluded
        // namespaces, including pods that would let the cluster recover. IGNORE keeps pods
        // flowing, at the cost of silently skipping sidecar injection and pod validation for
        // pods created during the outage. The short timeout bounds the delay each pod create
        // pays while a replica hangs. Keep FAIL if SidecarSet injection must never be skipped.
        pods: { failurePolicy: FailurePolicy.IGNORE, timeout: Duration.seconds(5) },
      },
    });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node small-cluster.ts`), not when a test imports the chart.
if (/small-cluster\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new SmallClusterChart(app, 'kruise-small-cluster');
  app.synth();
}
