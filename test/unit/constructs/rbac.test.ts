import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { ManagerRbac, ManagerRbacProps } from '../../../lib/index.js';
import { find, Manifest } from './synth.js';

function synth(props: Partial<ManagerRbacProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new ManagerRbac(chart, 'r', { namespace: 'ns', leaseNamespace: 'ns', upstream: false, selfManagedCertificates: true, featureGates: {}, ...props });
  return Testing.synth(chart);
}
const resources = (role: Manifest) => role.rules.flatMap((r: { resources: string[] }) => r.resources);

describe('ManagerRbac', () => {
  it('matches the snapshot (runtime)', () => {
    expect(synth()).toMatchSnapshot();
  });

  it('scopes the runtime ClusterRole to the features it carries', () => {
    const role = find(synth(), 'ClusterRole', 'kruise-manager-role');
    expect(resources(role)).toEqual(expect.arrayContaining(['pods', 'sidecarsets', 'sidecarsets/status']));
    expect(resources(role)).not.toContain('clonesets');
    expect(resources(role)).not.toContain('secrets');
  });

  it('limits caBundle writes to the two webhook configurations by name', () => {
    const certs = find(synth(), 'ClusterRole', 'kruise-certs-role');
    expect(certs.rules.map((r: { resourceNames: string[] }) => r.resourceNames)).toEqual([
      ['kruise-mutating-webhook-configuration'], ['kruise-validating-webhook-configuration'],
    ]);
    expect(find(synth(), 'ClusterRoleBinding', 'kruise-certs-rolebinding').roleRef.name).toBe('kruise-certs-role');
  });

  it('only reads Secrets and drops caBundle writes when cert-manager issues certificates', () => {
    const objects = synth({ selfManagedCertificates: false });
    expect(find(objects, 'Role', 'kruise-webhook-role').rules[0].verbs).toEqual(['get', 'list', 'watch']);
    expect(objects.some((o) => o.metadata.name === 'kruise-certs-role')).toBe(false);
  });

  it('grants upstream controllers every Kruise resource, and gated extras only when enabled', () => {
    const upstream = find(synth({ upstream: true }), 'ClusterRole', 'kruise-manager-role');
    expect(resources(upstream)).toEqual(expect.arrayContaining(['clonesets', 'podunavailablebudgets/status', 'jobs', 'deployments/scale']));
    expect(resources(upstream)).not.toContain('storageclasses');
    const gated = find(synth({ upstream: true, featureGates: { StatefulSetAutoResizePVCGate: true } }), 'ClusterRole', 'kruise-manager-role');
    expect(resources(gated)).toContain('storageclasses');
  });

  it('aggregates Kruise resources into the built-in roles', () => {
    const view = find(synth(), 'ClusterRole', 'aggregate-kruise-view');
    expect(view.metadata.labels).toEqual({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(view.rules[0].verbs).toEqual(['get', 'list', 'watch']);
  });

  it('puts the leader-election Role in the Lease namespace', () => {
    expect(find(synth({ leaseNamespace: 'leases' }), 'Role', 'kruise-leader-election-role').metadata.namespace).toBe('leases');
  });
});
