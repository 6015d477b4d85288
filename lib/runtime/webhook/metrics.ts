/**
 * controller-runtime's webhook metrics, same names and labels, so existing dashboards and alerts
 * work unchanged. The `webhook` label is the registered path: unknown paths are never recorded,
 * which keeps label cardinality bounded no matter what clients send.
 */
import type { DropReason } from './limiter.js';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

interface Counts {
  active: number;
  idle: number;
  queued: number;
  silent: number;
}

export class WebhookMetrics {
  private readonly latency: Histogram<'webhook'>;
  private readonly requests: Counter<'webhook' | 'code'>;
  private readonly inFlight: Gauge<'webhook'>;
  private readonly dropped: Counter<'reason'>;
  private connections: () => Counts = () => ({ active: 0, idle: 0, queued: 0, silent: 0 });

  constructor(registry: Registry) {
    this.latency =
      existing(registry, 'controller_runtime_webhook_latency_seconds') ??
      new Histogram({
        name: 'controller_runtime_webhook_latency_seconds',
        help: 'Histogram of the latency of processing admission requests',
        labelNames: ['webhook'],
        // controller-runtime's buckets stop at 1s; a slow webhook must still land in a finite bucket.
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
        registers: [registry],
      });
    this.requests =
      existing(registry, 'controller_runtime_webhook_requests_total') ??
      new Counter({
        name: 'controller_runtime_webhook_requests_total',
        help: 'Total number of admission requests by HTTP status code.',
        labelNames: ['webhook', 'code'],
        registers: [registry],
      });
    this.inFlight =
      existing(registry, 'controller_runtime_webhook_requests_in_flight') ??
      new Gauge({
        name: 'controller_runtime_webhook_requests_in_flight',
        help: 'Current number of admission requests being served.',
        labelNames: ['webhook'],
        registers: [registry],
      });
    this.dropped =
      existing(registry, 'webhook_connections_dropped_total') ??
      new Counter({
        name: 'webhook_connections_dropped_total',
        help: 'Connections closed by the server to protect others: queue-full, queue-timeout, evicted (held a slot unused when a newcomer needed it), silent (sent nothing within the handshake timeout, or the oldest such when too many), slow-body (sent its body below the minimum rate or past the body deadline), handshake-timeout (did not finish its TLS handshake within the handshake timeout).',
        labelNames: ['reason'],
        registers: [registry],
      });
    const counts = () => this.connections();
    if (!existing(registry, 'webhook_connections')) {
      new Gauge({
        name: 'webhook_connections',
        help: 'Webhook connections: active (in a TLS handshake or a request), idle (open, neither), queued (sent their first bytes, waiting for a slot as bare sockets) and silent (connected, nothing received yet).',
        labelNames: ['state'],
        registers: [registry],
        collect() {
          const { active, idle, queued, silent } = counts();
          this.set({ state: 'active' }, active);
          this.set({ state: 'idle' }, idle);
          this.set({ state: 'queued' }, queued);
          this.set({ state: 'silent' }, silent);
        },
      });
    }
  }

  /** Where the connection gauge reads from (the running server's gate). */
  trackConnections(counts: () => Counts): void {
    this.connections = counts;
  }

  connectionDropped(reason: DropReason | 'slow-body' | 'handshake-timeout'): void {
    this.dropped.inc({ reason });
  }

  /**
   * Call when a request for `webhook` starts; call the returned function once with the HTTP
   * status sent, or `aborted` when the client left before a response was written.
   */
  begin(webhook: string, now: () => number): (code: number | 'aborted') => void {
    const started = now();
    this.inFlight.inc({ webhook });
    let done = false;
    return (code) => {
      if (done) return;
      done = true;
      this.inFlight.dec({ webhook });
      this.requests.inc({ webhook, code: String(code) });
      this.latency.observe({ webhook }, Math.max(0, now() - started) / 1000);
    };
  }
}

// Several servers (or a restarted one) may share one registry; registering twice would throw.
function existing<T>(registry: Registry, name: string): T | undefined {
  return registry.getSingleMetric(name) as T | undefined;
}
