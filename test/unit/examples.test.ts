/**
 * Every example synthesizes, and every object it renders passes the Kubernetes OpenAPI schema
 * (kubernetes-models) or, for CRD-backed kinds with no schema here, an explicit structural
 * check. A kind that is neither fails the test, so nothing reaches a cluster unvalidated.
 *
 * Limitation: kubernetes-models' schemas allow additional properties, so types, enums, formats
 * and required fields are checked but a misspelled field name is not (the API server drops or,
 * with strict field validation, rejects it).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { App, Chart, Testing } from 'cdk8s';
import { MutatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/MutatingWebhookConfiguration';
import { ValidatingWebhookConfiguration } from 'kubernetes-models/admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1/CustomResourceDefinition';
import { DaemonSet } from 'kubernetes-models/apps/v1/DaemonSet';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { Job } from 'kubernetes-models/batch/v1/Job';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ClusterRole } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole';
import { ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding';
import { Role } from 'kubernetes-models/rbac.authorization.k8s.io/v1/Role';
import { RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Pod } from 'kubernetes-models/v1/Pod';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { CertManagerChart } from '../../examples/cert-manager.js';
import { DefaultHaChart } from '../../examples/default-ha.js';
import { OfflineRegistryChart } from '../../examples/offline-registry.js';
import { RuntimeImageChart } from '../../examples/runtime-image.js';
import { SidecarSetChart } from '../../examples/sidecarset.js';
import { SmallClusterChart } from '../../examples/small-cluster.js';
import { SplitWebhookControllerChart } from '../../examples/split-webhook-controller.js';
import { StrictZoneSpreadChart } from '../../examples/strict-zone-spread.js';
import { UpstreamImageChart } from '../../examples/upstream-image.js';
import { sidecarSetCrd } from '../../lib/constructs/crds/runtime-crds.js';
import { Flags } from '../../lib/contract.js';
import { parseOptions } from '../../lib/runtime/options.js';
import { validateAgainstCrd } from './structural-schema.js';

// Rendered manifests are untyped JSON.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Manifest = any;

/** A kubernetes-models class: statics name its GVK, `validate()` throws on a schema violation. */
interface ModelClass {
  readonly apiVersion: string;
  readonly kind: string;
  new (data: never): { validate(): void };
}

/** Every core kind the library emits, keyed by the apiVersion/kind each model class declares. */
const SCHEMAS = new Map<string, ModelClass>(
  (
    [
      Namespace,
      ServiceAccount,
      Secret,
      Service,
      Role,
      RoleBinding,
      ClusterRole,
      ClusterRoleBinding,
      Deployment,
      DaemonSet,
      Job,
      PodDisruptionBudget,
      NetworkPolicy,
      MutatingWebhookConfiguration,
      ValidatingWebhookConfiguration,
      CustomResourceDefinition,
    ] as ModelClass[]
  ).map((m) => [`${m.apiVersion}/${m.kind}`, m]),
);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString = (v: unknown): boolean => typeof v === 'string' && v.length > 0;

/** Fields a SidecarSet container has on top of a core/v1 Container. */
const SIDECAR_ONLY_FIELDS = new Set(['podInjectPolicy', 'shareVolumePolicy', 'transferEnv', 'upgradeStrategy']);

/**
 * A SidecarSet against the CRD our runtime installs (its openAPIV3Schema, structurally: types,
 * enums, required, unknown fields), and its pod parts (containers without the SidecarSet-only
 * fields, init containers, volumes, pull secrets) against the core Pod schema, since the CRD
 * keeps those open and the API server judges them only when a pod is created.
 */
function checkSidecarSet(o: Manifest): string[] {
  const errors = validateAgainstCrd(sidecarSetCrd().manifest, o);
  const spec = o.spec ?? {};
  const core = (c: Manifest) =>
    Object.fromEntries(Object.entries(c ?? {}).filter(([k]) => !SIDECAR_ONLY_FIELDS.has(k)));
  try {
    new Pod({
      metadata: { name: 'sidecarset-pod-parts' },
      spec: {
        // A placeholder app container, so a SidecarSet of init containers alone still forms a pod.
        containers: [...(spec.containers ?? []).map(core), { name: 'placeholder-app', image: 'app' }],
        initContainers: (spec.initContainers ?? []).map(core),
        volumes: spec.volumes ?? [],
        imagePullSecrets: spec.imagePullSecrets ?? [],
      },
    } as never).validate();
  } catch (e) {
    errors.push(`pod parts: ${(e as Error).message}`);
  }
  return errors;
}

/** Non-core kinds without a namespace. */
const CLUSTER_SCOPED_NON_CORE = new Set(['apps.kruise.io/v1alpha1/SidecarSet']);

/**
 * CRD-backed kinds whose schemas are not in kubernetes-models. Each gets the fields its
 * controller cannot do without (or, for our own CRD, its schema); the API server validates the
 * rest against the installed CRD.
 */
const NON_CORE: ReadonlyMap<string, (o: Manifest) => string[]> = new Map([
  [
    'cert-manager.io/v1/Issuer',
    (o: Manifest) => {
      const types = ['selfSigned', 'ca', 'acme', 'vault', 'venafi'].filter((t) => isObject(o.spec?.[t]));
      const ca = o.spec?.ca;
      return [
        ...(types.length === 1 ? [] : [`spec must set exactly one issuer type, got [${types.join(', ')}]`]),
        ...(ca !== undefined && !nonEmptyString(ca.secretName) ? ['spec.ca.secretName is required'] : []),
      ];
    },
  ],
  [
    'cert-manager.io/v1/Certificate',
    (o: Manifest) => [
      ...(nonEmptyString(o.spec?.secretName) ? [] : ['spec.secretName is required']),
      ...(nonEmptyString(o.spec?.issuerRef?.name) ? [] : ['spec.issuerRef.name is required']),
      ...(nonEmptyString(o.spec?.commonName) || (Array.isArray(o.spec?.dnsNames) && o.spec.dnsNames.length > 0)
        ? []
        : ['spec needs commonName or dnsNames']),
    ],
  ],
  ['apps.kruise.io/v1alpha1/SidecarSet', checkSidecarSet],
  [
    'monitoring.coreos.com/v1/ServiceMonitor',
    (o: Manifest) => [
      ...(isObject(o.spec?.selector) ? [] : ['spec.selector is required']),
      ...(Array.isArray(o.spec?.endpoints) &&
      o.spec.endpoints.length > 0 &&
      o.spec.endpoints.every((e: Manifest) => nonEmptyString(e.port))
        ? []
        : ['spec.endpoints must list at least one named port']),
    ],
  ],
]);

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** Problems with one object; empty when it is valid. Unknown kinds are a problem. */
function validateObject(o: Manifest): string[] {
  const gvk = `${o?.apiVersion}/${o?.kind}`;
  const schema = SCHEMAS.get(gvk);
  if (schema) {
    try {
      new schema(o as never).validate();
      return [];
    } catch (e) {
      return [(e as Error).message];
    }
  }
  const check = NON_CORE.get(gvk);
  if (!check)
    return [`${gvk} has no schema and is not a known non-core kind: add its model to SCHEMAS or a check to NON_CORE`];
  return [
    ...(DNS_SUBDOMAIN.test(o.metadata?.name ?? '')
      ? []
      : [`metadata.name ${JSON.stringify(o.metadata?.name)} is not a DNS subdomain`]),
    ...(CLUSTER_SCOPED_NON_CORE.has(gvk) || nonEmptyString(o.metadata?.namespace)
      ? []
      : ['metadata.namespace is required (namespaced kind)']),
    ...check(o),
  ];
}

function validateAll(manifest: Manifest[]): string[] {
  return manifest.flatMap((o) => validateObject(o).map((p) => `${o?.kind}/${o?.metadata?.name}: ${p}`));
}

interface Example {
  readonly name: string;
  /** The example's source, run end to end by the main() test; several cases may share one. */
  readonly file: string;
  readonly chart: (app: App) => Chart;
  /** Changes only when the example or the library deliberately renders more or fewer objects. */
  readonly objects: number;
  /** What the example exists to show, checked on its output. */
  readonly intent: (m: Manifest[]) => void;
}

const of = (m: Manifest[], kind: string): Manifest[] => m.filter((o) => o.kind === kind);
const podSpecs = (m: Manifest[]): Manifest[] =>
  m.filter((o) => ['Deployment', 'DaemonSet', 'Job'].includes(o.kind)).map((o) => o.spec.template.spec);
const webhook = (m: Manifest[], name: string): Manifest =>
  [...of(m, 'MutatingWebhookConfiguration'), ...of(m, 'ValidatingWebhookConfiguration')]
    .flatMap((c) => c.webhooks)
    .find((w) => w.name === name);

const EXAMPLES: Example[] = [
  {
    name: 'default-ha',
    file: 'default-ha.ts',
    objects: 47,
    chart: (app) => new DefaultHaChart(app, 'kruise'),
    intent: (m) => expect(of(m, 'Deployment').map((d) => d.spec.replicas)).toEqual([2]),
  },
  {
    name: 'strict-zone-spread',
    file: 'strict-zone-spread.ts',
    objects: 47,
    chart: (app) => new StrictZoneSpreadChart(app, 'kruise'),
    intent: (m) => {
      const [deployment] = of(m, 'Deployment');
      expect(deployment.spec.replicas).toBe(3);
      expect(deployment.spec.template.spec.topologySpreadConstraints).toEqual([
        expect.objectContaining({
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'DoNotSchedule',
          maxSkew: 1,
        }),
      ]);
    },
  },
  {
    name: 'split-webhook-controller',
    file: 'split-webhook-controller.ts',
    objects: 26,
    chart: (app) => new SplitWebhookControllerChart(app, 'kruise'),
    intent: (m) => {
      expect(of(m, 'Deployment').map((d) => [d.metadata.name, d.spec.replicas])).toEqual([
        ['kruise-webhook', 3],
        ['kruise-controllers', 2],
      ]);
      expect(of(m, 'PodDisruptionBudget')).toHaveLength(2);
      expect(podSpecs(m).flatMap((s) => s.containers.map((c: Manifest) => c.image))).toEqual([
        'registry.example.com/kruise-ha/manager:0.1.0',
        'registry.example.com/kruise-ha/manager:0.1.0',
      ]);
      // The runtime ships its own CRDs; upstream-only parts are absent.
      expect(of(m, 'CustomResourceDefinition').length).toBeGreaterThan(0);
      expect(of(m, 'DaemonSet').concat(of(m, 'Job'))).toEqual([]);
    },
  },
  {
    name: 'cert-manager (private CA)',
    file: 'cert-manager.ts',
    objects: 48,
    chart: (app) => new CertManagerChart(app, 'kruise'),
    intent: (m) => {
      expect(of(m, 'Secret')).toEqual([]);
      expect(of(m, 'Certificate').map((c) => c.metadata.name)).toEqual(['kruise-webhook-ca', 'kruise-webhook-certs']);
      expect(of(m, 'Certificate')[1].spec.issuerRef).toEqual({
        name: 'kruise-webhook-ca-issuer',
        kind: 'Issuer',
        group: 'cert-manager.io',
      });
      for (const c of [...of(m, 'MutatingWebhookConfiguration'), ...of(m, 'ValidatingWebhookConfiguration')]) {
        expect(c.metadata.annotations['cert-manager.io/inject-ca-from']).toBe('kruise-system/kruise-webhook-certs');
      }
    },
  },
  {
    name: 'cert-manager (ClusterIssuer)',
    file: 'cert-manager.ts',
    objects: 45,
    chart: (app) => new CertManagerChart(app, 'kruise', { clusterIssuer: 'corp-ca' }),
    intent: (m) => {
      expect(of(m, 'Issuer')).toEqual([]);
      expect(of(m, 'Certificate').map((c) => c.spec.issuerRef)).toEqual([
        { name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' },
      ]);
    },
  },
  {
    name: 'offline-registry',
    file: 'offline-registry.ts',
    objects: 47,
    chart: (app) => new OfflineRegistryChart(app, 'kruise'),
    intent: (m) => {
      const specs = podSpecs(m);
      expect(specs).toHaveLength(2); // manager, daemon (no install-time Job: CRD deletion protection guards uninstall)
      for (const spec of specs) {
        expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
        for (const c of [...spec.containers, ...(spec.initContainers ?? [])])
          expect(c.image).toMatch(/^registry\.internal\.example:5000\/openkruise\//);
      }
    },
  },
  {
    name: 'small-cluster',
    file: 'small-cluster.ts',
    objects: 47,
    chart: (app) => new SmallClusterChart(app, 'kruise'),
    intent: (m) => {
      const [deployment] = of(m, 'Deployment');
      expect(deployment.spec.replicas).toBe(2);
      expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: 1, maxUnavailable: 0 });
      for (const name of ['mpod.kb.io', 'vpod.kb.io', 'vpodeviction.kb.io']) {
        expect(webhook(m, name)).toMatchObject({ failurePolicy: 'Ignore', timeoutSeconds: 5 });
      }
      // Only the pod group is relaxed.
      expect(webhook(m, 'mcloneset.kb.io')).toMatchObject({ failurePolicy: 'Fail', timeoutSeconds: 10 });
    },
  },
  {
    name: 'runtime-image',
    file: 'runtime-image.ts',
    objects: 24,
    chart: (app) => new RuntimeImageChart(app, 'kruise'),
    intent: (m) => {
      // The Deployment runs the content-addressed reference of the bundle built at synth.
      const [deployment] = of(m, 'Deployment');
      expect(deployment.spec.replicas).toBe(3);
      expect(deployment.spec.template.spec.containers[0].image).toMatch(
        /^registry\.example\.com\/platform\/kruise-ha-manager:[0-9a-f]{20}$/,
      );
      expect(deployment.spec.template.spec.containers[0].command).toBeUndefined();
    },
  },
  {
    name: 'sidecarset',
    file: 'sidecarset.ts',
    objects: 25,
    chart: (app) => new SidecarSetChart(app, 'kruise'),
    intent: (m) => {
      // The runtime serves the CRDs of what it carries (SidecarSet, WorkloadSpread), and the SidecarSet comes last.
      expect(of(m, 'CustomResourceDefinition').map((c) => c.metadata.name)).toEqual([
        'sidecarsets.apps.kruise.io',
        'workloadspreads.apps.kruise.io',
      ]);
      expect(podSpecs(m)[0].containers[0].image).toBe('registry.example.com/kruise-ha/manager:0.1.0');
      expect(m[m.length - 1].kind).toBe('SidecarSet');
      const [sidecarSet] = of(m, 'SidecarSet');
      expect(sidecarSet.metadata).toEqual({ name: 'log-shipper' });
      expect(sidecarSet.spec.containers).toEqual([
        expect.objectContaining({
          name: 'log-shipper',
          podInjectPolicy: 'AfterAppContainer',
          shareVolumePolicy: { type: 'enabled' },
          transferEnv: [{ sourceContainerName: 'app', envNames: ['APP_NAME', 'APP_ENV'] }],
          resources: { requests: { cpu: '20m', memory: '32Mi' }, limits: { memory: '64Mi' } },
        }),
      ]);
      expect(sidecarSet.spec.updateStrategy).toEqual({ type: 'RollingUpdate', maxUnavailable: '10%', partition: 2 });
      // The manager's pod webhook intercepts pod creation everywhere but kube-system and its own namespace.
      expect(webhook(m, 'mpod.kb.io').namespaceSelector.matchExpressions[0].values).toEqual([
        'kube-system',
        'kruise-system',
      ]);
    },
  },
  {
    name: 'upstream-image',
    file: 'upstream-image.ts',
    objects: 35,
    chart: (app) => new UpstreamImageChart(app, 'kruise'),
    intent: (m) => {
      expect(of(m, 'CustomResourceDefinition')).toEqual([]);
      const rules = of(m, 'ClusterRole').find((r) => r.metadata.name === 'kruise-manager-role').rules;
      expect(rules).toEqual(
        expect.arrayContaining([
          { apiGroups: ['games.example.com'], resources: ['gameservers/scale'], verbs: ['get', 'list', 'watch'] },
        ]),
      );
      expect(of(m, 'Job')[0].metadata.annotations['argocd.argoproj.io/hook']).toBe('PreDelete');
      expect(of(m, 'ServiceMonitor')).toHaveLength(1);
      expect(of(m, 'NetworkPolicy')).toHaveLength(1);
      const [deployment] = of(m, 'Deployment');
      expect(deployment.spec.template.spec.hostNetwork).toBe(false);
      expect(deployment.spec.template.spec.containers[0].image).toBe('openkruise/kruise-manager:v1.9.1');
      const wave = (o: Manifest) => Number(o.metadata.annotations?.['argocd.argoproj.io/sync-wave']);
      expect(wave(of(m, 'Namespace')[0])).toBe(0);
      expect(wave(deployment)).toBe(2);
      expect(wave(of(m, 'ValidatingWebhookConfiguration')[0])).toBe(3);
    },
  },
];

/** The runtime's own flags (lib/contract.ts); upstream kruise-manager would refuse to start with them. */
const RUNTIME_ONLY: ReadonlySet<string> = new Set([
  Flags.role,
  Flags.drainTimeout,
  Flags.gracefulShutdownTimeout,
  Flags.maxCacheStaleness,
  Flags.certMode,
  Flags.logLevel,
]);
/**
 * Flags every upstream kruise-manager release parses (its main.go, with controller-runtime's and
 * klog's) that this library renders.
 */
const UPSTREAM_FLAGS = new Set([
  ...Object.values(Flags).filter((f) => !RUNTIME_ONLY.has(f)),
  'enable-pprof',
  'pprof-addr',
]);

const FIRST = new Set(['CustomResourceDefinition', 'Namespace']);
const LAST = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
/** Objects the manager serves: after its webhook configurations, which default and validate them. */
const SERVED = new Set(['SidecarSet']);

function synth(example: Example): Manifest[] {
  return Testing.synth(example.chart(Testing.app()));
}

describe.each(EXAMPLES.map((e) => [e.name, e] as const))('example %s', (_name, example) => {
  // In beforeAll, so an example that fails to synth fails its own tests, not the whole file.
  let manifest: Manifest[] = [];
  beforeAll(() => {
    manifest = synth(example);
  });

  it('passes the Kubernetes schema (or a known non-core check) for every object', () => {
    expect(validateAll(manifest)).toEqual([]);
  });

  it('renders a stable number of objects', () => {
    expect(manifest).toHaveLength(example.objects);
  });

  it('orders CRDs and Namespaces first, then the manager, its webhook configurations, and what it serves', () => {
    const all = manifest.map((o) => o.kind as string);
    const served = all.findIndex((k) => SERVED.has(k));
    const kinds = served < 0 ? all : all.slice(0, served);
    expect(all.slice(kinds.length).filter((k) => !SERVED.has(k))).toEqual([]);
    const firstRun = kinds.findIndex((k) => !FIRST.has(k));
    expect(kinds.slice(firstRun).filter((k) => FIRST.has(k))).toEqual([]);
    expect(kinds.slice(-2).sort()).toEqual([...LAST].sort());
    expect(kinds.slice(0, -2).filter((k) => LAST.has(k))).toEqual([]);
  });

  it('renders what the example is about', () => {
    example.intent(manifest);
  });

  it('gives every manager container a command line its binary parses', () => {
    for (const d of of(manifest, 'Deployment')) {
      const container = d.spec.template.spec.containers[0];
      if (container.command?.[0] === '/manager') {
        // Upstream's flags, pprof explicitly off: kruise-manager refuses an unknown flag at start.
        expect(
          container.args
            .map((a: string) => a.split('=')[0].slice(2))
            .filter((f: string) => !UPSTREAM_FLAGS.has(f) && !f.endsWith('-workers')),
        ).toEqual([]);
        expect(container.args).toContain('--enable-pprof=false');
      } else {
        // The runtime's own parser: the contract round-trips through every example.
        expect(() =>
          parseOptions(container.args, { POD_NAMESPACE: d.metadata.namespace, POD_NAME: 'p' }),
        ).not.toThrow();
      }
    }
  });
});

describe('the validator', () => {
  let deployment: Manifest;
  beforeAll(() => {
    [deployment] = synth(EXAMPLES[0]).filter((o: Manifest) => o.kind === 'Deployment');
  });

  it('accepts the unmodified Deployment (control for the cases below)', () => {
    expect(validateObject(deployment)).toEqual([]);
  });

  it('rejects a Deployment with a string replica count', () => {
    const broken = structuredClone(deployment);
    broken.spec.replicas = 'two';
    expect(validateObject(broken)).toEqual(['data/spec/replicas must be integer']);
  });

  it('rejects a Deployment whose container has no name', () => {
    const broken = structuredClone(deployment);
    delete broken.spec.template.spec.containers[0].name;
    expect(validateObject(broken)).toEqual(['data/spec/template/spec/containers/0 must have required property name']);
  });

  it('rejects an unknown kind instead of skipping it', () => {
    expect(
      validateObject({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'n' } }),
    ).toEqual([expect.stringMatching(/example\.com\/v1\/Widget has no schema/)]);
  });

  it('rejects a known core kind under the wrong apiVersion', () => {
    expect(validateObject({ ...deployment, apiVersion: 'apps/v1beta1' })).toEqual([expect.stringMatching(/no schema/)]);
  });

  it('judges a SidecarSet by our CRD schema and its pod parts by the Pod schema', () => {
    const [sidecarSet] = synth(EXAMPLES.find((e) => e.name === 'sidecarset')!).filter(
      (o: Manifest) => o.kind === 'SidecarSet',
    );
    expect(validateObject(sidecarSet)).toEqual([]);
    const broken = structuredClone(sidecarSet);
    broken.metadata.namespace = 'apps';
    broken.spec.updateStrategy.paused = 'yes';
    broken.spec.containers[0].podInjectPolicy = 'First';
    broken.spec.containers[0].resources.limits.memory = { size: 64 };
    broken.spec.injectionStrategy = { paused: false, revision: { revisionName: 'r1', policy: 'Sometimes' } };
    broken.spec.volumes[0] = { configMap: { name: 'x' } };
    broken.status = { matched: 3 };
    expect(validateObject(broken)).toEqual([
      'spec.containers[0].podInjectPolicy: "First" is not one of ["BeforeAppContainer","AfterAppContainer"]',
      'spec.updateStrategy.paused: must be of type boolean, got "yes"',
      'spec.volumes[0].name: is required',
      'spec.injectionStrategy.revision.policy: "Sometimes" is not one of ["Always","Partial"]',
      'status.matched: unknown field (the API server would prune it)',
      'metadata.namespace: SidecarSet is cluster-scoped',
      expect.stringMatching(/^pod parts: .*resources\/limits\/memory/),
    ]);
  });

  it('rejects a non-core object missing what its controller needs', () => {
    expect(
      validateObject({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'c', namespace: 'n' },
        spec: {},
      }),
    ).toEqual(['spec.secretName is required', 'spec.issuerRef.name is required', 'spec needs commonName or dnsNames']);
  });
});

describe('example mains', () => {
  const examplesDir = fileURLToPath(new URL('../../examples/', import.meta.url));
  const tsx = fileURLToPath(new URL('../../node_modules/tsx/dist/cli.mjs', import.meta.url));
  const files = [...new Set(EXAMPLES.map((e) => e.file))];

  it('covers every example file', () => {
    expect(files.sort()).toEqual(
      readdirSync(examplesDir)
        .filter((f) => f.endsWith('.ts'))
        .sort(),
    );
  });

  it('synthesize from any working directory into ./cdk8s.out there', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'kruise-examples-'));
    try {
      const run = promisify(execFile);
      // Unset, so the mains fall back to cdk8s' default outdir (`dist`, relative to the cwd).
      const env = { ...process.env };
      delete env.CDK8S_OUTDIR;
      // The examples import kruise-ha by name; tsconfig.dev.json maps the name to the source.
      const tsconfig = fileURLToPath(new URL('../../tsconfig.dev.json', import.meta.url));
      await Promise.all(
        files.map((f) => run(process.execPath, [tsx, '--tsconfig', tsconfig, join(examplesDir, f)], { cwd, env })),
      );
      const written = readdirSync(join(cwd, 'cdk8s.out')).filter((f) => f.endsWith('.k8s.yaml'));
      // One file per example: the mains use distinct chart ids so they never overwrite each other.
      expect(written).toHaveLength(files.length);
      expect(existsSync(join(cwd, 'cdk8s.out', 'kruise.k8s.yaml'))).toBe(true);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  }, 60_000);
});
