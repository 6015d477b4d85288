import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import { Construct } from 'constructs';
import { Names, Paths } from '../../contract.js';
import { AlertOptions, ManagerAlerts } from './alerts.js';
import { k8s, kplus } from '../core/api.js';
import { DashboardOptions, ManagerDashboard } from './dashboard.js';
import { wholeSeconds } from '../core/errors.js';

/** Options for metrics scraping. */
export interface MonitoringOptions {
  /**
   * Render a prometheus-operator ServiceMonitor (needs its CRD in the cluster).
   * @default false
   */
  readonly serviceMonitor?: boolean;
  /**
   * Scrape interval of the ServiceMonitor.
   * @default Duration.seconds(30)
   */
  readonly interval?: Duration;
  /**
   * Labels of the ServiceMonitor (to match your Prometheus' selector).
   * @default - none
   */
  readonly serviceMonitorLabels?: { [key: string]: string };
  /**
   * Render the Grafana dashboard: a ConfigMap labelled for Grafana's dashboard sidecar (leader,
   * admission, controllers, certificate expiry, replicas, CPU and memory; both flavours).
   * @default false
   */
  readonly grafanaDashboard?: boolean;
  /** Where and how the dashboard is rendered. @default - see DashboardOptions */
  readonly dashboard?: DashboardOptions;
  /**
   * Render a prometheus-operator PrometheusRule with alerts for the known failure modes (no
   * leader, flapping, webhook errors, unreachable or slow webhooks, too few replicas, certificate
   * expiry, growing queues, replicas in one zone). Needs the PrometheusRule CRD.
   * @default false
   */
  readonly alertRules?: boolean;
  /** Thresholds and labels of the alerts. @default - see AlertOptions */
  readonly alerts?: AlertOptions;
}

/** Props of {@link ManagerMonitoring}. */
export interface ManagerMonitoringProps extends MonitoringOptions {
  readonly namespace: string;
  readonly selectorLabels: { [key: string]: string };
  readonly metricsPort: number;
  /** Name of the metrics Service (the scraped `job`). */
  readonly name: string;
  /** The manager Deployments. @default - none (no dashboard or alerts) */
  readonly deployments?: string[];
  /** Replicas per Deployment. @default 2 */
  readonly replicas?: number;
  /** The leader-election Lease. @default - the contract's Names.leaderElectionId ('kruise-manager') */
  readonly leaseName?: string;
  /** The webhook entry names. @default - none */
  readonly webhookNames?: string[];
}

/** A metrics Service over every manager replica, and optionally a ServiceMonitor. */
export class ManagerMonitoring extends Construct {
  public readonly service: kplus.Service;
  public readonly apiObjects: ApiObject[];
  public readonly dashboard?: ManagerDashboard;
  public readonly alerts?: ManagerAlerts;

  /**
   * Created by KruiseManager only, from resolved values: read it back from there.
   * @internal
   */
  public static _create(scope: Construct, id: string, props: ManagerMonitoringProps): ManagerMonitoring {
    return new ManagerMonitoring(scope, id, props);
  }

  private constructor(scope: Construct, id: string, props: ManagerMonitoringProps) {
    super(scope, id);
    this.service = new kplus.Service(this, 'Service', {
      metadata: {
        name: props.name,
        namespace: props.namespace,
        labels: { ...props.selectorLabels, 'kruise.io/metrics': 'true' },
      },
      type: kplus.ServiceType.CLUSTER_IP,
      ports: [{ name: 'metrics', port: props.metricsPort, targetPort: props.metricsPort }],
    });
    for (const [key, value] of Object.entries(props.selectorLabels)) this.service.selectLabel(key, value);
    // By name: the roles of the split topology serve metrics on different ports (cdk8s-plus
    // takes a number only; the typed L1 object re-serializes the patch, so an IntOrString).
    ApiObject.of(this.service).addJsonPatch(
      JsonPatch.replace('/spec/ports/0/targetPort', k8s.IntOrString.fromString('metrics')),
    );
    this.apiObjects = [ApiObject.of(this.service)];
    if (props.serviceMonitor) {
      this.apiObjects.push(
        new ApiObject(this, 'ServiceMonitor', {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'ServiceMonitor',
          metadata: { name: props.name, namespace: props.namespace, labels: props.serviceMonitorLabels },
          spec: {
            selector: { matchLabels: { ...props.selectorLabels, 'kruise.io/metrics': 'true' } },
            endpoints: [
              {
                port: 'metrics',
                path: Paths.metrics,
                interval: `${wholeSeconds('monitoring.interval', props.interval ?? Duration.seconds(30))}s`,
              },
            ],
          },
        }),
      );
    }
    const watched = {
      namespace: props.namespace,
      deployments: props.deployments ?? [],
      leaseName: props.leaseName ?? Names.leaderElectionId,
      webhookNames: props.webhookNames ?? [],
      metricsJob: props.name,
    };
    if (props.grafanaDashboard) {
      this.dashboard = new ManagerDashboard(this, 'Dashboard', { ...props.dashboard, ...watched });
      this.apiObjects.push(this.dashboard.apiObject);
    }
    if (props.alertRules) {
      this.alerts = new ManagerAlerts(this, 'Alerts', { ...props.alerts, ...watched, replicas: props.replicas ?? 2 });
      this.apiObjects.push(this.alerts.apiObject);
    }
  }
}
