import { describe, expect, it } from '@jest/globals';
import { App, Chart, Duration, Testing } from 'cdk8s';
import {
  DisruptionBudget,
  KruiseManager,
  ManagerImage,
  ManagerTopology,
  Rollout,
  UninstallProtection,
  WebhookCertificates,
  ZoneSpread,
} from '../../../lib/index.js';
import { find, managerArgs, podSpec, summarizeCrd, synthManager } from './synth.js';

const runtime = ManagerImage.runtime('registry.example.com/kruise-ha:0.1.0');

describe('KruiseManager defaults (the default app)', () => {
  const objects = synthManager();

  it("matches the snapshot (CRDs by name: their bodies are upstream's, checked by the generator)", () => {
    expect(objects.map(summarizeCrd)).toMatchSnapshot();
  });

  it('runs 2 replicas on the host network with cluster DNS', () => {
    const deployment = find(objects, 'Deployment', 'kruise-controller-manager');
    expect(deployment.spec.replicas).toBe(2);
    expect(podSpec(objects).hostNetwork).toBe(true);
    expect(podSpec(objects).dnsPolicy).toBe('ClusterFirstWithHostNet');
  });

  it('spreads over zones per revision and never puts two replicas on a node', () => {
    const spec = podSpec(objects);
    expect(spec.topologySpreadConstraints).toEqual([
      expect.objectContaining({
        topologyKey: 'topology.kubernetes.io/zone',
        maxSkew: 1,
        whenUnsatisfiable: 'ScheduleAnyway',
        matchLabelKeys: ['pod-template-hash'],
      }),
    ]);
    expect(spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey).toBe(
      'kubernetes.io/hostname',
    );
  });

  it('rolls out 100% new replicas before removing old ones', () => {
    expect(find(objects, 'Deployment').spec.strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxSurge: '100%', maxUnavailable: 0 },
    });
  });

  it('has readiness on /readyz and a liveness probe on the health port', () => {
    const container = podSpec(objects).containers[0];
    expect(container.readinessProbe.httpGet).toEqual(expect.objectContaining({ path: '/readyz', port: 8000 }));
    // the process itself must answer: a TCP probe passes for a hung process (the kernel accepts)
    expect(container.livenessProbe.httpGet).toEqual(expect.objectContaining({ path: '/readyz', port: 8000 }));
    expect(container.livenessProbe.tcpSocket).toBeUndefined();
  });

  it('locks the pod down', () => {
    const spec = podSpec(objects);
    const sc = spec.containers[0].securityContext;
    expect(sc).toEqual(
      expect.objectContaining({
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      }),
    );
    expect(sc.capabilities.drop).toEqual(['ALL']);
    expect(spec.securityContext.runAsNonRoot).toBe(true);
    expect(spec.priorityClassName).toBe('system-cluster-critical');
    expect(spec.containers[0].volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toEqual(['/tmp', '/log']);
  });

  it('elects a leader on a Lease with client-go timing, and may write Leases', () => {
    expect(managerArgs(objects)).toEqual(
      expect.arrayContaining([
        '--enable-leader-election=true',
        '--leader-election-namespace=kruise-system',
        '--leader-election-lease-duration=15s',
        '--leader-election-renew-deadline=10s',
        '--leader-election-retry-period=2s',
      ]),
    );
    const role = find(objects, 'Role', 'kruise-leader-election-role');
    expect(role.rules[0]).toEqual(
      expect.objectContaining({ apiGroups: ['coordination.k8s.io'], resources: ['leases'] }),
    );
    expect(role.rules[0].verbs).toEqual(expect.arrayContaining(['get', 'create', 'update']));
    expect(find(objects, 'RoleBinding', 'kruise-leader-election-rolebinding').subjects[0].name).toBe('kruise-manager');
  });

  it('has a PDB that lets drains through', () => {
    expect(find(objects, 'PodDisruptionBudget').spec).toEqual(
      expect.objectContaining({ maxUnavailable: 1, unhealthyPodEvictionPolicy: 'AlwaysAllow' }),
    );
  });

  it('keeps the pod webhook off kube-system and its own namespace by immutable name label', () => {
    const mpod = find(objects, 'MutatingWebhookConfiguration').webhooks.find(
      (w: { name: string }) => w.name === 'mpod.kb.io',
    );
    expect(mpod.namespaceSelector.matchExpressions).toEqual([
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'kruise-system'] },
    ]);
  });

  it('orders the stream: namespaces first, Deployment before webhooks, webhooks last', () => {
    const kinds = objects.map((o) => o.kind);
    expect(kinds.slice(0, 2)).toEqual(['Namespace', 'Namespace']);
    expect(kinds.slice(-2)).toEqual(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);
    expect(kinds.indexOf('ClusterRole')).toBeLessThan(kinds.indexOf('Deployment'));
    expect(kinds.indexOf('Service')).toBeLessThan(kinds.indexOf('MutatingWebhookConfiguration'));
  });

  it('renders the upstream extras: daemon, no install-time Job, empty cert Secret, template annotation', () => {
    expect(find(objects, 'DaemonSet', 'kruise-daemon')).toBeDefined();
    // A plain Job would run at install under kubectl: only hook-running tools get the guard Job.
    expect(objects.some((o) => o.kind === 'Job')).toBe(false);
    expect(find(objects, 'Secret', 'kruise-webhook-certs').data).toBeUndefined();
    const validating = find(objects, 'ValidatingWebhookConfiguration');
    expect(JSON.parse(validating.metadata.annotations.template)).toEqual(validating.webhooks);
  });

  it('grants no wildcard verbs or resources', () => {
    for (const role of objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')) {
      for (const rule of role.rules ?? []) {
        expect(rule.verbs).not.toContain('*');
        expect(rule.resources.some((r: string) => r.startsWith('*'))).toBe(false);
      }
    }
  });
});

describe('KruiseManager options', () => {
  it('splits webhook and controllers into two Deployments with their own PDBs (runtime image)', () => {
    const objects = synthManager({
      image: runtime,
      topology: ManagerTopology.split({ webhookReplicas: 3, controllerReplicas: 2 }),
    });
    const webhook = find(objects, 'Deployment', 'kruise-webhook');
    const controllers = find(objects, 'Deployment', 'kruise-controllers');
    expect([webhook.spec.replicas, controllers.spec.replicas]).toEqual([3, 2]);
    expect(managerArgs(objects, 'kruise-webhook')).toContain('--enable-leader-election=false');
    expect(managerArgs(objects, 'kruise-controllers')).toContain('--enable-leader-election=true');
    expect(find(objects, 'Service', 'kruise-webhook-service').spec.selector['kruise.io/component']).toBe('webhook');
    expect(objects.filter((o) => o.kind === 'PodDisruptionBudget').map((o) => o.metadata.name)).toEqual([
      'kruise-webhook',
      'kruise-controllers',
    ]);
    expect(podSpec(objects, 'kruise-controllers').containers[0].ports.map((p: { name: string }) => p.name)).toEqual([
      'metrics',
      'health',
    ]);
  });

  it('keeps a stopping upstream replica serving until kube-proxy drops it (preStop sleep); the runtime drains itself', () => {
    expect(podSpec(synthManager()).containers[0].lifecycle).toEqual({ preStop: { sleep: { seconds: 5 } } });
    expect(podSpec(synthManager({ image: runtime })).containers[0].lifecycle).toBeUndefined();
  });

  it('uses the runtime image with its own CRDs, HTTP liveness and no daemon', () => {
    const objects = synthManager({ image: runtime });
    expect(find(objects, 'CustomResourceDefinition', 'sidecarsets.apps.kruise.io')).toBeDefined();
    expect(podSpec(objects).containers[0].livenessProbe.httpGet.path).toBe('/healthz');
    expect(podSpec(objects).containers[0].command).toBeUndefined();
    expect(objects.some((o) => o.kind === 'DaemonSet')).toBe(false);
    expect(managerArgs(objects)).toContain('--role=all');
  });

  it('switches to cert-manager: no Secret, CA injection annotations, external cert mode', () => {
    const objects = synthManager({ image: runtime, certificates: WebhookCertificates.certManager() });
    expect(objects.some((o) => o.kind === 'Secret')).toBe(false);
    const cert = find(objects, 'Certificate', 'kruise-webhook-certs');
    expect(cert.spec.dnsNames).toEqual(
      expect.arrayContaining(['kruise-webhook-service.kruise-system.svc', 'localhost']),
    );
    expect(find(objects, 'MutatingWebhookConfiguration').metadata.annotations['cert-manager.io/inject-ca-from']).toBe(
      'kruise-system/kruise-webhook-certs',
    );
    expect(managerArgs(objects)).toContain('--cert-mode=external');
    expect(objects.some((o) => o.metadata.name === 'kruise-certs-role')).toBe(false);
  });

  it('turns on EnableExternalCerts for the upstream image with cert-manager', () => {
    const objects = synthManager({ certificates: WebhookCertificates.certManager() });
    expect(managerArgs(objects)).toContain(
      '--feature-gates=DeletionProtectionForCRDCascadingGate=true,EnableExternalCerts=true,ImagePullJobGate=true,ResourcesDeletionProtection=true',
    );
  });

  // The gates are resolved once (chart default, what certificates and uninstall protection
  // need, then the user's) and both binaries get that one set: kruise-daemon refuses to act on
  // image pulls the manager's gates did not also enable.
  it('renders the one resolved set of feature gates on the manager and the daemon', () => {
    const objects = synthManager({
      certificates: WebhookCertificates.certManager(),
      featureGates: { PodProbeMarkerGate: false },
    });
    const gates = managerArgs(objects).filter((a) => a.startsWith('--feature-gates='));
    expect(gates).toEqual([
      '--feature-gates=DeletionProtectionForCRDCascadingGate=true,EnableExternalCerts=true,ImagePullJobGate=true,PodProbeMarkerGate=false,ResourcesDeletionProtection=true',
    ]);
    expect(
      find(objects, 'DaemonSet').spec.template.spec.containers[0].args.filter((a: string) =>
        a.startsWith('--feature-gates='),
      ),
    ).toEqual(gates);
  });

  it('uses a mirror registry and pull secrets everywhere', () => {
    const objects = synthManager({
      image: ManagerImage.upstream({ registry: 'mirror.local/ok' }),
      imagePullSecrets: ['regcred'],
      uninstallProtection: UninstallProtection.argoCdPreDelete(),
    });
    for (const kind of ['Deployment', 'DaemonSet', 'Job']) {
      const spec = find(objects, kind).spec.template.spec;
      expect(spec.imagePullSecrets).toEqual([{ name: 'regcred' }]);
      expect(spec.containers[0].image.startsWith('mirror.local/ok/')).toBe(true);
    }
  });

  it('annotates Argo CD sync waves in apply order', () => {
    const objects = synthManager({ argoCdSyncWaves: true });
    const wave = (kind: string) => find(objects, kind).metadata.annotations['argocd.argoproj.io/sync-wave'];
    expect([wave('Namespace'), wave('ClusterRole'), wave('Deployment'), wave('MutatingWebhookConfiguration')]).toEqual([
      '0',
      '1',
      '2',
      '3',
    ]);
  });

  it('renders a ServiceMonitor and a NetworkPolicy on request', () => {
    const objects = synthManager({
      monitoring: { serviceMonitor: true, interval: Duration.seconds(15) },
      networkPolicy: true,
      hostNetwork: false,
    });
    expect(find(objects, 'ServiceMonitor').spec.endpoints[0]).toEqual({
      port: 'metrics',
      path: '/metrics',
      interval: '15s',
    });
    const policy = find(objects, 'NetworkPolicy');
    expect(policy.spec.ingress[0].ports.map((p: { port: number }) => p.port).sort()).toEqual([8000, 8080, 9876]);
    expect(podSpec(objects).dnsPolicy).toBe('ClusterFirst');
  });

  it('takes custom ports, tunes workers and adds low-port capability only when needed', () => {
    const objects = synthManager({
      ports: { webhook: 443, metrics: 9090, health: 9091 },
      controllerWorkers: { sidecarset: 5 },
    });
    const container = podSpec(objects).containers[0];
    expect(container.securityContext.capabilities.add).toEqual(['NET_BIND_SERVICE']);
    expect(find(objects, 'Service', 'kruise-webhook-service').spec.ports[0]).toEqual(
      expect.objectContaining({ port: 443, targetPort: 443 }),
    );
    expect(container.args).toEqual(
      expect.arrayContaining(['--metrics-addr=:9090', '--health-probe-addr=:9091', '--sidecarset-workers=5']),
    );
  });
});

describe('KruiseManager on each upstream release', () => {
  it("renders the chosen release's image, daemon and flags", () => {
    const objects = synthManager({ image: ManagerImage.upstream({ version: 'v1.7.0' }) });
    expect(podSpec(objects).containers[0].image).toBe('openkruise/kruise-manager:v1.7.0');
    expect(find(objects, 'DaemonSet', 'kruise-daemon').spec.template.spec.containers[0].image).toBe(
      'openkruise/kruise-manager:v1.7.0',
    );
  });

  it('refuses a flag the release lacks, saying which releases have it', () => {
    const old = ManagerImage.upstream({ version: 'v1.8.3' });
    expect(() => synthManager({ image: old, extraArgs: ['--webhook-initialize-timeout=2m'] })).toThrow(
      /^extraArgs\[0\]: --webhook-initialize-timeout is not a flag of kruise-manager v1\.8\.3, which refuses to start with it; v1\.9\.1 has it \(got "--webhook-initialize-timeout=2m"\)\. Fix: remove it, or use ManagerImage\.upstream\(\{ version: 'v1\.9\.1' \}\)/,
    );
    expect(managerArgs(synthManager({ extraArgs: ['--webhook-initialize-timeout=2m'] }))).toContain(
      '--webhook-initialize-timeout=2m',
    );
    // A library's flag (klog) is not judged here.
    expect(managerArgs(synthManager({ image: old, extraArgs: ['--vmodule=x=5'] }))).toContain('--vmodule=x=5');
  });

  it('refuses workers for a controller no release has a workers flag for', () => {
    expect(() => synthManager({ controllerWorkers: { clonset: 2 } })).toThrow(
      /^controllerWorkers\.clonset: renders --clonset-workers, which is not a flag of kruise-manager v1\.9\.1, nor of any release this library renders \(got 2\)\. Fix: use one of: advancedcronjob-workers, broadcastjob-workers, cloneset-workers/,
    );
  });
});

describe('KruiseManager on the runtime image', () => {
  // The runtime refuses at start (exit 2) any flag it does not parse: synth refuses it first, by the contract's rule.
  it("refuses workers and extra flags the runtime's parser would refuse, naming the controllers it has", () => {
    expect(() => synthManager({ image: runtime, controllerWorkers: { configmapmirror: 2 } })).toThrow(
      /^controllerWorkers\.configmapmirror: renders --configmapmirror-workers, which is not a worker flag of this project's runtime, whose only controllers are sidecarset, workloadspread \(got 2\)\. Fix: use one of: sidecarset, workloadspread, or use ManagerImage\.upstream\(\)$/,
    );
    // A hyphenated name has a controller name's shape (a long flag carries it): refused for what it names.
    expect(() => synthManager({ image: runtime, controllerWorkers: { 'configmap-mirror': 2 } })).toThrow(
      /^controllerWorkers\.configmap-mirror: renders --configmap-mirror-workers, which is not a worker flag of this project's runtime, whose only controllers are sidecarset, workloadspread \(got 2\)/,
    );
    expect(() => synthManager({ image: runtime, extraArgs: ['--sync-period=0', '--enable-pprof=false'] })).toThrow(
      /^extraArgs\[1\]: --enable-pprof is not a flag of this project's runtime, which refuses to start with it \(got "--enable-pprof=false"\)\. Fix: remove it; the runtime parses: enable-leader-election, .*, sidecarset-workers, workloadspread-workers$/,
    );
    expect(managerArgs(synthManager({ image: runtime, controllerWorkers: { workloadspread: 4 } }))).toContain(
      '--workloadspread-workers=4',
    );
  });
});

describe('KruiseManager validation', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    [
      'single replica',
      () => synthManager({ replicas: 1 }),
      /^replicas: gives no high availability.*\(got 1\)\. Fix: use replicas >= 2, or set allowSingleReplica: true/,
    ],
    [
      'port collision',
      () => synthManager({ ports: { metrics: 8000 } }),
      /ports.health: collides with ports.metrics \(got 8000\)/,
    ],
    ['bad port', () => synthManager({ ports: { webhook: 70000 } }), /ports.webhook: is not a TCP port \(got 70000\)/],
    [
      'excluded namespaces without install ns',
      () => synthManager({ webhooks: { podExcludedNamespaces: ['kube-system'] } }),
      /webhooks.podExcludedNamespaces: is missing "kruise-system".*Fix: add "kruise-system"/,
    ],
    [
      'excluded namespaces without kube-system',
      () => synthManager({ webhooks: { podExcludedNamespaces: ['kruise-system'] } }),
      /is missing "kube-system"/,
    ],
    [
      'invalid namespace',
      () => synthManager({ namespace: 'Kruise_System' }),
      /namespace: is not a valid DNS label \(RFC 1123\) \(got "Kruise_System"\)/,
    ],
    [
      'invalid excluded namespace',
      () => synthManager({ webhooks: { podExcludedNamespaces: ['kube-system', 'kruise-system', 'a..b'] } }),
      /webhooks.podExcludedNamespaces\[2\]/,
    ],
    [
      'PDB blocks drains',
      () => synthManager({ disruptionBudget: DisruptionBudget.maxUnavailable(0) }),
      /disruptionBudget: allows no eviction/,
    ],
    [
      'PDB minAvailable = replicas',
      () => synthManager({ disruptionBudget: DisruptionBudget.minAvailable(2) }),
      /disruptionBudget: is not below replicas \(2\).*got "minAvailable: 2"/,
    ],
    [
      'surge cannot fit',
      () => synthManager({ expectedNodes: 3 }),
      /expectedNodes: cannot fit a rollout: 4 nodes are needed.*got 3.*Rollout.surge\(1\)/,
    ],
    [
      'split with upstream',
      () => synthManager({ topology: ManagerTopology.split() }),
      /topology: needs a manager that can run its webhook without its controllers/,
    ],
    [
      'daemon with runtime',
      () => synthManager({ image: runtime, daemon: true }),
      /daemon: kruise-daemon ships only in the upstream image/,
    ],
    [
      'webhook timeout',
      () => synthManager({ webhooks: { pods: { timeout: Duration.seconds(31) } } }),
      /webhooks.pods.timeout: must be 1-30 whole seconds/,
    ],
    [
      'split single replica',
      () => synthManager({ image: runtime, topology: ManagerTopology.split({ controllerReplicas: 1 }) }),
      /topology.controllerReplicas: gives no high availability/,
    ],
    [
      'cert-manager renewBefore',
      () => WebhookCertificates.certManager({ duration: Duration.days(10), renewBefore: Duration.days(10) }),
      /certificates.renewBefore: is not shorter/,
    ],
  ];
  it.each(cases)('rejects %s with the prop, value and fix', (_name, build, message) => {
    expect(build).toThrow(message);
  });

  it('fits a reduced surge on a small cluster', () => {
    expect(() => synthManager({ expectedNodes: 3, rollout: Rollout.surge(1) })).not.toThrow();
    expect(() => synthManager({ expectedNodes: 4 })).not.toThrow();
  });

  it('allows a single replica only when asked', () => {
    expect(find(synthManager({ replicas: 1, allowSingleReplica: true }), 'Deployment').spec.replicas).toBe(1);
  });

  it('counts each split role on its own in the node check (the roles share no host port)', () => {
    const split = (expectedNodes: number) =>
      synthManager({
        image: runtime,
        topology: ManagerTopology.split({ webhookReplicas: 3 }),
        expectedNodes,
        zoneSpread: ZoneSpread.required(),
      });
    // 3 webhook pods + 3 surge pods each need a node of their own; the 2 + 2 controller pods fit beside them.
    expect(() => split(5)).toThrow(/expectedNodes: cannot fit a rollout: 6 nodes are needed/);
    expect(() => split(6)).not.toThrow();
  });

  it('gives the split controller pods host ports of their own, and refuses ones the webhook pods hold', () => {
    const objects = synthManager({ image: runtime, topology: ManagerTopology.split({ webhookReplicas: 3 }) });
    const ports = (name: string) =>
      podSpec(objects, name).containers[0].ports.map((p: { containerPort: number }) => p.containerPort);
    expect(ports('kruise-webhook')).toEqual([9876, 8080, 8000]);
    expect(ports('kruise-controllers')).toEqual([8081, 8001]);
    expect(managerArgs(objects, 'kruise-controllers')).toEqual(
      expect.arrayContaining(['--metrics-addr=:8081', '--health-probe-addr=:8001']),
    );
    const probe = podSpec(objects, 'kruise-controllers').containers[0].readinessProbe;
    expect(probe.httpGet.port).toBe(8001);
    // Prometheus finds both roles through one Service: its target is the port's name.
    expect(find(objects, 'Service', 'kruise-manager-metrics').spec.ports[0].targetPort).toBe('metrics');
    expect(() =>
      synthManager({
        image: runtime,
        topology: ManagerTopology.split({ controllerPorts: { metrics: 8080 } }),
      }),
    ).toThrow(/topology\.controllerPorts\.metrics.*8080.*ManagerTopology\.split\(\{ controllerPorts \}\)/s);
    // Without host network each pod has its own network namespace: the same numbers are fine.
    expect(() =>
      synthManager({
        image: runtime,
        hostNetwork: false,
        topology: ManagerTopology.split({ controllerPorts: { metrics: 8080, health: 8000 } }),
      }),
    ).not.toThrow();
  });

  it('fails synth when two managers share an App (cluster-scoped names collide)', () => {
    const app = Testing.app();
    new KruiseManager(new Chart(app, 'a'), 'one');
    new KruiseManager(new Chart(app, 'b'), 'two', { namespace: 'other' });
    expect(() => app.synth()).toThrow(/shares the App with .*Fix: keep one KruiseManager per App/);
  });

  it('synthesizes with a plain App', () => {
    const app = new App({ outdir: `${process.env.TMPDIR ?? '/tmp'}/kruise-ha-test-${process.pid}` });
    new KruiseManager(new Chart(app, 'c'), 'k');
    expect(app.synthYaml()).toContain('kind: MutatingWebhookConfiguration');
  });
});
