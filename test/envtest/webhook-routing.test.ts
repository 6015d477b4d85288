// Proves --enable-aggregator-routing: a webhook configured with a Service is
// called on the addresses in that Service's EndpointSlice (here two replicas on
// 127.0.0.2 and 127.0.0.3), not on its unroutable ClusterIP. Without a
// controller-manager, tests write the EndpointSlice themselves, as done here.
//
// Validation rejects loopback IPs in IPv4/IPv6 EndpointSlices, but accepts a
// dotted quad as an FQDN-type address, and the API server dials that host
// as-is: so loopback replicas go in an `addressType: FQDN` slice.
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  AdmissionregistrationV1Api,
  ApiException,
  CoreV1Api,
  DiscoveryV1Api,
  KubeConfig,
} from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { envtest, servingCertificate } from './state.js';

const kc = new KubeConfig();
kc.loadFromFile(envtest().kubeconfigPath);
const core = kc.makeApiClient(CoreV1Api);
const namespace = 'default';
const name = `envtest-webhook-${randomBytes(4).toString('hex')}`;
const servers: Server[] = [];

/** A validating webhook replica that denies everything, naming itself in the message. */
async function replica(host: string, port: number, tls: { keyPem: string; certPem: string }): Promise<number> {
  const server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => {
      body += d;
    });
    req.on('end', () => {
      const review = JSON.parse(body) as { request: { uid: string } };
      // Connection: close makes the API server dial (and so pick a random ready endpoint) per
      // call; on a kept-alive connection it would keep talking to the replica it first chose.
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: false, status: { code: 403, message: `denied by ${host}` } },
        }),
      );
    });
  });
  servers.push(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  return (server.address() as AddressInfo).port;
}

afterAll(async () => {
  await kc
    .makeApiClient(AdmissionregistrationV1Api)
    .deleteValidatingWebhookConfiguration({ name })
    .catch(() => undefined);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('webhook routing', () => {
  it('calls a Service-backed webhook on every ready EndpointSlice address', async () => {
    const tls = await servingCertificate([`${name}.${namespace}.svc`]);
    const port = await replica('127.0.0.2', 0, tls);
    await replica('127.0.0.3', port, tls); // one EndpointSlice port serves all its endpoints

    await core.createNamespacedService({
      namespace,
      body: { metadata: { name }, spec: { ports: [{ name: '', port: 443, targetPort: port }] } },
    });
    await kc.makeApiClient(DiscoveryV1Api).createNamespacedEndpointSlice({
      namespace,
      body: {
        metadata: { name, labels: { 'kubernetes.io/service-name': name } },
        addressType: 'FQDN', // see the top of this file: IPv4 slices may not hold 127.x
        ports: [{ name: '', port, protocol: 'TCP' }], // the name must equal the Service port's, even if empty
        endpoints: ['127.0.0.2', '127.0.0.3'].map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
      },
    });
    await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({
      body: {
        metadata: { name },
        webhooks: [
          {
            name: `${name}.envtest.kruise.io`,
            clientConfig: {
              service: { namespace, name, port: 443 },
              caBundle: Buffer.from(tls.caPem).toString('base64'),
            },
            rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
            objectSelector: { matchLabels: { 'envtest-webhook': name } }, // touch only this test's objects
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            failurePolicy: 'Fail',
          },
        ],
      },
    });

    // The webhook config and slice reach the API server's informers asynchronously, and each new
    // connection picks a ready endpoint at random; so create until both replicas answered (bounded).
    const deniedBy = new Set<string>();
    for (let i = 0; i < 200 && deniedBy.size < 2; i++) {
      try {
        await core.createNamespacedConfigMap({
          namespace,
          body: { metadata: { generateName: `${name}-`, labels: { 'envtest-webhook': name } } },
        });
      } catch (e) {
        if (!(e instanceof ApiException)) throw e;
        const host = /denied by (127\.0\.0\.\d+)/.exec(String(e.body))?.[1];
        if (host) deniedBy.add(host);
      }
      if (deniedBy.size < 2) await sleep(50);
    }
    expect([...deniedBy].sort()).toEqual(['127.0.0.2', '127.0.0.3']);
  }, 120_000);
});
