import { describe, expect, it } from '@jest/globals';
import { KRUISE_MANAGER_NAMES } from '../../../lib/constructs/core/names.js';
import { Chart, Testing } from 'cdk8s';
import type { ManagerRbacProps } from '../../../lib/constructs/manager/rbac.js';
import { KruiseManager, ManagerImage, ManagerRbac } from '../../../lib/index.js';
import { kplus } from '../../../lib/constructs/core/api.js';
import { RUNTIME_RESOURCES } from '../../../lib/constructs/webhooks/runtime-webhooks.js';
import { RUNTIME_LEADER_ELECTION_RULES, runtimeClusterRules } from '../../../lib/contract.js';
import { resolveUpstreamProfile } from '../../../lib/constructs/manager/upstream-profile.js';
import { find, Manifest } from './synth.js';

function synth(props: Partial<ManagerRbacProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  ManagerRbac._create(chart, 'r', {
    namespace: 'ns',
    names: KRUISE_MANAGER_NAMES,
    leaseNamespace: 'ns',
    selfManagedCertificates: true,
    clusterRules: runtimeClusterRules(RUNTIME_RESOURCES),
    leaderElectionRules: [...RUNTIME_LEADER_ELECTION_RULES],
    conversionCrds: [],
    aggregated: [{ apiGroup: 'apps.kruise.io', resource: 'sidecarsets', adminOnly: false }],
    ...props,
  });
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
    // WorkloadSpread reads its targets (CloneSet and Advanced StatefulSet included), never writes them.
    const writes = (role.rules as Array<{ resources: string[]; verbs: string[] }>)
      .filter((r) => r.resources.includes('clonesets'))
      .flatMap((r) => r.verbs);
    expect(writes).toEqual(['get', 'list']);
    expect(resources(role)).not.toContain('secrets');
  });

  it('limits caBundle writes to the two webhook configurations by name', () => {
    const certs = find(synth(), 'ClusterRole', 'kruise-certs-role');
    expect(certs.rules.map((r: { resourceNames: string[] }) => r.resourceNames)).toEqual([
      ['kruise-mutating-webhook-configuration'],
      ['kruise-validating-webhook-configuration'],
    ]);
    expect(find(synth(), 'ClusterRoleBinding', 'kruise-certs-rolebinding').roleRef.name).toBe('kruise-certs-role');
  });

  it('only reads Secrets and drops caBundle writes when cert-manager issues certificates', () => {
    const objects = synth({ selfManagedCertificates: false });
    expect(find(objects, 'Role', 'kruise-webhook-role').rules[0].verbs).toEqual(['get', 'list', 'watch']);
    expect(objects.some((o) => o.metadata.name === 'kruise-certs-role')).toBe(false);
  });

  it('renders the upstream profile: controller permissions and name-restricted conversion caBundle writes', () => {
    const profile = resolveUpstreamProfile({ namespace: 'ns', externalCertificates: false });
    const objects = synth({ clusterRules: profile.clusterRules, conversionCrds: profile.conversionCrds });
    // The Advanced StatefulSet controller watches StorageClasses whatever its gates (kruise v1.8.3).
    expect(resources(find(objects, 'ClusterRole', 'kruise-manager-role'))).toEqual(
      expect.arrayContaining(['clonesets', 'storageclasses', 'ephemeraljobs']),
    );
    // v1.9 converts DaemonSets and SidecarSets through the manager's webhook too.
    const crdRules = find(objects, 'ClusterRole', 'kruise-certs-role').rules.filter(
      (r: { resources: string[] }) => r.resources[0] === 'customresourcedefinitions',
    );
    expect(crdRules).toEqual(
      ['daemonsets', 'sidecarsets', 'statefulsets'].map((plural) => ({
        apiGroups: ['apiextensions.k8s.io'],
        resources: ['customresourcedefinitions'],
        resourceNames: [`${plural}.apps.kruise.io`],
        verbs: ['get', 'patch', 'update'],
      })),
    );
  });

  it('keeps Secret-carrying kinds out of the aggregated view and edit roles', () => {
    const objects = synth({
      aggregated: [
        { apiGroup: 'apps.kruise.io', resource: 'clonesets', adminOnly: false },
        { apiGroup: 'apps.kruise.io', resource: 'resourcedistributions', adminOnly: true },
      ],
    });
    for (const level of ['view', 'edit'])
      expect(resources(find(objects, 'ClusterRole', `aggregate-kruise-${level}`))).not.toContain(
        'resourcedistributions',
      );
    expect(resources(find(objects, 'ClusterRole', 'aggregate-kruise-admin'))).toEqual(
      expect.arrayContaining(['resourcedistributions', 'resourcedistributions/status']),
    );
  });

  it('aggregates Kruise resources into the built-in roles', () => {
    const view = find(synth(), 'ClusterRole', 'aggregate-kruise-view');
    expect(view.metadata.labels).toEqual({ 'rbac.authorization.k8s.io/aggregate-to-view': 'true' });
    expect(view.rules[0].verbs).toEqual(['get', 'list', 'watch']);
  });

  it("renders rules added to the manager's ClusterRole after its own, bound to the manager", () => {
    const chart = new Chart(Testing.app(), 'test');
    const manager = new KruiseManager(chart, 'kruise', {
      image: ManagerImage.runtime('registry.example.com/kruise-ha:0.1.0'),
    });
    const own = find(Testing.synth(chart), 'ClusterRole', 'kruise-manager-role').rules;
    // cdk8s-plus renders one rule per resource, with an empty resourceNames (every object).
    manager.rbac.clusterRole.allow(['get', 'list'], kplus.ApiResource.CONFIG_MAPS);
    manager.rbac.clusterRole.allowRead(kplus.ApiResource.custom({ apiGroup: 'example.com', resourceType: 'widgets' }));
    const objects = Testing.synth(chart);
    const role = find(objects, 'ClusterRole', 'kruise-manager-role');
    expect(role.rules).toEqual([
      ...own,
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [], verbs: ['get', 'list'] },
      { apiGroups: ['example.com'], resources: ['widgets'], resourceNames: [], verbs: ['get', 'list', 'watch'] },
    ]);
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && o.roleRef.name === 'kruise-manager-role');
    expect(binding?.subjects).toEqual([
      expect.objectContaining({ kind: 'ServiceAccount', name: 'kruise-manager', namespace: 'kruise-system' }),
    ]);
  });

  it('puts the leader-election Role in the Lease namespace', () => {
    expect(find(synth({ leaseNamespace: 'leases' }), 'Role', 'kruise-leader-election-role').metadata.namespace).toBe(
      'leases',
    );
  });
});
