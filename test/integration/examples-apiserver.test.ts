/**
 * Every example's stream, judged by a real kube-apiserver: CRDs and Namespaces applied for real,
 * everything else server-side dry-run (admission, schema and CEL validation, defaulting), and
 * the default app applied for real and read back. Kinds of operators we do not install
 * (cert-manager, prometheus-operator) get permissive stand-in CRDs, so their objects reach the
 * API server too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubernetesObjectApi, type KubernetesObject } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { ChartClass, exampleCharts } from '../support/example-charts.js';
import { apiRequest } from '../envtest/http.js';
import { envtest } from '../envtest/state.js';
import {
  asFreshInstall,
  kubeConfig,
  serverSideApply,
  uninstallWebhooks,
  waitEstablished,
} from './support/runtime-cluster.js';

const kc = kubeConfig();
const api = KubernetesObjectApi.makeApiClient(kc);

function standInCrd(group: string, kind: string, plural: string): KubernetesObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  } as KubernetesObject;
}

const FOUNDATION = new Set(['CustomResourceDefinition', 'Namespace']);
const synth = (chart: ChartClass) =>
  Testing.synth(new chart(Testing.app() as unknown as Chart, 'kruise')) as KubernetesObject[];

describe('examples on a real API server', () => {
  let charts: Array<[string, ChartClass]> = [];
  beforeAll(async () => {
    charts = await exampleCharts();
    for (const crd of [
      standInCrd('cert-manager.io', 'Issuer', 'issuers'),
      standInCrd('cert-manager.io', 'Certificate', 'certificates'),
      standInCrd('monitoring.coreos.com', 'ServiceMonitor', 'servicemonitors'),
    ]) {
      await serverSideApply(kc, crd);
      await waitEstablished(api, crd);
    }
  }, 60_000);
  afterAll(async () => {
    // The default app's webhook configurations would intercept later suites' pods.
    await uninstallWebhooks(kc);
    // Its Kruise CRDs (v1.9 stores v1beta1) would refuse later suites' v1alpha1-only CRDs.
    const crds = new Map<string, KubernetesObject>();
    for (const [, chart] of charts)
      for (const o of synth(chart).filter(
        (x) => x.kind === 'CustomResourceDefinition' && /kruise\.io$/.test(x.metadata!.name!),
      ))
        crds.set(o.metadata!.name!, o);
    for (const crd of crds.values()) await asFreshInstall({ ...crd, spec: { versions: [] } } as KubernetesObject);
  }, 120_000);

  it('finds every example', () => {
    expect(charts.length).toBeGreaterThanOrEqual(7);
  });

  it('accepts every object of every example (CRDs and namespaces for real, the rest dry-run)', async () => {
    const rejected: string[] = [];
    for (const [name, chart] of charts) {
      const objects = synth(chart);
      for (const o of objects.filter((x) => FOUNDATION.has(x.kind!))) {
        if (o.kind === 'CustomResourceDefinition') await asFreshInstall(o);
        await serverSideApply(kc, o);
        if (o.kind === 'CustomResourceDefinition') await waitEstablished(api, o);
      }
      for (const o of objects.filter((x) => !FOUNDATION.has(x.kind!))) {
        await serverSideApply(kc, o, { dryRun: true }).catch((err: Error) =>
          rejected.push(`${name} ${o.kind}/${o.metadata!.name}: ${err.message.slice(0, 400)}`),
        );
      }
    }
    expect(rejected).toEqual([]);
  }, 240_000);

  it('applies the default app for real and reads back what it rendered', async () => {
    const [, defaultApp] = charts.find(([n]) => n.startsWith('default-ha.ts:'))!;
    const objects = synth(defaultApp);
    for (const o of objects) await serverSideApply(kc, o);
    const lost: string[] = [];
    for (const o of objects) {
      const stored = await readRaw(o);
      // Raw JSON on both sides: the server may add defaults, but everything we set must survive.
      lost.push(...containsAll(toPlain(stored), o).map((d) => `${o.kind}/${o.metadata!.name}${d}`));
    }
    expect(lost).toEqual([]);
  }, 120_000);

  it('rejects a broken manifest (negative control)', async () => {
    const broken = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'broken', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'x' }] } },
      },
    };
    await expect(serverSideApply(kc, broken as KubernetesObject, { dryRun: true })).rejects.toThrow(
      /HTTP 422.*(selector|image)/s,
    );
  });
});

/**
 * CRDs are read as raw JSON: client-node's typed model drops the `x-kubernetes-*` schema
 * extensions (int-or-string, preserve-unknown-fields, list types) that upstream's CRDs carry.
 */
async function readRaw(o: KubernetesObject): Promise<unknown> {
  if (o.kind !== 'CustomResourceDefinition') {
    return api.read({
      apiVersion: o.apiVersion!,
      kind: o.kind!,
      metadata: { name: o.metadata!.name!, namespace: o.metadata!.namespace },
    });
  }
  const res = await apiRequest(
    envtest(),
    'GET',
    `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${o.metadata!.name}`,
  );
  if (res.status !== 200) throw new Error(`GET CRD ${o.metadata!.name}: HTTP ${res.status} ${res.body}`);
  return JSON.parse(res.body);
}

/** client-node returns typed models; compare on their JSON form. */
function toPlain(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** Fields the API omits at their zero value; any other zero must read back (a lost `maxUnavailable: 0` is a bug). */
const OMITEMPTY_ZERO: Record<string, unknown> = { minReadySeconds: 0, hostNetwork: false };

/**
 * Paths where `expected` sets a value that `actual` lacks or differs from (arrays compared by
 * index). An empty string, list or map reads back as absent (Kubernetes' `omitempty`).
 */
function containsAll(actual: unknown, expected: unknown, path = ''): string[] {
  const empty = (v: unknown) =>
    v === '' ||
    (Array.isArray(v) ? v.length === 0 : v !== null && typeof v === 'object' && Object.keys(v).length === 0);
  if (actual === undefined && (empty(expected) || OMITEMPTY_ZERO[path.split('/').pop()!] === expected)) return [];
  if (expected === null || typeof expected !== 'object') {
    return actual === expected || (typeof expected === 'number' && String(expected) === String(actual))
      ? []
      : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
  }
  if (actual === null || typeof actual !== 'object') return [`${path}: missing`];
  return Object.entries(expected).flatMap(([k, v]) =>
    containsAll((actual as Record<string, unknown>)[k], v, `${path}/${k}`),
  );
}
