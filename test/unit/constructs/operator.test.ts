// Operator: the HA deployment of a program on the runtime, its names, webhooks and RBAC read from the program's own
// registrations at synth (the bundle runs with --registrations); beside KruiseManager and another Operator in one
// App without a shared name; and the synth-time checks (a binding not rendered, an entry not served, a kind not
// granted, a flag the program refuses, two copies of one program).
import { describe, expect, it } from '@jest/globals';
import { ApiObject, App, Chart, JsonPatch, Testing } from 'cdk8s';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OwnOperatorChart } from '../../../examples/own-operator/chart.js';
import { KruiseManager, Operator, OperatorProgram, RuntimeImage, type OperatorProps } from '../../../lib/index.js';
import { find, type Manifest } from './synth.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}.ts`, import.meta.url));
const outdir = () => mkdtempSync(join(tmpdir(), 'operator-test-'));

function auditOperator(chart: Chart, props: Partial<OperatorProps> = {}, id = 'Audit'): Operator {
  const image = new RuntimeImage(chart, `${id}Image`, {
    repository: 'registry.example.com/audit',
    entrypoint: fixture('audit-operator'),
    outdir: outdir(),
  });
  return new Operator(chart, id, { program: OperatorProgram.fromRuntimeImage(image), ...props });
}

describe('Operator: the example (examples/own-operator)', () => {
  const app = Testing.app({ outdir: outdir() });
  const chart = new OwnOperatorChart(app, 'team');
  const objects = Testing.synth(chart) as Manifest[];

  it("names every object after the program, none after Kruise's", () => {
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names.every((n) => n.split('/')[1].startsWith('team-operator'))).toBe(true);
    expect(names.join(' ')).not.toMatch(/kruise/);
    expect(objects.map((o) => o.kind)).not.toContain('CustomResourceDefinition');
    expect(chart.operator.namespace).toBe('team-operator');
  });

  it('renders the binding as a webhook entry: path, rules, namespace labels, the exempt namespaces', () => {
    const mutating = find(objects, 'MutatingWebhookConfiguration', 'team-operator-mutating-webhook-configuration');
    expect(mutating.webhooks).toHaveLength(1);
    expect(mutating.webhooks[0]).toMatchObject({
      name: 'mpod.team-operator.kruise-ha.io',
      clientConfig: {
        service: { name: 'team-operator-webhook-service', namespace: 'team-operator', path: '/mutate--v1-pod' },
      },
      rules: [
        { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' },
      ],
      namespaceSelector: {
        matchLabels: { team: 'x' },
        matchExpressions: [
          { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'team-operator'] },
        ],
      },
      failurePolicy: 'Fail',
      timeoutSeconds: 10,
      sideEffects: 'None',
    });
    expect(find(objects, 'ValidatingWebhookConfiguration').webhooks).toEqual([]);
  });

  it('grants what the registrations name and nothing of Kruise', () => {
    const role = find(objects, 'ClusterRole', 'team-operator-role');
    expect(role.rules).toContainEqual({
      apiGroups: [''],
      resources: ['configmaps'],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    });
    expect(JSON.stringify(role.rules)).not.toMatch(/pods|apps\.kruise\.io|nodes/);
    const certs = find(objects, 'ClusterRole', 'team-operator-certs-role');
    expect(certs.rules.flatMap((r: Manifest) => r.resourceNames)).toEqual([
      'team-operator-mutating-webhook-configuration',
      'team-operator-validating-webhook-configuration',
    ]);
    expect(find(objects, 'Role', 'team-operator-leader-election-role').metadata.namespace).toBe('team-operator');
  });

  it("runs the program's image with the runtime's HA settings and its own Lease, Secret and Service", () => {
    const deployment = find(objects, 'Deployment', 'team-operator');
    const spec = deployment.spec.template.spec;
    const container = spec.containers[0];
    expect(container.image).toMatch(/^registry\.example\.com\/team\/team-operator:[0-9a-f]{20}$/);
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--leader-election-id=team-operator',
        '--leader-election-namespace=team-operator',
        '--role=all',
      ]),
    );
    const env = Object.fromEntries(
      container.env.filter((e: Manifest) => e.value).map((e: Manifest) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
      SECRET_NAME: 'team-operator-webhook-certs',
      SERVICE_NAME: 'team-operator-webhook-service',
    });
    expect(deployment.spec.replicas).toBe(2);
    expect(deployment.spec.strategy.rollingUpdate).toEqual({ maxSurge: '100%', maxUnavailable: 0 });
    // Its own pod network by default: on host network its ports would collide with Kruise's on a node.
    expect(spec.hostNetwork).toBe(false);
    expect(container.readinessProbe.httpGet.path).toBe('/readyz');
    expect(deployment.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/name': 'team-operator',
      'kruise.io/component': 'all',
    });
    expect(find(objects, 'Service', 'team-operator-webhook-service').spec.selector).toEqual(
      deployment.spec.selector.matchLabels,
    );
    expect(find(objects, 'PodDisruptionBudget', 'team-operator').spec.maxUnavailable).toBe(1);
  });
});

describe('Operator beside KruiseManager and another Operator', () => {
  it('shares no object name, and each Service selects only its own pods', () => {
    const app = new App({ outdir: outdir() });
    const chart = new Chart(app, 'all');
    new KruiseManager(chart, 'Kruise');
    const team = new OwnOperatorChart(app, 'team');
    auditOperator(chart, { namespace: 'audit' });
    const objects = [...Testing.synth(chart), ...Testing.synth(team)] as Manifest[];
    const keys = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
    const selectors = objects
      .filter((o) => o.kind === 'Service' && o.metadata.name.endsWith('webhook-service'))
      .map((o) => JSON.stringify(o.spec.selector));
    expect(new Set(selectors).size).toBe(3);
  });

  it('a cluster-scoped binding has no namespace filter; a flag given to the program adds its binding', () => {
    const chart = new Chart(Testing.app({ outdir: outdir() }), 'c');
    const audit = auditOperator(chart, { extraArgs: ['--guard-configmaps=true'], controllerWorkers: { audit: 4 } });
    const objects = Testing.synth(chart) as Manifest[];
    const validating = find(
      objects,
      'ValidatingWebhookConfiguration',
      'audit-operator-validating-webhook-configuration',
    );
    expect(
      validating.webhooks.map((w: Manifest) => [w.name, w.failurePolicy, w.namespaceSelector, w.objectSelector]),
    ).toEqual([
      ['vnamespace.audit-operator.kruise-ha.io', 'Fail', undefined, { matchLabels: { protected: 'true' } }],
      [
        'vconfigmap.audit-operator.kruise-ha.io',
        'Ignore',
        {
          matchExpressions: [
            { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['audit-operator', 'kube-system'] },
          ],
        },
        undefined,
      ],
    ]);
    const rules = find(objects, 'ClusterRole', 'audit-operator-role').rules as Manifest[];
    expect(rules).toContainEqual({ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] });
    expect(rules).toContainEqual({
      apiGroups: ['audit.example.com'],
      resources: ['audits/status'],
      verbs: ['get', 'patch', 'update'],
    });
    expect(find(objects, 'Deployment', 'audit-operator').spec.template.spec.containers[0].args).toEqual(
      expect.arrayContaining(['--audit-workers=4', '--guard-configmaps=true']),
    );
    expect(audit.registrations.declaredControllers).toEqual(['audit']);
  });
});

describe('Operator: synth-time checks', () => {
  const chart = () => new Chart(Testing.app({ outdir: outdir() }), 'c');

  it('a patch that drops an entry, or adds one the program does not serve, fails synth naming both sides', () => {
    const c = chart();
    const op = auditOperator(c);
    op.webhooks.validating.addJsonPatch(JsonPatch.remove('/webhooks/0'));
    op.webhooks.mutating.addJsonPatch(
      JsonPatch.add('/webhooks/-', { name: 'extra.example.com', clientConfig: { service: { path: '/mutate-extra' } } }),
    );
    expect(() => Testing.synth(c)).toThrow(
      /binding on Namespace is served at \/validate--v1-namespace, but no entry of audit-operator-validating-webhook-configuration calls it[\s\S]*entry extra\.example\.com calls \/mutate-extra, which the program does not serve/,
    );
  });

  it('a role narrowed below what the program uses fails synth', () => {
    const c = chart();
    const op = auditOperator(c);
    ApiObject.of(op.rbac.clusterRole).addJsonPatch(JsonPatch.replace('/rules', []));
    expect(() => Testing.synth(c)).toThrow(
      /uses Secret \(get\), but ClusterRole audit-operator-role grants no get on secrets/,
    );
  });

  it('on host network beside KruiseManager, a shared port fails synth; its own ports pass', () => {
    const c = chart();
    new KruiseManager(c, 'Kruise');
    auditOperator(c, { hostNetwork: true });
    expect(() => Testing.synth(c)).toThrow(
      /Operator audit-operator and kruise-controller-manager both listen on host port 9876, 8080, 8000.*Fix: give the operator other ports/,
    );
    const ok = chart();
    new KruiseManager(ok, 'Kruise');
    auditOperator(ok, { hostNetwork: true, ports: { webhook: 9443, metrics: 8180, health: 8100 } });
    expect(Testing.synth(ok).length).toBeGreaterThan(0);
  });

  it('two copies of one program in an App fail synth', () => {
    const c = chart();
    auditOperator(c, {}, 'A');
    auditOperator(c, { namespace: 'elsewhere' }, 'B');
    expect(() => Testing.synth(c)).toThrow(/both deploy program audit-operator/);
  });

  it('refuses what the program would refuse or cannot use, naming the prop', () => {
    expect(() => auditOperator(chart(), { controllerWorkers: { mirror: 2 } })).toThrow(
      /controllerWorkers\.mirror: renders --mirror-workers, which is not a worker flag of audit-operator, whose controllers are audit/,
    );
    expect(() => auditOperator(chart(), { extraArgs: ['--greeting=hi'] })).toThrow(
      /extraArgs\[0\]: --greeting is not a flag of audit-operator, which refuses to start with it.*guard-configmaps/,
    );
    expect(() => auditOperator(chart(), { featureGates: { PodWebhook: false } })).toThrow(
      /featureGates: are Kruise's gates/,
    );
    expect(() => auditOperator(chart(), { monitoring: { grafanaDashboard: true } })).toThrow(
      /monitoring\.grafanaDashboard/,
    );
    expect(() => auditOperator(chart(), { replicas: 1 })).toThrow(/replicas: gives no high availability/);
  });

  it('a program whose register() throws fails synth, with its error', () => {
    const c = chart();
    const image = new RuntimeImage(c, 'I', {
      repository: 'r.example.com/b',
      entrypoint: fixture('broken-register'),
      outdir: outdir(),
    });
    expect(() => new Operator(c, 'B', { program: OperatorProgram.fromRuntimeImage(image) })).toThrow(
      /program: .*could not print its registrations.*register failed: register reached for a cluster/,
    );
  });
});
