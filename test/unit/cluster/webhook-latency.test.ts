// The upgrade test reads each new replica's pod-webhook latency from controller-runtime's histogram.
import { describe, expect, it } from '@jest/globals';
import { webhookLatency } from '../../e2e/support/kube.js';

const exposition = [
  '# TYPE controller_runtime_webhook_latency_seconds histogram',
  ...[
    ['0.5', 90],
    ['1', 95],
    ['2.5', 97],
    ['5', 98],
    ['10', 98],
    ['+Inf', 100],
  ].map(([le, n]) => `controller_runtime_webhook_latency_seconds_bucket{le="${le}",webhook="/mutate-pod"} ${n}`),
  'controller_runtime_webhook_latency_seconds_bucket{le="+Inf",webhook="/validate-pod"} 7',
  'controller_runtime_webhook_latency_seconds_sum{webhook="/mutate-pod"} 12.5',
].join('\n');

describe('webhookLatency', () => {
  it('counts the reviews of one path slower than each bound', () => {
    expect(webhookLatency(exposition, '/mutate-pod')).toEqual({
      reviews: 100,
      slowerThan: { '1': 5, '2.5': 3, '5': 2, '10': 2 },
    });
    expect(webhookLatency(exposition, '/validate-pod')?.reviews).toBe(7);
  });

  it('says undefined for a path, or an exposition, without the histogram', () => {
    expect(webhookLatency(exposition, '/mutate-cloneset')).toBeUndefined();
    expect(webhookLatency('', '/mutate-pod')).toBeUndefined();
  });
});
