import { describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import type { KruiseDaemonProps } from '../../../lib/constructs/daemon/daemon.js';
import { KruiseDaemon, ManagerImage } from '../../../lib/index.js';
import { find, Manifest } from './synth.js';

function synth(props: Partial<KruiseDaemonProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  KruiseDaemon._create(chart, 'd', {
    namespace: 'kruise-system',
    image: ManagerImage.upstream(),
    featureGates: { ImagePullJobGate: true },
    imagePullSecrets: ['regcred'],
    ...props,
  });
  return Testing.synth(chart);
}

const daemonSet = (objects: Manifest[]) => find(objects, 'DaemonSet', 'kruise-daemon');
const container = (objects: Manifest[]) => daemonSet(objects).spec.template.spec.containers[0];

describe('KruiseDaemon', () => {
  it('matches the snapshot', () => {
    expect(synth()).toMatchSnapshot();
  });

  it('runs /kruise-daemon from the manager image on every node with the runtime socket', () => {
    const spec = daemonSet(synth()).spec.template.spec;
    expect(spec.containers[0].command).toEqual(['/kruise-daemon']);
    expect(spec.containers[0].args).toEqual([
      '--logtostderr=true',
      '--v=4',
      '--addr=:10221',
      '--enable-pprof=false',
      '--feature-gates=ImagePullJobGate=true',
    ]);
    expect(spec.hostNetwork).toBe(true);
    expect(spec.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(spec.volumes[0].hostPath.path).toBe('/var/run');
    expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
  });

  // The strategy is a JSON patch that the typed L1 class re-serializes: a bare '10%' used to
  // vanish (`rollingUpdate: {}`), and the API then rolled one node at a time.
  it('rolls 10% of the nodes at a time, each new pod available 3 s after it turned ready', () => {
    const spec = daemonSet(synth()).spec;
    expect(spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } });
    expect(spec.minReadySeconds).toBe(3);
  });

  it('mounts the host runtime directory read-only', () => {
    const objects = synth({ socketLocation: '/run' });
    expect(container(objects).volumeMounts).toEqual([
      { mountPath: '/hostvarrun', name: 'runtime-socket', readOnly: true },
    ]);
    expect(daemonSet(objects).spec.template.spec.volumes[0].hostPath.path).toBe('/run');
  });

  it('checks health over HTTP /healthz like upstream: readiness paces the rollout, liveness gives up later', () => {
    const c = container(synth({ port: 10300 }));
    expect(c.readinessProbe).toEqual({
      httpGet: { path: '/healthz', port: 10300, scheme: 'HTTP' },
      periodSeconds: 5,
      failureThreshold: 3,
      timeoutSeconds: 3,
    });
    expect(c.livenessProbe).toEqual({
      httpGet: { path: '/healthz', port: 10300, scheme: 'HTTP' },
      initialDelaySeconds: 60,
      periodSeconds: 10,
      failureThreshold: 3,
      timeoutSeconds: 5,
    });
    expect(c.ports).toEqual([{ name: 'http', containerPort: 10300 }]);
  });

  it('requests CPU, memory and ephemeral storage, and pulls like every other container', () => {
    const c = container(synth());
    expect(c.resources).toEqual({
      requests: { cpu: '10m', memory: '64Mi', 'ephemeral-storage': '32Mi' },
      limits: { cpu: '50m', memory: '128Mi', 'ephemeral-storage': '128Mi' },
    });
    expect(c.imagePullPolicy).toBe('IfNotPresent');
  });

  it('serves pprof only when asked, on a declared port', () => {
    const c = container(synth({ pprof: true, pprofPort: 10400 }));
    expect(c.args).toEqual(expect.arrayContaining(['--enable-pprof=true', '--pprof-addr=:10400']));
    expect(c.args).not.toContain('--enable-pprof=false');
    expect(c.ports).toEqual([
      { name: 'http', containerPort: 10221 },
      { name: 'pprof', containerPort: 10400 },
    ]);
    expect(container(synth({ pprof: true })).args).toContain('--pprof-addr=:10222');
  });

  it('rejects colliding or invalid ports by name', () => {
    expect(() => synth({ pprof: true, pprofPort: 10221 })).toThrow(
      /^pprofPort: collides with port \(got 10221\)\. Fix: /,
    );
    expect(() => synth({ port: 70000 })).toThrow(/^port: is not a TCP port \(got 70000\)/);
  });

  it('reads Secrets only in kruise-daemon-config', () => {
    const objects = synth();
    expect(find(objects, 'Role', 'kruise-daemon-secret-role').metadata.namespace).toBe('kruise-daemon-config');
    expect(find(objects, 'RoleBinding', 'kruise-daemon-secret-rolebinding').subjects[0]).toEqual(
      expect.objectContaining({ name: 'kruise-daemon', namespace: 'kruise-system' }),
    );
  });
});
