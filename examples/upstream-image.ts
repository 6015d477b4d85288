/**
 * Upstream kruise-manager pinned to a release, with its CRDs managed elsewhere (for example by
 * a platform team's CRD pipeline) and the wildcard reads upstream grants restored for a custom
 * workload kind. Also: ServiceMonitor, NetworkPolicy, Argo CD waves.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import { CrdSource, CustomResourceAccess, KruiseManager, ManagerImage, UninstallProtection } from 'kruise-ha';

export class UpstreamImageChart extends Chart {
  public readonly manager: KruiseManager;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.manager = new KruiseManager(this, 'Kruise', {
      // Pin explicitly: upgrading the library then never upgrades the cluster by surprise.
      image: ManagerImage.upstream({ version: 'v1.9.1' }),
      // Installed and upgraded by another pipeline; the manager still assumes all 18 are present.
      crds: CrdSource.none(),
      // A PodUnavailableBudget guards a custom workload kind: the manager must read its scale.
      customResourceAccess: CustomResourceAccess.including([
        { apiGroup: 'games.example.com', resource: 'gameservers' },
      ]),
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
      // Argo CD runs the guard Job when the Application is deleted: it fails while Kruise
      // workloads exist, so their pods are never deleted with the CRDs by accident.
      uninstallProtection: UninstallProtection.argoCdPreDelete(),
    });
  }
}

// Synthesize when run as the app (`cdk8s synth`, `npx ts-node upstream-image.ts`), not when a test imports the chart.
if (/upstream-image\.[jt]s$/.test(process.argv[1] ?? '')) {
  const app = new App({ outdir: process.env.CDK8S_OUTDIR ?? 'cdk8s.out' });
  new UpstreamImageChart(app, 'kruise-upstream-image');
  app.synth();
}
