/**
 * Installing and removing a synthesized kruise-manager as an operator does: one
 * `kubectl apply --server-side` of the output, then waiting on what the cluster reports; removal
 * deletes Kruise's own objects first (the CRDs are delete-protected while they hold any).
 */
import { describePods, getJson, isReady, kubectl, pods, until, type PodLike } from './kube.js';
import { phase } from './phase.js';
import { objectsIn, type OutputObject, type Synthesized } from './synth.js';
import { APP_NAMESPACE, asList } from './workloads.js';

export const NS = 'kruise-system';
export const MANAGER_SELECTOR = 'control-plane=controller-manager';

/** Applies every file of the output in one server-side apply and waits for the manager to be Available. */
export async function installKruise(kubeconfig: string, out: Synthesized, timeoutMs = 420_000): Promise<void> {
  await phase('install: apply', () =>
    kubectl(kubeconfig, ['apply', '--server-side', ...out.files.flatMap((f) => ['-f', f])], { timeoutMs: 180_000 }),
  );
  await phase('install: manager rolled out and Ready', () => managerPods(kubeconfig, timeoutMs));
}

/**
 * The manager pods once every Deployment of the install is fully rolled out and its pods Ready
 * (Deployment status and the pods agree), sorted by name. `where` names another install's (an Operator's).
 */
export async function managerPods(
  kubeconfig: string,
  timeoutMs = 300_000,
  where: { readonly namespace: string; readonly selector: string } = { namespace: NS, selector: MANAGER_SELECTOR },
): Promise<PodLike[]> {
  return until(
    'every manager Deployment rolled out with all replicas Ready',
    async () => {
      const deployments = await getJson<{
        items: Array<{
          spec: { replicas: number };
          status: { readyReplicas?: number; updatedReplicas?: number; replicas?: number };
        }>;
      }>(kubeconfig, ['deployments', '-n', where.namespace, '-l', where.selector]);
      if (deployments.items.length === 0) return false;
      const want = deployments.items.reduce((n, d) => n + d.spec.replicas, 0);
      const settled = deployments.items.every(
        (d) =>
          d.status.readyReplicas === d.spec.replicas &&
          d.status.updatedReplicas === d.spec.replicas &&
          d.status.replicas === d.spec.replicas,
      );
      const p = (await pods(kubeconfig, where.namespace, where.selector)).filter((x) => !x.metadata.deletionTimestamp);
      return (
        settled &&
        p.length === want &&
        p.every(isReady) &&
        p.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      );
    },
    { timeoutMs, intervalMs: 2_000, describe: () => describePods(kubeconfig, where.namespace) },
  );
}

/**
 * Removes an install as an operator must with Kruise's delete protection on: the app namespace;
 * the manager and daemon workloads (so nothing recreates Kruise objects, such as a NodeImage per
 * node); every object of the install's CRDs (a Cascading-protected CRD refuses deletion while it
 * holds any); then the rest of the output. Waits until the install namespace is gone.
 */
export async function uninstallKruise(
  kubeconfig: string,
  out: Synthesized | readonly object[] | undefined,
): Promise<void> {
  await phase('uninstall', () => uninstallSteps(kubeconfig, out));
}

async function uninstallSteps(kubeconfig: string, out: Synthesized | readonly object[] | undefined): Promise<void> {
  const gone = await phase('uninstall: app namespace', () =>
    kubectl(kubeconfig, ['delete', 'namespace', APP_NAMESPACE, '--ignore-not-found', '--wait=true', '--timeout=180s'], {
      timeoutMs: 240_000,
      allowFailure: true,
    }),
  );
  if (gone.code !== 0) {
    // Cleanup, not the behaviour under test: say what held the namespace (in a CI run after the drills
    // it outlived 300 s, cause not seen), then force its pods out, as an operator would for pods
    // whose kubelet never confirms.
    process.stderr.write(
      `uninstall: namespace ${APP_NAMESPACE} still there after 180 s (${gone.stderr.trim()}); its pods:\n` +
        `${await describePods(kubeconfig, APP_NAMESPACE)}\nforce-deleting them\n`,
    );
    await kubectl(
      kubeconfig,
      ['delete', 'pods', '--all', '-n', APP_NAMESPACE, '--grace-period=0', '--force', '--wait=false'],
      { allowFailure: true },
    );
    await kubectl(kubeconfig, ['wait', '--for=delete', `namespace/${APP_NAMESPACE}`, '--timeout=120s'], {
      timeoutMs: 150_000,
      allowFailure: true,
    });
  }
  if (!out) return;
  const objects = Array.isArray(out) ? (out as OutputObject[]) : objectsIn((out as Synthesized).files);
  const workloads = objects.filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet');
  await phase('uninstall: manager workloads', () =>
    kubectl(kubeconfig, ['delete', '--ignore-not-found', '--wait=true', '-f', '-'], {
      input: asList(...workloads),
      timeoutMs: 300_000,
    }),
  );
  // Deleting a Deployment leaves its pods to the garbage collector: a leader still draining would recreate the
  // per-node objects (NodeImage, NodePodProbe) after the step below deleted them, and the CRDs' delete protection
  // then refuses the CRDs ("active CRs 4>0").
  await phase('uninstall: manager pods gone', () =>
    until(
      'the install namespace to hold no pods',
      async () =>
        (await kubectl(kubeconfig, ['get', 'pods', '-n', NS, '-o', 'name'])).stdout.trim() === '' || undefined,
      { timeoutMs: 180_000, intervalMs: 1_000, describe: () => describePods(kubeconfig, NS) },
    ),
  );
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata.name);
  // One kubectl for every CRD's objects (a comma-separated list of resources): a kubectl per CRD cost 0.5-1 s of
  // start-up each, 11-18 s for upstream's 18-24 CRDs.
  if (crds.length > 0) {
    await phase(`uninstall: objects of ${crds.length} CRDs`, () =>
      kubectl(
        kubeconfig,
        ['delete', crds.join(','), '--all', '--all-namespaces', '--ignore-not-found', '--wait=true'],
        { timeoutMs: 300_000 },
      ),
    );
  }
  await phase('uninstall: the rest of the output', () =>
    kubectl(kubeconfig, ['delete', '--ignore-not-found', '--wait=true', '-f', '-'], {
      input: asList(...objects.filter((o) => !workloads.includes(o))),
      timeoutMs: 300_000,
    }),
  );
  await phase('uninstall: install namespace gone', () =>
    until('the install namespace to be gone', async () => {
      const r = await kubectl(kubeconfig, ['get', 'namespace', NS, '--ignore-not-found', '-o', 'name']);
      return r.stdout.trim() === '' || undefined;
    }),
  );
}

/** Names of the pods the webhook Service's EndpointSlices (the real controller's) list as ready, sorted. */
export async function readyWebhookEndpoints(kc: string): Promise<string[]> {
  const slices = await getJson<{
    items: Array<{ endpoints?: Array<{ conditions?: { ready?: boolean }; targetRef?: { name: string } }> }>;
  }>(kc, ['endpointslices', '-n', NS, '-l', 'kubernetes.io/service-name=kruise-webhook-service']);
  return slices.items
    .flatMap((s) => s.endpoints ?? [])
    .filter((e) => e.conditions?.ready)
    .map((e) => e.targetRef?.name ?? '')
    .sort();
}

/** The pods' names, sorted (to compare with readyWebhookEndpoints). */
export const podNames = (p: readonly PodLike[]) => p.map((x) => x.metadata.name).sort();

/** Waits until the webhook Service's EndpointSlices list exactly the Ready replicas. */
export async function webhookEndpointsReady(kc: string): Promise<void> {
  await until('the webhook Service to route to every ready replica', async () => {
    const want = podNames(await managerPods(kc));
    return JSON.stringify(await readyWebhookEndpoints(kc)) === JSON.stringify(want);
  });
}

/** Applies, retrying while the webhook that must admit the objects is not yet routed (as an operator would). */
export async function applyAdmitted(kc: string, objects: object[]): Promise<void> {
  await until(
    'the app objects to be admitted',
    async () => {
      const r = await kubectl(kc, ['apply', '--server-side', '--force-conflicts', '-f', '-'], {
        input: asList(...objects),
        allowFailure: true,
      });
      if (r.code !== 0)
        process.stderr.write(`apply refused (its webhook not routed yet?), retrying: ${r.stderr.trim()}\n`);
      return r.code === 0;
    },
    { timeoutMs: 120_000, intervalMs: 3_000 },
  );
}
