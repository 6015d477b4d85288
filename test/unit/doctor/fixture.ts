/**
 * A healthy install as the doctor would read it, built from what the constructs synthesize
 * (so the doctor is judged against the objects users deploy), plus what a cluster adds: nodes,
 * Ready manager pods, endpoints, a renewed Lease, real certificates and filled caBundles.
 */
import { Chart, Testing } from 'cdk8s';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { KruiseManager, ManagerImage } from '../../../lib/index.js';
import { Names, SecretKeys } from '../../../lib/contract.js';
import { expectations } from '../../../lib/doctor/expectations.js';
import type { ClusterSnapshot, PermissionResult } from '../../../lib/doctor/model.js';
import {
  generateCA,
  generateServingCert,
  servingDnsNames,
  type KeyPairPem,
} from '../../../lib/runtime/certs/generate.js';

export const NOW = Date.parse('2026-03-01T12:00:00Z');
const DAY = 86400_000;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
export type Mutable<T> = { -readonly [K in keyof T]: T[K] };

export interface Fixture {
  snapshot: Mutable<ClusterSnapshot>;
  permissions: PermissionResult[];
  ca: KeyPairPem;
}

export const b64 = (text: string) => Buffer.from(text).toString('base64');

const ready = (now: number) => ({
  phase: 'Running',
  conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(now).toISOString() }],
});

/** Nodes in zones a and b, two each: room for both replicas and a full surge of two. */
export function nodes(
  zones: Record<string, string | undefined> = { 'node-a1': 'a', 'node-b1': 'b', 'node-a2': 'a', 'node-b2': 'b' },
): Json[] {
  return Object.entries(zones).map(([name, zone]) => ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, ...(zone ? { 'topology.kubernetes.io/zone': zone } : {}) },
    },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  }));
}

/** A manager pod of `d` on `node`, as its ReplicaSet would create it. */
export function managerPod(d: V1Deployment, name: string, node: string, isReady = true): V1Pod {
  const t = d.spec!.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: d.metadata!.namespace, labels: { ...t.metadata?.labels, 'pod-template-hash': 'abc' } },
    spec: { ...t.spec!, nodeName: node },
    status: isReady ? ready(NOW) : { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] },
  } as V1Pod;
}

/** A healthy install as synthesized; `version`: the upstream release (default: the default release). */
export async function healthy(
  flavour: 'upstream' | 'runtime',
  namespace = 'kruise-system',
  version?: string,
): Promise<Fixture> {
  const chart = new Chart(Testing.app(), 'doctor');
  new KruiseManager(chart, 'kruise', {
    namespace,
    ...(flavour === 'runtime' ? { image: ManagerImage.runtime('example.com/kruise-ha:1') } : {}),
    ...(flavour === 'upstream' && version ? { image: ManagerImage.upstream({ version }) } : {}),
  });
  const objects: Json[] = Testing.synth(chart);
  const of = (kind: string) => objects.filter((o) => o.kind === kind);
  const ca = await generateCA({ commonName: 'test-ca', now: NOW, validityMs: 3650 * DAY });
  const serving = await generateServingCert({
    ca,
    dnsNames: servingDnsNames(Names.webhookService, namespace),
    now: NOW,
    validityMs: 365 * DAY,
  });
  const withBundle = (config: Json) => ({
    ...config,
    webhooks: config.webhooks.map((w: Json) => ({
      ...w,
      clientConfig: { ...w.clientConfig, caBundle: b64(ca.certPem) },
    })),
  });
  const deployments = of('Deployment') as V1Deployment[];
  const pods = deployments.flatMap((d, i) => [
    managerPod(d, `${d.metadata!.name}-abc-${i}x`, 'node-a1'),
    managerPod(d, `${d.metadata!.name}-abc-${i}y`, 'node-b1'),
  ]);
  const crds = of('CustomResourceDefinition').map((c) => {
    const withCa = c.spec.conversion?.webhook
      ? {
          ...c.spec.conversion,
          webhook: {
            ...c.spec.conversion.webhook,
            clientConfig: { ...c.spec.conversion.webhook.clientConfig, caBundle: b64(ca.certPem) },
          },
        }
      : c.spec.conversion;
    return {
      ...c,
      spec: { ...c.spec, conversion: withCa },
      status: {
        conditions: [
          { type: 'NamesAccepted', status: 'True' },
          { type: 'Established', status: 'True' },
        ],
      },
    };
  });
  const ns = of('Namespace').find((n) => n.metadata.name === namespace);
  const snapshot: Mutable<ClusterSnapshot> = {
    namespace,
    now: NOW,
    deployments,
    pods,
    hostPortPods: pods.filter((p) => p.spec?.hostNetwork),
    nodes: nodes(),
    webhookService: of('Service').find((s) => s.metadata.name === Names.webhookService),
    endpointSlices: [
      {
        metadata: { name: `${Names.webhookService}-x`, labels: { 'kubernetes.io/service-name': Names.webhookService } },
        addressType: 'IPv4',
        endpoints: pods.map((_, i) => ({ addresses: [`10.0.0.${i + 1}`], conditions: { ready: true } })),
      },
    ],
    lease: {
      metadata: { name: Names.leaderElectionId, namespace },
      spec: {
        holderIdentity: `${pods[0].metadata!.name}_0a1b2c3d`,
        leaseDurationSeconds: 15,
        leaseTransitions: 1,
        acquireTime: new Date(NOW - DAY),
        renewTime: new Date(NOW - 1500),
      },
    },
    leaderEvents: [],
    secret: {
      metadata: { name: Names.webhookSecret, namespace },
      data: {
        [SecretKeys.caCert]: b64(ca.certPem),
        [SecretKeys.caKey]: b64(ca.keyPem),
        [SecretKeys.serverCert]: b64(serving.certPem),
        [SecretKeys.serverKey]: b64(serving.keyPem),
      },
    },
    mutating: withBundle(of('MutatingWebhookConfiguration')[0]),
    validating: withBundle(of('ValidatingWebhookConfiguration')[0]),
    crds,
    pdbs: of('PodDisruptionBudget').map((p) => ({
      ...p,
      metadata: { ...p.metadata, generation: 1 },
      status: { observedGeneration: 1, disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1, expectedPods: 2 },
    })),
    namespaces: [
      { metadata: { name: 'kube-system', labels: { 'kubernetes.io/metadata.name': 'kube-system' } } },
      { metadata: { name: namespace, labels: { ...ns?.metadata.labels, 'kubernetes.io/metadata.name': namespace } } },
    ],
    readErrors: [],
  };
  const permissions = expectations(namespace, deployments)!.permissions.map((permission) => ({
    permission,
    allowed: true,
  }));
  return { snapshot, permissions, ca };
}

/** Replaces the manager pods (and who holds the Lease and the host ports with them). */
export function setPods(f: Fixture, pods: V1Pod[]): void {
  f.snapshot.pods = pods;
  f.snapshot.hostPortPods = pods.filter((p) => p.spec?.hostNetwork);
  f.snapshot.lease = {
    ...f.snapshot.lease!,
    spec: { ...f.snapshot.lease!.spec, holderIdentity: `${pods[0].metadata!.name}_0a1b2c3d` },
  };
}
