import { describe, expect, it } from '@jest/globals';
import { Chart, Duration, Testing } from 'cdk8s';
import { FailurePolicy, WebhookConfigurations, WebhookConfigurationsProps } from '../../../lib/index.js';
import { Manifest } from './synth.js';

function synth(props: Partial<WebhookConfigurationsProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new WebhookConfigurations(chart, 'w', { namespace: 'kruise-system', upstream: true, ...props });
  return Testing.synth(chart);
}
const names = (o: Manifest) => o.webhooks.map((w: { name: string }) => w.name);

describe('WebhookConfigurations', () => {
  it('matches the snapshot (upstream set)', () => {
    expect(synth()).toMatchSnapshot();
  });

  it('renders every upstream webhook with safe defaults', () => {
    const [mutating, validating] = synth();
    expect(names(mutating)).toHaveLength(18);
    expect(names(mutating)).toEqual(expect.arrayContaining(['mpod.kb.io', 'mcloneset.kb.io', 'msidecarset.kb.io']));
    expect(names(validating)).toEqual(expect.arrayContaining(['vpod.kb.io', 'vpodeviction.kb.io', 'vcloneset.kb.io', 'vstatefulset.kb.io', 'vstatefulsetdeletion.kb.io', 'vnamespacedeletion.kb.io']));
    // Names key the webhooks list: the API server rejects duplicates.
    expect(new Set(names(validating)).size).toBe(names(validating).length);
    expect(new Set(names(mutating)).size).toBe(names(mutating).length);
    for (const w of [...mutating.webhooks, ...validating.webhooks]) {
      expect(w.sideEffects).toBe('None');
      expect(w.admissionReviewVersions).toEqual(['v1', 'v1beta1']);
      expect(w.clientConfig.service).toEqual(expect.objectContaining({ name: 'kruise-webhook-service', namespace: 'kruise-system', port: 443 }));
      expect(w.clientConfig.caBundle).toBeUndefined();
    }
    const protection = validating.webhooks.filter((w: { objectSelector?: object }) => w.objectSelector);
    expect(protection).toHaveLength(7);
    expect(protection.every((w: { failurePolicy: string }) => w.failurePolicy === 'Ignore')).toBe(true);
    expect(mutating.metadata.annotations).toEqual({ template: '' });
  });

  it('renders only what the runtime serves, without the upstream template annotation', () => {
    const [mutating, validating] = synth({ upstream: false });
    expect(names(mutating)).toEqual(['mpod.kb.io', 'msidecarset.kb.io']);
    expect(names(validating)).toEqual(['vsidecarset.kb.io']);
    expect(mutating.metadata.annotations).toBeUndefined();
    expect(validating.webhooks[0].clientConfig.service.path).toBe('/validate-apps-kruise-io-v1alpha1-sidecarset');
  });

  it('sets failurePolicy and timeout per group', () => {
    const [mutating] = synth({ pods: { failurePolicy: FailurePolicy.IGNORE, timeout: Duration.seconds(3) }, resources: { timeout: Duration.seconds(20) } });
    const mpod = mutating.webhooks[0];
    expect([mpod.failurePolicy, mpod.timeoutSeconds]).toEqual(['Ignore', 3]);
    expect([mutating.webhooks[1].failurePolicy, mutating.webhooks[1].timeoutSeconds]).toEqual(['Fail', 20]);
  });

  it('excludes extra namespaces and rejects fractional timeouts', () => {
    const [mutating] = synth({ podExcludedNamespaces: ['kube-system', 'kruise-system', 'istio-system'] });
    expect(mutating.webhooks[0].namespaceSelector.matchExpressions[0].values).toEqual(['kube-system', 'kruise-system', 'istio-system']);
    expect(() => synth({ pods: { timeout: Duration.millis(1500) } })).toThrow(/webhooks.pods.timeout: must be a whole number of seconds >= 1 \(got "1500ms"\)/);
  });
});
