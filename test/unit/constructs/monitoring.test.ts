import { describe, expect, it } from '@jest/globals';
import { Chart, Duration, Testing } from 'cdk8s';
import { ManagerMonitoring } from '../../../lib/index.js';

function synth(serviceMonitor: boolean) {
  const chart = new Chart(Testing.app(), 'test');
  ManagerMonitoring._create(chart, 'm', {
    name: 'metrics',
    namespace: 'ns',
    selectorLabels: { app: 'm' },
    metricsPort: 8080,
    serviceMonitor,
    serviceMonitorLabels: { release: 'prom' },
  });
  return Testing.synth(chart);
}

describe('ManagerMonitoring', () => {
  it('renders a metrics Service over every replica', () => {
    const [service] = synth(false);
    expect(service.spec.selector).toEqual({ app: 'm' });
    expect(service.spec.ports).toEqual([
      expect.objectContaining({ name: 'metrics', port: 8080, targetPort: 'metrics' }),
    ]);
  });

  it('renders a ServiceMonitor selecting that Service', () => {
    const [service, monitor] = synth(true);
    expect(monitor.metadata.labels).toEqual({ release: 'prom' });
    expect(Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => service.metadata.labels[k] === v)).toBe(
      true,
    );
  });

  it('rejects a fractional interval', () => {
    const chart = new Chart(Testing.app(), 'test');
    expect(() =>
      ManagerMonitoring._create(chart, 'm', {
        name: 'x',
        namespace: 'ns',
        selectorLabels: {},
        metricsPort: 1,
        serviceMonitor: true,
        interval: Duration.millis(10),
      }),
    ).toThrow(/monitoring.interval: must be a whole number of seconds/);
  });
});
