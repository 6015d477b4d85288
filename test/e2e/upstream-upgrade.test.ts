/**
 * The upgrade a user makes: the default app on the previous upstream release (v1.8.3), installed
 * and in use, then the same app with `ManagerImage.upstream()` moved to the newest release
 * (v1.9.1) applied over it exactly as it was installed (one `kubectl apply --server-side`), while
 * pods are created without pause in a namespace the pod webhook intercepts. Judged on the real
 * cluster: 0 failed pod creates, every Kruise object stored by v1.8.3 still readable in every
 * version v1.9.1 serves (three kinds now convert through the manager's webhook) and reconciled,
 * exactly v1.9.1's webhook entries left (the four renamed ImagePullJob entries gone), the doctor
 * green against v1.9.1's definitions; and the downgrade refused, by `kruise-ha upgrade-diff` and
 * by the API server itself (the SidecarSet CRD of v1.8.3 would drop a stored version).
 *
 * `kruise-ha upgrade-diff v1.8.3 v1.9.1` lists what changes (docs/upstream-releases.md).
 */
import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { doctorJson, runDoctorCli } from '../integration/support/doctor-run.js';
import { releaseDiff } from '../../lib/upstream/upgrade.js';
import { pushAppImages, type AppImages } from './support/app-images.js';
import { clusterImages, e2eEnv, upstreamImage } from './support/e2e-env.js';
import { expectWebhookEndpoints } from './support/checks.js';
import { installKruise, managerPods, NS, uninstallKruise } from './support/install.js';
import {
  cacheSyncedAt,
  describePods,
  getJson,
  kubectl,
  podMetrics,
  timeoutsAfter,
  until,
  webhookLatency,
} from './support/kube.js';
import { objectsIn, synthRelease, type OutputObject, type Synthesized } from './support/synth.js';
import {
  APP_NAMESPACE,
  advancedStatefulSet,
  appNamespace,
  asList,
  headlessService,
  imagePullJob,
  inPlaceCloneSet,
  sidecarSet,
  SIDECARSET_NAME,
} from './support/workloads.js';

jest.setTimeout(900_000);
// The tests are steps of one upgrade: a step run again finds the state its first run left (the new
// output applied, the manager's own writes on the webhook rules), so this file opts out of the e2e
// tier's retry (support/retry-once.ts).
jest.retryTimes(0);

const FROM = 'v1.8.3';
const TO = 'v1.9.1';
const env = e2eEnv();
const kc = env.kubeconfig;
const LOAD_LABEL = 'e2e.kruise-ha.io/load';
let images: AppImages;
let before: Synthesized;
let after: Synthesized;

type WebhookConfig = { webhooks?: Array<{ name: string; clientConfig: { service?: { path?: string } } }> };
const WEBHOOK_KINDS = ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'] as const;
const rendered = (out: Synthesized, kind: string) =>
  (objectsIn(out.files).find((o) => o.kind === kind) as OutputObject & WebhookConfig).webhooks ?? [];

/** `name path` of every entry of one live webhook configuration. */
async function liveEntries(kind: (typeof WEBHOOK_KINDS)[number], name: string): Promise<string[]> {
  const c = await getJson<WebhookConfig>(kc, [kind.toLowerCase(), name]);
  return (c.webhooks ?? []).map((w) => `${w.name} ${w.clientConfig.service?.path}`).sort();
}

/** An ImagePullJob that stays (no TTL, never completes) so it can be read after the upgrade. */
function upgradePullJob(): object {
  const job = imagePullJob(images.v2) as { metadata: object; spec: object };
  return {
    ...job,
    metadata: { ...job.metadata, name: 'upgrade-pull' },
    spec: { ...job.spec, completionPolicy: { type: 'Never' } },
  };
}

/**
 * Creates pods without pause (4 at a time) in the app namespace, each through the pod webhook; they
 * carry a scheduling gate, so none runs. Every failed create is kept with its message.
 */
class PodCreateLoad {
  created = 0;
  readonly failures: string[] = [];
  private running = true;
  private readonly workers: Array<Promise<void>>;

  constructor(private readonly core: CoreV1Api) {
    this.workers = [0, 1, 2, 3].map((w) => this.work(w));
  }

  private async work(worker: number): Promise<void> {
    for (let i = 0; this.running; i++) {
      const name = `load-${worker}-${i}-${Date.now().toString(36)}`;
      try {
        await this.core.createNamespacedPod({
          namespace: APP_NAMESPACE,
          body: {
            metadata: { name, labels: { [LOAD_LABEL]: 'upgrade' } },
            spec: {
              schedulingGates: [{ name: 'e2e.kruise-ha.io/never' }],
              containers: [{ name: 'main', image: 'registry.invalid/never:1' }],
            },
          },
        });
        this.created++;
      } catch (e) {
        const body = (e as { body?: unknown }).body;
        this.failures.push(
          `${new Date().toISOString()} ${name}: ${typeof body === 'string' ? body : (e as Error).message}`,
        );
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }
}

beforeAll(async () => {
  images = await pushAppImages(env.registry);
  // Both releases' images, as the two outputs name them: the default release's from clusterImages().
  await clusterImages();
  await upstreamImage(FROM);
  [before, after] = await Promise.all([synthRelease(FROM), synthRelease(TO)]);
  process.stderr.write(
    `upstream-upgrade: ${FROM} -> ${TO}: ${releaseDiff(FROM, TO)
      .notes.map((n) => `\n  ${n}`)
      .join('')}\n`,
  );
  await installKruise(kc, before);
}, 1_800_000);

afterAll(async () => {
  await kubectl(kc, ['delete', 'pods', '-n', APP_NAMESPACE, '-l', LOAD_LABEL, '--ignore-not-found', '--wait=false'], {
    allowFailure: true,
  });
  await uninstallKruise(kc, after ?? before);
}, 900_000);

describe(`upgrading the default output from ${FROM} to ${TO} under pod-create load`, () => {
  const load: { run?: PodCreateLoad } = {};

  test(`${FROM} runs and holds Kruise objects of the kinds ${TO} stores differently`, async () => {
    await expectWebhookEndpoints(kc);
    await kubectl(kc, ['apply', '--server-side', '-f', '-'], {
      input: asList(
        appNamespace(),
        headlessService('asts'),
        inPlaceCloneSet(images),
        advancedStatefulSet(images),
        sidecarSet(images),
        upgradePullJob(),
      ),
    });
    await until('the CloneSet to have 2 ready replicas under ' + FROM, async () => {
      const c = await getJson<{ status?: { readyReplicas?: number } }>(kc, [
        'cloneset',
        '-n',
        APP_NAMESPACE,
        'inplace',
      ]);
      return c.status?.readyReplicas === 2;
    });
    const crd = await getJson<{ status: { storedVersions: string[] } }>(kc, ['crd', 'sidecarsets.apps.kruise.io']);
    expect(crd.status.storedVersions).toEqual(['v1alpha1']);
  });

  test(`applying ${TO}'s output over it: no create refused by a stopping replica while the manager rolls over`, async () => {
    const kcObj = new KubeConfig();
    kcObj.loadFromFile(kc);
    load.run = new PodCreateLoad(kcObj.makeApiClient(CoreV1Api));
    await until('the pod-create load to be admitted at least once', async () => load.run!.created > 0 || undefined);
    // As the user installed it: one server-side apply of every file of the new output.
    await kubectl(kc, ['apply', '--server-side', ...after.files.flatMap((f) => ['-f', f])], { timeoutMs: 180_000 });
    const pods = await managerPods(kc, 600_000);
    expect(pods.map((p) => p.spec.containers[0].image.split(':').pop())).toEqual(pods.map(() => TO));
    await until(
      `kruise-daemon rolled out on ${TO}`,
      async () => {
        const ds = await getJson<{
          spec: { template: { spec: { containers: Array<{ image: string }> } } };
          status: { updatedNumberScheduled?: number; numberReady?: number; desiredNumberScheduled: number };
        }>(kc, ['daemonset', '-n', NS, 'kruise-daemon']);
        return (
          ds.spec.template.spec.containers[0].image.endsWith(`:${TO}`) &&
          ds.status.updatedNumberScheduled === ds.status.desiredNumberScheduled &&
          ds.status.numberReady === ds.status.desiredNumberScheduled
        );
      },
      { timeoutMs: 600_000, describe: () => describePods(kc, NS) },
    );
    // Keep the load on while the new replicas settle (webhook configurations rewritten, caBundles patched).
    await new Promise((r) => setTimeout(r, 30_000));
    await load.run.stop();
    process.stderr.write(`upstream-upgrade: ${load.run.created} pods created during the upgrade\n`);
    // Upstream closes its webhook listener at SIGTERM without draining (found by [ha-drills]): before
    // the rendered preStop sleep, kube-proxy still sent calls to a stopping replica and they were
    // refused at TCP (7 of 3,922 creates in one run, 0 in another). With it, none may fail so: every
    // failure but the two kinds below fails the test.
    // - A review a replica accepted and did not answer within the webhook's 10 s (1 of 3,449 creates on
    //   2026-11-26; 4 of ~2,400, all within 1.3 s, in the CI run of 2026-11-29 03:18). The cause, read from the new
    //   replicas' logs on 2026-11-29: v1.9.1's pod handler reads SidecarSets from its v1beta1 cache, and that
    //   cache lists through the CRD's conversion webhook, which the Service still sends to v1.8.3 replicas that
    //   cannot convert to v1beta1 (`no kind "SidecarSet" is registered for version "apps.kruise.io/v1beta1"`). The
    //   list retries with back-off: one replica's cache synced 15 s after it started, Ready long before (upstream's
    //   readiness does not wait for the caches its handlers read), and reviews on it waited for that sync.
    //   Upstream's upgrade does this with its own chart too. So a timeout is allowed only if its review started
    //   before every new replica's v1beta1 SidecarSet cache had synced; any later one fails the test.
    // - A review written to a kept-alive connection the stopping replica closed at that moment
    //   (`write: connection reset by peer`, `broken pipe`, `EOF`): 1 of 3,110 creates in the CI run
    //   of 2026-11-26 22:42. Endpoints only steer new connections; the API server keeps using the
    //   ones it has until the replica closes them at exit, and upstream sends no `Connection: close`
    //   first (the runtime flavour does, and its rollout drill asserts 0), so a POST can cross the close.
    // Both are printed and bounded, not hidden.
    const timedOut = (f: string) => /context deadline exceeded/.test(f);
    const crossedClose = (f: string) => /write: connection reset by peer|write: broken pipe|: EOF\b/.test(f);
    const timeouts = load.run.failures.filter(timedOut);
    const closed = load.run.failures.filter(crossedClose);
    for (const [what, list] of [
      ['webhook timeouts', timeouts],
      ['reviews that crossed a stopping replica closing its connection', closed],
    ] as const)
      if (list.length > 0) process.stderr.write(`upstream-upgrade: ${list.length} ${what}:\n${list.join('\n')}\n`);
    // Which replica was slow: each new replica's own latency histogram of the pod webhook (the old
    // ones are gone).
    for (const p of pods) {
      const l = webhookLatency(await podMetrics(kc, NS, p.metadata.name), '/mutate-pod');
      process.stderr.write(
        `upstream-upgrade: ${p.metadata.name} /mutate-pod: ${
          l
            ? `${l.reviews} reviews; slower than ${Object.entries(l.slowerThan)
                .sort(([a], [b]) => Number(a) - Number(b))
                .map(([b, n]) => `${b} s: ${n}`)
                .join(', ')}`
            : 'no histogram'
        }\n`,
      );
    }
    expect(load.run.failures.filter((f) => !timedOut(f) && !crossedClose(f))).toEqual([]);
    // When each new replica's v1beta1 SidecarSet cache first synced, from its own log.
    const synced = await Promise.all(
      pods.map(async (p) => {
        const log = await kubectl(kc, ['logs', '-n', NS, p.metadata.name, '--timestamps'], { allowFailure: true });
        const at = cacheSyncedAt(log.stdout, 'v1beta1.SidecarSet');
        process.stderr.write(
          `upstream-upgrade: ${p.metadata.name} v1beta1 SidecarSet cache synced at ${at?.toISOString() ?? 'never (in its log)'}\n`,
        );
        return at;
      }),
    );
    const lastSync = synced.includes(undefined) ? undefined : new Date(Math.max(...synced.map((d) => d!.getTime())));
    expect(timeoutsAfter(timeouts, lastSync, 10_000)).toEqual([]);
    expect(closed.length).toBeLessThanOrEqual(Math.floor(load.run.created / 1000));
    expect(load.run.created).toBeGreaterThan(50);
  });

  test(`exactly ${TO}'s webhook entries are left: the renamed ImagePullJob entries are gone, none is stale`, async () => {
    for (const kind of WEBHOOK_KINDS) {
      const name = (objectsIn(after.files).find((o) => o.kind === kind) as OutputObject).metadata.name;
      const want = rendered(after, kind)
        .map((w) => `${w.name} ${w.clientConfig.service?.path}`)
        .sort();
      await until(
        `${kind} ${name} to hold exactly ${TO}'s entries`,
        async () => {
          const live = await liveEntries(kind, name);
          return JSON.stringify(live) === JSON.stringify(want) || undefined;
        },
        { timeoutMs: 180_000, describe: async () => (await liveEntries(kind, name)).join('\n') },
      );
    }
    const live = await liveEntries('ValidatingWebhookConfiguration', 'kruise-validating-webhook-configuration');
    expect(live.some((e) => e.startsWith('vimagepulljob.kb.io '))).toBe(false);
    expect(live.some((e) => e.startsWith('vimagepulljob-v1beta1.kb.io '))).toBe(true);
  });

  test(`every object ${FROM} stored is readable in every version ${TO} serves, and reconciled`, async () => {
    const kinds: Array<[string, string, string | undefined]> = [
      ['clonesets', 'inplace', APP_NAMESPACE],
      ['statefulsets', 'asts', APP_NAMESPACE],
      ['sidecarsets', SIDECARSET_NAME, undefined],
      ['imagepulljobs', 'upgrade-pull', APP_NAMESPACE],
    ];
    for (const [plural, name, ns] of kinds) {
      const crd = await getJson<{ spec: { versions: Array<{ name: string; served: boolean }> } }>(kc, [
        'crd',
        `${plural}.apps.kruise.io`,
      ]);
      for (const v of crd.spec.versions.filter((x) => x.served)) {
        // SidecarSets and Advanced DaemonSets convert through the manager's webhook in v1.9.
        const o = await getJson<{ apiVersion: string; metadata: { name: string } }>(kc, [
          `${plural}.${v.name}.apps.kruise.io`,
          name,
          ...(ns ? ['-n', ns] : []),
        ]);
        expect(o.apiVersion).toBe(`apps.kruise.io/${v.name}`);
      }
    }
    // Reconciled by the new leader: scale the CloneSet, change the SidecarSet (written as v1beta1 now).
    await kubectl(kc, ['scale', 'cloneset', '-n', APP_NAMESPACE, 'inplace', '--replicas=3']);
    await until(
      'the CloneSet to reach 3 ready replicas under ' + TO,
      async () => {
        const c = await getJson<{
          metadata: { generation: number };
          status?: { readyReplicas?: number; observedGeneration?: number };
        }>(kc, ['cloneset', '-n', APP_NAMESPACE, 'inplace']);
        return c.status?.readyReplicas === 3 && c.status.observedGeneration === c.metadata.generation;
      },
      { timeoutMs: 300_000, describe: () => describePods(kc, APP_NAMESPACE) },
    );
    await kubectl(kc, ['apply', '--server-side', '-f', '-'], { input: asList(sidecarSet(images, images.v2)) });
    await until('the SidecarSet change to be observed under ' + TO, async () => {
      const s = await getJson<{ metadata: { generation: number }; status?: { observedGeneration?: number } }>(kc, [
        'sidecarset',
        SIDECARSET_NAME,
      ]);
      return s.status?.observedGeneration === s.metadata.generation;
    });
  });

  test(`the doctor judges the install against ${TO}'s definitions and finds nothing failing`, async () => {
    const doctor = await doctorJson(kc, NS);
    const { report } = doctor;
    let { failing } = doctor;
    expect(JSON.stringify(report)).toContain(`judged against upstream ${TO}'s definitions`);
    if (failing.includes('replica-spread')) {
      // The zone spread is preferred (ScheduleAnyway), and the rollout surges 100 %: with the old replicas on a
      // zone-b and a zone-c node, the new ones can only go to the two nodes left, node-1 and node-4, both zone-a.
      // The doctor rightly fails that; what it must then do is name a fix that works, which is followed here.
      const zoneOf = (node?: string) => env.nodes.find((n) => n.name === node)?.zone;
      const placed = await managerPods(kc);
      expect({ failing, zones: new Set(placed.map((p) => zoneOf(p.spec.nodeName))).size }).toEqual({
        failing: ['replica-spread'],
        zones: 1,
      });
      const fix = report.checks.find((c) => c.id === 'replica-spread')?.fix ?? '';
      expect(fix).toContain(`kubectl -n ${NS} delete pod`);
      process.stderr.write(
        `e2e: replica-spread failed after the surge (both replicas in one zone); following: ${fix}\n`,
      );
      await kubectl(kc, ['delete', 'pod', '-n', NS, placed[0].metadata.name, '--wait=true']);
      await managerPods(kc);
      ({ failing } = await doctorJson(kc, NS));
    }
    expect(failing).toEqual([]);
  });

  test(`the downgrade to ${FROM} is refused: by upgrade-diff, and by the API server (a stored version would be dropped)`, async () => {
    const diff = await runDoctorCli(['upgrade-diff', TO, FROM]);
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(
      /sidecarsets\.apps\.kruise\.io: v1\.9\.1 stores objects as v1beta1, which v1\.8\.3 does not serve/,
    );
    const crd = await getJson<{ status: { storedVersions: string[] } }>(kc, ['crd', 'sidecarsets.apps.kruise.io']);
    expect(crd.status.storedVersions).toEqual(expect.arrayContaining(['v1alpha1', 'v1beta1']));
    const old = objectsIn(before.files).find(
      (o) => o.kind === 'CustomResourceDefinition' && o.metadata.name === 'sidecarsets.apps.kruise.io',
    )!;
    const r = await kubectl(kc, ['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', '-'], {
      input: asList(old),
      allowFailure: true,
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/storedVersions/);
  });
});
