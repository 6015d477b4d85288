import { describe, expect, it } from '@jest/globals';
import { KRUISE_MANAGER_NAMES } from '../../../lib/constructs/core/names.js';
import { Chart, Duration, Testing } from 'cdk8s';
import { CertificateResources, WebhookCertificates } from '../../../lib/index.js';

function synth(certificates: WebhookCertificates) {
  const chart = new Chart(Testing.app(), 'test');
  const resources = CertificateResources._create(chart, 'c', {
    namespace: 'ns1',
    certificates,
    names: KRUISE_MANAGER_NAMES,
  });
  return { objects: Testing.synth(chart), resources };
}

describe('CertificateResources', () => {
  it('renders an empty Secret for self-managed certificates', () => {
    const { objects, resources } = synth(WebhookCertificates.selfManaged());
    expect(objects).toEqual([
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'kruise-webhook-certs', namespace: 'ns1' },
        type: 'Opaque',
      },
    ]);
    expect(resources.webhookAnnotations).toEqual({});
  });

  it('renders a private CA chain and a serving Certificate for cert-manager', () => {
    const { objects, resources } = synth(WebhookCertificates.certManager());
    expect(objects).toMatchSnapshot();
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Issuer/kruise-selfsigned',
      'Certificate/kruise-webhook-ca',
      'Issuer/kruise-webhook-ca-issuer',
      'Certificate/kruise-webhook-certs',
    ]);
    const serving = objects[3].spec;
    expect(serving.dnsNames).toEqual([
      'kruise-webhook-service',
      'kruise-webhook-service.ns1',
      'kruise-webhook-service.ns1.svc',
      'kruise-webhook-service.ns1.svc.cluster.local',
      'localhost',
    ]);
    expect([serving.duration, serving.renewBefore]).toEqual(['2160h', '720h']);
    expect(resources.webhookAnnotations).toEqual({ 'cert-manager.io/inject-ca-from': 'ns1/kruise-webhook-certs' });
  });

  it('uses an existing ClusterIssuer when given', () => {
    const { objects } = synth(
      WebhookCertificates.certManager({
        issuer: { name: 'corp-ca', kind: 'ClusterIssuer' },
        duration: Duration.days(30),
        renewBefore: Duration.days(10),
      }),
    );
    expect(objects).toHaveLength(1);
    expect(objects[0].spec.issuerRef).toEqual({ name: 'corp-ca', kind: 'ClusterIssuer', group: 'cert-manager.io' });
    expect(objects[0].spec.duration).toBe('720h');
  });
});
