/**
 * The upstream flavour renders from upstream's own definitions (lib/upstream/
 * kruise.generated.ts, generated from the pinned Go module). These tests pin the rules that
 * turn feature gates into served webhooks, started controllers and permissions, using facts
 * read from kruise v1.8.3's code (cited per case).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import {
  CrdSource,
  CustomResourceAccess,
  KruiseManagerProps,
  ManagerImage,
  UninstallProtection,
} from '../../../lib/index.js';
import { resolveUpstreamProfile, UpstreamProfileInput } from '../../../lib/constructs/manager/upstream-profile.js';
import { effectiveGates, holds } from '../../../lib/upstream/release.js';
import { UPSTREAM_RELEASES, upstreamRelease } from '../../../lib/upstream/releases.js';
import { find, synthManager } from './synth.js';

const KRUISE_RELEASE = upstreamRelease();

const profile = (input: Partial<UpstreamProfileInput> = {}) =>
  resolveUpstreamProfile({ namespace: 'kruise-system', externalCertificates: false, ...input });
const webhookNames = (p = profile()) => p.webhooks.map((w) => w.name);
const controllerNames = (p = profile()) => p.controllers.map((c) => c.name);
const triples = (p = profile()) =>
  p.clusterRules.flatMap((r) =>
    r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}:${v}`))),
  );

describe('generated upstream release data', () => {
  it('is every pinned module, each rebuilt from the stored data with its own checksum; the default is the newest stable', () => {
    const pin = JSON.parse(readFileSync(new URL('../../../tools/upstream/pin.json', import.meta.url), 'utf8')) as {
      module: string;
      default: string;
      releases: Record<string, string>;
    };
    expect(UPSTREAM_RELEASES).toEqual(['v1.7.0', 'v1.8.3', 'v1.9.1']);
    expect(Object.keys(pin.releases).sort()).toEqual([...UPSTREAM_RELEASES]);
    for (const v of UPSTREAM_RELEASES) {
      const r = upstreamRelease(v);
      expect({ module: r.module, version: r.version, sum: r.sum }).toEqual({
        module: pin.module,
        version: v,
        sum: pin.releases[v],
      });
    }
    expect(KRUISE_RELEASE.version).toBe('v1.9.1');
    expect(pin.default).toBe('v1.9.1');
    expect(() => upstreamRelease('v1.8.2')).toThrow(
      /no release v1\.8\.2; this library renders v1\.7\.0, v1\.8\.3, v1\.9\.1/,
    );
  });

  it("holds each release's full inventory", () => {
    for (const v of UPSTREAM_RELEASES) {
      const r = upstreamRelease(v);
      expect(r.crds).toHaveLength(18); // config/crd/bases
      expect(r.webhooks).toHaveLength(37); // config/webhook/manifests.yaml
      expect(r.controllers).toHaveLength(21); // pkg/controller/controllers.go
    }
    // v1.9 serves v1beta1 of seven more kinds and stores them as v1beta1; three convert through the manager's webhook.
    const converted = (v: string) =>
      upstreamRelease(v)
        .crds.filter((c) => c.conversionWebhook)
        .map((c) => c.kind);
    expect(converted('v1.7.0')).toEqual(['StatefulSet']);
    expect(converted('v1.8.3')).toEqual(['StatefulSet']);
    expect(converted('v1.9.1')).toEqual(['DaemonSet', 'SidecarSet', 'StatefulSet']);
    const storedBeta = (v: string) =>
      upstreamRelease(v)
        .crds.filter((c) => c.storageVersion === 'v1beta1')
        .map((c) => c.kind);
    expect(storedBeta('v1.8.3')).toEqual(['StatefulSet']);
    expect(storedBeta('v1.9.1')).toEqual([
      'AdvancedCronJob',
      'BroadcastJob',
      'DaemonSet',
      'ImageListPullJob',
      'ImagePullJob',
      'NodeImage',
      'SidecarSet',
      'StatefulSet',
    ]);
  });

  it('keeps what differs between releases (read from each module)', () => {
    const gates = (v: string) => upstreamRelease(v).featureGates.map((g) => g.name);
    const flags = (v: string) => upstreamRelease(v).flags.map((f) => f.name);
    // pkg/features/kruise_features.go
    expect(gates('v1.7.0')).toHaveLength(28);
    expect(gates('v1.8.3')).toHaveLength(32);
    expect(gates('v1.9.1').filter((g) => !gates('v1.8.3').includes(g))).toEqual([
      'EnableSortSidecarContainerByName',
      'InPlacePodVerticalScaling',
    ]);
    expect(gates('v1.7.0')).not.toContain('StatefulSetAutoResizePVCGate');
    // v1.7 protected Services and Ingresses from deletion by default; v1.8 turned the gate off.
    const def = (v: string) =>
      upstreamRelease(v).featureGates.find((g) => g.name === 'ResourcesDeletionProtection')?.default;
    expect([def('v1.7.0'), def('v1.8.3'), def('v1.9.1')]).toEqual([true, false, false]);
    // main.go of v1.9.1 adds two flags
    expect(flags('v1.9.1').filter((f) => !flags('v1.8.3').includes(f))).toEqual([
      'default-ttlseconds-for-always-nodeimage',
      'webhook-initialize-timeout',
    ]);
    // v1.9.1 serves the ImagePullJob webhooks under new names and version-less paths (config/webhook/manifests.yaml)
    const webhook = (v: string, name: string) => upstreamRelease(v).webhooks.find((w) => w.name === name)?.path;
    expect(webhook('v1.8.3', 'mimagepulljob.kb.io')).toBe('/mutate-apps-kruise-io-v1alpha1-imagepulljob');
    expect(webhook('v1.9.1', 'mimagepulljob.kb.io')).toBeUndefined();
    expect(webhook('v1.9.1', 'mimagepulljob-v1beta1.kb.io')).toBe('/mutate-apps-kruise-io-imagepulljob');
    // ...and kruise-manager v1.8.3 logs in klog only; v1.8 added the logs API flags
    expect(upstreamRelease('v1.7.0').libraryFlagSets).not.toContain('k8s.io/component-base/logs/api/v1.AddFlags');
    expect(upstreamRelease('v1.8.3').libraryFlagSets).toContain('k8s.io/component-base/logs/api/v1.AddFlags');
  });

  it("applies upstream's gate implications in order (pkg/features SetDefaultFeatureGates)", () => {
    expect(effectiveGates(KRUISE_RELEASE, { KruiseDaemon: false, ImagePullJobGate: true }).ImagePullJobGate).toBe(
      false,
    );
    expect(effectiveGates(KRUISE_RELEASE, { PreDownloadImageForInPlaceUpdate: true }).ImagePullJobGate).toBe(true);
    expect(effectiveGates(KRUISE_RELEASE, { PodWebhook: false }).WorkloadSpread).toBe(false);
  });

  it('refuses an empty condition instead of guessing', () => {
    expect(() => holds({}, { gates: {}, crds: new Set() })).toThrow(/empty condition/);
  });
});

describe('upstream profile', () => {
  it('renders every webhook the binary serves by default, and only those', () => {
    // ResourcesDeletionProtection defaults to false: the Service and Ingress guards are not served
    // (pkg/webhook/add_service.go, add_ingress.go).
    expect(webhookNames()).toHaveLength(35);
    expect(webhookNames()).not.toEqual(expect.arrayContaining(['vservice.kb.io']));
    expect(webhookNames()).not.toContain('vingress.kb.io');
    expect(webhookNames(profile({ featureGates: { ResourcesDeletionProtection: true } }))).toEqual(
      expect.arrayContaining(['vservice.kb.io', 'vingress.kb.io']),
    );
    // The Advanced StatefulSet defaulting webhook is among them (its absence crash-loops the controller).
    expect(profile().webhooks.find((w) => w.name === 'mstatefulset.kb.io')?.path).toBe(
      '/mutate-apps-kruise-io-statefulset',
    );
  });

  it("starts the controllers upstream starts with the chart's gates", () => {
    expect(controllerNames().sort()).toEqual([
      'NodePodProbe-controller',
      'PodProbeMarker-controller',
      'advancedcronjob-controller',
      'broadcastjob-controller',
      'cloneset-controller',
      'container-launch-priority-controller',
      'containerrecreaterequest-controller',
      'daemonset-controller',
      'ephemeraljob-controller',
      'imagelistpulljob-controller',
      'imagepulljob-controller',
      'nodeimage-controller',
      'persistentpodstate-controller',
      'pod-readiness-controller',
      'podunavailablebudget-controller',
      'sidecarset-controller',
      'statefulset-controller',
      'uniteddeployment-controller',
      'workloadspread-controller',
    ]);
    expect(controllerNames(profile({ featureGates: { ResourceDistributionGate: true } }))).toContain(
      'resourcedistribution-controller',
    );
  });

  it("follows PodWebhook=false through upstream's implications", () => {
    const p = profile({ featureGates: { PodWebhook: false } });
    expect(webhookNames(p)).not.toEqual(expect.arrayContaining(['mpod.kb.io']));
    expect(webhookNames(p)).not.toContain('vpod.kb.io');
    expect(webhookNames(p)).not.toContain('vpodeviction.kb.io');
    expect(controllerNames(p)).not.toContain('workloadspread-controller');
    expect(controllerNames(p)).not.toContain('podunavailablebudget-controller');
  });

  it('grants what the started controllers need, including the StorageClass informer of the Advanced StatefulSet controller', () => {
    expect(triples()).toEqual(
      expect.arrayContaining([
        'storage.k8s.io/storageclasses:list',
        'apps.kruise.io/ephemeraljobs:update',
        'apps.kruise.io/ephemeraljobs/status:patch',
      ]),
    );
    // Without the Advanced StatefulSet CRD's controller... the gate set decides, not a guess: KruiseDaemon=false drops
    // NodeImage writes.
    expect(triples(profile({ featureGates: { KruiseDaemon: false } }))).not.toContain(
      'apps.kruise.io/nodeimages:create',
    );
  });

  it("adds what upstream's code uses without a marker in that component, writes only where the code writes", () => {
    // imagepulljob-controller watches Secrets cluster-wide and copies pull secrets into kruise-daemon-config;
    // SidecarSet namespace selectors read Namespaces (tools/upstream/undeclared.json cites the code).
    expect(triples()).toEqual(expect.arrayContaining(['/secrets:list', '/secrets:watch', '/namespaces:list']));
    expect(triples()).not.toContain('/secrets:create');
    expect(profile().namespacedRules).toEqual({
      'kruise-daemon-config': [{ apiGroups: [''], resources: ['secrets'], verbs: ['create', 'delete', 'update'] }],
    });
    const noDaemon = profile({ featureGates: { KruiseDaemon: false } });
    expect(noDaemon.namespacedRules).toEqual({});
    expect(
      synthManager({ daemon: false }).some((o) => o.kind === 'Namespace' && o.metadata.name === 'kruise-daemon-config'),
    ).toBe(true);
  });

  it("narrows upstream's wildcard reads unless asked for them", () => {
    const narrow = triples();
    expect(narrow.filter((t) => t.startsWith('*/'))).toEqual([]);
    expect(narrow).toEqual(
      expect.arrayContaining([
        'apps/deployments/scale:get',
        'apps.kruise.io/clonesets/scale:list',
        'apps.kruise.io/sidecarsets:list',
      ]),
    );
    expect(triples(profile({ customResourceAccess: CustomResourceAccess.all() }))).toEqual(
      expect.arrayContaining(['*/*/scale:get', '*/*:list']),
    );
    const extra = triples(
      profile({
        customResourceAccess: CustomResourceAccess.including([{ apiGroup: 'example.com', resource: 'widgets' }]),
      }),
    );
    expect(extra).toEqual(expect.arrayContaining(['example.com/widgets/scale:watch', 'example.com/widgets:list']));
    expect(() => CustomResourceAccess.including([{ apiGroup: 'Example.com', resource: 'widgets' }])).toThrow(
      /customResourceAccess\[0\]\.apiGroup: is not an API group/,
    );
  });

  it('refuses a feature gate kruise-manager does not know, naming it', () => {
    expect(() => profile({ featureGates: { NotAGate: true } })).toThrow(
      /^featureGates\.NotAGate: is not a feature gate of kruise-manager v1\.9\.1, which refuses to start with it \(got true\)\. Fix: use one of: .*PodWebhook/,
    );
  });

  it('refuses a gate the chosen release lacks, saying which releases have it', () => {
    expect(() => profile({ version: 'v1.8.3', featureGates: { InPlacePodVerticalScaling: true } })).toThrow(
      /^featureGates\.InPlacePodVerticalScaling: is not a feature gate of kruise-manager v1\.8\.3, which refuses to start with it; v1\.9\.1 has it \(got true\)\. Fix: remove InPlacePodVerticalScaling, or use ManagerImage\.upstream\(\{ version: 'v1\.9\.1' \}\)/,
    );
    expect(() => profile({ version: 'v1.7.0', featureGates: { StatefulSetAutoResizePVCGate: false } })).toThrow(
      /^featureGates\.StatefulSetAutoResizePVCGate: is not a feature gate of kruise-manager v1\.7\.0, .*; v1\.8\.3, v1\.9\.1 have it \(got false\)/,
    );
    expect(profile({ version: 'v1.9.1', featureGates: { InPlacePodVerticalScaling: true } }).flags).toMatchObject({
      InPlacePodVerticalScaling: true,
    });
  });

  it("renders each release's own webhooks, controllers and permissions", () => {
    for (const v of UPSTREAM_RELEASES) {
      const p = profile({ version: v });
      const r = upstreamRelease(v);
      expect(p.release.version).toBe(v);
      for (const w of p.webhooks) expect(r.webhooks.some((x) => x.name === w.name && x.path === w.path)).toBe(true);
      expect(p.crds.map((c) => c.manifest)).toHaveLength(18);
    }
    const names = (v: string) => webhookNames(profile({ version: v }));
    expect(names('v1.8.3')).toContain('vimagepulljob.kb.io');
    expect(names('v1.9.1')).not.toContain('vimagepulljob.kb.io');
  });
});

describe('KruiseManager (upstream image)', () => {
  it("renders upstream's CRDs first, the StatefulSet conversion webhook pointed at the install namespace", () => {
    const objects = synthManager({ namespace: 'kruise' });
    const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
    expect(crds).toHaveLength(18);
    const firstNonFoundation = objects.findIndex((o) => !['Namespace', 'CustomResourceDefinition'].includes(o.kind));
    expect(objects.slice(firstNonFoundation).some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
    expect(
      find(objects, 'CustomResourceDefinition', 'statefulsets.apps.kruise.io').spec.conversion.webhook.clientConfig
        .service,
    ).toEqual({ namespace: 'kruise', name: 'kruise-webhook-service', path: '/convert', port: 443 });
  });

  it('leaves the CRDs out when they are managed elsewhere', () => {
    expect(synthManager({ crds: CrdSource.none() }).filter((o) => o.kind === 'CustomResourceDefinition')).toEqual([]);
  });

  it("passes the chart's gates, uninstall protection's and the user's on the command line; the user wins", () => {
    const args = (props: KruiseManagerProps): string[] =>
      find(synthManager(props), 'Deployment').spec.template.spec.containers[0].args;
    expect(args({})).toContain(
      '--feature-gates=DeletionProtectionForCRDCascadingGate=true,ImagePullJobGate=true,ResourcesDeletionProtection=true',
    );
    expect(
      args({ uninstallProtection: UninstallProtection.none(), featureGates: { ImagePullJobGate: false } }),
    ).toContain('--feature-gates=ImagePullJobGate=false');
  });

  it("labels the CRDs for upstream's cascading deletion protection by default", () => {
    for (const crd of synthManager().filter((o) => o.kind === 'CustomResourceDefinition')) {
      expect(crd.metadata.labels).toEqual({ 'policy.kruise.io/delete-protection': 'Cascading' });
    }
    expect(
      find(synthManager({ uninstallProtection: UninstallProtection.none() }), 'CustomResourceDefinition').metadata
        .labels,
    ).toBeUndefined();
  });

  it('refuses customResourceAccess with the runtime image', () => {
    expect(() =>
      synthManager({
        image: ManagerImage.runtime('registry.example.com/kruise-ha:1'),
        customResourceAccess: CustomResourceAccess.all(),
      }),
    ).toThrow(/customResourceAccess: .*only narrows the upstream manager's wildcard grants/);
  });
});
