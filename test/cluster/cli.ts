// `npm run cluster [-- --ha] [-- --nodes N] [-- --slot N]`: the local cluster in the foreground, for trying the
// synthesized output by hand (docs/local-cluster.md). Ctrl-C stops it and undoes everything.
import { parseArgs } from 'node:util';
import { join, relative } from 'node:path';
import { LocalCluster } from './cluster.js';
import { serveClusterControl } from './control.js';
import { CLUSTER_SLOT_ENV, parseSlot, REPO_ROOT } from './paths.js';

const { values } = parseArgs({
  options: {
    ha: { type: 'boolean', default: false },
    nodes: { type: 'string', default: '3' },
    // Another slot runs beside the cluster of slot 0 (its own names, bridge, subnet and files): paths.ts clusterSite.
    slot: { type: 'string', default: process.env[CLUSTER_SLOT_ENV] ?? '0' },
    kubeconfig: { type: 'string', default: join(REPO_ROOT, '.cluster', 'kubeconfig') },
    // Also serve the control endpoint and write the state file the e2e tier attaches to
    // (KRUISE_HA_CLUSTER_STATE=<path> npm run test:e2e reuses this cluster and leaves it running).
    'serve-state': { type: 'boolean', default: false },
  },
});
const nodes = Number(values.nodes);
const t0 = Date.now();
let cluster: LocalCluster;
try {
  const slot = parseSlot(values.slot, '--slot');
  cluster = new LocalCluster({ ha: values.ha, nodes, slot, kubeconfigPath: values.kubeconfig });
} catch (e) {
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}

// Handlers go in before start(): a Ctrl-C during a minutes-long first build must still undo
// whatever start() got as far as creating.
const started = cluster.start();
let stopping = false;
async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (stopping) {
    cluster.killNow(); // second Ctrl-C: the next start cleans up what is left
    process.exit(130);
  }
  stopping = true;
  process.stderr.write(`\ncluster: ${signal} received, stopping every process and undoing every change...\n`);
  await started.catch(() => undefined);
  await cluster.stop();
  process.stderr.write('cluster: stopped.\n');
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, (s) => void shutdown(s));

try {
  const info = await started;
  const shown = relative(process.cwd(), values.kubeconfig) || values.kubeconfig;
  const served = values['serve-state'] ? await serveClusterControl(cluster, info) : undefined;
  process.stdout.write(
    [
      `cluster: Kubernetes ${info.kubernetesVersion}, ${info.ha ? '3 control-plane members (HA)' : '1 control-plane member'}, ` +
        `${info.nodes.length} nodes Ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      ...info.nodes.map((n) => `  ${n.name}  ${n.zone}  ${n.ip}  netns ${n.netns}  containerd ${n.containerdSocket}`),
      `  API server: ${info.server}`,
      `  kubeconfig: ${values.kubeconfig}`,
      `  registry:   ${info.registry} (plain HTTP; nodes resolve ${info.mirroredRegistries.join(', ')} through it)`,
      `  try:        kubectl --kubeconfig ${shown} get nodes -L topology.kubernetes.io/zone`,
      `  logs:       ${info.dir}/<member or node>/logs/`,
      ...(served ? [`  e2e:        KRUISE_HA_CLUSTER_STATE=${served.statePath} npm run test:e2e`] : []),
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  setInterval(() => undefined, 1 << 30); // children are unref'ed: this keeps us in the foreground
} catch (e) {
  if (!stopping) {
    process.stderr.write(`${(e as Error).message}\n`);
    process.exit(1);
  }
}
