import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { KruiseDaemon, ManagerImage } from '../../../lib/index.js';
import { find } from './synth.js';

function synth() {
  const chart = new Chart(Testing.app(), 'test');
  new KruiseDaemon(chart, 'd', { namespace: 'kruise-system', image: ManagerImage.upstream(), featureGates: { ImagePullJobGate: true }, imagePullSecrets: ['regcred'] });
  return Testing.synth(chart);
}

describe('KruiseDaemon', () => {
  it('matches the snapshot', () => {
    expect(synth()).toMatchSnapshot();
  });

  it('runs /kruise-daemon from the manager image on every node with the runtime socket', () => {
    const spec = find(synth(), 'DaemonSet', 'kruise-daemon').spec.template.spec;
    expect(spec.containers[0].command).toEqual(['/kruise-daemon']);
    expect(spec.containers[0].args).toEqual(['--logtostderr=true', '--v=4', '--addr=:10221', '--feature-gates=ImagePullJobGate=true']);
    expect(spec.hostNetwork).toBe(true);
    expect(spec.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(spec.volumes[0].hostPath.path).toBe('/var/run');
    expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });

  it('reads Secrets only in kruise-daemon-config', () => {
    const objects = synth();
    expect(find(objects, 'Role', 'kruise-daemon-secret-role').metadata.namespace).toBe('kruise-daemon-config');
    expect(find(objects, 'RoleBinding', 'kruise-daemon-secret-rolebinding').subjects[0]).toEqual(expect.objectContaining({ name: 'kruise-daemon', namespace: 'kruise-system' }));
  });
});
