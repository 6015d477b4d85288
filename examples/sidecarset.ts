/**
 * This project's runtime serving SidecarSet, and a SidecarSet declared in TypeScript: a log
 * shipper injected into every pod labelled `logging.example.com/ship: "true"` in namespaces
 * that opt in, rolled to new images 10% of the pods at a time.
 */
import { App, Chart } from 'cdk8s';
import { k8s } from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import {
  IntOrPercent,
  KruiseManager,
  ManagerImage,
  PodInjectPolicy,
  ShareVolumePolicy,
  SidecarSet,
  SidecarSetUpdateStrategy,
} from 'kruise-ha';

export class SidecarSetChart extends Chart {
  public readonly manager: KruiseManager;
  public readonly logShipper: SidecarSet;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    // Only the runtime image serves the SidecarSet CRD this chart renders; pin its tag.
    this.manager = new KruiseManager(this, 'Kruise', {
      image: ManagerImage.runtime('registry.example.com/kruise-ha/manager:0.1.0'),
    });

    this.logShipper = new SidecarSet(this, 'LogShipper', {
      metadata: { name: 'log-shipper' },
      selector: { matchLabels: { 'logging.example.com/ship': 'true' } },
      namespaceSelector: { matchLabels: { 'logging.example.com/enabled': 'true' } },
      containers: [
        {
          name: 'log-shipper',
          image: 'fluent/fluent-bit:3.1.9',
          // After the app: `kubectl logs/exec` without -c keep reaching the app container.
          podInjectPolicy: PodInjectPolicy.AFTER_APP_CONTAINER,
          // Mount the app's volumes, so the shipper reads the log files where the app writes them.
          shareVolumePolicy: ShareVolumePolicy.ENABLED,
          // Tag every record with the app's own name and environment.
          transferEnv: [{ sourceContainerName: 'app', envNames: ['APP_NAME', 'APP_ENV'] }],
          args: ['--config=/fluent-bit/etc/fluent-bit.yaml'],
          volumeMounts: [{ name: 'log-shipper-config', mountPath: '/fluent-bit/etc', readOnly: true }],
          resources: {
            requests: { cpu: k8s.Quantity.fromString('20m'), memory: k8s.Quantity.fromString('32Mi') },
            limits: { memory: k8s.Quantity.fromString('64Mi') },
          },
          securityContext: { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, runAsNonRoot: true },
        },
      ],
      volumes: [{ name: 'log-shipper-config', configMap: { name: 'log-shipper' } }],
      // A new shipper image restarts the shipper container in place, never more than 10% of
      // the pods at once; 2 pods stay on the old image until the partition is lowered.
      updateStrategy: SidecarSetUpdateStrategy.rollingUpdate({
        maxUnavailable: IntOrPercent.percent(10),
        partition: IntOrPercent.count(2),
      }),
    });
    // Applied after the manager: the SidecarSet needs the CRD, and the manager's webhooks
    // default and validate it (apply again, or use sync waves, once the manager is ready).
    this.logShipper.node.addDependency(this.manager);
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node sidecarset.ts`), not when a test imports the chart.
if (/sidecarset\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new SidecarSetChart(app, 'kruise-sidecarset');
  app.synth();
}
