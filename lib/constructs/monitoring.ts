import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { Paths } from '../contract.js';
import { kplus } from './api.js';
import { wholeSeconds } from './errors.js';

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
}

/** Props of {@link ManagerMonitoring}. */
export interface ManagerMonitoringProps extends MonitoringOptions {
  readonly namespace: string;
  readonly selectorLabels: { [key: string]: string };
  readonly metricsPort: number;
  readonly name: string;
}

/** A metrics Service over every manager replica, and optionally a ServiceMonitor. */
export class ManagerMonitoring extends Construct {
  public readonly service: kplus.Service;
  public readonly apiObjects: ApiObject[];

  constructor(scope: Construct, id: string, props: ManagerMonitoringProps) {
    super(scope, id);
    this.service = new kplus.Service(this, 'Service', {
      metadata: { name: props.name, namespace: props.namespace, labels: { ...props.selectorLabels, 'kruise.io/metrics': 'true' } },
      type: kplus.ServiceType.CLUSTER_IP,
      ports: [{ name: 'metrics', port: props.metricsPort, targetPort: props.metricsPort }],
    });
    for (const [key, value] of Object.entries(props.selectorLabels)) this.service.selectLabel(key, value);
    this.apiObjects = [ApiObject.of(this.service)];
    if (props.serviceMonitor) {
      this.apiObjects.push(new ApiObject(this, 'ServiceMonitor', {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: props.name, namespace: props.namespace, labels: props.serviceMonitorLabels },
        spec: {
          selector: { matchLabels: { ...props.selectorLabels, 'kruise.io/metrics': 'true' } },
          endpoints: [{ port: 'metrics', path: Paths.metrics, interval: `${wholeSeconds('monitoring.interval', props.interval ?? Duration.seconds(30))}s` }],
        },
      }));
    }
  }
}
