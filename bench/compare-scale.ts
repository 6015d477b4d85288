/**
 * Compare at scale: 10,000 pods and 100 SidecarSets in the cluster (so in every informer cache)
 * before a manager starts. Created with no webhook configured (nothing to admit), as raw keep-alive
 * POSTs from several clients. The SidecarSets select labels no pod carries, so the controllers
 * list and match them but patch nothing: what is measured is start-up, the caches and admission.
 */
import { CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { Agent, request, type RequestOptions } from 'node:https';
import { performance } from 'node:perf_hooks';
import { KRUISE_APPS_GROUP } from '../lib/contract.js';
import { realisticPod } from './webhook.js';

export const SCALE_NS = 'bench-scale';
export const SCALE = { pods: Number(process.env.BENCH_COMPARE_SCALE_PODS ?? 10_000), sidecarSets: 100 };
const CLIENTS = 24;

function scaleSidecarSet(i: number) {
  return {
    apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
    kind: 'SidecarSet',
    metadata: { name: `scale-${i}` },
    spec: {
      namespace: SCALE_NS,
      selector: { matchLabels: { 'scale-set': `s${i}` } },
      containers: [
        {
          name: `agent-${i}`,
          image: 'registry.example.com/agent:1.0',
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
        },
      ],
    },
  };
}

/** Creates {@link SCALE} pods and SidecarSets; resolves with how long that took. */
export async function populate(kc: KubeConfig): Promise<{ seconds: number; podsPerSecond: number }> {
  const started = performance.now();
  await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: SCALE_NS } } });
  const custom = kc.makeApiClient(CustomObjectsApi);
  for (let i = 0; i < SCALE.sidecarSets; i++) {
    await custom.createClusterCustomObject({
      group: KRUISE_APPS_GROUP,
      version: 'v1alpha1',
      plural: 'sidecarsets',
      body: scaleSidecarSet(i),
    });
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig has no current cluster');
  const url = new URL(`/api/v1/namespaces/${SCALE_NS}/pods`, cluster.server);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const options: RequestOptions = {
    method: 'POST',
    host: url.hostname,
    port: url.port,
    path: url.pathname,
    agent,
    headers: {},
  };
  await kc.applyToHTTPSOptions(options);
  const create = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const pod = realisticPod('scale', i);
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        ...pod,
        metadata: { ...pod.metadata, generateName: undefined, name: `scale-${i}` },
      });
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
          res.resume();
          res.on('end', () =>
            res.statusCode === 201 ? resolve() : reject(new Error(`creating pod scale-${i}: HTTP ${res.statusCode}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  let next = 0;
  const podsStarted = performance.now();
  try {
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < SCALE.pods) await create(next++);
      }),
    );
  } finally {
    agent.destroy();
  }
  const podSeconds = (performance.now() - podsStarted) / 1000;
  return {
    seconds: Math.round((performance.now() - started) / 100) / 10,
    podsPerSecond: Math.round(SCALE.pods / podSeconds),
  };
}
