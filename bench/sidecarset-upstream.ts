/**
 * The 1,000-pod in-place rollout under upstream's kruise-manager v1.8.3 (built from its Go module,
 * run as the synthesized default Deployment runs it), on its own control plane: the reference
 * for bench/sidecarset.ts's ratio.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ControlPlane } from '../test/envtest/control-plane.js';
import { STATE_ENV } from '../test/envtest/state.js';
import { kubectlApply } from '../test/integration/support/apply.js';
import { until } from '../test/integration/support/ha.js';
import { addEndpoint } from '../test/integration/support/runtime-cluster.js';
import { renderedManager, synthesizeDefault, UpstreamManager } from '../test/integration/support/upstream-manager.js';
import { createFleet, log, ROLLOUT_NS, rollout, startKubelet, type RolloutFigures } from './sidecarset-rollout.js';

export interface UpstreamRollouts {
  tenPercent: RolloutFigures;
  one: RolloutFigures;
  version: string;
  loadAverage1m: number[];
}

export async function upstreamRollouts(): Promise<UpstreamRollouts> {
  const controlPlane = new ControlPlane({ log });
  const dir = mkdtempSync(join(tmpdir(), 'bench-sidecarset-upstream-'));
  let upstream: UpstreamManager | undefined;
  let kubelet: { stop(): void } | undefined;
  try {
    const info = await controlPlane.start();
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfigPath);
    await kc.makeApiClient(CoreV1Api).createNamespace({ body: { metadata: { name: ROLLOUT_NS } } });
    // UpstreamManager and kubectlApply locate the control plane by the state file the test setup writes.
    process.env[STATE_ENV] = join(dir, 'state.json');
    writeFileSync(process.env[STATE_ENV], JSON.stringify({ ...info, controlUrl: '' }));
    const objects = synthesizeDefault();
    const rendered = renderedManager(objects);
    const applied = await kubectlApply(objects, join(dir, 'install.yaml'), {
      serverSide: true,
      fieldManager: 'kruise-ha',
    });
    if (!applied.ok) throw new Error(`installing the synthesized default output failed:\n${applied.output}`);
    upstream = await UpstreamManager.start(rendered, `${rendered.deployment.metadata!.name}-bench-0`, dir);
    await addEndpoint(kc, rendered.namespace, upstream.name, upstream.webhookPort);
    await upstream.waitReady(180_000);
    await until('upstream to lead', async () => (await upstream!.leading()) || undefined, 120_000, 500);
    await createFleet(kc, 'upstream');
    kubelet = startKubelet(kc, 'fleet-proxy');
    await sleep(500);
    const metrics = async () => (await fetch(`http://127.0.0.1:${upstream!.metricsPort}/metrics`)).text();
    const load = [loadavg()[0]];
    const tenPercent = await rollout(kc, metrics, 'upstream', 'proxy:2', '10%');
    load.push(loadavg()[0]);
    // Upstream reconciles a consistency change only after 5 s (its pod event handler): at
    // maxUnavailable 1 that is up to 5 s a pod, so this run is bounded and its progress reported.
    const one = await rollout(
      kc,
      metrics,
      'upstream',
      'proxy:3',
      1,
      Number(process.env.BENCH_SIDECARSET_UPSTREAM_LIMIT_S ?? 300) * 1000,
    );
    load.push(loadavg()[0]);
    return { tenPercent, one, version: info.kruiseVersion, loadAverage1m: load };
  } finally {
    kubelet?.stop();
    upstream?.signal('SIGKILL');
    await controlPlane.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
