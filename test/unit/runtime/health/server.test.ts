import { afterEach, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { HealthServer } from '../../../../lib/runtime/health/server.js';
import { quietLogger } from '../tls-fixtures.js';

const servers: HealthServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function start(): Promise<{
  health: HealthServer;
  get: (path: string, method?: string) => Promise<{ status: number; body: string }>;
}> {
  const health = new HealthServer({ logger: quietLogger(), port: 0, host: '127.0.0.1' });
  servers.push(health);
  await health.start();
  const get = (path: string, method = 'GET') =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port: health.port(), path, method }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => {
            body += d;
          })
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
        .on('error', reject)
        .end();
    });
  return { health, get };
}

describe('HealthServer', () => {
  it('aggregates readiness checks: ok when all pass, 500 listing the failing ones otherwise', async () => {
    const { health, get } = await start();
    let cacheSynced = false;
    health.addReadinessCheck('certs', () => undefined);
    health.addReadinessCheck('informers', () => {
      if (!cacheSynced) throw new Error('pods cache not synced');
    });
    expect(await get('/readyz')).toEqual({
      status: 500,
      body: '[+]shutdown ok\n[+]certs ok\n[-]informers failed: pods cache not synced\nreadyz check failed\n',
    });
    cacheSynced = true;
    expect(await get('/readyz')).toEqual({ status: 200, body: 'ok\n' });
    expect(await get('/readyz?verbose')).toEqual({
      status: 200,
      body: '[+]shutdown ok\n[+]certs ok\n[+]informers ok\nreadyz check passed\n',
    });
  });

  it('serves single checks, honours exclude, and 404s unknown ones', async () => {
    const { health, get } = await start();
    health.addReadinessCheck('broken', () => {
      throw new Error('nope');
    });
    health.addReadinessCheck('fine', () => undefined);
    expect((await get('/readyz/fine')).status).toBe(200);
    expect(await get('/readyz/broken')).toEqual({ status: 500, body: '[-]broken failed: nope\nreadyz check failed\n' });
    expect((await get('/readyz?exclude=broken')).status).toBe(200);
    expect((await get('/readyz/missing')).status).toBe(404);
    expect((await get('/readyz/fine/extra')).status).toBe(404);
    expect((await get('/elsewhere')).status).toBe(404);
    expect((await get('/readyz', 'POST')).status).toBe(405);
  });

  it('keeps liveness separate from readiness', async () => {
    const { health, get } = await start();
    health.addReadinessCheck('not-yet', () => {
      throw new Error('warming up');
    });
    health.addLivenessCheck('event-loop', () => undefined);
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/readyz')).status).toBe(500);
    health.addLivenessCheck('watch', () => {
      throw new Error('no events for 10m');
    });
    expect(await get('/healthz')).toEqual({
      status: 500,
      body: '[+]event-loop ok\n[-]watch failed: no events for 10m\nhealthz check failed\n',
    });
  });

  it('fails readiness at once after markShuttingDown(), leaving liveness alone', async () => {
    const { health, get } = await start();
    expect((await get('/readyz')).status).toBe(200);
    health.markShuttingDown();
    expect(await get('/readyz')).toEqual({
      status: 500,
      body: '[-]shutdown failed: shutting down: leaving the Service endpoints before stopping\nreadyz check failed\n',
    });
    expect((await get('/healthz')).status).toBe(200);
  });
});
