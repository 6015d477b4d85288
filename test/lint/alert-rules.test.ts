/**
 * The PrometheusRule the constructs render, judged by Prometheus' own promtool (built from the
 * pinned Prometheus Go module, cached: test/setup/ensure-promtool.sh): `check rules` for syntax
 * and `test rules` with one unit test per alert — it fires on the failure it is named after,
 * with its labels and annotations, and stays quiet on a healthy series.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { AlertRule } from '../../lib/constructs/monitoring/alerts.js';
import { KruiseManager } from '../../lib/index.js';

const run = promisify(execFile);
const ENSURE = fileURLToPath(new URL('../setup/ensure-promtool.sh', import.meta.url));
const NS = 'kruise-system';
const SEL = `namespace="${NS}", job="kruise-manager-metrics"`;

function renderedRules(): AlertRule[] {
  const chart = new Chart(Testing.app(), 'alerts');
  new KruiseManager(chart, 'kruise', { monitoring: { alertRules: true } });
  const rule = Testing.synth(chart).find((o) => o.kind === 'PrometheusRule');
  return rule.spec.groups[0].rules as AlertRule[];
}

interface Series {
  series: string;
  values: string;
}
interface Case {
  /** Alert name. */
  alert: string;
  /** The failure: the alert must fire at `at` with these labels (annotations expanded from the rule). */
  failing: Series[];
  labels: Record<string, string>;
  value?: string;
  /** A healthy install: no alert at `at`. */
  healthy: Series[];
  at: string;
}

const CASES: Case[] = [
  {
    alert: 'KruiseManagerNoLeader',
    at: '15m',
    labels: {},
    failing: [
      { series: `leader_election_master_status{${SEL}, name="kruise-manager", pod="m-0"}`, values: '1x10 0x10' },
    ],
    healthy: [{ series: `leader_election_master_status{${SEL}, name="kruise-manager", pod="m-0"}`, values: '1x20' }],
  },
  {
    alert: 'KruiseManagerLeaderFlapping',
    at: '12m',
    labels: {},
    failing: [
      {
        series: `leader_election_master_status{${SEL}, name="kruise-manager", pod="m-0"}`,
        values: '1 0 1 0 1 0 1 0 1 0 1 0 1',
      },
      {
        series: `leader_election_master_status{${SEL}, name="kruise-manager", pod="m-1"}`,
        values: '0 1 0 1 0 1 0 1 0 1 0 1 0',
      },
    ],
    healthy: [
      { series: `leader_election_master_status{${SEL}, name="kruise-manager", pod="m-0"}`, values: '1x6 0x6' },
      { series: `leader_election_master_status{${SEL}, name="kruise-manager", pod="m-1"}`, values: '0x6 1x6' },
    ],
  },
  {
    alert: 'KruiseWebhookErrors',
    at: '15m',
    labels: { webhook: '/validate-pod' },
    failing: [
      {
        series: `controller_runtime_webhook_requests_total{${SEL}, pod="m-0", webhook="/validate-pod", code="200"}`,
        values: '0+100x20',
      },
      {
        series: `controller_runtime_webhook_requests_total{${SEL}, pod="m-0", webhook="/validate-pod", code="500"}`,
        values: '0+10x20',
      },
    ],
    healthy: [
      {
        series: `controller_runtime_webhook_requests_total{${SEL}, pod="m-0", webhook="/validate-pod", code="200"}`,
        values: '0+100x20',
      },
      {
        series: `controller_runtime_webhook_requests_total{${SEL}, pod="m-0", webhook="/validate-pod", code="500"}`,
        values: '0+1x20',
      },
    ],
  },
  {
    alert: 'KruiseWebhookUnreachable',
    at: '10m',
    labels: { name: 'vpod.kb.io' },
    failing: [
      {
        series:
          'apiserver_admission_webhook_rejection_count{name="vpod.kb.io", error_type="calling_webhook_error", operation="CREATE", rejection_code="500", type="validating"}',
        values: '0+5x20',
      },
    ],
    healthy: [
      {
        series:
          'apiserver_admission_webhook_rejection_count{name="vpod.kb.io", error_type="no_error", operation="CREATE", rejection_code="403", type="validating"}',
        values: '0+5x20',
      },
    ],
  },
  {
    alert: 'KruiseWebhookLatencyHigh',
    at: '20m',
    labels: { webhook: '/mutate-pod' },
    failing: ['0.5', '1', '2.5', '+Inf'].map((le, i) => ({
      series: `controller_runtime_webhook_latency_seconds_bucket{${SEL}, pod="m-0", webhook="/mutate-pod", le="${le}"}`,
      values: `0+${i < 2 ? 10 : 100}x30`,
    })),
    healthy: ['0.5', '1', '2.5', '+Inf'].map((le) => ({
      series: `controller_runtime_webhook_latency_seconds_bucket{${SEL}, pod="m-0", webhook="/mutate-pod", le="${le}"}`,
      values: '0+100x30',
    })),
  },
  {
    alert: 'KruiseManagerReplicasLow',
    at: '12m',
    labels: { namespace: NS, deployment: 'kruise-controller-manager' },
    value: '1',
    failing: [
      {
        series: `kube_deployment_status_replicas_available{namespace="${NS}", deployment="kruise-controller-manager"}`,
        values: '2x5 1x10',
      },
    ],
    healthy: [
      {
        series: `kube_deployment_status_replicas_available{namespace="${NS}", deployment="kruise-controller-manager"}`,
        values: '2x15',
      },
    ],
  },
  {
    alert: 'KruiseWebhookCertificateExpiring',
    at: '20m',
    labels: {},
    failing: [
      {
        series: `kruise_webhook_certificate_expiration_timestamp_seconds{${SEL}, pod="m-0"}`,
        values: `${3 * 86400}x30`,
      },
    ],
    healthy: [
      {
        series: `kruise_webhook_certificate_expiration_timestamp_seconds{${SEL}, pod="m-0"}`,
        values: `${300 * 86400}x30`,
      },
    ],
  },
  {
    alert: 'KruiseWebhookCertificateExpiring',
    at: '20m',
    labels: {},
    failing: [
      {
        series: `certmanager_certificate_expiration_timestamp_seconds{namespace="${NS}", name="kruise-webhook-certs"}`,
        values: `${2 * 86400}x30`,
      },
    ],
    healthy: [
      {
        series: `certmanager_certificate_expiration_timestamp_seconds{namespace="${NS}", name="kruise-webhook-certs"}`,
        values: `${60 * 86400}x30`,
      },
    ],
  },
  {
    alert: 'KruiseWorkQueueGrowing',
    at: '30m',
    labels: { name: 'cloneset-controller' },
    failing: [{ series: `workqueue_depth{${SEL}, pod="m-0", name="cloneset-controller"}`, values: '0+20x40' }],
    healthy: [{ series: `workqueue_depth{${SEL}, pod="m-0", name="cloneset-controller"}`, values: '150x40' }],
  },
  ...[
    ['a', 'a'],
    [undefined, undefined],
  ].map(([z1, z2]): Case => ({
    alert: 'KruiseManagerNotSpreadOverZones',
    at: '40m',
    labels: {},
    failing: zonesOf(z1, z2),
    healthy: zonesOf('a', 'b'),
  })),
];

/** Two manager pods on nodes n1 and n2 in the given zones (undefined: the node has no zone label). */
function zonesOf(z1: string | undefined, z2: string | undefined): Series[] {
  const pod = (p: string, node: string) => ({
    series: `kube_pod_info{namespace="${NS}", pod="${p}", node="${node}", created_by_kind="ReplicaSet", created_by_name="kruise-controller-manager-6d4b9c"}`,
    values: '1x50',
  });
  const node = (n: string, z: string | undefined) => ({
    series: `kube_node_labels{node="${n}"${z ? `, label_topology_kubernetes_io_zone="${z}"` : ''}}`,
    values: '1x50',
  });
  return [pod('m-0', 'n1'), pod('m-1', 'n2'), node('n1', z1), node('n2', z2)];
}

/** Prometheus' template expansion for what these annotations use. */
function expand(text: string, labels: Record<string, string>, value?: string): string {
  return text
    .replace(/\{\{ \$labels\.(\w+) \}\}/g, (_, k: string) => labels[k] ?? '')
    .replace(/\{\{ \$value \}\}/g, value ?? '');
}

describe('alert rules (promtool)', () => {
  let promtool: string;
  let dir: string;
  const rules = renderedRules();

  beforeAll(async () => {
    const { stdout } = await run('bash', [ENSURE], { maxBuffer: 16 << 20 });
    promtool = /^PROMTOOL=(.*)$/m.exec(stdout)![1];
    dir = mkdtempSync(join(tmpdir(), 'kruise-alerts-'));
    writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: [{ name: 'kruise-manager', rules }] }));
  }, 900_000);

  it('covers every failure mode named in the issue, one rule each', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'KruiseManagerNoLeader',
      'KruiseManagerLeaderFlapping',
      'KruiseWebhookErrors',
      'KruiseWebhookUnreachable',
      'KruiseWebhookLatencyHigh',
      'KruiseManagerReplicasLow',
      'KruiseWebhookCertificateExpiring',
      'KruiseWorkQueueGrowing',
      'KruiseManagerNotSpreadOverZones',
    ]);
    expect(new Set(CASES.map((c) => c.alert))).toEqual(new Set(rules.map((r) => r.alert)));
  });

  it('passes promtool check rules', async () => {
    const { stdout } = await run(promtool, ['check', 'rules', join(dir, 'rules.yaml')]);
    expect(stdout).toMatch(/SUCCESS: 9 rules found/);
  });

  it('fires each alert on its failure and never on a healthy series (promtool test rules)', async () => {
    const tests = CASES.flatMap((c) => {
      const rule = rules.find((r) => r.alert === c.alert)!;
      const labels = { ...c.labels, ...rule.labels };
      const annotations = Object.fromEntries(
        Object.entries(rule.annotations).map(([k, v]) => [k, expand(v, labels, c.value)]),
      );
      return [
        {
          name: `${c.alert} fires`,
          interval: '1m',
          input_series: c.failing,
          alert_rule_test: [
            { eval_time: c.at, alertname: c.alert, exp_alerts: [{ exp_labels: labels, exp_annotations: annotations }] },
          ],
        },
        {
          name: `${c.alert} stays quiet`,
          interval: '1m',
          input_series: c.healthy,
          alert_rule_test: [{ eval_time: c.at, alertname: c.alert, exp_alerts: [] }],
        },
      ];
    });
    writeFileSync(join(dir, 'tests.yaml'), stringify({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }));
    const result = await run(promtool, ['test', 'rules', join(dir, 'tests.yaml')]).catch(
      (e: { stdout: string; stderr: string }) => e,
    );
    expect(`${result.stdout}${result.stderr}`).toMatch(/SUCCESS/);
  });

  it('has a test that can fail: a healthy expectation on a failing series is caught', async () => {
    const c = CASES[0];
    writeFileSync(
      join(dir, 'negative.yaml'),
      stringify({
        rule_files: ['rules.yaml'],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: c.failing,
            alert_rule_test: [{ eval_time: c.at, alertname: c.alert, exp_alerts: [] }],
          },
        ],
      }),
    );
    const result = await run(promtool, ['test', 'rules', join(dir, 'negative.yaml')]).then(
      () => undefined,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(result?.code).toBe(1);
    expect(`${result?.stdout}${result?.stderr}`).toMatch(/FAILED/);
  });
});
