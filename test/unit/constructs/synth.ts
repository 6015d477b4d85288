import { Chart, Testing } from 'cdk8s';
import { KruiseManager, KruiseManagerProps } from '../../../lib/index.js';

/** A synthesized Kubernetes object, as plain JSON. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = Record<string, any>;

export function synthManager(props: KruiseManagerProps = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new KruiseManager(chart, 'kruise', props);
  return Testing.synth(chart);
}

export function find(objects: Manifest[], kind: string, name?: string): Manifest {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata?.name === name));
  if (!found)
    throw new Error(
      `no ${kind}${name ? ` named ${name}` : ''} in [${objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ')}]`,
    );
  return found;
}

export function podSpec(objects: Manifest[], name = 'kruise-controller-manager'): Manifest {
  return find(objects, 'Deployment', name).spec.template.spec;
}

export function managerArgs(objects: Manifest[], name = 'kruise-controller-manager'): string[] {
  return podSpec(objects, name).containers[0].args;
}

/**
 * Upstream CRD bodies are upstream's own (checked against the module by the generator test),
 * so snapshots keep what this library decides about them: name, labels, conversion.
 */
export function summarizeCrd(o: Manifest): Manifest {
  if (o.kind !== 'CustomResourceDefinition' || !o.metadata?.annotations?.['controller-gen.kubebuilder.io/version'])
    return o;
  return {
    kind: o.kind,
    metadata: { name: o.metadata.name, labels: o.metadata.labels },
    conversion: o.spec.conversion,
    schema: '<upstream>',
  };
}
