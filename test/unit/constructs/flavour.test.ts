import { describe, expect, it } from '@jest/globals';
import { ManagerImage, WebhookCertificates } from '../../../lib/index.js';
import { find, Manifest, podSpec, synthManager } from './synth.js';

const runtime = ManagerImage.runtime('registry.example.com/kruise-ha:0.1.0');

/** What differs between the two images' pods, read off the synthesized Deployment. */
function container(objects: Manifest[]): Manifest {
  const spec = podSpec(objects);
  const c = spec.containers[0];
  return {
    command: c.command,
    uid: spec.securityContext.runAsUser,
    fsGroup: spec.securityContext.fsGroup,
    mounts: c.volumeMounts.map((m: Manifest) => m.mountPath),
    liveness: [c.livenessProbe.httpGet?.path ?? Object.keys(c.livenessProbe).find((k) => k === 'tcpSocket')],
  };
}

// Each flavour answers once (lib/constructs/manager/flavour.ts) for everything that depends on which
// binary runs; these read the answers back from what KruiseManager renders.
describe('manager flavours', () => {
  // A TCP probe passes for a frozen process (the kernel accepts for it): the HA hang drill's
  // SIGSTOPped upstream replica was never restarted until liveness asked the process itself.
  it('run upstream kruise-manager as the chart does: /manager as nobody, /log writable, liveness on its own /readyz', () => {
    expect(container(synthManager())).toEqual({
      command: ['/manager'],
      uid: 65534,
      fsGroup: 65534,
      mounts: ['/tmp', '/log'],
      liveness: ['/readyz'],
    });
  });

  it("run the runtime as the image's nonroot user with only /tmp writable and its /healthz as liveness", () => {
    expect(container(synthManager({ image: runtime }))).toEqual({
      command: undefined,
      uid: 65532,
      fsGroup: 65532,
      mounts: ['/tmp'],
      liveness: ['/healthz'],
    });
  });

  it('give each image its own CRDs, webhooks, daemon and template annotation', () => {
    const kinds = (objects: Manifest[]) => objects.filter((o) => o.kind === 'CustomResourceDefinition').length;
    const upstream = synthManager();
    const ours = synthManager({ image: runtime });
    expect([kinds(upstream), kinds(ours)]).toEqual([18, 2]);
    expect(upstream.some((o) => o.kind === 'DaemonSet')).toBe(true);
    expect(ours.some((o) => o.kind === 'DaemonSet')).toBe(false);
    expect(find(upstream, 'MutatingWebhookConfiguration').metadata.annotations).toHaveProperty('template');
    expect(find(ours, 'MutatingWebhookConfiguration').metadata.annotations ?? {}).not.toHaveProperty('template');
    expect(find(ours, 'MutatingWebhookConfiguration').webhooks.map((w: Manifest) => w.name)).toEqual([
      'mpod.kb.io',
      'msidecarset.kb.io',
    ]);
  });

  it('let the runtime read only the kruise-configuration ConfigMap, in its own namespace, bound to its ServiceAccount', () => {
    const objects = synthManager({ image: runtime, namespace: 'ops' });
    const role = objects.find(
      (o) => o.kind === 'Role' && o.metadata.name === 'kruise-manager-role' && o.metadata.namespace === 'ops',
    );
    expect(role?.rules).toEqual([
      {
        apiGroups: [''],
        resources: ['configmaps'],
        resourceNames: ['kruise-configuration'],
        verbs: ['get', 'list', 'watch'],
      },
    ]);
    const binding = objects.find(
      (o) => o.kind === 'RoleBinding' && o.roleRef.name === 'kruise-manager-role' && o.metadata.namespace === 'ops',
    );
    expect(binding?.subjects).toEqual([
      expect.objectContaining({ kind: 'ServiceAccount', name: 'kruise-manager', namespace: 'ops' }),
    ]);
    expect(
      objects.flatMap((o) => (o.kind === 'ClusterRole' ? o.rules : [])).flatMap((r: Manifest) => r.resources),
    ).not.toContain('configmaps');
  });

  it("pass the user's gates to the runtime unchanged, and add none of upstream's", () => {
    const args = podSpec(
      synthManager({
        image: runtime,
        certificates: WebhookCertificates.certManager(),
        featureGates: { PodWebhook: false },
      }),
    ).containers[0].args;
    expect(args.filter((a: string) => a.startsWith('--feature-gates='))).toEqual(['--feature-gates=PodWebhook=false']);
  });

  it('render no pod webhook for the runtime under PodWebhook=false, as the runtime then registers none', () => {
    const objects = synthManager({ image: runtime, featureGates: { PodWebhook: false } });
    expect(find(objects, 'MutatingWebhookConfiguration').webhooks.map((w: Manifest) => w.name)).toEqual([
      'msidecarset.kb.io',
    ]);
  });

  it('refuse a gate the runtime does not read (it would refuse to start), naming it', () => {
    expect(() => synthManager({ image: runtime, featureGates: { ImagePullJobGate: true } })).toThrow(
      /^featureGates\.ImagePullJobGate: is not a gate of this project's runtime, which reads only EnableExternalCerts and EnableSortSidecarContainerByName and PodWebhook and SidecarSetPatchPodMetadataDefaultsAllowed and WorkloadSpread \(got true\)\. Fix: remove ImagePullJobGate, or use ManagerImage.upstream\(\)/,
    );
  });

  it('refuse what only the other image supports, naming the prop', () => {
    expect(() => synthManager({ image: runtime, daemon: true })).toThrow(
      /^daemon: kruise-daemon ships only in the upstream image \(got true\)\. Fix: remove daemon, or use ManagerImage.upstream\(\)/,
    );
    expect(() => synthManager({ image: runtime, pprof: true })).toThrow(
      /^pprof: is served by upstream kruise-manager only/,
    );
  });
});
