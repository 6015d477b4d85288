import { describe, expect, it } from '@jest/globals';
import type { AdmissionRequest } from '../../../../lib/runtime/webhook/admission.js';
import { Logger } from '../../../../lib/runtime/log.js';
import { defaultSidecarSet } from '../../../../lib/runtime/sidecarset/defaults.js';
import type { SidecarSet } from '../../../../lib/runtime/sidecarset/types.js';
import {
  podInjectionWebhook,
  sidecarSetDefaultingWebhook,
  sidecarSetValidatingWebhook,
  type SidecarSetSource,
} from '../../../../lib/runtime/sidecarset/webhooks.js';
import { StaleCacheError } from '../../../../lib/runtime/informer/index.js';
import { MAX_SIDECARSET_DEPTH, validateSidecarSet } from '../../../../lib/runtime/sidecarset/validate.js';
import { validatePatch } from '../../../../lib/runtime/webhook/index.js';

const clock = { now: () => Date.parse('2026-11-21T00:00:00Z'), after: () => () => undefined };
const ctx = { signal: new AbortController().signal, logger: new Logger({}, 'error') };
const proxy: SidecarSet = {
  metadata: { name: 'proxy' },
  spec: { selector: { matchLabels: { app: 'web' } }, containers: [{ name: 'proxy', image: 'proxy:1' }] },
};
const source = (sets: SidecarSet[], nsLabels: Record<string, Record<string, string>> = {}): SidecarSetSource => ({
  sidecarSets: () => sets,
  namespaceLabels: (ns) => nsLabels[ns],
});

function request(
  kind: string,
  operation: AdmissionRequest['operation'],
  object: unknown,
  namespace?: string,
): AdmissionRequest {
  return {
    uid: 'u',
    apiVersion: 'admission.k8s.io/v1',
    operation,
    kind: { group: '', version: 'v1', kind },
    resource: { group: '', version: 'v1', resource: `${kind.toLowerCase()}s` },
    namespace,
    userInfo: { username: 'test' },
    object: object as AdmissionRequest['object'],
    dryRun: false,
  };
}
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { generateName: 'web-', labels: { app: 'web' } },
  spec: { containers: [{ name: 'app', image: 'web:1' }] },
};

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
    for (const ns of ['kube-system', 'kruise-system'])
      expect(await hook.handle(request('Pod', 'CREATE', pod, ns), ctx)).toEqual({ allowed: true });
    const ignored = {
      ...pod,
      metadata: { ...pod.metadata, annotations: { 'kruise.io/sidecarset-inject-ignore': 'true' } },
    };
    expect(await hook.handle(request('Pod', 'CREATE', ignored, 'apps'), ctx)).toEqual({ allowed: true });
    const paused = podInjectionWebhook(
      source([{ ...proxy, spec: { ...proxy.spec, injectionStrategy: { paused: true } } }]),
      'kruise-system',
      clock,
    );
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
    // apis/apps/defaults/v1alpha1.go setSidecarSetUpdateStrategy: type, maxUnavailable 1, partition 0.
    expect(defaulted.spec.updateStrategy).toEqual({ type: 'RollingUpdate', maxUnavailable: 1, partition: 0 });
    // Upstream's default: sidecar containers before the app containers, init containers after.
    expect(defaulted.spec.containers![0]).toEqual(
      expect.objectContaining({ podInjectPolicy: 'BeforeAppContainer', imagePullPolicy: 'IfNotPresent' }),
    );
    expect(
      defaultSidecarSet({ ...proxy, spec: { ...proxy.spec, initContainers: [{ name: 'init', image: 'init:1' }] } }).spec
        .initContainers![0].podInjectPolicy,
    ).toBe('AfterAppContainer');
    expect(
      defaultSidecarSet({
        ...proxy,
        spec: { ...proxy.spec, containers: [{ name: 'p', image: 'registry:5000/proxy' }] },
      }).spec.containers![0].imagePullPolicy,
    ).toBe('Always');
  });

  it('leaves fields of the wrong type to the CRD schema (it runs after mutation) instead of failing', async () => {
    const malformed = {
      metadata: { name: 'x' },
      spec: {
        selector: {},
        updateStrategy: 'fast',
        containers: ['proxy', { name: 'p', image: 7 }],
        initContainers: [null],
      },
    };
    const result = await sidecarSetDefaultingWebhook().handle(request('SidecarSet', 'CREATE', malformed), ctx);
    expect(result.allowed).toBe(true);
    const defaulted = defaultSidecarSet(malformed as unknown as SidecarSet);
    expect(defaulted.spec.updateStrategy).toBe('fast');
    expect(defaulted.spec.containers![0]).toBe('proxy');
    expect(defaulted.spec.containers![1]).toEqual(
      expect.objectContaining({ image: 7, imagePullPolicy: 'IfNotPresent' }),
    );
  });

  it('denies invalid specs and conflicts with a message naming the fields', async () => {
    const hook = sidecarSetValidatingWebhook(source([{ ...proxy, metadata: { name: 'other' } }]));
    const conflict = await hook.handle({ ...request('SidecarSet', 'CREATE', proxy), name: 'proxy' }, ctx);
    expect(conflict).toEqual(expect.objectContaining({ allowed: false, code: 422 }));
    expect('message' in conflict && conflict.message).toMatch(
      /container "proxy" is also injected by SidecarSet "other"/,
    );
    const invalid = await hook.handle(
      request('SidecarSet', 'CREATE', { metadata: { name: 'x' }, spec: { containers: [] } }),
      ctx,
    );
    expect('message' in invalid && invalid.message).toMatch(/spec.selector: is required/);
    expect(await sidecarSetValidatingWebhook(source([])).handle(request('SidecarSet', 'CREATE', proxy), ctx)).toEqual({
      allowed: true,
    });
  });
});

/** `{ a: { a: ... 1 } }`, `depth` objects deep, built without recursion. */
function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { a: 1 };
  for (let i = 1; i < depth; i++) v = { a: v };
  return v;
}
const withContainer = (extra: Record<string, unknown>): SidecarSet =>
  ({
    ...proxy,
    metadata: { name: 'deep' },
    spec: { ...proxy.spec, containers: [{ name: 'proxy', image: 'proxy:1', ...extra }] },
  }) as SidecarSet;

describe('objects that cannot be served are refused when written, never at pod creation', () => {
  it('a SidecarSet nested past the limit is denied at its own admission, naming the field', async () => {
    const deep = withContainer({ env: [{ name: 'X', valueFrom: nested(150) }] });
    const result = await sidecarSetValidatingWebhook(source([])).handle(request('SidecarSet', 'CREATE', deep), ctx);
    expect(result).toEqual(expect.objectContaining({ allowed: false, code: 422 }));
    expect('message' in result && result.message).toMatch(
      new RegExp(
        `spec\\.containers\\[0\\]\\.env\\[0\\]\\.valueFrom\\.a.*: nests deeper than ${MAX_SIDECARSET_DEPTH} levels`,
      ),
    );
    // Thousands of levels: the same named denial, no stack overflow anywhere.
    expect(validateSidecarSet(withContainer({ lifecycle: nested(5_000) }))).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.lifecycle\.a.*nests deeper than/),
    ]);
  });

  it('unknown container fields, out-of-range numbers and oversized specs are denied by name', () => {
    expect(validateSidecarSet(withContainer({ bogus: { a: 1 } }))).toEqual([
      'spec.containers[0].bogus: is not a field of a container (core/v1 Container or a sidecar field); remove it',
    ]);
    expect(validateSidecarSet(withContainer({ resources: { limits: { cpu: Infinity } } }))).toEqual([
      expect.stringMatching(/^spec\.containers\[0\]\.resources\.limits\.cpu: is a number out of range/),
    ]);
    expect(validateSidecarSet(withContainer({ args: ['x'.repeat(300 * 1024)] }))).toEqual([
      expect.stringMatching(/^spec: is \d+ bytes as JSON, over the 262144-byte limit/),
    ]);
  });

  it('every SidecarSet the validator admits injects into a pod with a valid patch', () => {
    // Containers must be upstream's types (their revision hash is upstream's); the deepest nesting
    // admitted is under a volume.
    const ok = {
      ...proxy,
      metadata: { name: 'deep' },
      spec: { ...proxy.spec, volumes: [{ name: 'v', deep: nested(MAX_SIDECARSET_DEPTH - 3) }] },
    } as unknown as SidecarSet;
    expect(validateSidecarSet(ok)).toEqual([]);
    expect(
      validateSidecarSet({
        ...ok,
        spec: { ...ok.spec, volumes: [{ name: 'v', deep: nested(MAX_SIDECARSET_DEPTH - 2) }] },
      } as unknown as SidecarSet),
    ).toEqual([expect.stringMatching(/nests deeper than/)]);
    const hook = podInjectionWebhook(source([ok]), 'kruise-system', clock);
    return Promise.resolve(hook.handle(request('Pod', 'CREATE', pod, 'apps'), ctx)).then((result) => {
      expect(result.allowed).toBe(true);
      expect('patches' in result && validatePatch(result.patches)).toBeUndefined();
    });
  });

  it('a stored SidecarSet that cannot be served (admitted while the webhook was bypassed) is skipped with a warning: it blocks no pod', async () => {
    const deep = withContainer({ lifecycle: nested(150) });
    const hook = podInjectionWebhook(source([deep, proxy].map((s) => Object.freeze(s))), 'kruise-system', clock);
    const result = await hook.handle(request('Pod', 'CREATE', pod, 'apps'), ctx);
    expect(result.allowed).toBe(true);
    expect(result.warnings).toEqual([
      expect.stringMatching(
        /^SidecarSet deep was not injected: it cannot be served \(spec\.containers\[0\]\.lifecycle/,
      ),
    ]);
    // The servable one is still injected.
    const ops = 'patches' in result ? result.patches : [];
    expect(JSON.stringify(ops)).toContain('"name":"proxy"');
    expect(validatePatch(ops)).toBeUndefined();
  });

  it('a malformed pod is a 400 naming the field, never a patch built from it', async () => {
    const hook = podInjectionWebhook(source([proxy]), 'kruise-system', clock);
    const cases: Array<[unknown, string]> = [
      [{ ...pod, spec: { containers: 'abc' } }, 'request.object.spec.containers: must be a list, got a string'],
      [{ ...pod, spec: { containers: [7] } }, 'request.object.spec.containers[0]: must be an object, got a number'],
      [
        { ...pod, spec: { containers: [{ name: 'a', env: 'x' }] } },
        'request.object.spec.containers[0].env: must be a list of objects',
      ],
      [
        { ...pod, metadata: { labels: { app: 7 } } },
        'request.object.metadata.labels["app"]: must be a string, got a number',
      ],
      [{ ...pod, spec: null }, 'request.object.spec: must be an object, got null'],
      [null, 'request.object: must be a Pod object, got null'],
    ];
    for (const [object, message] of cases) {
      expect(await hook.handle(request('Pod', 'CREATE', object, 'apps'), ctx)).toEqual({
        allowed: false,
        code: 400,
        message,
      });
    }
  });

  it('refuses to answer from caches that cannot prove they are current: 503 naming the cache, for pods and for SidecarSet conflict checks', async () => {
    const stale: SidecarSetSource = {
      ...source([proxy]),
      assertFresh: () => {
        throw new StaleCacheError(
          'cache of /apis/apps.kruise.io/v1alpha1/sidecarsets not proven current for 12.0s (bound 10s, --max-cache-staleness)',
        );
      },
    };
    const result = await podInjectionWebhook(stale, 'kruise-system', clock).handle(
      request('Pod', 'CREATE', pod, 'apps'),
      ctx,
    );
    expect(result).toEqual(expect.objectContaining({ allowed: false, code: 503, reason: 'ServiceUnavailable' }));
    expect('message' in result && result.message).toMatch(
      /not proven current for 12.0s \(bound 10s, --max-cache-staleness\); retry shortly/,
    );
    const other = { ...proxy, metadata: { name: 'other' } };
    expect(await sidecarSetValidatingWebhook(stale).handle(request('SidecarSet', 'CREATE', other), ctx)).toEqual(
      expect.objectContaining({ allowed: false, code: 503 }),
    );
    // Exempt namespaces and opted-out pods never read the caches, so they are never refused.
    expect(
      await podInjectionWebhook(stale, 'kruise-system', clock).handle(
        request('Pod', 'CREATE', pod, 'kube-system'),
        ctx,
      ),
    ).toEqual({ allowed: true });
  });
});

describe('SidecarSet webhooks: injection features', () => {
  const pinned: SidecarSet = {
    ...proxy,
    spec: { ...proxy.spec, injectionStrategy: { revision: { revisionName: 'proxy-v1', policy: 'Always' } } },
  };
  const v1 = {
    metadata: { name: 'proxy-v1', labels: { 'kruise.io/sidecarset-name': 'proxy' } },
    revision: 1,
    data: {
      spec: {
        $patch: 'replace',
        containers: [{ name: 'proxy', image: 'proxy:0', podInjectPolicy: 'BeforeAppContainer' }],
      },
    },
  };
  const withRevisions = (sets: SidecarSet[], revisions: Array<typeof v1>): SidecarSetSource => ({
    ...source(sets),
    revisions: { get: (name) => revisions.find((r) => r.metadata.name === name), list: () => revisions },
  });
  const images = (result: Awaited<ReturnType<ReturnType<typeof podInjectionWebhook>['handle']>>) =>
    ('patches' in result ? result.patches : [])
      .filter((o) => o.path === '/spec/containers')
      .flatMap((o) => (o as { value: Array<{ image: string }> }).value.map((c) => c.image));

  it('injects the pinned revision, and fails the pod (500, as upstream) when it cannot be read', async () => {
    expect(
      images(
        await podInjectionWebhook(withRevisions([pinned], [v1]), 'kruise-system', clock).handle(
          request('Pod', 'CREATE', pod, 'apps'),
          ctx,
        ),
      ),
    ).toEqual(['proxy:0', 'web:1']);
    const missing = await podInjectionWebhook(withRevisions([pinned], []), 'kruise-system', clock).handle(
      request('Pod', 'CREATE', pod, 'apps'),
      ctx,
    );
    expect(missing).toEqual({
      allowed: false,
      code: 500,
      message: expect.stringMatching(
        /^SidecarSet injection failed: ControllerRevision "proxy-v1" \(spec\.injectionStrategy\.revision\.revisionName of SidecarSet proxy\) not found/,
      ),
    });
  });

  it('fails the pod when MergePatchJson meets an annotation that is not JSON', async () => {
    const patching: SidecarSet = {
      ...proxy,
      spec: {
        ...proxy.spec,
        patchPodMetadata: [{ patchPolicy: 'MergePatchJson', annotations: { mesh: '{"proxy":1}' } }],
      },
    };
    const annotated = { ...pod, metadata: { ...pod.metadata, annotations: { mesh: 'not json' } } };
    expect(
      await podInjectionWebhook(source([patching]), 'kruise-system', clock).handle(
        request('Pod', 'CREATE', annotated, 'apps'),
        ctx,
      ),
    ).toEqual({
      allowed: false,
      code: 500,
      message: expect.stringMatching(/pod annotation "mesh", which MergePatchJson merges into, is not JSON/),
    });
  });

  it('validates a pinned revision against the revision cache, and patchPodMetadata against the whitelist', async () => {
    const deny = await sidecarSetValidatingWebhook(withRevisions([], [])).handle(
      request('SidecarSet', 'CREATE', pinned),
      ctx,
    );
    expect('message' in deny && deny.message).toMatch(
      /spec\.injectionStrategy\.revision: ControllerRevision "proxy-v1" .* not found/,
    );
    expect(
      await sidecarSetValidatingWebhook(withRevisions([], [v1])).handle(request('SidecarSet', 'CREATE', pinned), ctx),
    ).toEqual({ allowed: true });
    const patching = {
      ...proxy,
      spec: { ...proxy.spec, patchPodMetadata: [{ patchPolicy: 'Retain' as const, annotations: { mesh: 'on' } }] },
    };
    const refused = await sidecarSetValidatingWebhook(source([])).handle(
      request('SidecarSet', 'CREATE', patching),
      ctx,
    );
    expect('message' in refused && refused.message).toMatch(
      /spec\.patchPodMetadata: no patch metadata whitelist is configured/,
    );
    const allowed: SidecarSetSource = {
      ...source([]),
      patchMetadata: () => ({ whitelist: '{"rules":[{"allowedAnnotationKeyExprs":["^mesh$"]}]}' }),
    };
    expect(await sidecarSetValidatingWebhook(allowed).handle(request('SidecarSet', 'CREATE', patching), ctx)).toEqual({
      allowed: true,
    });
  });

  it('judges an UPDATE against the stored object: no new containers, as upstream', async () => {
    const added: SidecarSet = {
      ...proxy,
      spec: { ...proxy.spec, containers: [...proxy.spec.containers!, { name: 'extra', image: 'e:1' }] },
    };
    const update = {
      ...request('SidecarSet', 'UPDATE', added),
      oldObject: proxy as unknown as AdmissionRequest['oldObject'],
    };
    const result = await sidecarSetValidatingWebhook(source([proxy])).handle(update, ctx);
    expect('message' in result && result.message).toMatch(
      /spec\.containers\[1\]\.name: container "extra" is not in the stored SidecarSet/,
    );
    expect(
      await sidecarSetValidatingWebhook(source([proxy])).handle(request('SidecarSet', 'CREATE', added), ctx),
    ).toEqual({ allowed: true });
  });
});
