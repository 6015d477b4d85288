import { afterEach, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { Counter } from 'prom-client';
import { createMetricsRegistry, MetricsServer } from '../../../lib/runtime/metrics.js';
import { quietLogger } from './tls-fixtures.js';

const servers: MetricsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

function get(port: number, path: string, method = 'GET') {
  return new Promise<{ status: number; type?: string; body: string }>((resolve, reject) => {
    request({ host: '127.0.0.1', port, path, method }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => {
          body += d;
        })
        .on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('metrics', () => {
  it('creates an isolated registry with process metrics and constant labels', async () => {
    const a = createMetricsRegistry({ labels: { replica: 'r1' } });
    const b = createMetricsRegistry({ processMetrics: false });
    new Counter({ name: 'only_in_a_total', help: 'h', registers: [a] }).inc();
    const text = await a.metrics();
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(text).toContain('only_in_a_total{replica="r1"} 1');
    expect(await b.metrics()).not.toContain('only_in_a_total');
    expect(await b.metrics()).not.toContain('process_cpu_user_seconds_total');
  });

  it('serves /metrics in the Prometheus text format, and nothing else', async () => {
    const registry = createMetricsRegistry();
    new Counter({ name: 'kruise_test_total', help: 'h', registers: [registry] }).inc(3);
    const server = new MetricsServer({ registry, logger: quietLogger(), port: 0, host: '127.0.0.1' });
    servers.push(server);
    await server.start();
    const res = await get(server.port(), '/metrics');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.body).toContain('# TYPE kruise_test_total counter\nkruise_test_total 3');
    expect((await get(server.port(), '/metrics?x=1')).status).toBe(200);
    expect((await get(server.port(), '/other')).status).toBe(404);
    expect((await get(server.port(), '/metrics', 'POST')).status).toBe(405);
    expect(await get(server.port(), '/metrics', 'HEAD')).toMatchObject({ status: 200, body: '' });
  });
});
