/**
 * `npm run envtest:install-runtime`: prepares the `npm run envtest` control plane for a local
 * runtime: applies the runtime flavor of KruiseManager (CRDs, RBAC, Secret, Services, webhook
 * configurations) and routes the webhook Service to 127.0.0.1:<WEBHOOK_PORT>, where
 * `npm run runtime` listens. Idempotent. It finds the control plane through the kubeconfig
 * `npm run envtest` writes (.envtest/kubeconfig, or $KRUISE_HA_ENVTEST_DIR/kubeconfig: local.ts).
 */
import { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Names, Ports } from '../../lib/contract.js';
import { addEndpoint, installRuntime, removeEndpoint } from '../integration/support/runtime-cluster.js';
import { localKubeconfig } from './local.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const kubeconfigPath = process.env.KUBECONFIG_PATH ?? localKubeconfig(repoRoot);
if (!existsSync(kubeconfigPath)) {
  process.stderr.write(
    `error: ${kubeconfigPath} does not exist. Fix: start the control plane first with \`npm run envtest\` ` +
      '(in another terminal, with the same KRUISE_HA_ENVTEST_DIR if you set one)\n',
  );
  process.exit(1);
}
const namespace = process.env.POD_NAMESPACE ?? Names.namespace;
const port = Number(process.env.WEBHOOK_PORT ?? Ports.webhook);
const kc = new KubeConfig();
kc.loadFromFile(kubeconfigPath);
try {
  const objects = await installRuntime(kc, namespace);
  await removeEndpoint(kc, namespace, 'local');
  await addEndpoint(kc, namespace, 'local', port);
  const shown = relative(process.cwd(), kubeconfigPath).startsWith('..')
    ? kubeconfigPath
    : relative(process.cwd(), kubeconfigPath);
  process.stdout.write(
    `applied ${objects.length} objects into ${namespace}; ${Names.webhookService} -> 127.0.0.1:${port}\n` +
      `next: POD_NAMESPACE=${namespace} WEBHOOK_CERT_DIR=/tmp/kruise-certs npm run runtime -- --kubeconfig=${shown}\n`,
  );
} catch (e) {
  process.stderr.write(
    `error: installing the runtime into the control plane of ${kubeconfigPath} failed: ${(e as Error).message}\n` +
      'Fix: check that `npm run envtest` is still running (it removes the kubeconfig when it stops)\n',
  );
  process.exit(1);
}
