import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../../../lib/runtime/webhook/admission.js';
import { Logger } from '../../../../lib/runtime/log.js';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import { podInjectionWebhook, sidecarSetDefaultingWebhook, sidecarSetValidatingWebhook, type SidecarSetSource } from '../../../../lib/runtime/sidecarset/webhooks.js';

const clock = { now: () => Date.parse('2026-11-21T00:00:00Z'), after: () => () => undefined };
const ctx = { signal: new AbortController().signal, logger: new Logger({}, 'error') };
const proxy: SidecarSet = { metadata: { name: 'proxy' }, spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }] } };
const source = (sets: SidecarSet[], nsLabels: Record<string, Record<string, string>> = {}): SidecarSetSource =>
  ({ sidecarSets: () => sets, namespaceLabels: (ns) => nsLabels[ns] });

function request(kind: string, operation: AdmissionRequest['operation'], object: unknown, namespace?: string): AdmissionRequest {
  return {
    uid: 'u', apiVersion: 'admission.k8s.io/v1', operation, kind: { group: '', version: 'v1', kind }, resource: { group: '', version: 'v1', resource: `${kind.toLowerCase()}s` },
    namespace, userInfo: { username: 'test' }, object: object as AdmissionRequest['object'], dryRun: false,
  };
}
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'web-', labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'web:1' }] } };

describe('podInjectionWebhook', () => {
  const hook = podInjectionWebhook(source([proxy]), 'kruise-system', clock);

  it('patches a matching pod, using the request namespace', async () => {
    const result = await hook.handle(request('Pod', 'CREATE', pod, 'apps'), ctx);
    expect(result.allowed).toBe(true);
    const ops = 'patches' in result ? result.patches : [];
    expect(ops).toEqual(expect.arrayContaining([expect.objectContaining({ op: 'replace', path: '/spec/containers' })]));
    expect(ops.find((o) => o.path === '/metadata/annotations')).toBeDefined();
  });

  it('never touches kube-system or its own namespace, opted-out, paused or non-matching pods', async () => {
    for (const ns of ['kube-system', 'kruise-system']) expect(await hook.handle(request('Pod', 'CREATE', pod, ns), ctx)).toEqual({ allowed: true });
    const ignored = { ...pod, metadata: { ...pod.metadata, annotations: { 'kruise.io/sidecarset-inject-ignore': 'true' } } };
    expect(await hook.handle(request('Pod', 'CREATE', ignored, 'apps'), ctx)).toEqual({ allowed: true });
    const paused = podInjectionWebhook(source([{ ...proxy, spec: { ...proxy.spec, injectionStrategy: { paused: true } } }]), 'kruise-system', clock);
    expect(await paused.handle(request('Pod', 'CREATE', pod, 'apps'), ctx)).toEqual({ allowed: true });
    const other = { ...pod, metadata: { labels: { app: 'db' } } };
    expect(await hook.handle(request('Pod', 'CREATE', other, 'apps'), ctx)).toEqual({ allowed: true });
    expect(await hook.handle(request('Pod', 'UPDATE', pod, 'apps'), ctx)).toEqual({ allowed: true });
  });
});

describe('SidecarSet webhooks', () => {
  it('fills upstream defaults', async () => {
    const result = await sidecarSetDefaultingWebhook().handle(request('SidecarSet', 'CREATE', proxy), ctx);
    expect('patches' in result && result.patches.length).toBeGreaterThan(0);
    const defaulted = defaultSidecarSet(proxy);
    expect(defaulted.spec.updateStrategy).toEqual({ type: 'RollingUpdate', maxUnavailable: 1 });
    // Upstream's default: sidecar containers before the app containers, init containers after.
    expect(defaulted.spec.containers![0]).toEqual(expect.objectContaining({ podInjectPolicy: 'BeforeAppContainer', imagePullPolicy: 'IfNotPresent' }));
    expect(defaultSidecarSet({ ...proxy, spec: { ...proxy.spec, initContainers: [{ name: 'init', image: 'init:1' }] } }).spec.initContainers![0].podInjectPolicy).toBe('AfterAppContainer');
    expect(defaultSidecarSet({ ...proxy, spec: { ...proxy.spec, containers: [{ name: 'p', image: 'registry:5000/proxy' }] } }).spec.containers![0].imagePullPolicy).toBe('Always');
  });

  it('leaves fields of the wrong type to the CRD schema (it runs after mutation) instead of failing', async () => {
    const malformed = { metadata: { name: 'x' }, spec: { selector: {}, updateStrategy: 'fast', containers: ['proxy', { name: 'p', image: 7 }], initContainers: [null] } };
    const result = await sidecarSetDefaultingWebhook().handle(request('SidecarSet', 'CREATE', malformed), ctx);
    expect(result.allowed).toBe(true);
    const defaulted = defaultSidecarSet(malformed as unknown as SidecarSet);
    expect(defaulted.spec.updateStrategy).toBe('fast');
    expect(defaulted.spec.containers![0]).toBe('proxy');
    expect(defaulted.spec.containers![1]).toEqual(expect.objectContaining({ image: 7, imagePullPolicy: 'IfNotPresent' }));
  });

  it('denies invalid specs and conflicts with a message naming the fields', async () => {
    const hook = sidecarSetValidatingWebhook(source([{ ...proxy, metadata: { name: 'other' } }]));
    const conflict = await hook.handle({ ...request('SidecarSet', 'CREATE', proxy), name: 'proxy' }, ctx);
    expect(conflict).toEqual(expect.objectContaining({ allowed: false, code: 422 }));
    expect('message' in conflict && conflict.message).toMatch(/container "proxy" is also injected by SidecarSet "other"/);
    const invalid = await hook.handle(request('SidecarSet', 'CREATE', { metadata: { name: 'x' }, spec: { containers: [] } }), ctx);
    expect('message' in invalid && invalid.message).toMatch(/spec.selector: is required/);
    expect(await sidecarSetValidatingWebhook(source([])).handle(request('SidecarSet', 'CREATE', proxy), ctx)).toEqual({ allowed: true });
  });
});
