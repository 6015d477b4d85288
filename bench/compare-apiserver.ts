/**
 * Compare, through the API server: pod creates with `dryRun=All` at fixed rates, so every create
 * runs admission (the API server calls the manager's pod webhook, which injects the sidecar) but
 * nothing is stored. What a user's `kubectl apply` or a ReplicaSet controller waits for.
 *
 * A lean generator: one keep-alive HTTPS agent and pre-serialised bodies, no client library in
 * the hot path, so the generator costs the shared cores as little as it can.
 */
import type { KubeConfig, V1Pod } from '@kubernetes/client-node';
import { Agent, request, type RequestOptions } from 'node:https';
import { openLoop, PODS_NS, realisticPod, withMesh, type LoadFigures } from './webhook.js';

/**
 * Offered pod creates per second; upstream answers ~30 admissions per second (see README), so the top rate only shows
 * ours.
 */
export const API_RATES = [25, 100, 200];

/** A keep-alive client for dry-run pod creates in {@link PODS_NS}, with the kubeconfig's credentials. */
export async function dryRunCreator(
  kc: KubeConfig,
): Promise<{ create: (i: number) => Promise<boolean>; close: () => void }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(`/api/v1/namespaces/${PODS_NS}/pods?dryRun=All`, cluster.server);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const options: RequestOptions = {
    method: 'POST',
    host: url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    agent,
    headers: {},
  };
  await kc.applyToHTTPSOptions(options);
  const bodies = Array.from({ length: 64 }, (_, i) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', ...withMesh(realisticPod('api', i)) }),
  );
  const create = (i: number) =>
    new Promise<boolean>((resolve) => {
      const body = bodies[i % bodies.length];
      const req = request(
        {
          ...options,
          headers: {
            ...options.headers,
            'Content-Type': 'application/json',
            'Content-Length': Buffer.byteLength(body),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            try {
              const pod = JSON.parse(Buffer.concat(chunks).toString('utf8')) as V1Pod;
              resolve(res.statusCode === 201 && (pod.spec?.containers ?? []).some((c) => c.name === 'mesh-proxy'));
            } catch {
              resolve(false);
            }
          });
          res.on('error', () => resolve(false));
        },
      );
      req.on('error', () => resolve(false));
      // Past the API server's own request timeout: an answer that never comes is an error, not a hang.
      req.setTimeout(65_000, () => req.destroy());
      req.end(body);
    });
  return { create, close: () => agent.destroy() };
}

/** Dry-run creates at each rate for `seconds`; `measure` wraps each run (CPU, RSS, load of the subject). */
export async function throughApiServer<T extends LoadFigures>(
  kc: KubeConfig,
  seconds: number,
  measure: (load: () => Promise<LoadFigures>) => Promise<T>,
): Promise<Record<string, T>> {
  const creator = await dryRunCreator(kc);
  try {
    // The API server opens its connections to the webhook on first use: not measured.
    await openLoop(creator.create, 10, 2);
    const runs: Record<string, T> = {};
    for (const rate of API_RATES) {
      runs[`${rate}PerSecond`] = await measure(() => openLoop(creator.create, rate, seconds));
      if ((runs[`${rate}PerSecond`] as { exited?: boolean }).exited) break;
    }
    return runs;
  } finally {
    creator.close();
  }
}
