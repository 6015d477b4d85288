import { describe, expect, it } from '@jest/globals';
import type { V1Deployment } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { Names, SecretKeys } from '../../../lib/contract.js';
import { upstreamRelease } from '../../../lib/upstream/releases.js';
import { evaluate } from '../../../lib/doctor/doctor.js';
import { expectations } from '../../../lib/doctor/expectations.js';
import type { CheckResult } from '../../../lib/doctor/model.js';
import { renderJson, renderTable } from '../../../lib/doctor/report.js';
import { generateCA, generateServingCert, servingDnsNames } from '../../../lib/runtime/certs/generate.js';
import { b64, healthy, managerPod, nodes, NOW, setPods, type Fixture } from './fixture.js';
import { KruiseManager, ManagerImage, ManagerTopology } from '../../../lib/index.js';

const KRUISE_RELEASE = upstreamRelease();

const failing = (checks: CheckResult[]) => checks.filter((c) => c.status === 'fail').map((c) => c.id);
const run = (f: Fixture) => evaluate(f.snapshot, f.permissions);
const find = (checks: CheckResult[], id: string) => checks.find((c) => c.id === id)!;

/** Faults a person meets in the field, each applied to a healthy fixture: exactly one check must fail. */
const FAULTS: Array<[string, string, (f: Fixture) => void | Promise<void>, RegExp]> = [
  [
    'no ready endpoint',
    'webhook-endpoints',
    (f) => {
      f.snapshot.endpointSlices = [];
    },
    /no ready endpoint: \d+ webhooks fail closed now .*pod creation fails cluster-wide/,
  ],
  [
    'no ready endpoint (all not ready)',
    'webhook-endpoints',
    (f) => {
      f.snapshot.endpointSlices = f.snapshot.endpointSlices.map((s) => ({
        ...s,
        endpoints: (s.endpoints ?? []).map((e) => ({ ...e, conditions: { ready: false } })),
      }));
    },
    /no ready endpoint/,
  ],
  [
    'stale caBundle',
    'ca-bundle',
    async (f) => {
      const other = await generateCA({ commonName: 'other', now: NOW, validityMs: 86400_000 });
      f.snapshot.mutating = {
        ...f.snapshot.mutating!,
        webhooks: f.snapshot.mutating!.webhooks!.map((w, i) =>
          i === 0 ? { ...w, clientConfig: { ...w.clientConfig, caBundle: b64(other.certPem) } } : w,
        ),
      };
    },
    /1 of \d+ caBundles do not contain the CA .*unknown authority.*mutating webhook/,
  ],
  [
    'expired certificate',
    'certificate',
    async (f) => {
      const expired = await generateServingCert({
        ca: f.ca,
        dnsNames: servingDnsNames(Names.webhookService, f.snapshot.namespace),
        now: NOW - 400 * 86400_000,
        validityMs: 365 * 86400_000,
      });
      f.snapshot.secret = {
        ...f.snapshot.secret,
        data: { ...f.snapshot.secret!.data, [SecretKeys.serverCert]: b64(expired.certPem) },
      };
    },
    /serving certificate expired 35d ago/,
  ],
  [
    'a webhook entry removed',
    'webhook-configurations',
    (f) => {
      f.snapshot.validating = {
        ...f.snapshot.validating!,
        webhooks: f.snapshot.validating!.webhooks!.filter((w) => w.name !== 'vsidecarset.kb.io'),
      };
    },
    /1 webhook is missing: validating vsidecarset.kb.io \(\/validate-apps-kruise-io-(v1alpha1-)?sidecarset\)/,
  ],
  [
    'nodes without zone labels',
    'zone-labels',
    (f) => {
      f.snapshot.nodes = nodes({
        'node-a1': undefined,
        'node-b1': undefined,
        'node-a2': undefined,
        'node-b2': undefined,
      });
    },
    /4 of 4 nodes have no topology.kubernetes.io\/zone label .*replicas can share a failure domain/,
  ],
  [
    'stopped leader',
    'leader',
    (f) => {
      f.snapshot.lease = {
        ...f.snapshot.lease!,
        spec: { ...f.snapshot.lease!.spec, renewTime: new Date(NOW - 47_000) },
      };
    },
    /stopped renewing 47s ago \(lease duration 15s\) and no standby took over/,
  ],
  [
    'missing CRD',
    'crds',
    (f) => {
      f.snapshot.crds = f.snapshot.crds.filter((c) => c.metadata!.name !== 'sidecarsets.apps.kruise.io');
    },
    /1 CRD is missing: sidecarsets.apps.kruise.io/,
  ],
  [
    'missing permission',
    'rbac',
    (f) => {
      f.permissions = f.permissions.map((r) =>
        r.permission.resource === 'pods' &&
        r.permission.verb === 'patch' &&
        !r.permission.subresource &&
        !r.permission.namespace
          ? { ...r, allowed: false }
          : r,
      );
    },
    /missing 1 of \d+ permissions the manager needs: patch pods \(cluster-wide\)/,
  ],
  [
    'pod webhook intercepting kube-system',
    'namespace-exclusion',
    (f) => {
      f.snapshot.mutating = {
        ...f.snapshot.mutating!,
        webhooks: f.snapshot.mutating!.webhooks!.map((w) =>
          w.name === 'mpod.kb.io' ? { ...w, namespaceSelector: undefined } : w,
        ),
      };
    },
    /mpod.kb.io intercepts pods in kube-system, mpod.kb.io intercepts pods in kruise-system: .*deadlock/,
  ],
  [
    'replicas in one zone',
    'replica-spread',
    (f) => {
      const d = f.snapshot.deployments[0];
      setPods(f, [managerPod(d, 'm-0', 'node-a1'), managerPod(d, 'm-1', 'node-a2')]);
    },
    /2 pods in 1 zone \(a\) although 2 zones have nodes/,
  ],
  [
    'no room for the surge',
    'rollout-capacity',
    (f) => {
      f.snapshot.nodes = nodes({ 'node-a1': 'a', 'node-b1': 'b', 'node-a2': 'a' });
    },
    /a rollout cannot complete: 2 surge pods need a node without a manager pod and with ports .* free; 1 such node/,
  ],
  [
    'a replica not ready',
    'manager-replicas',
    (f) => {
      const d = f.snapshot.deployments[0];
      setPods(f, [f.snapshot.pods[0], managerPod(d, 'm-1', 'node-b1', false)]);
    },
    /1\/2 ready: fewer than 2 ready replicas/,
  ],
  [
    'a budget that allows no disruption',
    'disruption-budget',
    (f) => {
      f.snapshot.pdbs = f.snapshot.pdbs.map((p) => ({ ...p, status: { ...p.status!, disruptionsAllowed: 0 } }));
    },
    /allows no disruption .* node drains block/,
  ],
];

describe.each(['runtime', 'upstream'] as const)('doctor on a %s install', (flavour) => {
  it('reports all green on a healthy install', async () => {
    const report = run(await healthy(flavour));
    expect(report.checks.filter((c) => c.status !== 'pass').map((c) => `${c.id}: ${c.message}`)).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.flavour).toBe(flavour);
  });

  it.each(FAULTS)('finds %s (%s) and says how to fix it', async (_name, id, inject, message) => {
    const f = await healthy(flavour);
    await inject(f);
    const report = run(f);
    expect(failing(report.checks)).toEqual([id]);
    expect(find(report.checks, id).message).toMatch(message);
    expect(find(report.checks, id).fix).toMatch(/\w{3,}/);
    expect(report.ok).toBe(false);
  });
});

describe('doctor: upstream specifics', () => {
  it('expects what upstream v1.9.1 serves for the rendered gates: 37 webhooks, its 18 CRDs, its Lease', async () => {
    const f = await healthy('upstream');
    const e = expectations(f.snapshot.namespace, f.snapshot.deployments)!;
    expect(e.release).toBe('v1.9.1');
    expect(e.versionNote).toBeUndefined();
    expect(e.webhooks).toHaveLength(37);
    expect(e.crds.map((c) => c.name).sort()).toEqual(KRUISE_RELEASE.crds.map((c) => `${c.plural}.${c.group}`).sort());
    expect(e.conversionCrds).toEqual([
      'daemonsets.apps.kruise.io',
      'sidecarsets.apps.kruise.io',
      'statefulsets.apps.kruise.io',
    ]);
    expect(e.lease).toEqual({ name: 'kruise-manager', namespace: 'kruise-system' });
  });

  it("judges a v1.8.3 install against v1.8.3's data: healthy as rendered, its ImagePullJob webhooks expected", async () => {
    const f = await healthy('upstream', 'kruise-system', 'v1.8.3');
    const e = expectations(f.snapshot.namespace, f.snapshot.deployments)!;
    expect(e.release).toBe('v1.8.3');
    expect(e.conversionCrds).toEqual(['statefulsets.apps.kruise.io']);
    expect(e.webhooks.map((w) => w.name)).toContain('vimagepulljob.kb.io');
    expect(e.webhooks.map((w) => w.name)).not.toContain('vimagepulljob-v1beta1.kb.io');
    expect(failing(run(f).checks)).toEqual([]);
  });

  it("reports an upgrade stuck half-way: v1.9.1's webhook configurations in front of a v1.8.3 manager", async () => {
    const old = await healthy('upstream', 'kruise-system', 'v1.8.3');
    const next = await healthy('upstream');
    old.snapshot.validating = next.snapshot.validating;
    const check = find(run(old).checks, 'webhook-configurations');
    expect(check.status).toBe('fail');
    // v1.8.3 serves the ImagePullJob webhooks under their old names; v1.9.1's are not served by it.
    expect(check.message).toMatch(/webhooks are missing: validating vimagelistpulljob\.kb\.io .*vimagepulljob\.kb\.io/);
    expect(JSON.stringify(check)).toMatch(/not served by this upstream manager.*vimagepulljob-v1beta1\.kb\.io/);
  });

  it('picks the release from a tag it does not know (same minor line) or, for a digest, from the command line', async () => {
    const f = await healthy('upstream', 'kruise-system', 'v1.8.3');
    const c = f.snapshot.deployments[0].spec!.template.spec!.containers[0];
    c.image = 'openkruise/kruise-manager:v1.8.2';
    let e = expectations(f.snapshot.namespace, f.snapshot.deployments)!;
    expect(e.release).toBe('v1.8.3');
    expect(e.versionNote).toMatch(/the image tag is v1\.8\.2; judged against v1\.8\.3's definitions/);
    c.image = `openkruise/kruise-manager@sha256:${'a'.repeat(64)}`;
    e = expectations(f.snapshot.namespace, f.snapshot.deployments)!;
    expect(e.release).toBe('v1.9.1');
    expect(e.versionNote).toMatch(
      /has no release tag; judged against v1\.9\.1's definitions, the newest release whose flags/,
    );
    // A v1.9-only flag on a v1.7 tag: same minor line wins (the tag says what runs).
    c.image = 'openkruise/kruise-manager:v1.7.9';
    expect(expectations(f.snapshot.namespace, f.snapshot.deployments)!.release).toBe('v1.7.0');
    // A digest whose command line names a gate only v1.9 has.
    c.image = `openkruise/kruise-manager@sha256:${'b'.repeat(64)}`;
    c.args = c.args!.map((a) => (a.startsWith('--feature-gates=') ? `${a},InPlacePodVerticalScaling=true` : a));
    expect(expectations(f.snapshot.namespace, f.snapshot.deployments)!.release).toBe('v1.9.1');
  });

  it('serves fewer webhooks with PodWebhook=false, so a pod webhook left behind is reported as not served', async () => {
    const f = await healthy('upstream');
    const d = f.snapshot.deployments[0];
    const c = d.spec!.template.spec!.containers[0];
    c.args = c.args!.map((a) => (a.startsWith('--feature-gates=') ? `${a},PodWebhook=false` : a));
    const check = find(run(f).checks, 'webhook-configurations');
    expect(check.status).toBe('fail');
    expect(check.message).toMatch(
      /entries are not served by this upstream manager \(calls fail\): mutating mpod.kb.io \/mutate-pod/,
    );
  });

  it('expects no pod webhook from a runtime manager run with PodWebhook=false', async () => {
    const f = await healthy('runtime');
    const c = f.snapshot.deployments[0].spec!.template.spec!.containers[0];
    c.args = [...c.args!.filter((a) => !a.startsWith('--feature-gates=')), '--feature-gates=PodWebhook=false'];
    expect(expectations(f.snapshot.namespace, f.snapshot.deployments)!.webhooks.map((w) => w.name)).toEqual([
      'msidecarset.kb.io',
      'vsidecarset.kb.io',
      'vworkloadspread.kb.io',
    ]);
  });

  it('reports a stale template annotation, which upstream would restore on restart (kruise #374)', async () => {
    const f = await healthy('upstream');
    const template = JSON.parse(f.snapshot.validating!.metadata!.annotations!.template) as Array<{ name: string }>;
    f.snapshot.validating!.metadata!.annotations!.template = JSON.stringify(
      template.filter((w) => w.name !== 'vpod.kb.io'),
    );
    const check = find(run(f).checks, 'webhook-configurations');
    expect([check.status, check.message]).toEqual([
      'fail',
      expect.stringMatching(/template annotation is stale .*vpod.kb.io \/validate-pod/),
    ]);
  });

  it('checks the pull-secret writes the upstream manager needs in kruise-daemon-config, where a Role grants them', async () => {
    const f = await healthy('upstream');
    const inDaemonConfig = (r: { permission: { namespace?: string } }) =>
      r.permission.namespace === Names.daemonConfigNamespace;
    expect(f.permissions.filter(inDaemonConfig).map((r) => r.permission.verb)).toEqual(
      expect.arrayContaining(['create', 'update']),
    );
    f.permissions = f.permissions.map((r) =>
      inDaemonConfig(r) && r.permission.verb === 'create' ? { ...r, allowed: false } : r,
    );
    const check = find(run(f).checks, 'rbac');
    expect([check.status, check.message]).toEqual([
      'fail',
      expect.stringMatching(/missing 1 of \d+ permissions .*: create secrets in kruise-daemon-config/),
    ]);
    expect(check.fix).toMatch(/Role in kruise-daemon-config/);
  });

  it('expects the runtime to read the kruise-configuration ConfigMap in its namespace, by name, and names a missing grant', async () => {
    const f = await healthy('runtime', 'ops');
    const configMaps = f.permissions.filter((r) => r.permission.resource === 'configmaps');
    expect(configMaps.map((r) => r.permission)).toEqual(
      ['get', 'list', 'watch'].map((verb) => ({
        verb,
        group: '',
        resource: 'configmaps',
        name: 'kruise-configuration',
        namespace: 'ops',
      })),
    );
    f.permissions = f.permissions.map((r) =>
      r.permission.resource === 'configmaps' && r.permission.verb === 'watch' ? { ...r, allowed: false } : r,
    );
    const check = find(run(f).checks, 'rbac');
    expect([check.status, check.message]).toEqual([
      'fail',
      expect.stringMatching(/missing 1 of \d+ permissions .*: watch configmaps.*kruise-configuration.* in ops/),
    ]);
  });

  it('names the controllers and webhooks a missing CRD breaks', async () => {
    const f = await healthy('upstream');
    f.snapshot.crds = f.snapshot.crds.filter((c) => c.metadata!.name !== 'clonesets.apps.kruise.io');
    const check = find(run(f).checks, 'crds');
    expect(check.message).toMatch(/skips the controllers and deletes the webhooks/);
    expect(check.details).toEqual([
      expect.stringMatching(
        /^clonesets.apps.kruise.io: needed by cloneset-controller, mcloneset.kb.io, vcloneset.kb.io/,
      ),
    ]);
  });

  it('checks the StatefulSet CRD conversion caBundle too', async () => {
    const f = await healthy('upstream');
    f.snapshot.crds = f.snapshot.crds.map((c) =>
      c.metadata!.name === 'statefulsets.apps.kruise.io'
        ? {
            ...c,
            spec: {
              ...c.spec,
              conversion: {
                strategy: 'Webhook',
                webhook: {
                  conversionReviewVersions: ['v1'],
                  clientConfig: { ...c.spec.conversion!.webhook!.clientConfig, caBundle: undefined },
                },
              },
            },
          }
        : c,
    );
    expect(find(run(f).checks, 'ca-bundle').message).toMatch(
      /1 of 40 caBundles .*\(1 empty\).*conversion webhook of CRD statefulsets.apps.kruise.io/,
    );
  });
});

describe('doctor: other findings', () => {
  it('warns on flapping leadership from LeaderElection events', async () => {
    const f = await healthy('upstream');
    f.snapshot.leaderEvents = [1, 2, 3].map((i) => ({
      metadata: {},
      involvedObject: {},
      reason: 'LeaderElection',
      count: 1,
      lastTimestamp: new Date(NOW - i * 60_000),
    }));
    const check = find(run(f).checks, 'leader');
    expect([check.status, check.message]).toEqual([
      'warn',
      expect.stringMatching(/leadership changed 3 times in the last hour/),
    ]);
  });

  it('fails without a manager Deployment and says where to look', async () => {
    const f = await healthy('runtime');
    f.snapshot.deployments = [];
    const check = find(run(f).checks, 'manager-replicas');
    expect([check.status, check.fix]).toEqual(['fail', expect.stringMatching(/--namespace/)]);
  });

  it('counts another pod holding a manager port on a free node as no room', async () => {
    const f = await healthy('runtime');
    const blocker = {
      metadata: { name: 'ingress', namespace: 'web' },
      spec: { nodeName: 'node-a2', containers: [{ name: 'c', ports: [{ containerPort: 1, hostPort: 9876 }] }] },
    };
    f.snapshot.hostPortPods = [...f.snapshot.hostPortPods, blocker];
    const check = find(run(f).checks, 'rollout-capacity');
    expect(check.status).toBe('fail');
    expect(check.details).toContain('node-a2: web/ingress holds port 9876');
  });
});

describe('node placement the doctor reads', () => {
  it("counts only nodes the manager's required node affinity allows (the nodeAffinity prop)", async () => {
    const f = await healthy('runtime');
    const spec = f.snapshot.deployments[0].spec!.template.spec!;
    spec.affinity = {
      ...spec.affinity,
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'pool', operator: 'In', values: ['system'] }] },
            { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-a1', 'node-b1'] }] },
          ],
        },
      },
    };
    f.snapshot.nodes = nodes().map((n) =>
      n.metadata.name === 'node-a2'
        ? { ...n, metadata: { ...n.metadata, labels: { ...n.metadata.labels, pool: 'system' } } }
        : n,
    );
    const check = find(run(f).checks, 'rollout-capacity');
    expect(check.status).toBe('fail');
    expect(check.message).toMatch(/2 surge pods need .*; 1 such node \(node-a2\)/);
  });
});

describe('rollout capacity of the split topology', () => {
  const splitDeployments = () => {
    const chart = new Chart(Testing.app(), 'split');
    new KruiseManager(chart, 'kruise', {
      image: ManagerImage.runtime('example.com/kruise-ha:1'),
      topology: ManagerTopology.split({ webhookReplicas: 2, controllerReplicas: 2 }),
    });
    return (Testing.synth(chart) as V1Deployment[]).filter((o) => o.kind === 'Deployment');
  };
  /** Both roles' pods on node-a1 and node-b1 (4 nodes in all). */
  const splitOnTwoNodes = async () => {
    const f = await healthy('runtime');
    const [webhook, controllers] = (f.snapshot.deployments = splitDeployments());
    setPods(f, [
      managerPod(webhook, 'kruise-webhook-abc-1', 'node-a1'),
      managerPod(webhook, 'kruise-webhook-abc-2', 'node-b1'),
      managerPod(controllers, 'kruise-controllers-abc-1', 'node-a1'),
      managerPod(controllers, 'kruise-controllers-abc-2', 'node-b1'),
    ]);
    return f;
  };

  it('lets a webhook pod and a controller pod share a node: each role needs its own free nodes only', async () => {
    const f = await splitOnTwoNodes();
    const check = find(run(f).checks, 'rollout-capacity');
    expect(check.status).toBe('pass');
    expect(check.message).toMatch(/^kruise-webhook: 2 surge pods need .* ports 9876, 8080, 8000 free; 2 such nodes/);
    expect(check.message).toMatch(/kruise-controllers: 2 surge pods need .* ports 8081, 8001 free; 2 such nodes/);
  });

  it('blames only the role whose ports are taken', async () => {
    const f = await splitOnTwoNodes();
    const blocker = {
      metadata: { name: 'exporter', namespace: 'mon' },
      spec: { nodeName: 'node-a2', containers: [{ name: 'c', ports: [{ containerPort: 1, hostPort: 8081 }] }] },
    };
    f.snapshot.hostPortPods = [...f.snapshot.hostPortPods, blocker];
    const check = find(run(f).checks, 'rollout-capacity');
    expect(check.status).toBe('fail');
    expect(check.message).toMatch(
      /^a rollout cannot complete: kruise-controllers: 2 surge pods .* 1 such node \(node-b2\)/,
    );
    expect(check.message).not.toContain('kruise-webhook:');
    expect(check.details).toContain('node-a2: mon/exporter holds port 8081');
  });
});

describe('doctor report', () => {
  it('prints one line per check, the fix under each failure, and no colour unless asked', async () => {
    const f = await healthy('runtime');
    f.snapshot.endpointSlices = [];
    const text = renderTable(run(f), { colour: false, width: 0 });
    expect(text).not.toContain('\u001b[');
    expect(text).toMatch(/^FAIL {2}webhook-endpoints +Service kruise-webhook-service has no ready endpoint/m);
    expect(text).toMatch(/^ +fix: get a manager replica ready/m);
    expect(text).toMatch(/^PASS {2}leader /m);
    expect(text).toMatch(/12 passed, 1 failed, 0 warnings$/m);
    expect(renderTable(run(f), { colour: true, width: 0 })).toContain('\u001b[31mFAIL');
  });

  it('gives machines JSON with every check', async () => {
    const report = JSON.parse(renderJson(run(await healthy('runtime'))));
    expect(report.ok).toBe(true);
    expect(report.checks.map((c: CheckResult) => c.id)).toEqual([
      'manager-replicas',
      'webhook-endpoints',
      'leader',
      'certificate',
      'ca-bundle',
      'webhook-configurations',
      'namespace-exclusion',
      'zone-labels',
      'replica-spread',
      'rollout-capacity',
      'crds',
      'disruption-budget',
      'rbac',
    ]);
  });
});
