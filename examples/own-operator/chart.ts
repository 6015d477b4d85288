/**
 * The chart of the operator in operator.ts (docs/sdk.md): synth bundles the program into an image, reads its
 * registrations, and renders its HA deployment with its webhook configuration and RBAC.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { Operator, OperatorProgram, RuntimeImage } from 'kruise-ha';

export class OwnOperatorChart extends Chart {
  public readonly image: RuntimeImage;
  public readonly operator: Operator;

  constructor(scope: Construct, id: string, repository = 'registry.example.com/team/team-operator') {
    super(scope, id);
    const image = (this.image = new RuntimeImage(this, 'Image', {
      repository,
      entrypoint: `${import.meta.dirname}/operator.ts`,
    }));
    this.operator = new Operator(this, 'Operator', { program: OperatorProgram.fromRuntimeImage(image) });
  }
}

if (/chart\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new OwnOperatorChart(app, 'team-operator');
  app.synth();
}
