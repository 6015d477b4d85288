/**
 * `npm run envtest:install-runtime`: prepares the `npm run envtest` control plane for a local
 * runtime: applies the runtime flavor of KruiseManager (CRDs, RBAC, Secret, Services, webhook
 * configurations) and routes the webhook Service to 127.0.0.1:<WEBHOOK_PORT>, where
 * `npm run runtime` listens. Idempotent.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { Names, Ports } from '../../lib/contract.js';
import { addEndpoint, installRuntime, removeEndpoint } from '../integration/support/runtime-cluster.js';

const kubeconfigPath = process.env.KUBECONFIG_PATH ?? '.envtest/kubeconfig';
if (!existsSync(kubeconfigPath)) {
  process.stderr.write(
    `error: ${kubeconfigPath} does not exist. Fix: start the control plane first with \`npm run envtest\`\n`,
  );
  process.exit(1);
}
const namespace = process.env.POD_NAMESPACE ?? Names.namespace;
const port = Number(process.env.WEBHOOK_PORT ?? Ports.webhook);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfigPath);
const objects = await installRuntime(kc, namespace);
await removeEndpoint(kc, namespace, 'local');
await addEndpoint(kc, namespace, 'local', port);
process.stdout.write(
  `applied ${objects.length} objects into ${namespace}; ${Names.webhookService} -> 127.0.0.1:${port}\n` +
    `next: POD_NAMESPACE=${namespace} WEBHOOK_CERT_DIR=/tmp/kruise-certs npm run runtime -- --kubeconfig=${kubeconfigPath}\n`,
);
