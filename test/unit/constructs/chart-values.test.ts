/**
 * Every value of the official Helm chart (openkruise/charts, versions/kruise/1.8.3/values.yaml)
 * that this library expresses, each set to a non-default value through its typed prop, and
 * checked where the chart would put it. The table in docs/chart-values.md lists the same rows.
 */
import { describe, expect, it } from '@jest/globals';
import { Chart, Duration, Size, Testing } from 'cdk8s';
import { k8s, kplus } from '../../../lib/constructs/core/api.js';
import {
  CrdSource,
  KruiseManager,
  KruiseManagerProps,
  LogFormat,
  LogLevel,
  ManagerImage,
  WebhookCertificates,
} from '../../../lib/index.js';
import { find, managerArgs, Manifest, podSpec, synthManager } from './synth.js';

const daemonSet = (objects: Manifest[]) => find(objects, 'DaemonSet', 'kruise-daemon');
const daemonPod = (objects: Manifest[]) => daemonSet(objects).spec.template.spec;
const daemonContainer = (objects: Manifest[]) => daemonPod(objects).containers[0];
const managerContainer = (objects: Manifest[]) => podSpec(objects).containers[0];
const env = (container: Manifest, name: string) =>
  (container.env as Manifest[]).find((e) => e.name === name) ?? { missing: name };
const volumeOf = (pod: Manifest, mountPath: string, container = pod.containers[0]) => {
  const mount = (container.volumeMounts as Manifest[]).find((m) => m.mountPath === mountPath);
  return { mount, volume: (pod.volumes as Manifest[]).find((v) => v.name === mount?.name) };
};
const nodeAffinity: k8s.NodeAffinity = {
  requiredDuringSchedulingIgnoredDuringExecution: {
    nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['system'] }] }],
  },
};

/** [chart value, props that set it, what must land where]. */
const ROWS: Array<[string, KruiseManagerProps, (objects: Manifest[]) => void]> = [
  [
    'crds.managed: false',
    { crds: CrdSource.none() },
    (o) => expect(o.some((x) => x.kind === 'CustomResourceDefinition')).toBe(false),
  ],
  [
    'installation.namespace',
    { namespace: 'kruise' },
    (o) => expect(find(o, 'Deployment').metadata.namespace).toBe('kruise'),
  ],
  [
    'installation.createNamespace: false',
    { createNamespace: false },
    (o) => expect(o.some((x) => x.kind === 'Namespace' && x.metadata.name === 'kruise-system')).toBe(false),
  ],
  [
    'featureGates',
    { featureGates: { PodProbeMarkerGate: false } },
    (o) => expect(managerArgs(o).find((a) => a.startsWith('--feature-gates='))).toContain('PodProbeMarkerGate=false'),
  ],
  [
    'enableKubeCacheMutationDetector',
    { kubeCacheMutationDetector: true },
    (o) => {
      expect(env(managerContainer(o), 'KUBE_CACHE_MUTATION_DETECTOR')).toEqual(
        expect.objectContaining({ value: 'true' }),
      );
      expect(env(daemonContainer(o), 'KUBE_CACHE_MUTATION_DETECTOR')).toEqual(
        expect.objectContaining({ value: 'true' }),
      );
    },
  ],
  [
    'imagePullSecrets',
    { imagePullSecrets: ['regcred'] },
    (o) => {
      expect(podSpec(o).imagePullSecrets).toEqual([{ name: 'regcred' }]);
      expect(daemonPod(o).imagePullSecrets).toEqual([{ name: 'regcred' }]);
    },
  ],
  ['manager.log.level', { logLevel: LogLevel.verbosity(2) }, (o) => expect(managerArgs(o)).toContain('--v=2')],
  ['manager.replicas', { replicas: 3 }, (o) => expect(find(o, 'Deployment').spec.replicas).toBe(3)],
  [
    'manager.image.repository (a mirror)',
    { image: ManagerImage.upstream({ registry: 'mirror.example.com/kruise' }) },
    (o) => expect(managerContainer(o).image).toMatch(/^mirror\.example\.com\/kruise\/kruise-manager:v/),
  ],
  [
    'manager.image.repository (renamed) and a digest',
    {
      image: ManagerImage.upstream({
        repository: 'registry.example.com/platform/kruise-manager-fips',
        digest: `sha256:${'a'.repeat(64)}`,
      }),
    },
    (o) => {
      const image = `registry.example.com/platform/kruise-manager-fips:v1.9.1@sha256:${'a'.repeat(64)}`;
      expect(managerContainer(o).image).toBe(image);
      expect(daemonContainer(o).image).toBe(image);
    },
  ],
  [
    'externalCerts (bring your own certificate and injector)',
    {
      certificates: WebhookCertificates.external(),
      webhooks: { annotations: { 'example.com/inject-ca-from': 'kruise-system/my-ca' } },
    },
    (o) => {
      expect(o.filter((x) => x.kind === 'Secret' || x.kind === 'Certificate' || x.kind === 'Issuer')).toEqual([]);
      expect(managerArgs(o).find((a) => a.startsWith('--feature-gates='))).toContain('EnableExternalCerts=true');
      const asts = find(o, 'CustomResourceDefinition', 'statefulsets.apps.kruise.io');
      expect(asts.metadata.annotations['example.com/inject-ca-from']).toBe('kruise-system/my-ca');
      expect(find(o, 'ValidatingWebhookConfiguration').metadata.annotations['example.com/inject-ca-from']).toBe(
        'kruise-system/my-ca',
      );
    },
  ],
  [
    'manager.webhook.port, manager.metrics.port, manager.healthProbe.port',
    { ports: { webhook: 9443, metrics: 9090, health: 9091 } },
    (o) => {
      expect(managerContainer(o).ports.map((p: Manifest) => p.containerPort)).toEqual([9443, 9090, 9091]);
      expect(managerArgs(o)).toEqual(expect.arrayContaining(['--metrics-addr=:9090', '--health-probe-addr=:9091']));
      expect(find(o, 'Service', 'kruise-webhook-service').spec.ports[0].targetPort).toBe(9443);
    },
  ],
  [
    'manager.pprofAddr',
    { pprof: true, ports: { pprof: 6060 } },
    (o) => expect(managerArgs(o)).toEqual(expect.arrayContaining(['--enable-pprof=true', '--pprof-addr=:6060'])),
  ],
  [
    'manager.resyncPeriod',
    { resyncPeriod: Duration.minutes(10) },
    (o) => expect(managerArgs(o)).toContain('--sync-period=600s'),
  ],
  [
    'manager.loggingFormat',
    { logFormat: LogFormat.JSON },
    (o) => expect(managerArgs(o)).toContain('--logging-format=json'),
  ],
  [
    'manager.resources',
    { resources: { cpu: { request: kplus.Cpu.millis(200), limit: kplus.Cpu.millis(400) } } },
    (o) => expect(managerContainer(o).resources).toEqual({ requests: { cpu: '200m' }, limits: { cpu: '400m' } }),
  ],
  ['manager.hostNetwork: false', { hostNetwork: false }, (o) => expect(podSpec(o).hostNetwork).toBe(false)],
  [
    'manager.nodeAffinity',
    { nodeAffinity },
    (o) => {
      expect(podSpec(o).affinity.nodeAffinity).toEqual(nodeAffinity);
      expect(podSpec(o).affinity.podAntiAffinity).toBeDefined();
    },
  ],
  [
    'manager.nodeSelector',
    { nodeSelector: { pool: 'system' } },
    (o) => expect(podSpec(o).nodeSelector).toEqual({ pool: 'system' }),
  ],
  [
    'manager.tolerations',
    { tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }] },
    (o) => expect(podSpec(o).tolerations).toEqual([{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }]),
  ],
  [
    'webhookConfiguration.timeoutSeconds',
    { webhooks: { pods: { timeout: Duration.seconds(5) } } },
    (o) =>
      expect(
        find(o, 'MutatingWebhookConfiguration').webhooks.find((w: Manifest) => w.name === 'mpod.kb.io').timeoutSeconds,
      ).toBe(5),
  ],
  [
    'webhookConfiguration.aksIntegration (next chart)',
    { webhooks: { aksIntegration: true } },
    (o) => {
      const all = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'].flatMap(
        (k) => find(o, k).webhooks,
      );
      for (const w of all)
        expect(w.namespaceSelector.matchExpressions).toEqual(
          expect.arrayContaining([
            { key: 'control-plane', operator: 'NotIn', values: ['true'] },
            { key: 'kubernetes.azure.com/managedby', operator: 'NotIn', values: ['aks'] },
          ]),
        );
      // The manager rebuilds its configurations from the template annotation: the exclusions are in it.
      const template = JSON.parse(find(o, 'MutatingWebhookConfiguration').metadata.annotations.template);
      expect(JSON.stringify(template)).toContain('kubernetes.azure.com/managedby');
    },
  ],
  [
    'externalCerts.annotations (another injector)',
    { webhooks: { annotations: { 'example.com/inject-ca': 'kruise-system/ca' } } },
    (o) => {
      for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'])
        expect(find(o, kind).metadata.annotations['example.com/inject-ca']).toBe('kruise-system/ca');
    },
  ],
  [
    'externalCerts (cert-manager)',
    { certificates: WebhookCertificates.certManager() },
    (o) => {
      const inject = 'cert-manager.io/inject-ca-from';
      for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'])
        expect(find(o, kind).metadata.annotations[inject]).toBe('kruise-system/kruise-webhook-certs');
      // Advanced StatefulSet's conversion webhook: upstream with external certificates waits for
      // this CRD's caBundle to match the CA, so cert-manager's injector must fill it.
      const asts = find(o, 'CustomResourceDefinition', 'statefulsets.apps.kruise.io');
      expect(asts.spec.conversion.strategy).toBe('Webhook');
      expect(asts.metadata.annotations[inject]).toBe('kruise-system/kruise-webhook-certs');
      const plain = find(o, 'CustomResourceDefinition', 'clonesets.apps.kruise.io');
      expect(plain.metadata.annotations?.[inject]).toBeUndefined();
    },
  ],
  [
    'daemon.log.level',
    { daemonOptions: { logLevel: LogLevel.verbosity(6) } },
    (o) => expect(daemonContainer(o).args).toContain('--v=6'),
  ],
  [
    'daemon.port',
    { daemonOptions: { port: 11221 } },
    (o) => {
      expect(daemonContainer(o).args).toContain('--addr=:11221');
      expect(daemonContainer(o).readinessProbe.httpGet.port).toBe(11221);
    },
  ],
  [
    'daemon.enablePprof, daemon.pprofAddr',
    { daemonOptions: { pprof: true, pprofPort: 11222 } },
    (o) =>
      expect(daemonContainer(o).args).toEqual(expect.arrayContaining(['--enable-pprof=true', '--pprof-addr=:11222'])),
  ],
  [
    'daemon.socketLocation, daemon.socketFile',
    { daemonOptions: { socketLocation: '/run/k3s/containerd', socketFile: 'containerd.sock' } },
    (o) => {
      expect(daemonContainer(o).args).toContain('--socket-file=containerd.sock');
      expect(volumeOf(daemonPod(o), '/hostvarrun').volume?.hostPath.path).toBe('/run/k3s/containerd');
    },
  ],
  [
    'daemon.nodeSelector',
    { daemonOptions: { nodeSelector: { 'kruise.io/daemon': 'true' } } },
    (o) => expect(daemonPod(o).nodeSelector).toEqual({ 'kruise.io/daemon': 'true' }),
  ],
  [
    'daemon.affinity (node affinity)',
    { daemonOptions: { nodeAffinity } },
    (o) => expect(daemonPod(o).affinity).toEqual({ nodeAffinity }),
  ],
  [
    'daemon.resources',
    { daemonOptions: { resources: { memory: { request: Size.mebibytes(96), limit: Size.mebibytes(256) } } } },
    (o) => expect(daemonContainer(o).resources).toEqual({ requests: { memory: '96Mi' }, limits: { memory: '256Mi' } }),
  ],
  [
    'daemon.extraEnvs',
    { daemonOptions: { extraEnv: { HTTPS_PROXY: kplus.EnvValue.fromValue('http://proxy:3128') } } },
    (o) => expect(env(daemonContainer(o), 'HTTPS_PROXY')).toEqual({ name: 'HTTPS_PROXY', value: 'http://proxy:3128' }),
  ],
  [
    'daemon.credentialProvider.*',
    {
      daemonOptions: {
        credentialProvider: {
          configMap: 'ecr-credential-provider',
          pluginHostPath: '/etc/eks/image-credential-provider',
          awsCredentialsHostPath: '/root/.aws',
        },
      },
    },
    (o) => {
      expect(daemonContainer(o).args).toEqual(
        expect.arrayContaining([
          '--plugin-config-file=/credential-provider-config/CredentialProviderPlugin.yaml',
          '--plugin-bin-dir=/credential-provider-plugin',
        ]),
      );
      const pod = daemonPod(o);
      expect(volumeOf(pod, '/credential-provider-config').volume?.configMap.name).toBe('ecr-credential-provider');
      expect(volumeOf(pod, '/credential-provider-plugin').volume?.hostPath.path).toBe(
        '/etc/eks/image-credential-provider',
      );
      expect(volumeOf(pod, '/root/.aws').volume?.hostPath.path).toBe('/root/.aws');
      for (const path of ['/credential-provider-config', '/credential-provider-plugin', '/root/.aws'])
        expect(volumeOf(pod, path).mount?.readOnly).toBe(true);
    },
  ],
  [
    'serviceAccount.annotations',
    { serviceAccountAnnotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/kruise' } },
    (o) => {
      for (const name of ['kruise-manager', 'kruise-daemon'])
        expect(find(o, 'ServiceAccount', name).metadata.annotations).toEqual({
          'eks.amazonaws.com/role-arn': 'arn:aws:iam::1:role/kruise',
        });
    },
  ],
];

describe('every expressible value of the official chart lands where the chart puts it', () => {
  it.each(ROWS)('%s', (_value, props, check) => check(synthManager(props)));
});

describe('the chart-parity props refuse what cannot work, naming the prop and the fix', () => {
  const runtime = ManagerImage.runtime('example.com/kruise-ha:1');
  it.each<[string, () => KruiseManagerProps, RegExp]>([
    [
      'a klog verbosity out of range',
      () => ({ logLevel: LogLevel.verbosity(11) }),
      /logLevel.*11.*LogLevel\.verbosity\(n\)/s,
    ],
    [
      'a runtime level on upstream',
      () => ({ logLevel: LogLevel.debug() }),
      /logLevel.*LogLevel\.debug\(\).*verbosity/s,
    ],
    [
      'a klog verbosity on the runtime',
      () => ({ image: runtime, logLevel: LogLevel.verbosity(4) }),
      /logLevel.*LogLevel\.debug\(\)/s,
    ],
    ['text logs on the runtime', () => ({ image: runtime, logFormat: LogFormat.TEXT }), /logFormat.*JSON lines only/s],
    [
      'a resync period on the runtime',
      () => ({ image: runtime, resyncPeriod: Duration.minutes(1) }),
      /resyncPeriod.*remove resyncPeriod/s,
    ],
    [
      'a resync period below a second',
      () => ({ resyncPeriod: Duration.millis(500) }),
      /resyncPeriod.*whole number of seconds/s,
    ],
    [
      'daemon options without the daemon',
      () => ({ daemon: false, daemonOptions: { port: 1 } }),
      /daemonOptions.*daemon: false/s,
    ],
    [
      'daemon options on the runtime',
      () => ({ image: runtime, daemonOptions: { port: 11221 } }),
      /daemonOptions.*upstream image/s,
    ],
    [
      'the mutation detector on the runtime',
      () => ({ image: runtime, kubeCacheMutationDetector: true }),
      /kubeCacheMutationDetector/,
    ],
    [
      'a relative socket location',
      () => ({ daemonOptions: { socketLocation: 'run' } }),
      /daemonOptions\.socketLocation.*absolute/s,
    ],
    [
      'a socket file with a directory',
      () => ({ daemonOptions: { socketFile: '/run/x.sock' } }),
      /daemonOptions\.socketFile.*file name/s,
    ],
    [
      'colliding daemon ports',
      () => ({ daemonOptions: { pprof: true, port: 7000, pprofPort: 7000 } }),
      /daemonOptions\.pprofPort.*7000/s,
    ],
    [
      'a bad credential ConfigMap name',
      () => ({ daemonOptions: { credentialProvider: { configMap: 'Bad_Name', pluginHostPath: '/p' } } }),
      /daemonOptions\.credentialProvider\.configMap.*Bad_Name/s,
    ],
    [
      'a bad environment variable name',
      () => ({ daemonOptions: { extraEnv: { '1PROXY': kplus.EnvValue.fromValue('x') } } }),
      /daemonOptions\.extraEnv.*1PROXY/s,
    ],
    [
      'a repository beside a registry',
      () => ({ image: ManagerImage.upstream({ registry: 'a.example.com', repository: 'b.example.com/k' }) }),
      /image\.repository.*registry.*not both/s,
    ],
    [
      'a repository with a tag',
      () => ({ image: ManagerImage.upstream({ repository: 'b.example.com/kruise-manager:v1' }) }),
      /image\.repository.*tag or digest/s,
    ],
    [
      'a digest that is not one',
      () => ({ image: ManagerImage.upstream({ digest: 'sha256:abc' }) }),
      /image\.digest.*sha256: and 64/s,
    ],
  ])('%s', (_case, props, error) => expect(() => synthManager(props())).toThrow(error));
});

describe('feature gates and props agree, or synth says which to change', () => {
  const manager = (props: KruiseManagerProps) => {
    const chart = new Chart(Testing.app(), 'gates');
    return { m: new KruiseManager(chart, 'kruise', props), objects: Testing.synth(chart) as Manifest[] };
  };

  it('passes AllAlpha and AllBeta to the binary and renders what they switch on, explicit gates first', () => {
    const { m, objects } = manager({ featureGates: { AllAlpha: true, ResourceDistributionGate: false } });
    expect(managerArgs(objects).find((a) => a.startsWith('--feature-gates='))).toMatch(/AllAlpha=true/);
    const alpha = m.upstreamProfile!.release.featureGates.filter((g) => g.preRelease === 'Alpha').map((g) => g.name);
    expect(alpha.filter((g) => g !== 'ResourceDistributionGate' && !m.upstreamProfile!.gates[g])).toEqual([]);
    expect(m.upstreamProfile!.gates.ResourceDistributionGate).toBe(false);
    expect(m.upstreamProfile!.gates).not.toHaveProperty('AllAlpha');
    const beta = manager({ featureGates: { AllBeta: false } }).m.upstreamProfile!;
    expect(beta.gates.PodWebhook).toBe(false);
  });

  it('leaves kruise-daemon out with KruiseDaemon=false, as the chart does, and refuses asking for both', () => {
    expect(manager({ featureGates: { KruiseDaemon: false } }).objects.some((o) => o.kind === 'DaemonSet')).toBe(false);
    expect(() => manager({ daemon: true, featureGates: { KruiseDaemon: false } })).toThrow(
      /daemon.*featureGates\.KruiseDaemon is false.*remove daemon/s,
    );
  });

  it('refuses EnableExternalCerts that disagrees with certificates', () => {
    expect(() => manager({ featureGates: { EnableExternalCerts: true } })).toThrow(
      /featureGates\.EnableExternalCerts.*never turn ready.*choose the mode with certificates/s,
    );
    expect(() =>
      manager({ certificates: WebhookCertificates.certManager(), featureGates: { EnableExternalCerts: false } }),
    ).toThrow(/featureGates\.EnableExternalCerts.*WebhookCertificates\.certManager/s);
  });

  it('refuses a log format on a release without --logging-format, naming the releases that have it', () => {
    expect(() => manager({ image: ManagerImage.upstream({ version: 'v1.7.0' }), logFormat: LogFormat.JSON })).toThrow(
      /logFormat.*kruise-manager v1\.7\.0 does not have.*v1\.8\.3.*v1\.9\.1/s,
    );
  });
});

describe('webhook namespace selectors', () => {
  const entry = (o: Manifest[], name: string) =>
    ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']
      .flatMap((k) => find(o, k).webhooks as Manifest[])
      .find((w) => w.name === name)!;

  it('skips kube-system in the delete-protection webhooks, as the chart does', () => {
    expect(entry(synthManager(), 'vbuiltindeployment.kb.io').namespaceSelector).toEqual({
      matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
    });
  });

  it("adds a user's selector to a group's, after the namespaces it always skips", () => {
    const o = synthManager({
      webhooks: {
        resources: { namespaceSelector: { matchLabels: { tier: 'apps' } } },
        pods: { namespaceSelector: { matchExpressions: [{ key: 'sandbox', operator: 'DoesNotExist' }] } },
      },
    });
    expect(entry(o, 'vcloneset.kb.io').namespaceSelector).toEqual({ matchLabels: { tier: 'apps' } });
    expect(entry(o, 'mpod.kb.io').namespaceSelector.matchExpressions).toEqual([
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kruise-system'] },
      { key: 'sandbox', operator: 'DoesNotExist' },
    ]);
  });

  it('refuses a bad selector and an annotation the certificates own, by name', () => {
    expect(() =>
      synthManager({
        webhooks: { resources: { namespaceSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } } },
      }),
    ).toThrow(/webhooks\.resources\.namespaceSelector/);
    expect(() =>
      synthManager({
        certificates: WebhookCertificates.certManager(),
        webhooks: { annotations: { 'cert-manager.io/inject-ca-from': 'other/ca' } },
      }),
    ).toThrow(/webhooks\.annotations\.cert-manager\.io\/inject-ca-from.*set by the chosen certificates/s);
  });
});

describe('labels', () => {
  it('reach every object the construct renders, without replacing the labels selectors rely on', () => {
    const objects = synthManager({ labels: { team: 'platform', 'control-plane': 'mine' } });
    const unlabelled = objects.filter((o) => o.metadata?.labels?.team !== 'platform');
    expect(unlabelled.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([]);
    expect(find(objects, 'Deployment').metadata.labels['control-plane']).toBe('controller-manager');
    expect(daemonSet(objects).spec.template.metadata.labels.team).toBe('platform');
  });
});
