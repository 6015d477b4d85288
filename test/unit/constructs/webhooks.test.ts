import { describe, expect, it } from '@jest/globals';
import { KRUISE_MANAGER_NAMES } from '../../../lib/constructs/core/names.js';
import { Chart, Duration, Testing } from 'cdk8s';
import type { WebhookConfigurationsProps } from '../../../lib/constructs/webhooks/webhooks.js';
import { FailurePolicy, WebhookConfigurations } from '../../../lib/index.js';
import { runtimeWebhooks } from '../../../lib/constructs/webhooks/runtime-webhooks.js';
import { resolveUpstreamProfile } from '../../../lib/constructs/manager/upstream-profile.js';
import { Manifest } from './synth.js';

function synth(props: Partial<WebhookConfigurationsProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  const upstream = resolveUpstreamProfile({ namespace: 'kruise-system', externalCertificates: false });
  WebhookConfigurations._create(chart, 'w', {
    namespace: 'kruise-system',
    names: KRUISE_MANAGER_NAMES,
    definitions: upstream.webhooks,
    template: true,
    ...props,
  });
  return Testing.synth(chart);
}
const names = (o: Manifest) => o.webhooks.map((w: { name: string }) => w.name);

describe('WebhookConfigurations', () => {
  it('matches the snapshot (upstream set)', () => {
    expect(synth()).toMatchSnapshot();
  });

  it('renders the upstream webhooks the binary serves with safe defaults', () => {
    const [mutating, validating] = synth();
    expect(names(mutating)).toHaveLength(12);
    expect(names(mutating)).toEqual(
      expect.arrayContaining(['mpod.kb.io', 'mcloneset.kb.io', 'msidecarset.kb.io', 'mstatefulset.kb.io']),
    );
    expect(names(validating)).toEqual(
      expect.arrayContaining([
        'vpod.kb.io',
        'vpodeviction.kb.io',
        'vcloneset.kb.io',
        'vstatefulset.kb.io',
        'vbuiltindeployment.kb.io',
        'vnamespace.kb.io',
      ]),
    );
    // Names key the webhooks list: the API server rejects duplicates.
    expect(new Set(names(validating)).size).toBe(names(validating).length);
    expect(new Set(names(mutating)).size).toBe(names(mutating).length);
    for (const w of [...mutating.webhooks, ...validating.webhooks]) {
      expect(w.sideEffects).toBe('None');
      expect(w.admissionReviewVersions).toEqual(['v1', 'v1beta1']);
      expect(w.clientConfig.service).toEqual(
        expect.objectContaining({ name: 'kruise-webhook-service', namespace: 'kruise-system', port: 443 }),
      );
      expect(w.clientConfig.caBundle).toBeUndefined();
    }
    const protection = validating.webhooks.filter((w: { objectSelector?: object }) => w.objectSelector);
    // ResourcesDeletionProtection is off by default: the service and ingress guards are not served.
    expect(protection.map((w: { name: string }) => w.name).sort()).toEqual([
      'vbuiltindeployment.kb.io',
      'vbuiltinreplicaset.kb.io',
      'vbuiltinstatefulset.kb.io',
      'vcustomresourcedefinition.kb.io',
      'vnamespace.kb.io',
    ]);
    expect(protection.every((w: { failurePolicy: string }) => w.failurePolicy === 'Ignore')).toBe(true);
    // The template is exactly what is rendered, so the manager rebuilds the same configuration.
    expect(JSON.parse(mutating.metadata.annotations.template)).toEqual(mutating.webhooks);
    expect(JSON.parse(validating.metadata.annotations.template)).toEqual(validating.webhooks);
  });

  it('renders only what the runtime serves, without the upstream template annotation', () => {
    const [mutating, validating] = synth({ definitions: runtimeWebhooks(), template: false });
    expect(names(mutating)).toEqual(['mpod.kb.io', 'msidecarset.kb.io']);
    expect(names(validating)).toEqual([
      'vsidecarset.kb.io',
      'vpod.kb.io',
      'vpodeviction.kb.io',
      'vworkloadspread.kb.io',
    ]);
    expect(mutating.metadata.annotations).toBeUndefined();
    expect(validating.webhooks[0].clientConfig.service.path).toBe('/validate-apps-kruise-io-v1alpha1-sidecarset');
  });

  it('sets failurePolicy and timeout per group', () => {
    const [mutating] = synth({
      pods: { failurePolicy: FailurePolicy.IGNORE, timeout: Duration.seconds(3) },
      resources: { timeout: Duration.seconds(20) },
    });
    const named = (name: string) => mutating.webhooks.find((w: { name: string }) => w.name === name);
    expect([named('mpod.kb.io').failurePolicy, named('mpod.kb.io').timeoutSeconds]).toEqual(['Ignore', 3]);
    expect([named('mcloneset.kb.io').failurePolicy, named('mcloneset.kb.io').timeoutSeconds]).toEqual(['Fail', 20]);
  });

  it('excludes extra namespaces and rejects fractional timeouts', () => {
    const [mutating] = synth({ podExcludedNamespaces: ['kube-system', 'kruise-system', 'istio-system'] });
    expect(
      mutating.webhooks.find((w: { name: string }) => w.name === 'mpod.kb.io').namespaceSelector.matchExpressions[0]
        .values,
    ).toEqual(['kube-system', 'kruise-system', 'istio-system']);
    expect(() => synth({ pods: { timeout: Duration.millis(1500) } })).toThrow(
      /webhooks.pods.timeout: must be a whole number of seconds >= 1 \(got "1500ms"\)/,
    );
  });
});
