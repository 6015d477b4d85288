import { Duration } from 'cdk8s';
import { k8s, kplus } from '../core/api.js';
import type { LeaseTiming } from './lease-timing.js';
import type { LogFormat, LogLevel } from './logging.js';

/**
 * Pull policy of every container this library renders. Its images are pinned (a release tag, or
 * a content-addressed tag for the runtime), so `IfNotPresent` pulls each once per node and a
 * control-plane pod restarts even while the registry is unreachable; `Always` would make every
 * restart of the admission webhook, which pod creation waits on, depend on the registry.
 */
export const IMAGE_PULL_POLICY = kplus.ImagePullPolicy.IF_NOT_PRESENT;

/**
 * client-go's debug switch (upstream kruise-manager and kruise-daemon): every informer keeps a
 * deep copy of each cached object and panics when code mutates the cache. Memory doubles.
 */
export const KUBE_CACHE_MUTATION_DETECTOR = 'KUBE_CACHE_MUTATION_DETECTOR';

/** Ports of the manager container; all three must differ. */
export interface ManagerPorts {
  /**
   * HTTPS admission webhook port.
   * @default 9876
   */
  readonly webhook?: number;
  /**
   * Prometheus metrics port.
   * @default 8080
   */
  readonly metrics?: number;
  /**
   * Health port serving `/readyz` and `/healthz`.
   * @default 8000
   */
  readonly health?: number;
  /**
   * Go pprof listener, bound and declared as a container port only when `pprof` is true.
   * @default 8090
   */
  readonly pprof?: number;
}

/** Leader election of the controllers (client-go semantics). */
export interface LeaderElectionOptions {
  /**
   * Namespace of the Lease.
   * @default - the install namespace
   */
  readonly namespace?: string;
  /**
   * Name of the Lease.
   * @default 'kruise-manager'
   */
  readonly id?: string;
  /**
   * Lease duration, renew deadline and retry period together, as a named trade-off. Give this
   * or the three durations below, not both.
   * @default LeaseTiming.standard()
   */
  readonly timing?: LeaseTiming;
  /**
   * How long a standby waits, after it last saw the Lease change, before taking over.
   * @default Duration.seconds(15)
   */
  readonly leaseDuration?: Duration;
  /**
   * How long the leader keeps acting while it fails to renew.
   * @default Duration.seconds(10)
   */
  readonly renewDeadline?: Duration;
  /**
   * Interval between acquire and renew attempts.
   * @default Duration.seconds(2)
   */
  readonly retryPeriod?: Duration;
}

/** Pod-level options shared by every manager Deployment. */
export interface ManagerPodOptions {
  /**
   * Use the node's network so admission never depends on the CNI (upstream issues #908,
   * #1958). Declared container ports become host ports: one replica per node, and no two
   * programs on one node may share a port.
   * @default - true for KruiseManager; false for Operator (its ports would collide on a node with
   * Kruise's and other operators')
   */
  readonly hostNetwork?: boolean;
  /**
   * Container ports.
   * @default - webhook 9876, metrics 8080, health 8000
   */
  readonly ports?: ManagerPorts;
  /**
   * Container resources. Ephemeral storage counts the `/tmp` and `/log` emptyDirs and the
   * container's logs.
   * @default - requests 100m CPU / 256Mi memory / 64Mi ephemeral storage, limits 500m CPU / 512Mi memory / 512Mi
   * ephemeral storage
   */
  readonly resources?: kplus.ContainerResources;
  /**
   * PriorityClass of the manager pods, so they are scheduled before (and evicted after)
   * the workloads whose admission they serve.
   * @default 'system-cluster-critical'
   */
  readonly priorityClassName?: string;
  /**
   * Feature gates, rendered as `--feature-gates=A=true,B=false` (sorted), merged over the
   * flavour's: upstream starts from ImagePullJobGate=true (the chart's) plus the gates the
   * chosen certificates and uninstall protection need; the runtime from none.
   * @default - upstream: ImagePullJobGate, EnableExternalCerts with cert-manager, and the
   * deletion-protection gates of the default uninstall protection; runtime: none
   */
  readonly featureGates?: { [gate: string]: boolean };
  /**
   * Concurrent reconciles per controller, rendered as `--<controller>-workers=N`. Keys are
   * controller names (lower-case words joined by "-"): for the upstream image, a controller whose
   * `--<name>-workers` flag the chosen release has; for the runtime image, one of the controllers
   * it carries (`sidecarset`, `workloadspread`). Any other name is refused at synth, since the
   * binary would refuse the flag at start.
   * @default - the manager's defaults (3 for upstream controllers and the runtime's)
   */
  readonly controllerWorkers?: { [controller: string]: number };
  /**
   * Node labels the pods must match.
   * @default - none
   */
  readonly nodeSelector?: { [label: string]: string };
  /**
   * Node affinity of the pods (the chart's `manager.nodeAffinity`), beside `nodeSelector`: a
   * node must match both. Hostname anti-affinity between the replicas is always rendered.
   * @default - none
   */
  readonly nodeAffinity?: k8s.NodeAffinity;
  /**
   * Tolerations of the pods.
   * @default - none
   */
  readonly tolerations?: k8s.Toleration[];
  /**
   * How much the manager logs: `LogLevel.verbosity(n)` for the upstream image (klog `--v`),
   * `LogLevel.debug()`/`info()`/`warn()`/`error()` for the runtime (`--log-level`).
   * @default - upstream: LogLevel.verbosity(4) (the chart's); runtime: LogLevel.info()
   */
  readonly logLevel?: LogLevel;
  /**
   * Format of the log lines (`--logging-format`).
   * @default - upstream: klog text; runtime: JSON (its only format)
   */
  readonly logFormat?: LogFormat;
  /**
   * Upstream image only: how often the informers replay every cached object to the controllers
   * (`--sync-period`), whole seconds.
   * @default - no periodic resync (`--sync-period=0`, as the chart)
   */
  readonly resyncPeriod?: Duration;
  /**
   * Extra labels on every object this construct renders, and on the pods.
   * @default - none
   */
  readonly labels?: { [key: string]: string };
  /**
   * Extra annotations on the pods.
   * @default - none
   */
  readonly podAnnotations?: { [key: string]: string };
  /**
   * Names of Secrets used to pull the images (private registries).
   * @default - none
   */
  readonly imagePullSecrets?: string[];
  /**
   * Grace period after SIGTERM: covers the admission drain window and in-flight reconciles.
   * @default Duration.seconds(30)
   */
  readonly terminationGracePeriod?: Duration;
  /**
   * Serve Go's pprof profiling endpoints (upstream image only). Upstream kruise-manager serves
   * them by default on every interface of `:8090`, which with host network is an undeclared,
   * unauthenticated port on the node; so this library renders `--enable-pprof=false` unless
   * asked. `true` binds `--pprof-addr=:<ports.pprof>` and declares that container port (a host
   * port with host network). Anyone who reaches that address can read heap and goroutine
   * profiles; `networkPolicy` does not open it, `kubectl port-forward` reaches it.
   * @default false
   */
  readonly pprof?: boolean;
  /**
   * Extra arguments appended to the manager's command line. The runtime image parses only its own
   * flags, so any other is refused at synth; for the upstream image, a flag another release has
   * but the chosen one lacks is refused.
   * @default - none
   */
  readonly extraArgs?: string[];
}
