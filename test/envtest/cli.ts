// `npm run envtest [-- extra kube-apiserver flags]`: a control plane in the
// foreground, for poking at with kubectl or running a controller against. Writes
// .envtest/kubeconfig (KRUISE_HA_ENVTEST_DIR moves it: local.ts).
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ControlPlane } from './control-plane.js';
import { localKubeconfig } from './local.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const kubeconfigPath = localKubeconfig(repoRoot);
const controlPlane = new ControlPlane({ kubeconfigPath, extraApiServerArgs: process.argv.slice(2) });

// Handlers go in before start(): a Ctrl-C during a minutes-long first build
// must still tear down whatever start() got as far as launching.
const started = controlPlane.start();
let stopping = 0;
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  // One Ctrl-C can arrive twice: the terminal signals the whole job (npm, projen, tsx and us) and tsx relays its
  // copy to us. Only a second Ctrl-C, a moment later, stops waiting for a graceful shutdown.
  if (stopping && Date.now() - stopping < 1_000) return;
  if (stopping) {
    controlPlane.killNow();
    process.exit(130);
  }
  stopping = Date.now();
  process.stderr.write(`\nenvtest: ${signal} received, stopping kube-apiserver and etcd...\n`);
  await started.catch(() => undefined);
  await controlPlane.stop();
  process.stderr.write('envtest: stopped.\n');
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, (s) => void shutdown(s));

try {
  const info = await started;
  const shown = relative(process.cwd(), kubeconfigPath) || kubeconfigPath;
  process.stdout.write(
    [
      `envtest: Kubernetes ${info.kubernetesVersion} API server ready at ${info.server}`,
      `  kubeconfig: ${kubeconfigPath}`,
      `  try:        kubectl --kubeconfig ${shown} get ns`,
      `  logs:       ${join(info.dir, 'kube-apiserver.log')}, ${join(info.dir, 'etcd.log')}`,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  // The children are unref'ed, so this is what keeps us in the foreground.
  setInterval(() => undefined, 1 << 30);
} catch (e) {
  if (!stopping) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}
