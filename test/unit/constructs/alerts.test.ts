import { describe, expect, it } from '@jest/globals';
import { Chart, Duration, Testing } from 'cdk8s';
import { managerAlertRules } from '../../../lib/constructs/monitoring/alerts.js';
import { KruiseManager } from '../../../lib/index.js';

const base = {
  namespace: 'ns',
  deployments: ['kruise-controller-manager'],
  replicas: 2,
  leaseName: 'kruise-manager',
  webhookNames: ['vpod.kb.io'],
};

describe('ManagerAlerts', () => {
  it('is off by default, and on by monitoring.alertRules with the rule labels asked for', () => {
    const kinds = (monitoring: object) => {
      const chart = new Chart(Testing.app(), 'a');
      new KruiseManager(chart, 'k', { monitoring });
      return Testing.synth(chart).filter(
        (o) => o.kind === 'PrometheusRule' || o.metadata.name === 'kruise-manager-dashboard',
      );
    };
    expect(kinds({})).toEqual([]);
    const [rule] = kinds({ alertRules: true, alerts: { ruleLabels: { release: 'prom' } } });
    expect(rule.metadata).toEqual({ name: 'kruise-manager', namespace: 'kruise-system', labels: { release: 'prom' } });
  });

  it('uses the thresholds given', () => {
    const rules = managerAlertRules({
      ...base,
      webhookP99Latency: Duration.millis(250),
      queueDepth: 40,
      certificateExpiry: Duration.days(3),
      replicas: 1,
    });
    const expr = (name: string) => rules.find((r) => r.alert === name)!.expr;
    expect(expr('KruiseWebhookLatencyHigh')).toMatch(/> 0.25$/);
    expect(expr('KruiseWorkQueueGrowing')).toMatch(/> 40 and/);
    expect(expr('KruiseWebhookCertificateExpiring')).toMatch(/< 259200$/);
    expect(expr('KruiseManagerReplicasLow')).toMatch(/< 1$/);
  });

  it('names the prop, the value and the fix for a bad threshold', () => {
    expect(() => managerAlertRules({ ...base, webhookErrorRatio: 5 })).toThrow(
      /monitoring.alerts.webhookErrorRatio: must be a ratio between 0 and 1 \(got 5\). Fix:/,
    );
    expect(() => managerAlertRules({ ...base, queueDepth: 0 })).toThrow(
      /monitoring.alerts.queueDepth: must be an integer >= 1/,
    );
  });
});
