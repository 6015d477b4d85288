/**
 * The chart of the operator in team-operator.ts (docs/sdk.md): synth bundles the program into an image, reads its
 * registrations, and renders its HA deployment with its webhook configuration and RBAC.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { Operator, OperatorProgram, RuntimeImage, type RuntimeImageProps } from 'kruise-ha';

export class OwnOperatorChart extends Chart {
  public readonly image: RuntimeImage;
  public readonly operator: Operator;

  constructor(scope: Construct, id: string, image: Partial<RuntimeImageProps> = {}) {
    super(scope, id);
    this.image = new RuntimeImage(this, 'Image', {
      repository: 'registry.example.com/team/team-operator',
      entrypoint: `${import.meta.dirname}/operator.ts`,
      ...image,
    });
    this.operator = new Operator(this, 'Operator', { program: OperatorProgram.fromRuntimeImage(this.image) });
  }
}

if (/chart\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new OwnOperatorChart(app, 'team-operator');
  app.synth();
}
