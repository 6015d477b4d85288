import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { Metrics, Names } from '../../contract.js';
import { checkDnsLabel, propError } from '../core/errors.js';
import { isValidLabelKey, isValidLabelValue } from '../../contract.js';

/** Where and how the Grafana dashboard is rendered. */
export interface DashboardOptions {
  /**
   * Namespace of the ConfigMap (where Grafana's sidecar looks; it may watch all namespaces).
   * @default - the install namespace
   */
  readonly configMapNamespace?: string;
  /**
   * Label Grafana's dashboard sidecar selects ConfigMaps by (the Helm chart's `sidecar.dashboards.label`).
   * @default 'grafana_dashboard'
   */
  readonly sidecarLabel?: string;
  /**
   * Value of the sidecar label (`sidecar.dashboards.labelValue`).
   * @default '1'
   */
  readonly sidecarLabelValue?: string;
  /**
   * Grafana folder (the sidecar's `grafana_folder` annotation, with `folderAnnotation` set).
   * @default - the sidecar's default folder
   */
  readonly folder?: string;
}

/** Props of {@link ManagerDashboard}. */
export interface ManagerDashboardProps extends DashboardOptions {
  /** Install namespace (the dashboard's default `namespace` variable). */
  readonly namespace: string;
  /** The manager Deployments (kube-state-metrics' `deployment` label). */
  readonly deployments: string[];
  /** The Lease name (`leader_election_master_status{name}`). */
  readonly leaseName: string;
  /** The webhook entry names (the API server's `apiserver_admission_webhook_*{name}`). */
  readonly webhookNames: string[];
  /**
   * The `job` label of the scraped manager metrics (prometheus-operator uses the Service name).
   * @default 'kruise-manager-metrics'
   */
  readonly metricsJob?: string;
}

/** The dashboard's file name in the ConfigMap, and its uid in Grafana. */
const DASHBOARD_FILE = 'kruise-manager.json';
const UID = 'kruise-manager';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Panel = Record<string, any>;

const ds = { type: 'prometheus', uid: '${datasource}' };
const regex = (names: string[]) => names.map((n) => n.replace(/[.\\+*?()[\]{}|^$]/g, '\\\\$&')).join('|');

/**
 * The Grafana dashboard (pure JSON: the construct renders it, the tests validate it against
 * Grafana's schema). Both flavours export controller-runtime's metric names, so one dashboard
 * serves both; replicas come from kube-state-metrics, calling errors from the API server.
 */
function managerDashboard(props: ManagerDashboardProps): Record<string, unknown> {
  const sel = 'namespace="$namespace", job="$job"';
  const leader = `leader_election_master_status{${sel}, name="${props.leaseName}"}`;
  let id = 0;
  let y = 0;
  const panels: Panel[] = [];
  const row = (title: string) => {
    panels.push({ type: 'row', id: ++id, title, collapsed: false, gridPos: { h: 1, w: 24, x: 0, y }, panels: [] });
    y += 1;
  };
  const target = (expr: string, legendFormat: string, refId: string) => ({
    datasource: ds,
    refId,
    expr,
    legendFormat,
    range: true,
  });
  const panel = (
    type: 'timeseries' | 'stat',
    title: string,
    description: string,
    w: number,
    x: number,
    targets: Array<[string, string]>,
    unit: string,
    extra: Panel = {},
  ): Panel => ({
    type,
    id: ++id,
    title,
    description,
    datasource: ds,
    gridPos: { h: 8, w, x, y },
    targets: targets.map(([expr, legend], i) => target(expr, legend, String.fromCharCode(65 + i))),
    fieldConfig: { defaults: { unit, ...(extra.defaults ?? {}) }, overrides: [] },
    options:
      type === 'stat'
        ? {
            reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
            textMode: extra.textMode ?? 'auto',
            colorMode: 'value',
            graphMode: 'none',
            justifyMode: 'auto',
            orientation: 'auto',
          }
        : {
            legend: { displayMode: 'table', placement: 'bottom', showLegend: true, calcs: ['lastNotNull', 'max'] },
            tooltip: { mode: 'multi', sort: 'desc' },
          },
  });
  const place = (...ps: Panel[]) => {
    panels.push(...ps);
    y += 8;
  };
  const thresholds = (steps: Array<[number | null, string]>) => ({
    thresholds: { mode: 'absolute', steps: steps.map(([value, color]) => ({ value, color })) },
  });
  const deployments = `namespace="$namespace", deployment=~"${regex(props.deployments)}"`;

  row('Control plane');
  place(
    panel(
      'stat',
      'Leader',
      `The replica holding Lease ${props.leaseName}; empty means no controller runs.`,
      6,
      0,
      [[`max by (pod) (${leader}) == 1`, '{{pod}}']],
      'none',
      { textMode: 'name' },
    ),
    panel(
      'timeseries',
      'Leader changes (30 min window)',
      'Transitions of leader_election_master_status (both sides of a handover count).',
      6,
      6,
      [[`sum(changes(${leader}[30m]))`, 'changes']],
      'short',
    ),
    panel(
      'stat',
      'Replicas ready',
      'Available replicas per Deployment (kube-state-metrics) and replicas Prometheus scrapes.',
      6,
      12,
      [
        [`sum by (deployment) (kube_deployment_status_replicas_available{${deployments}})`, '{{deployment}} available'],
        [`sum by (deployment) (kube_deployment_spec_replicas{${deployments}})`, '{{deployment}} desired'],
        [`count(up{${sel}} == 1)`, 'scraped'],
      ],
      'none',
      {
        defaults: thresholds([
          [null, 'red'],
          [2, 'green'],
        ]),
      },
    ),
    panel(
      'stat',
      'Certificate expires in',
      `Serving certificate (runtime: ${Metrics.certificateExpiry}; cert-manager: certmanager_certificate_expiration_timestamp_seconds). Upstream's self-managed 10-year certificate has no metric: run kruise-ha doctor.`,
      6,
      18,
      [
        [`min(${Metrics.certificateExpiry}{${sel}}) - time()`, 'runtime'],
        [
          `min(certmanager_certificate_expiration_timestamp_seconds{namespace="$namespace", name="${Names.webhookSecret}"}) - time()`,
          'cert-manager',
        ],
      ],
      'dtdurations',
      {
        defaults: thresholds([
          [null, 'red'],
          [7 * 86400, 'orange'],
          [30 * 86400, 'green'],
        ]),
      },
    ),
  );
  row('Admission');
  const hooks = `${sel}, webhook=~"$webhook"`;
  place(
    panel(
      'timeseries',
      'Admission rate by webhook',
      'Requests per second each webhook path answers.',
      8,
      0,
      [
        [
          `sum by (webhook) (rate(controller_runtime_webhook_requests_total{${hooks}}[$__rate_interval]))`,
          '{{webhook}}',
        ],
      ],
      'reqps',
    ),
    panel(
      'timeseries',
      'Admission errors',
      'Non-2xx answers per path, and calls the API server could not make (no endpoints, timeouts, TLS): those never reach a replica.',
      8,
      8,
      [
        [
          `sum by (webhook, code) (rate(controller_runtime_webhook_requests_total{${hooks}, code!~"2.."}[$__rate_interval]))`,
          '{{webhook}} {{code}}',
        ],
        [
          `sum by (name, error_type) (rate(apiserver_admission_webhook_rejection_count{name=~"${regex(props.webhookNames)}", error_type="calling_webhook_error"}[$__rate_interval]))`,
          'API server: {{name}} unreachable',
        ],
      ],
      'reqps',
    ),
    panel(
      'timeseries',
      'Admission latency p99 by webhook',
      'Every matching write waits this long.',
      8,
      16,
      [
        [
          `histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket{${hooks}}[$__rate_interval])))`,
          '{{webhook}}',
        ],
      ],
      's',
    ),
  );
  row('Controllers (leader only)');
  const ctrl = `${sel}, controller=~"$controller"`;
  place(
    panel(
      'timeseries',
      'Reconcile rate by controller',
      'Reconciles per second, by result.',
      6,
      0,
      [
        [
          `sum by (controller, result) (rate(controller_runtime_reconcile_total{${ctrl}}[$__rate_interval]))`,
          '{{controller}} {{result}}',
        ],
      ],
      'ops',
    ),
    panel(
      'timeseries',
      'Reconcile errors by controller',
      'Reconciles that returned an error (retried with backoff).',
      6,
      6,
      [
        [
          `sum by (controller) (rate(controller_runtime_reconcile_errors_total{${ctrl}}[$__rate_interval]))`,
          '{{controller}}',
        ],
      ],
      'ops',
    ),
    panel(
      'timeseries',
      'Reconcile latency p99',
      'Time per reconcile.',
      6,
      12,
      [
        [
          `histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{${ctrl}}[$__rate_interval])))`,
          '{{controller}}',
        ],
      ],
      's',
    ),
    panel(
      'timeseries',
      'Work queue depth',
      'Items waiting per controller queue; a queue that only grows means the controller falls behind.',
      6,
      18,
      [[`sum by (name) (workqueue_depth{${sel}, name=~"$controller"})`, '{{name}}']],
      'short',
    ),
  );
  row('Process');
  place(
    panel(
      'timeseries',
      'CPU',
      'CPU seconds per second, per replica.',
      12,
      0,
      [[`sum by (pod) (rate(process_cpu_seconds_total{${sel}}[$__rate_interval]))`, '{{pod}}']],
      'percentunit',
    ),
    panel(
      'timeseries',
      'Memory (RSS)',
      'Resident memory per replica.',
      12,
      12,
      [[`sum by (pod) (process_resident_memory_bytes{${sel}})`, '{{pod}}']],
      'bytes',
    ),
  );

  const custom = (name: string, label: string, value: string) => ({
    type: 'custom',
    name,
    label,
    query: value,
    current: { text: value, value },
    options: [{ text: value, value, selected: true }],
    hide: 0,
  });
  const labelValues = (name: string, label: string, metric: string) => ({
    type: 'query',
    name,
    label,
    datasource: ds,
    query: { query: `label_values(${metric}{${sel}}, ${label})`, refId: 'A' },
    refresh: 2,
    includeAll: true,
    multi: true,
    allValue: '.*',
    current: { text: 'All', value: '$__all' },
    sort: 1,
    hide: 0,
  });
  return {
    uid: UID,
    title: 'Kruise manager',
    description: 'kruise-manager control plane (kruise-ha): leader, admission, controllers, certificates, replicas.',
    tags: ['kruise', 'kruise-ha'],
    editable: true,
    graphTooltip: 1,
    timezone: 'browser',
    refresh: '30s',
    schemaVersion: 39,
    version: 1,
    time: { from: 'now-6h', to: 'now' },
    fiscalYearStartMonth: 0,
    liveNow: false,
    links: [],
    annotations: { list: [] },
    templating: {
      list: [
        {
          type: 'datasource',
          name: 'datasource',
          label: 'Prometheus',
          query: 'prometheus',
          current: { text: 'default', value: 'default' },
          hide: 0,
          refresh: 1,
          regex: '',
          options: [],
        },
        custom('namespace', 'Namespace', props.namespace),
        custom('job', 'Job', props.metricsJob ?? 'kruise-manager-metrics'),
        labelValues('webhook', 'webhook', 'controller_runtime_webhook_requests_total'),
        labelValues('controller', 'controller', 'controller_runtime_reconcile_total'),
      ],
    },
    panels,
  };
}

/** A ConfigMap carrying the Grafana dashboard, labelled for Grafana's dashboard sidecar. */
export class ManagerDashboard extends Construct {
  public readonly apiObject: ApiObject;
  /** The dashboard JSON (also the ConfigMap's `kruise-manager.json`). */
  public readonly dashboard: Record<string, unknown>;

  constructor(scope: Construct, id: string, props: ManagerDashboardProps) {
    super(scope, id);
    const label = props.sidecarLabel ?? 'grafana_dashboard';
    const value = props.sidecarLabelValue ?? '1';
    if (!isValidLabelKey(label))
      throw propError(
        'monitoring.dashboard.sidecarLabel',
        label,
        'is not a label key',
        "use Grafana's sidecar label, e.g. 'grafana_dashboard'",
      );
    if (!isValidLabelValue(value))
      throw propError('monitoring.dashboard.sidecarLabelValue', value, 'is not a label value', "use e.g. '1'");
    const ns = props.configMapNamespace ?? props.namespace;
    checkDnsLabel('monitoring.dashboard.configMapNamespace', ns);
    this.dashboard = managerDashboard(props);
    this.apiObject = new ApiObject(this, 'ConfigMap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'kruise-manager-dashboard',
        namespace: ns,
        labels: { [label]: value },
        ...(props.folder ? { annotations: { grafana_folder: props.folder } } : {}),
      },
      data: { [DASHBOARD_FILE]: JSON.stringify(this.dashboard, null, 2) },
    });
  }
}
