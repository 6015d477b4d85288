// The API server calling real manager processes: the runtime flavor of the constructs installed
// (webhook configurations with failurePolicy Fail), two replicas behind the webhook Service
// (loopback FQDN EndpointSlices, one per replica, written by the test as the endpoints
// controller would), a SidecarSet, and pods created through the API server.
//
// Under continuous pod creation one replica is stopped the way Kubernetes stops a pod: SIGTERM,
// readiness fails, the endpoint is removed during the drain window, the process exits 0. Not a
// single admission may fail and every pod must carry the sidecar. Then the negative: a replica
// SIGKILLed while its endpoint is still published. What the API server does then is recorded
// (printed) rather than asserted, apart from what failurePolicy Fail makes certain: no pod is
// ever admitted without its sidecar, and once the endpoint is gone admission works again.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type V1Pod } from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { Agent } from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { Names, Paths, SecretKeys, SidecarSetAnnotations } from '../../lib/contract.js';
import { envtest } from '../envtest/state.js';
import {
  containerImage,
  createSidecarSet,
  deletePods,
  deleteSidecarSet,
  describeError,
  exitOf,
  podBody,
  podReview,
  postReview,
  reviewPatch,
  until,
  webhookCalls,
  type SidecarSetParams,
} from './support/ha.js';
import { ManagerProcess } from './support/manager-process.js';
import {
  addEndpoint,
  installRuntime,
  kubeConfig,
  removeEndpoint,
  uninstallWebhooks,
} from './support/runtime-cluster.js';

const SLOW = 60_000; // bound for waits on the API server; never a speed assertion
const DRAIN = '5s'; // the window in which the test (as the endpoints controller) removes the endpoint
const kc = kubeConfig();
const core = kc.makeApiClient(CoreV1Api);
const suffix = randomBytes(3).toString('hex');
const ns = `adm-${suffix}`;
const podsNs = `adm-pods-${suffix}`;
const sidecarSet: SidecarSetParams = {
  name: `adm-${suffix}`,
  namespace: podsNs,
  appLabel: `adm-${suffix}`,
  container: `sidecar-${suffix}`,
  image: 'registry.invalid/sidecar:v1',
};
const replicas: ManagerProcess[] = [];
let caPem = '';
/** Loads still running (a failed test must not leave creators spinning). */
const loads = new Set<{ stop: () => Promise<void> }>();

async function startReplica(name: string): Promise<ManagerProcess> {
  const m = await ManagerProcess.start({
    name,
    kubeconfigPath: envtest().kubeconfigPath,
    namespace: ns,
    args: [`--drain-timeout=${DRAIN}`],
  });
  replicas.push(m);
  await m.waitReady();
  return m;
}

/** Waits until `m` itself injects the sidecar (its SidecarSet cache has it), asking it directly. */
async function injectsDirectly(m: ManagerProcess): Promise<void> {
  await until(
    `${m.name} to inject ${sidecarSet.name}`,
    async () => {
      const res = await postReview(
        m.ports.webhook,
        Paths.mutatePod,
        caPem,
        podReview(podBody('probe', sidecarSet.appLabel), podsNs),
      );
      return reviewPatch(res.body).some((op) => JSON.stringify(op.value ?? '').includes(sidecarSet.container));
    },
    SLOW,
    100,
  );
}

let seq = 0;
async function createPod(): Promise<V1Pod> {
  return core.createNamespacedPod({ namespace: podsNs, body: podBody(`p-${seq++}`, sidecarSet.appLabel) });
}

interface Outcome {
  phase: string;
  ok: boolean;
  mutated: boolean;
  error?: string;
}

/** `creators` concurrent loops creating pods until stopped; each outcome tagged with the phase it started in. */
function load(creators: number) {
  const outcomes: Outcome[] = [];
  let phase = 'start';
  let running = true;
  const loop = async () => {
    while (running) {
      const during = phase;
      try {
        const pod = await createPod();
        outcomes.push({
          phase: during,
          ok: true,
          mutated: containerImage(pod, sidecarSet.container) === sidecarSet.image,
        });
      } catch (e) {
        outcomes.push({ phase: during, ok: false, mutated: false, error: describeError(e).slice(0, 400) });
        await sleep(20); // a refused call returns fast; do not spin
      }
    }
  };
  const done = Promise.all(Array.from({ length: creators }, loop));
  const handle = {
    outcomes,
    set phase(p: string) {
      phase = p;
    },
    count: (p: string, pred: (o: Outcome) => boolean = () => true) =>
      outcomes.filter((o) => o.phase === p && pred(o)).length,
    stop: async () => {
      running = false;
      loads.delete(handle);
      await done;
    },
  };
  loads.add(handle);
  return handle;
}

beforeAll(async () => {
  await installRuntime(kc, ns);
  await core.createNamespace({ body: { metadata: { name: podsNs } } });
  await Promise.all([startReplica('adm-a'), startReplica('adm-b')]);
  for (const m of replicas) await addEndpoint(kc, ns, m.name, m.ports.webhook);
  const secret = await core.readNamespacedSecret({ name: Names.webhookSecret, namespace: ns });
  caPem = Buffer.from(secret.data![SecretKeys.caCert], 'base64').toString('utf8');
  await createSidecarSet(kc, sidecarSet);
  await Promise.all(replicas.map(injectsDirectly));
}, 120_000);

afterAll(async () => {
  await Promise.all([...loads].map((l) => l.stop()));
  await Promise.all(replicas.map((m) => m.stop()));
  for (const m of replicas) await removeEndpoint(kc, ns, m.name);
  await deleteSidecarSet(kc, sidecarSet.name);
  // Webhooks first: vpod.kb.io (pod DELETE, failurePolicy Fail) has no replica left to answer.
  await uninstallWebhooks(kc);
  await deletePods(kc, podsNs);
}, 60_000);

describe('API server → manager processes', () => {
  it(
    'mutates pods created through the API server, on either replica',
    async () => {
      for (let i = 0; i < 10; i++) {
        const pod = await createPod();
        expect(containerImage(pod, sidecarSet.container)).toBe(sidecarSet.image);
        expect(pod.metadata?.annotations?.[SidecarSetAnnotations.injectedList]).toBe(sidecarSet.name);
      }
      // A pod the SidecarSet does not select is admitted untouched.
      const other = await core.createNamespacedPod({
        namespace: podsNs,
        body: podBody(`other-${suffix}`, 'something-else'),
      });
      expect(containerImage(other, sidecarSet.container)).toBeUndefined();
      expect(other.metadata?.annotations?.[SidecarSetAnnotations.injectedList] ?? '').not.toContain(sidecarSet.name);
    },
    SLOW,
  );

  it('loses no admission while a replica is stopped gracefully (SIGTERM, readiness fails, endpoint removed in the drain window)', async () => {
    const before = await Promise.all(replicas.map((m) => webhookCalls(m, Paths.mutatePod)));
    const run = load(4);
    run.phase = 'both serving';
    await until('pods admitted with both replicas serving', () => run.count('both serving') >= 40, SLOW);
    // Stop the replica that carried more of this traffic (the API server keeps connections alive).
    const served = (await Promise.all(replicas.map((m) => webhookCalls(m, Paths.mutatePod)))).map(
      (n, i) => n - before[i],
    );
    const leaving = served[0] >= served[1] ? replicas[0] : replicas[1];
    const staying = leaving === replicas[0] ? replicas[1] : replicas[0];
    expect(Math.max(...served)).toBeGreaterThan(0);

    leaving.signal('SIGTERM');
    run.phase = 'terminating';
    await until(
      `${leaving.name} to fail readiness`,
      async () => (await leaving.get('/readyz')).status === 500,
      10_000,
      20,
    );
    await removeEndpoint(kc, ns, leaving.name);
    // Still serving during the window, closing each connection after its response so callers reconnect elsewhere.
    const keepAlive = new Agent({ keepAlive: true });
    const direct = await postReview(
      leaving.ports.webhook,
      Paths.mutatePod,
      caPem,
      podReview(podBody('probe', sidecarSet.appLabel), podsNs),
      keepAlive,
    );
    keepAlive.destroy();
    expect([direct.status, direct.connection]).toEqual([200, 'close']);
    expect(reviewPatch(direct.body).length).toBeGreaterThan(0);
    run.phase = 'draining';
    // For the record: how much the API server still sent it after its endpoint went (kept-alive connections).
    const atRemoval = await webhookCalls(leaving, Paths.mutatePod);
    await sleep(3_000);
    const afterRemoval = (await webhookCalls(leaving, Paths.mutatePod).catch(() => NaN)) - atRemoval;
    expect(await exitOf(leaving)).toEqual({ code: 0, signal: null });
    run.phase = 'stopped';
    await until('pods admitted after the replica stopped', () => run.count('stopped') >= 60, SLOW);
    await run.stop();

    const failed = run.outcomes.filter((o) => !o.ok);
    expect(failed).toEqual([]);
    expect(run.outcomes.filter((o) => !o.mutated)).toEqual([]);
    expect(run.count('draining')).toBeGreaterThan(0);
    expect(staying.child.exitCode).toBeNull();
    expect(leaving.logs()).toMatch(/"msg":"draining admission"/);
    process.stderr.write(
      `graceful stop of ${leaving.name}: ${run.outcomes.length} pods admitted (${[
        'both serving',
        'terminating',
        'draining',
        'stopped',
      ]
        .map((p) => `${p} ${run.count(p)}`)
        .join(
          ', ',
        )}), 0 failed; ${leaving.name} had served ${served[replicas.indexOf(leaving)]} of the first ${served[0] + served[1]} webhook calls, and ${afterRemoval} in the 3s after its endpoint was removed\n`,
    );
  }, 120_000);

  it('negative: a replica SIGKILLed while its endpoint is still published (recorded); admission recovers once the endpoint goes', async () => {
    const [survivor] = replicas.filter((m) => m.child.exitCode === null && m.child.signalCode === null);
    const fresh = await startReplica('adm-c');
    await addEndpoint(kc, ns, fresh.name, fresh.ports.webhook);
    await injectsDirectly(fresh);
    const pair = [survivor, fresh];
    const before = await Promise.all(pair.map((m) => webhookCalls(m, Paths.mutatePod)));
    const run = load(4);
    run.phase = 'both serving';
    await until('pods admitted with both endpoints published', () => run.count('both serving') >= 40, SLOW);
    // The API server keeps its connections to the replica it already knew, so the new one may
    // get nothing: kill the one carrying the traffic, the case that hurts.
    const served = (await Promise.all(pair.map((m) => webhookCalls(m, Paths.mutatePod)))).map((n, i) => n - before[i]);
    const victim = served[0] >= served[1] ? pair[0] : pair[1];
    const staying = victim === pair[0] ? pair[1] : pair[0];
    expect(Math.max(...served)).toBeGreaterThan(0);

    victim.signal('SIGKILL');
    run.phase = 'killed, endpoint published';
    expect(await exitOf(victim)).toEqual({ code: null, signal: 'SIGKILL' });
    await sleep(3_000);
    await removeEndpoint(kc, ns, victim.name);
    run.phase = 'endpoint being removed';
    await sleep(2_000); // the API server's EndpointSlice informer catches up
    run.phase = 'endpoint removed';
    await until('pods admitted after the endpoint was removed', () => run.count('endpoint removed') >= 60, SLOW);
    await run.stop();

    const killed = run.outcomes.filter((o) => o.phase === 'killed, endpoint published');
    const failures = killed.filter((o) => !o.ok);
    const kinds = new Map<string, number>();
    for (const f of failures) {
      const kind =
        /connection refused|connection reset by peer|EOF|context deadline exceeded|i\/o timeout|no endpoints available/.exec(
          f.error ?? '',
        )?.[0] ?? (f.error ?? '').slice(0, 120);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    process.stderr.write(
      `SIGKILL of ${victim.name} (it had served ${Math.max(...served)} of ${served[0] + served[1]} calls) with its endpoint published for 3s: ${killed.length} creates, ${failures.length} failed ` +
        `(${[...kinds].map(([k, n]) => `${n}× ${k}`).join(', ') || 'none'}); first failure: ${failures[0]?.error ?? '-'}\n`,
    );

    // failurePolicy Fail: a failed call rejects the pod; a pod is never admitted without its sidecar.
    for (const f of failures) expect(f.error).toMatch(/failed calling webhook "mpod\.kb\.io"/);
    expect(run.outcomes.filter((o) => o.ok && !o.mutated)).toEqual([]);
    // Once the dead endpoint is gone, every call lands on the live replica.
    expect(run.outcomes.filter((o) => o.phase === 'endpoint removed' && !o.ok)).toEqual([]);
    expect(staying.child.exitCode).toBeNull();
  }, 120_000);
});
