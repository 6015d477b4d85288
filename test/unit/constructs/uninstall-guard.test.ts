import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { RUNTIME_FLAVOUR, UPSTREAM_FLAVOUR } from '../../../lib/constructs/manager/flavour.js';
import { ManagerImage, UninstallGuard, UninstallProtection } from '../../../lib/index.js';
import { find, Manifest } from './synth.js';

const image = ManagerImage.upstream({ registry: 'mirror.local/ok' });

function synth(protection?: UninstallProtection): { objects: Manifest[]; guard?: UninstallGuard } {
  const chart = new Chart(Testing.app(), 'test');
  const guard = protection
    ? protection._renderGuard(chart, 'g', { namespace: 'ns', image, imagePullSecrets: ['regcred'] })
    : UninstallGuard._create(chart, 'g', { namespace: 'ns', image });
  return { objects: Testing.synth(chart), guard };
}

describe('UninstallGuard', () => {
  it('is an Argo CD PreDelete hook by default that may only read Kruise workloads', () => {
    const { objects } = synth();
    const job = find(objects, 'Job', 'kruise-uninstall-guard');
    expect(job.metadata.annotations).toEqual({
      'argocd.argoproj.io/hook': 'PreDelete',
      'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation',
    });
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.template.spec.containers[0].image).toBe('mirror.local/ok/kruise-helm-hook:v0.1.0');
    const role = find(objects, 'ClusterRole', 'kruise-helm-hook');
    expect(
      role.rules.flatMap((r: { verbs: string[] }) => r.verbs).every((v: string) => v === 'get' || v === 'list'),
    ).toBe(true);
    expect(find(objects, 'ClusterRoleBinding', 'kruise-helm-hookbinding').roleRef.name).toBe('kruise-helm-hook');
  });

  it('requests and limits CPU, memory and ephemeral storage, and pulls like every other container', () => {
    const c = find(synth().objects, 'Job').spec.template.spec.containers[0];
    expect(c.resources).toEqual({
      requests: { cpu: '10m', memory: '32Mi', 'ephemeral-storage': '16Mi' },
      limits: { cpu: '100m', memory: '64Mi', 'ephemeral-storage': '64Mi' },
    });
    expect(c.imagePullPolicy).toBe('IfNotPresent');
  });

  it('refuses to render a Job that no tool runs as a hook', () => {
    const chart = new Chart(Testing.app(), 'test');
    expect(() =>
      UninstallGuard._create(chart, 'g', {
        namespace: 'ns',
        image,
        protection: UninstallProtection.deletionProtection(),
      }),
    ).toThrow(
      /^protection: runs no hook: a plain Job runs at install under kubectl apply.*\(got "UninstallProtection.deletionProtection\(\)"\)\. Fix: use UninstallProtection.argoCdPreDelete\(\)/,
    );
  });
});

describe('UninstallProtection', () => {
  it("renders no Job for kubectl: the CRDs carry upstream's Cascading delete protection instead", () => {
    const protection = UninstallProtection.deletionProtection();
    const { objects, guard } = synth(protection);
    expect(guard).toBeUndefined();
    expect(objects).toEqual([]);
    expect(protection.crdLabels).toEqual({ 'policy.kruise.io/delete-protection': 'Cascading' });
    expect(protection.featureGates).toEqual({
      ResourcesDeletionProtection: true,
      DeletionProtectionForCRDCascadingGate: true,
    });
  });

  it('adds the guard Job as a hook for Argo CD and Helm, which run it only at uninstall', () => {
    const argo = synth(UninstallProtection.argoCdPreDelete());
    expect(find(argo.objects, 'Job').metadata.annotations['argocd.argoproj.io/hook']).toBe('PreDelete');
    expect(argo.guard!.apiObjects.map((o) => o.kind)).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Job',
    ]);
    expect(argo.guard!.accessObjects.map((o) => o.kind)).toEqual([
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
    ]);
    const helm = find(synth(UninstallProtection.helmPreDelete()).objects, 'Job');
    expect(helm.metadata.annotations).toEqual({
      'helm.sh/hook': 'pre-delete',
      'helm.sh/hook-delete-policy': 'before-hook-creation',
    });
    expect(helm.spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
    expect(UninstallProtection.argoCdPreDelete().crdLabels).toEqual(UninstallProtection.deletionProtection().crdLabels);
  });

  it('none() protects nothing', () => {
    const protection = UninstallProtection.none();
    expect(synth(protection).objects).toEqual([]);
    expect(protection.crdLabels).toEqual({});
    expect(protection.featureGates).toEqual({});
  });

  it('resolves the uninstallProtection prop: deletion protection by default for upstream, nothing for the runtime', () => {
    const input = { namespace: 'kruise-system', externalCertificates: false, split: false };
    const upstream = (uninstallProtection?: UninstallProtection) =>
      UPSTREAM_FLAVOUR._resolve({ ...input, uninstallProtection }).uninstallProtection.kind;
    expect(upstream()).toBe('deletionProtection');
    expect(upstream(UninstallProtection.argoCdPreDelete())).toBe('argoCdPreDelete');
    expect(upstream(UninstallProtection.helmPreDelete())).toBe('helmPreDelete');
    expect(RUNTIME_FLAVOUR._resolve(input).uninstallProtection.kind).toBe('none');
    expect(() => RUNTIME_FLAVOUR._check({ ...input, uninstallProtection: UninstallProtection.none() })).not.toThrow();
  });

  it('rejects protection for the runtime image by name', () => {
    expect(() =>
      RUNTIME_FLAVOUR._check({
        namespace: 'kruise-system',
        externalCertificates: false,
        split: false,
        uninstallProtection: UninstallProtection.deletionProtection(),
      }),
    ).toThrow(
      /^uninstallProtection: guards upstream Kruise workloads only \(got "UninstallProtection.deletionProtection\(\)"\)\. Fix: remove uninstallProtection/,
    );
  });
});
