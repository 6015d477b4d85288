import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { Metrics, Names } from '../../contract.js';
import { checkPositiveInt, propError, wholeSeconds } from '../core/errors.js';

/** Thresholds and labels of {@link ManagerAlerts}. */
export interface AlertOptions {
  /**
   * Labels of the PrometheusRule, to match your Prometheus' `ruleSelector`.
   * @default - none
   */
  readonly ruleLabels?: { [key: string]: string };
  /**
   * Share of admission requests answered with an error (non-2xx) that fires KruiseWebhookErrors.
   * @default 0.05
   */
  readonly webhookErrorRatio?: number;
  /**
   * p99 admission latency that fires KruiseWebhookLatencyHigh (the API server waits at most the
   * webhook timeout, 10 s by default, on every matching write).
   * @default Duration.seconds(1)
   */
  readonly webhookP99Latency?: Duration;
  /**
   * Leader changes (leader_election_master_status transitions, both sides counted) in 30 minutes
   * that fire KruiseManagerLeaderFlapping.
   * @default 6
   */
  readonly leaderChanges?: number;
  /**
   * Warn this long before the serving certificate expires.
   * @default Duration.days(7)
   */
  readonly certificateExpiry?: Duration;
  /**
   * Work-queue depth that, while still growing, fires KruiseWorkQueueGrowing.
   * @default 100
   */
  readonly queueDepth?: number;
}

/** Props of {@link ManagerAlerts}. */
export interface ManagerAlertsProps extends AlertOptions {
  /** Install namespace (where the rule lives and the metrics come from). */
  readonly namespace: string;
  /** The manager Deployments (kube-state-metrics' `deployment` label). */
  readonly deployments: string[];
  /** Replicas each Deployment runs; KruiseManagerReplicasLow fires below min(2, replicas). */
  readonly replicas: number;
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

/** One alerting rule of the PrometheusRule. */
export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: { [key: string]: string };
  readonly annotations: { [key: string]: string };
}

const re = (names: string[]) => names.map((n) => n.replace(/[.\\+*?()[\]{}|^$]/g, '\\\\$&')).join('|');

/**
 * The alerting rules (pure: the construct renders them, the tests run them through promtool).
 * Metric names are controller-runtime's, which both flavours export; replicas and zones come
 * from kube-state-metrics, unreachable webhooks from the API server's own metrics.
 */
export function managerAlertRules(props: ManagerAlertsProps): AlertRule[] {
  const ns = props.namespace;
  const sel = `namespace="${ns}", job="${props.metricsJob ?? 'kruise-manager-metrics'}"`;
  const errorRatio = props.webhookErrorRatio ?? 0.05;
  if (!(errorRatio > 0 && errorRatio < 1))
    throw propError(
      'monitoring.alerts.webhookErrorRatio',
      errorRatio,
      'must be a ratio between 0 and 1',
      'use e.g. 0.05 for 5%',
    );
  const p99 = (props.webhookP99Latency ?? Duration.seconds(1)).toMilliseconds() / 1000;
  if (!(p99 > 0))
    throw propError(
      'monitoring.alerts.webhookP99Latency',
      `${p99}s`,
      'must be positive',
      'use e.g. Duration.millis(500)',
    );
  const changes = props.leaderChanges ?? 6;
  checkPositiveInt('monitoring.alerts.leaderChanges', changes);
  const expiry = wholeSeconds('monitoring.alerts.certificateExpiry', props.certificateExpiry ?? Duration.days(7));
  const depth = props.queueDepth ?? 100;
  checkPositiveInt('monitoring.alerts.queueDepth', depth);
  const minReady = Math.min(2, props.replicas);
  const leader = `leader_election_master_status{${sel}, name="${props.leaseName}"}`;
  const deployments = `namespace="${ns}", deployment=~"${re(props.deployments)}"`;
  const doctor = `Run \`kruise-ha doctor -n ${ns}\` for the cause and the fix.`;
  const rule = (
    alert: string,
    severity: string,
    expr: string,
    forDuration: string,
    summary: string,
    description: string,
  ): AlertRule => ({
    alert,
    expr,
    for: forDuration,
    labels: { severity },
    annotations: { summary, description: `${description} ${doctor}` },
  });
  return [
    rule(
      'KruiseManagerNoLeader',
      'critical',
      `(max(${leader}) or on() vector(0)) < 1`,
      '2m',
      'No kruise-manager replica leads',
      `No replica in ${ns} holds Lease ${props.leaseName}: Kruise controllers do not run (admission still works).`,
    ),
    rule(
      'KruiseManagerLeaderFlapping',
      'warning',
      `sum(changes(${leader}[30m])) >= ${changes}`,
      '0m',
      'kruise-manager leadership keeps changing',
      'Leaders lose their Lease often: CPU starvation, API-server latency or a too tight LeaseTiming. Every change pauses the controllers.',
    ),
    rule(
      'KruiseWebhookErrors',
      'critical',
      `sum by (webhook) (rate(controller_runtime_webhook_requests_total{${sel}, code!~"2.."}[5m])) / sum by (webhook) (rate(controller_runtime_webhook_requests_total{${sel}}[5m])) > ${errorRatio}`,
      '5m',
      'Kruise webhook {{ $labels.webhook }} answers with errors',
      `More than ${errorRatio * 100}% of admission requests to {{ $labels.webhook }} fail: matching writes are rejected (failurePolicy Fail) or skip Kruise's policy (Ignore).`,
    ),
    rule(
      'KruiseWebhookUnreachable',
      'critical',
      `sum by (name) (rate(apiserver_admission_webhook_rejection_count{name=~"${re(props.webhookNames)}", error_type="calling_webhook_error"}[5m])) > 0`,
      '2m',
      'The API server cannot call Kruise webhook {{ $labels.name }}',
      `Writes fail with "failed calling webhook {{ $labels.name }}" (no endpoints available for service ${Names.webhookService}, timeouts or TLS errors): no manager replica answers.`,
    ),
    rule(
      'KruiseWebhookLatencyHigh',
      'warning',
      `histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket{${sel}}[5m]))) > ${p99}`,
      '10m',
      'Kruise webhook {{ $labels.webhook }} is slow',
      `p99 admission latency of {{ $labels.webhook }} is above ${p99}s: every matching write waits on it.`,
    ),
    rule(
      'KruiseManagerReplicasLow',
      'critical',
      `kube_deployment_status_replicas_available{${deployments}} < ${minReady}`,
      '5m',
      `Fewer than ${minReady} kruise-manager replicas are available`,
      `Deployment {{ $labels.deployment }} has {{ $value }} available replicas: one more failure stops admission cluster-wide.`,
    ),
    rule(
      'KruiseWebhookCertificateExpiring',
      'warning',
      `(min(${Metrics.certificateExpiry}{${sel}}) or min(certmanager_certificate_expiration_timestamp_seconds{namespace="${ns}", name="${Names.webhookSecret}"})) - time() < ${expiry}`,
      '15m',
      'The Kruise webhook serving certificate expires soon',
      `The certificate in ${ns}/${Names.webhookSecret} expires in less than ${expiry / 86400} days and was not rotated.`,
    ),
    rule(
      'KruiseWorkQueueGrowing',
      'warning',
      `sum by (name) (workqueue_depth{${sel}}) > ${depth} and sum by (name) (deriv(workqueue_depth{${sel}}[10m])) > 0`,
      '15m',
      'Kruise controller queue {{ $labels.name }} keeps growing',
      `More than ${depth} items wait in {{ $labels.name }} and the queue still grows: the controller falls behind.`,
    ),
    rule(
      'KruiseManagerNotSpreadOverZones',
      'warning',
      `count(count by (label_topology_kubernetes_io_zone) (kube_pod_info{namespace="${ns}", created_by_kind="ReplicaSet", created_by_name=~"(${re(props.deployments)})-[a-z0-9]+"} * on(node) group_left(label_topology_kubernetes_io_zone) kube_node_labels)) < 2 and on() count(kube_pod_info{namespace="${ns}", created_by_kind="ReplicaSet", created_by_name=~"(${re(props.deployments)})-[a-z0-9]+"}) >= 2`,
      '30m',
      'kruise-manager replicas share one zone',
      'Every replica runs in one zone (or on nodes without a topology.kubernetes.io/zone label): one zone outage stops admission cluster-wide.',
    ),
  ];
}

/**
 * prometheus-operator `PrometheusRule` with the alerts that cover kruise-manager's known failure
 * modes. Needs the PrometheusRule CRD; replica and zone alerts need kube-state-metrics (zones:
 * `--metric-labels-allowlist=nodes=[topology.kubernetes.io/zone]`).
 */
export class ManagerAlerts extends Construct {
  public readonly apiObject: ApiObject;
  public readonly rules: AlertRule[];

  constructor(scope: Construct, id: string, props: ManagerAlertsProps) {
    super(scope, id);
    this.rules = managerAlertRules(props);
    this.apiObject = new ApiObject(this, 'PrometheusRule', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'kruise-manager', namespace: props.namespace, labels: props.ruleLabels },
      spec: { groups: [{ name: 'kruise-manager', rules: this.rules }] },
    });
  }
}
