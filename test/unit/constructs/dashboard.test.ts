import { beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv, type ValidateFunction } from 'ajv';
import { Chart, Testing } from 'cdk8s';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createGenerator } from 'ts-json-schema-generator';
import { KruiseManager, ManagerDashboard, ManagerImage } from '../../../lib/index.js';

/**
 * Grafana's dashboard schema: the `Dashboard` type @grafana/schema generates from Grafana's CUE
 * dashboard kind, turned into JSON Schema (unknown fields rejected) by ts-json-schema-generator.
 */
function grafanaDashboardSchema(): object {
  const pkg = dirname(createRequire(import.meta.url).resolve('@grafana/schema/package.json'));
  const path = join(pkg, 'dist/types/raw/dashboard/x/types.gen.d.ts');
  return createGenerator({ path, type: 'Dashboard', skipTypeCheck: true, additionalProperties: false }).createSchema(
    'Dashboard',
  );
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function synth(flavour: 'upstream' | 'runtime', dashboard = {}): Json[] {
  const chart = new Chart(Testing.app(), 'dash');
  new KruiseManager(chart, 'kruise', {
    ...(flavour === 'runtime' ? { image: ManagerImage.runtime('example.com/kruise-ha:1') } : {}),
    monitoring: { grafanaDashboard: true, dashboard },
  });
  return Testing.synth(chart);
}

const dashboardOf = (objects: Json[]) =>
  JSON.parse(
    objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'kruise-manager-dashboard').data[
      'kruise-manager.json'
    ],
  );
const exprs = (d: Json): string[] => d.panels.flatMap((p: Json) => (p.targets ?? []).map((t: Json) => t.expr));

describe('ManagerDashboard', () => {
  let validate: ValidateFunction;
  beforeAll(() => {
    validate = new Ajv({ strict: false, allErrors: true }).compile(grafanaDashboardSchema());
  }, 60_000);

  it.each(['upstream', 'runtime'] as const)("is valid against Grafana's dashboard schema (%s flavour)", (flavour) => {
    const ok = validate(dashboardOf(synth(flavour)));
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('is checked strictly: a misspelt field fails the schema', () => {
    const d = dashboardOf(synth('runtime'));
    d.panels[1].gridPos = { ...d.panels[1].gridPos, width: 3 };
    expect(validate(d)).toBe(false);
    expect(validate.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ keyword: 'additionalProperties', params: { additionalProperty: 'width' } }),
      ]),
    );
  });

  it("is a ConfigMap Grafana's sidecar picks up, in the chosen folder", () => {
    const cm = synth('upstream', {
      sidecarLabel: 'grafana_dashboard',
      sidecarLabelValue: 'kruise',
      folder: 'Kruise',
      configMapNamespace: 'monitoring',
    }).find((o) => o.kind === 'ConfigMap');
    expect(cm.metadata).toEqual({
      name: 'kruise-manager-dashboard',
      namespace: 'monitoring',
      labels: { grafana_dashboard: 'kruise' },
      annotations: { grafana_folder: 'Kruise' },
    });
  });

  it('shows leader, admission, controllers, certificate expiry, replicas and process panels', () => {
    const d = dashboardOf(synth('upstream'));
    expect(d.panels.filter((p: Json) => p.type !== 'row').map((p: Json) => p.title)).toEqual([
      'Leader',
      'Leader changes (30 min window)',
      'Replicas ready',
      'Certificate expires in',
      'Admission rate by webhook',
      'Admission errors',
      'Admission latency p99 by webhook',
      'Reconcile rate by controller',
      'Reconcile errors by controller',
      'Reconcile latency p99',
      'Work queue depth',
      'CPU',
      'Memory (RSS)',
    ]);
    const ids = d.panels.map((p: Json) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("queries controller-runtime's metric names (both flavours), the Lease and the webhooks of the install", () => {
    const text = exprs(dashboardOf(synth('upstream'))).join('\n');
    for (const metric of [
      'leader_election_master_status',
      'controller_runtime_webhook_requests_total',
      'controller_runtime_webhook_latency_seconds_bucket',
      'controller_runtime_reconcile_total',
      'controller_runtime_reconcile_errors_total',
      'controller_runtime_reconcile_time_seconds_bucket',
      'workqueue_depth',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'kube_deployment_status_replicas_available',
      'apiserver_admission_webhook_rejection_count',
    ]) {
      expect(text).toContain(`${metric}{`);
    }
    expect(text).toContain('name="kruise-manager"');
    expect(text).toContain('deployment=~"kruise-controller-manager"');
    expect(text).toMatch(/name=~"[^"]*vpod\\\\.kb\\\\.io/);
  });

  it('names the prop and the fix for a bad sidecar label', () => {
    const chart = new Chart(Testing.app(), 'bad');
    expect(
      () =>
        new ManagerDashboard(chart, 'd', {
          namespace: 'ns',
          deployments: ['x'],
          leaseName: 'l',
          webhookNames: [],
          sidecarLabel: 'bad key!',
        }),
    ).toThrow(/monitoring.dashboard.sidecarLabel: is not a label key \(got "bad key!"\). Fix:/);
  });
});
