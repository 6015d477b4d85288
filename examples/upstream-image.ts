/**
 * Upstream kruise-manager pinned to a release, with the CRDs from a file kept next to the app
 * (in practice, the CRD bundle of that same release), so synth needs no network and the CRDs
 * never drift from the manager version. Also: ServiceMonitor, NetworkPolicy, Argo CD waves.
 */
import { fileURLToPath } from 'node:url';
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { CrdSource, KruiseManager, ManagerImage } from '../lib/index.js';

/** Resolved from this file, not the cwd, so synth works from anywhere. */
export const CRD_FIXTURE = fileURLToPath(new URL('./fixtures/clonesets-crd.yaml', import.meta.url));

export class UpstreamImageChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      // Pin explicitly: upgrading the library then never upgrades the cluster by surprise.
      image: ManagerImage.upstream({ version: 'v1.8.3' }),
      crds: CrdSource.fromFile(CRD_FIXTURE),
      // Needs the prometheus-operator CRDs in the cluster.
      monitoring: { serviceMonitor: true },
      // Most CNIs do not apply NetworkPolicy to host-network pods, so the policy would be
      // rendered but not enforced; the pods move to the pod network for it to take effect.
      // That makes admission depend on the CNI being healthy (the reason host network is the
      // default), so only do this where the CNI is trusted to stay up.
      hostNetwork: false,
      networkPolicy: true,
      // Argo CD applies CRDs/namespaces, then RBAC/certs, then workloads, then webhooks, so the
      // webhooks never point at a Service with no ready replica.
      argoCdSyncWaves: true,
    });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new UpstreamImageChart(app, 'kruise-upstream-image');
  app.synth();
}
