import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

// controller-runtime's reconcile_time_seconds buckets.
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

class ControllerFamilies {
  readonly total: Counter<'controller' | 'result'>;
  readonly errors: Counter<'controller'>;
  readonly time: Histogram<'controller'>;
  readonly maxConcurrent: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;

  constructor(registry: Registry) {
    const registers = [registry];
    this.total = new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    });
    this.errors = new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    });
    this.time = new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.maxConcurrent = new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    });
    this.activeWorkers = new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    });
  }
}

const familiesByRegistry = new WeakMap<Registry, ControllerFamilies>();

/** controller-runtime's per-controller metrics, sharing one set of families per registry. */
export class ControllerMetrics {
  private readonly f: ControllerFamilies;
  private readonly labels: { controller: string };

  constructor(controller: string, registry: Registry, workers: number) {
    let families = familiesByRegistry.get(registry);
    if (!families) familiesByRegistry.set(registry, (families = new ControllerFamilies(registry)));
    this.f = families;
    this.labels = { controller };
    // Zero-initialised series, so rate() and absent() work before the first reconcile.
    for (const result of ['success', 'error', 'requeue', 'requeue_after'] as const)
      this.f.total.inc({ controller, result }, 0);
    this.f.errors.inc(this.labels, 0);
    this.f.maxConcurrent.set(this.labels, workers);
    this.f.activeWorkers.set(this.labels, 0);
  }

  started(): void {
    this.f.activeWorkers.inc(this.labels);
  }

  finished(result: ReconcileResult, seconds: number): void {
    this.f.activeWorkers.dec(this.labels);
    this.f.time.observe(this.labels, seconds);
    this.f.total.inc({ ...this.labels, result });
    if (result === 'error') this.f.errors.inc(this.labels);
  }
}
