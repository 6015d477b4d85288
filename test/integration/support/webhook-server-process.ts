/**
 * The runtime's webhook server in a process of its own (real TLS, the real pod injection webhook
 * over a fixed SidecarSet), so a test can load it without sharing its event loop. Reports its
 * port and CA over IPC and answers `lag` messages with the event-loop delay it measured itself
 * (perf_hooks.monitorEventLoopDelay) since the previous `lag`. `LARGE_BODY_BYTES` sets the
 * server's largeBodyBytes: a value above the body limit turns the large-body path off.
 * `HANDLER_TIMEOUT_MS` sets its handlerTimeoutMs (how long a request may wait for its turn).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { realClock } from '../../../lib/runtime/clock.js';
import { Logger } from '../../../lib/runtime/log.js';
import { podInjectionWebhook } from '../../../lib/runtime/sidecarset/webhooks.js';
import type { SidecarSet } from '../../../lib/runtime/sidecarset/types.js';
import { WebhookServer } from '../../../lib/runtime/webhook/index.js';
import { makePki, tempDir, writePki } from '../../unit/runtime/tls-fixtures.js';

export const FIXTURE_SIDECAR: SidecarSet = {
  metadata: { name: 'proxy' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    containers: [{ name: 'proxy', image: 'registry.invalid/proxy:1' }],
  },
};

export interface FixtureReady {
  port: number;
  caPem: string;
}
export interface FixtureLag {
  maxMs: number;
  p99Ms: number;
}

async function main(): Promise<void> {
  const dir = tempDir('kruise-large-reviews-');
  const pki = await makePki();
  await writePki(dir.path, pki);
  const server = new WebhookServer({
    certDir: dir.path,
    logger: new Logger({}, 'error'),
    registry: new Registry(),
    port: 0,
    host: '127.0.0.1',
    largeBodyBytes: process.env.LARGE_BODY_BYTES ? Number(process.env.LARGE_BODY_BYTES) : undefined,
    handlerTimeoutMs: process.env.HANDLER_TIMEOUT_MS ? Number(process.env.HANDLER_TIMEOUT_MS) : undefined,
  });
  server.register(
    '/mutate-pod',
    podInjectionWebhook(
      { sidecarSets: () => [FIXTURE_SIDECAR], namespaceLabels: () => ({}) },
      'kruise-system',
      realClock,
    ),
  );
  await server.start();
  const lag = monitorEventLoopDelay({ resolution: 5 });
  lag.enable();
  process.on('message', (m) => {
    if (m !== 'lag') return;
    const reply: FixtureLag = { maxMs: lag.max / 1e6, p99Ms: lag.percentile(99) / 1e6 };
    lag.reset();
    process.send!(reply);
  });
  process.once('disconnect', () => {
    void server.stop(1_000).finally(() => {
      dir.remove();
      process.exit(0);
    });
  });
  process.send!({ port: server.port(), caPem: pki.ca.certPem } satisfies FixtureReady);
}

void main();
