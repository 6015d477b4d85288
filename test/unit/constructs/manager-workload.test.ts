import { describe, expect, it } from '@jest/globals';
import { KRUISE_MANAGER_NAMES } from '../../../lib/constructs/core/names.js';
import { Chart, Duration, Testing } from 'cdk8s';
import { kplus } from '../../../lib/constructs/core/api.js';
import { resolveLeaderElection } from '../../../lib/constructs/manager/manager-args.js';
import { resolvePorts, type ManagerWorkloadProps } from '../../../lib/constructs/manager/manager-workload.js';
import {
  ManagerImage,
  ManagerPodOptions,
  ManagerRole,
  ManagerWorkload,
  Rollout,
  ZoneSpread,
} from '../../../lib/index.js';
import { Manifest } from './synth.js';

/**
 * Workload props and pod options side by side, as a test writes them; ports resolved from `ports`/`pprof` as
 * KruiseManager does.
 */
type TestProps = Partial<Omit<ManagerWorkloadProps, 'pod' | 'ports'>> & ManagerPodOptions;

function synth(props: TestProps = {}): { deployment: Manifest; workload: ManagerWorkload } {
  const chart = new Chart(Testing.app(), 'test');
  const serviceAccount = new kplus.ServiceAccount(chart, 'sa', { metadata: { name: 'kruise-manager' } });
  const workload = ManagerWorkload._create(chart, 'w', {
    namespace: 'kruise-system',
    names: KRUISE_MANAGER_NAMES,
    name: 'mgr',
    role: ManagerRole.ALL,
    image: ManagerImage.runtime('r.example.com/m:1'),
    serviceAccount,
    replicas: 3,
    leaderElection: resolveLeaderElection(undefined, 'kruise-system'),
    zoneSpread: ZoneSpread.preferred(),
    rollout: Rollout.fullSurge(),
    selfManagedCertificates: true,
    hostNetwork: props.hostNetwork ?? true,
    terminationGracePeriod: props.terminationGracePeriod ?? Duration.seconds(30),
    ...props,
    ports: resolvePorts(props),
    featureGates: props.featureGates ?? {},
    pod: props,
  });
  return { deployment: Testing.synth(chart).find((o) => o.kind === 'Deployment')!, workload };
}

describe('ManagerWorkload', () => {
  it('matches the snapshot', () => {
    expect(synth().deployment).toMatchSnapshot();
  });

  it('wires the contract env vars and ports for the runtime', () => {
    const { deployment, workload } = synth();
    const container = deployment.spec.template.spec.containers[0];
    const env = Object.fromEntries(
      container.env.map((e: { name: string; value?: string }) => [e.name, e.value ?? 'fieldRef']),
    );
    expect(env).toEqual({
      POD_NAMESPACE: 'fieldRef',
      POD_NAME: 'fieldRef',
      WEBHOOK_PORT: '9876',
      WEBHOOK_CERT_DIR: '/tmp/kruise-webhook-certs',
      SECRET_NAME: 'kruise-webhook-certs',
      SERVICE_NAME: 'kruise-webhook-service',
    });
    expect(workload.ports).toEqual({ webhook: 9876, metrics: 8080, health: 8000 });
    expect(container.securityContext.capabilities.add).toBeUndefined();
    expect(deployment.spec.template.spec.securityContext.runAsUser).toBe(65532);
  });

  it('renders a strict, on-prem spread with minDomains', () => {
    const { deployment } = synth({
      zoneSpread: ZoneSpread.required({ topologyKey: 'example.com/room', minZones: 2, zones: 3 }),
    });
    expect(deployment.spec.template.spec.topologySpreadConstraints[0]).toEqual(
      expect.objectContaining({
        topologyKey: 'example.com/room',
        whenUnsatisfiable: 'DoNotSchedule',
        minDomains: 2,
      }),
    );
  });

  it('omits the spread constraint with ZoneSpread.none() and keeps host anti-affinity', () => {
    const spec = synth({ zoneSpread: ZoneSpread.none() }).deployment.spec.template.spec;
    expect(spec.topologySpreadConstraints).toBeUndefined();
    expect(spec.affinity.podAntiAffinity).toBeDefined();
  });

  it('tunes the surge, tolerations, node selector, labels and grace period', () => {
    const { deployment } = synth({
      rollout: Rollout.surge(1),
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'control', effect: 'NoSchedule' }],
      nodeSelector: { 'node-role.kubernetes.io/control-plane': '' },
      labels: { team: 'platform' },
      podAnnotations: { a: 'b' },
      terminationGracePeriod: Duration.seconds(45),
      priorityClassName: 'kruise-critical',
    });
    const spec = deployment.spec.template.spec;
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
    expect(spec.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'control', effect: 'NoSchedule' }]);
    // A plain nodeSelector (as the chart renders it), so a nodeAffinity prop adds to it.
    expect(spec.nodeSelector).toEqual({ 'node-role.kubernetes.io/control-plane': '' });
    expect(spec.affinity.nodeAffinity).toBeUndefined();
    expect(deployment.metadata.labels.team).toBe('platform');
    expect(deployment.spec.template.metadata.annotations).toEqual({ a: 'b' });
    expect(spec.terminationGracePeriodSeconds).toBe(45);
    expect(spec.priorityClassName).toBe('kruise-critical');
  });

  it('exposes no webhook port on controller-only replicas', () => {
    const ports = synth({ role: ManagerRole.CONTROLLERS }).deployment.spec.template.spec.containers[0].ports;
    expect(ports.map((p: { name: string }) => p.name)).toEqual(['metrics', 'health']);
  });

  it('checks ports', () => {
    expect(() => resolvePorts({ ports: { webhook: 8080 } })).toThrow(
      /ports.metrics: collides with ports.webhook \(got 8080\)/,
    );
    expect(() => resolvePorts({ ports: { health: 0 } })).toThrow(/ports.health: is not a TCP port/);
    // The pprof port is checked only when pprof is on.
    expect(resolvePorts({ ports: { pprof: 8000 } })).toEqual({ webhook: 9876, metrics: 8080, health: 8000 });
    expect(() => resolvePorts({ pprof: true, ports: { pprof: 8000 } })).toThrow(
      /^ports.pprof: collides with ports.health \(got 8000\)/,
    );
  });

  it('requests and limits ephemeral storage for its emptyDirs and logs unless resources are given', () => {
    const resources = (props: TestProps) => synth(props).deployment.spec.template.spec.containers[0].resources;
    expect(resources({})).toEqual({
      requests: { cpu: '100m', memory: '256Mi', 'ephemeral-storage': '64Mi' },
      limits: { cpu: '500m', memory: '512Mi', 'ephemeral-storage': '512Mi' },
    });
    expect(resources({ resources: { cpu: { request: kplus.Cpu.millis(200) } } })).toEqual({
      requests: { cpu: '200m' },
    });
  });

  it('pulls IfNotPresent, like the daemon and the uninstall guard', () => {
    expect(synth().deployment.spec.template.spec.containers[0].imagePullPolicy).toBe('IfNotPresent');
  });

  it('declares the pprof port and binds pprof to it only when asked (upstream image)', () => {
    const upstream = { image: ManagerImage.upstream() };
    const off = synth(upstream).deployment.spec.template.spec.containers[0];
    expect(off.args).toContain('--enable-pprof=false');
    expect(off.ports.map((p: { name: string }) => p.name)).toEqual(['webhook-server', 'metrics', 'health']);
    const { deployment, workload } = synth({ ...upstream, pprof: true });
    const on = deployment.spec.template.spec.containers[0];
    expect(on.args).toEqual(expect.arrayContaining(['--enable-pprof=true', '--pprof-addr=:8090']));
    expect(on.ports).toContainEqual({ name: 'pprof', containerPort: 8090 });
    expect(workload.ports.pprof).toBe(8090);
    expect(() => synth({ pprof: true })).toThrow(/^pprof: is served by upstream kruise-manager only/);
  });
});
