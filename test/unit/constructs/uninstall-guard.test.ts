import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { ManagerImage, UninstallGuard } from '../../../lib/index.js';
import { find } from './synth.js';

describe('UninstallGuard', () => {
  const chart = new Chart(Testing.app(), 'test');
  new UninstallGuard(chart, 'g', { namespace: 'ns', image: ManagerImage.upstream({ registry: 'mirror.local/ok' }) });
  const objects = Testing.synth(chart);

  it('is an Argo CD PreDelete hook that may only read Kruise workloads', () => {
    const job = find(objects, 'Job', 'kruise-uninstall-guard');
    expect(job.metadata.annotations['argocd.argoproj.io/hook']).toBe('PreDelete');
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.template.spec.containers[0].image).toBe('mirror.local/ok/kruise-helm-hook:v0.1.0');
    const role = find(objects, 'ClusterRole', 'kruise-helm-hook');
    expect(role.rules.flatMap((r: { verbs: string[] }) => r.verbs).every((v: string) => v === 'get' || v === 'list')).toBe(true);
    expect(find(objects, 'ClusterRoleBinding', 'kruise-helm-hookbinding').roleRef.name).toBe('kruise-helm-hook');
  });
});
