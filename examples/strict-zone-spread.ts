/**
 * Three replicas pinned one per zone. With `required` the scheduler leaves a replica Pending
 * rather than doubling up in a zone, so losing a zone never costs more than a third of the
 * webhook capacity.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { KruiseManager, ZoneSpread } from 'kruise-ha';

export class StrictZoneSpreadChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      // `zones` records the cluster's zone count; synth checks it against `minZones` when set.
      zoneSpread: ZoneSpread.required({ zones: 3 }),
      replicas: 3,
      // Host network and the default 100% surge: 3 running + 3 surge pods, one per node, so a
      // rollout needs 6 nodes (synth fails below that). The surge pods spread on their own
      // (pod-template-hash), so those 6 must be two per zone: synth cannot check that part.
      expectedNodes: 6,
    });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node strict-zone-spread.ts`), not when a test imports the
// chart.
if (/strict-zone-spread\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new StrictZoneSpreadChart(app, 'kruise-strict-zone-spread');
  app.synth();
}
