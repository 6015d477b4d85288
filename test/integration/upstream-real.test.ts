// The REAL upstream kruise-manager (the release under test: KRUISE_RELEASE, else the default
// release; built from upstream's checksum-pinned Go module by test/envtest/binaries/build.sh) run
// against our SYNTHESIZED default output (examples/default-ha.ts, on that release's image)
// on a real kube-apiserver, with the API server's audit log as witness. Two replicas run as local
// processes configured from the rendered Deployment's container; they act as the rendered
// ServiceAccount, so RBAC judges exactly what we render.
//
// Adaptations of the rendered container (computed and logged by adaptContainer() in
// support/upstream-manager.ts, which throws on anything it cannot map):
//
// | rendered                              | process                                   | why
// |
// |---------------------------------------|-------------------------------------------|--------------------------------------------------|
// | command /manager (image)              | envtest().kruiseManager                   | no image: the binary built from
// the pinned module |
// | --metrics-addr, --health-probe-addr   | same host part, free port per replica     | replicas share one network
// namespace             |
// | --pprof-addr (unset: :8090)           | free port per replica                     | same (pprof is on by default in
// v1.8.3)          |
// | env WEBHOOK_PORT                      | free port per replica                     | same; EndpointSlices route the
// Service to it     |
// | env WEBHOOK_CERT_DIR, TMPDIR          | <run dir>/<replica>/tmp[/kruise-webhook-certs] | each pod has its own /tmp
// emptyDir          |
// | --protection-log-path (unset: /log)   | <run dir>/<replica>/log                   | each pod has its own /log
// emptyDir               |
// | env from fieldRef metadata.namespace / metadata.name | the Deployment's namespace / replica name | no kubelet
// resolves the downward API |
// | in-cluster config (SA token)          | --kubeconfig: client cert, CN system:serviceaccount:<ns>:<sa>, O
// system:serviceaccounts, system:serviceaccounts:<ns>, system:authenticated | same user and groups as the token |
// | pod network                           | EndpointSlices (addressType FQDN, 127.0.0.1) for the webhook Service, one
// per replica | no kube-proxy/controller-manager |
//
// Nothing else of this process's environment reaches the replicas (KUBECONFIG included).
//
// Every release: `npm run test:upstream-releases` runs this file once per pinned release
// (KRUISE_RELEASE=<tag>), see docs/upstream-releases.md.
//
// Env: UPSTREAM_REAL_MODULE_CRDS=1 also installs, from the pinned upstream module, the CRDs the
// synthesized output lacks, to diagnose everything else while the output has none; the test
// that requires the output to render them still fails.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, type KubernetesObject, type V1Pod } from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Chart, Testing } from 'cdk8s';
import { CustomResourceAccess, KruiseManager, ManagerImage } from '../../lib/index.js';
import { upstreamRelease } from '../../lib/upstream/releases.js';
import { apiRequest } from '../envtest/http.js';
import { envtest } from '../envtest/state.js';
import {
  applyServerSide,
  discover,
  removeCrds,
  kubectlApply,
  kubectlVersion,
  objectId,
  objectPath,
  type ApplyResult,
} from './support/apply.js';
import { auditEvents, mutatingWebhooksCalled, rbacDenials, serviceAccountUser } from './support/audit.js';
import { postReview, until } from './support/ha.js';
import { crrTargetNode, crrTargetPod, kruiseWorkloads, pullSecret, runningStatus } from './support/kruise-workloads.js';
import { addEndpoint, kubeConfig, removeEndpoint, uninstallWebhooks } from './support/runtime-cluster.js';
import {
  adaptationTable,
  flagValue,
  generatedControllers,
  kruiseManagerBinary,
  leaseHolder,
  renderedManager,
  synthesizeDefault,
  UpstreamManager,
  upstreamModuleCrds,
  waitLeader,
} from './support/upstream-manager.js';

const FIELD_MANAGER = 'kruise-ha';
const MODULE_CRDS = process.env.UPSTREAM_REAL_MODULE_CRDS === '1';

const kc = kubeConfig();
const state = envtest();
/** The release under test: the binary the envtest setup built (KRUISE_RELEASE, else the default). */
const RELEASE = state.kruiseVersion;
const release = upstreamRelease(RELEASE);
const objects = synthesizeDefault(RELEASE);
const rendered = renderedManager(objects);
const saUser = serviceAccountUser(rendered.namespace, rendered.serviceAccount);
const container = rendered.container;
const renderedArgs = [...(container.command?.slice(1) ?? []), ...(container.args ?? [])];
const seconds = (flag: string, fallback: number) => {
  const v = flagValue(renderedArgs, flag);
  return v ? Number(/^(\d+(?:\.\d+)?)s$/.exec(v)?.[1] ?? fallback) : fallback;
};
const LEASE_S = seconds('leader-election-lease-duration', 15);
const RENEW_S = seconds('leader-election-renew-deadline', 10);
const RETRY_S = seconds('leader-election-retry-period', 2);
/**
 * A standby may only take an unreleased Lease once it expired, then tries every RetryPeriod (jittered x1.2); 20 s slack
 * for a loaded 2-core machine.
 */
const TAKEOVER_MS = (LEASE_S + RENEW_S + 3 * RETRY_S + 20) * 1000;
/**
 * How long a leader may take to start the workers of every controller. Each waits for its caches
 * first (upstream gives up after --controller-cache-sync-timeout, 120 s, and exits); a "Starting
 * workers" line for every controller proves all caches synced, so no such exit can follow.
 * Observed here: ~15 s after acquiring the Lease when RBAC allows everything.
 */
const CONTROLLERS_MS = 60_000;
const GRACE_MS = (rendered.deployment.spec?.template.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
const enabledGates = new Set(
  (flagValue(renderedArgs, 'feature-gates') ?? '')
    .split(',')
    .filter((g) => g.endsWith('=true'))
    .map((g) => g.split('=')[0]),
);

const run = randomBytes(3).toString('hex');
const testNs = `upstream-real-${run}`;
const app = `upstream-real-${run}`;
const runDir = mkdtempSync(join(tmpdir(), 'upstream-real-'));
const replicas: UpstreamManager[] = [];
const timings: Array<[string, number]> = [];
let t0 = 0;
let startupError: Error | undefined;
let failures = 0;
const installedCrds: KubernetesObject[] = [];
const createdClusterScoped: KubernetesObject[] = [];
/** Live configurations right after our apply, before any manager ran (the server-defaulted form of what we render). */
const appliedWebhooks: Record<string, WebhookEntry[]> = {};
let applyFailures: string[] = [];
/**
 * The controllers every leader must start (a "Starting workers" line each): what the generated
 * upstream data says the binary starts for the rendered feature gates. The first leader must
 * start exactly these, which also checks the generated start conditions against the binary.
 */
const EXPECTED_CONTROLLERS = generatedControllers(RELEASE);
export function expectedControllers(): string[] {
  return EXPECTED_CONTROLLERS;
}

const log = (msg: string) => process.stderr.write(`upstream-real: ${msg}\n`);
const live = () => replicas.filter((m) => m.alive);
const mark = (what: string, since: number) => timings.push([what, Date.now() - since]);

/** `it` that counts failures, so afterAll keeps the replicas' logs only when something failed. */
function check(name: string, fn: () => Promise<void>, timeoutMs: number): void {
  it(
    name,
    async () => {
      const start = Date.now();
      try {
        await fn();
      } catch (e) {
        failures++;
        throw e;
      } finally {
        mark(name, start);
      }
    },
    timeoutMs,
  );
}

/** Fails with `what` and every item, one a line, if `items` is not empty. */
function expectNone(what: string, items: string[], context = ''): void {
  if (items.length)
    throw new Error(`${what} (${items.length}):\n  ${items.join('\n  ')}${context ? `\n${context}` : ''}`);
}

function requireStarted(): void {
  if (startupError) throw new Error(`the replicas did not start, so this cannot be checked: ${startupError.message}`);
}

/** Log lines that explain a controller without workers. */
const TROUBLE = /forbidden|[Tt]imed out|did not sync|Could not wait/;
const logsHint = () => `(replica logs: ${runDir}/<replica>/manager.log)`;

async function startReplica(suffix: string): Promise<UpstreamManager> {
  const m = await UpstreamManager.start(rendered, `${rendered.deployment.metadata!.name}-${suffix}`, runDir);
  replicas.push(m);
  await removeEndpoint(kc, rendered.namespace, m.name);
  await addEndpoint(kc, rendered.namespace, m.name, m.webhookPort);
  return m;
}

// ---------------------------------------------------------------------------------------------
// Webhook configurations

type WebhookEntry = { name: string; clientConfig: { caBundle?: string; service?: { path?: string } } } & Record<
  string,
  unknown
>;
const WEBHOOK_KINDS = {
  MutatingWebhookConfiguration: 'mutatingwebhookconfigurations',
  ValidatingWebhookConfiguration: 'validatingwebhookconfigurations',
} as const;
const renderedConfigs = objects.filter((o) => o.kind! in WEBHOOK_KINDS) as Array<
  KubernetesObject & { webhooks?: WebhookEntry[] }
>;
const renderedPaths = new Set(
  renderedConfigs.flatMap((c) => (c.webhooks ?? []).map((w) => w.clientConfig.service?.path ?? '')),
);

async function liveConfig(
  o: KubernetesObject,
): Promise<{ annotations: Record<string, string>; webhooks: WebhookEntry[] } | undefined> {
  const res = await apiRequest(
    state,
    'GET',
    `/apis/admissionregistration.k8s.io/v1/${WEBHOOK_KINDS[o.kind as keyof typeof WEBHOOK_KINDS]}/${o.metadata!.name}`,
  );
  if (res.status === 404) return undefined;
  const body = JSON.parse(res.body) as {
    metadata: { annotations?: Record<string, string> };
    webhooks?: WebhookEntry[];
  };
  return { annotations: body.metadata.annotations ?? {}, webhooks: body.webhooks ?? [] };
}

/** JSON paths where `a` and `b` differ. */
function diff(a: unknown, b: unknown, path = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) === !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].flatMap((k) =>
      diff((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}/${k}`),
    );
  }
  return [`${path || '/'}: ${JSON.stringify(a)?.slice(0, 120)} -> ${JSON.stringify(b)?.slice(0, 120)}`];
}

const withoutCaBundle = (e: WebhookEntry): WebhookEntry => ({
  ...e,
  clientConfig: { ...e.clientConfig, caBundle: undefined },
});

/** For every rendered configuration: entries missing from the live one, and entries changed other than in caBundle. */
async function webhookDrift(): Promise<string[]> {
  const problems: string[] = [];
  for (const o of renderedConfigs) {
    const now = await liveConfig(o);
    if (!now) {
      problems.push(`${o.kind}/${o.metadata!.name}: deleted`);
      continue;
    }
    for (const before of appliedWebhooks[o.metadata!.name!] ?? []) {
      const after = now.webhooks.find((w) => w.name === before.name);
      if (!after) {
        problems.push(
          `${o.kind}/${o.metadata!.name}: entry ${before.name} (path ${before.clientConfig.service?.path}) was removed`,
        );
        continue;
      }
      const changes = diff(withoutCaBundle(before), withoutCaBundle(after));
      if (changes.length)
        problems.push(`${o.kind}/${o.metadata!.name}: entry ${before.name} changed: ${changes.join('; ')}`);
    }
  }
  return problems;
}

/** Until both configurations carry a manager-written caBundle on every remaining entry and a `template` snapshot. */
async function waitConfigurationsSynced(timeoutMs = 60_000): Promise<void> {
  await until(
    'the manager to write caBundle and the template annotation into both webhook configurations',
    async () => {
      for (const o of renderedConfigs) {
        const c = await liveConfig(o);
        if (!c?.annotations.template || c.webhooks.some((w) => !w.clientConfig.caBundle)) return false;
      }
      return true;
    },
    timeoutMs,
    500,
  );
}

/** Paths the replicas' logs say they dropped from the configurations (upstream's "Ignore webhook in configuration"). */
function ignoredPaths(): string[] {
  const paths = new Set<string>();
  for (const m of replicas)
    for (const line of m.grep(/Ignore webhook in configuration/, 1_000))
      paths.add(/\bpath"?="([^"]+)"/.exec(line)?.[1] ?? line);
  return [...paths].sort();
}

// ---------------------------------------------------------------------------------------------
// Controllers

/** Until `m` logged "Starting workers" for every one of `expected`; fails at once if it exits. */
async function waitWorkers(m: UpstreamManager, expected: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!m.alive) {
      const exit = await m.exited;
      throw new Error(
        `${m.name} exited (code ${exit.code}, signal ${exit.signal}) while starting its controllers ${logsHint()}\n${m.tail()}`,
      );
    }
    const done = new Set(
      m
        .controllers()
        .filter((c) => c.workers)
        .map((c) => c.name),
    );
    const missing = expected.filter((c) => !done.has(c));
    if (!missing.length) return;
    if (Date.now() > deadline) {
      const stuck = m
        .controllers()
        .filter((c) => c.started && !c.workers)
        .map((c) => c.name);
      throw new Error(
        `${m.name} started no workers within ${timeoutMs / 1000}s for: ${missing.join(', ')}` +
          `${stuck.length ? `\n  started but caches not synced: ${stuck.join(', ')}` : ''}` +
          `\n  forbidden/timeout log lines:\n    ${m.grep(TROUBLE, 8).join('\n    ') || '(none)'}\n${logsHint()}`,
      );
    }
    await sleep(1_000);
  }
}

/** The controllers a leader has started, once no new one appeared for `quietMs` and each started its workers. */
async function settledControllers(m: UpstreamManager, timeoutMs: number, quietMs = 10_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  let since = Date.now();
  for (;;) {
    if (!m.alive) throw new Error(`${m.name} exited while starting controllers\n${m.tail()}`);
    const cs = m.controllers();
    const key = cs.map((c) => `${c.name}:${c.workers}`).join(',');
    if (key !== last) {
      last = key;
      since = Date.now();
    }
    if (cs.length && cs.every((c) => c.workers) && Date.now() - since >= quietMs) return cs.map((c) => c.name);
    if (Date.now() > deadline) {
      throw new Error(
        `${m.name} (leader) had not settled its controllers after ${timeoutMs / 1000}s: ` +
          `${cs.length ? cs.map((c) => `${c.name}${c.workers ? '' : ' (no workers: caches not synced)'}`).join(', ') : 'no "Starting Controller" line at all: controller setup is blocked'}` +
          `\n  forbidden/timeout log lines:\n    ${m.grep(TROUBLE, 8).join('\n    ') || '(none)'}\n${logsHint()}`,
      );
    }
    await sleep(1_000);
  }
}

/** Starts replicas until two run, as the Deployment's ReplicaSet would after losing a pod. */
async function topUp(names: string[]): Promise<void> {
  while (live().length < 2) {
    const name = names.shift();
    if (!name) throw new Error('ran out of replica names');
    const m = await startReplica(name);
    await m.waitReady();
  }
}

/**
 * Stops the leader with `signal`; the standby must take the Lease, start the workers of every
 * expected controller and still lead, healthy, after that. Then the replica count is restored.
 * Every problem is collected, so one failure message tells the whole story.
 */
async function takeover(signal: 'SIGTERM' | 'SIGKILL', spareNames: string[]): Promise<void> {
  requireStarted();
  if (!expectedControllers().length)
    throw new Error('no expected controllers: the first leader started none, so a takeover cannot be judged');
  await topUp(spareNames);
  const old = await waitLeader(kc, live(), TAKEOVER_MS);
  const standby = live().filter((m) => m !== old);
  const before = await leaseHolder(kc, rendered);
  const problems: string[] = [];
  const start = Date.now();
  const exit = await old.stop(signal, GRACE_MS);
  const stoppedMs = Date.now() - start;
  await removeEndpoint(kc, rendered.namespace, old.name); // the endpoints controller would drop the dead pod
  log(`${signal}: ${old.name} exited (code ${exit.code}, signal ${exit.signal}) after ${stoppedMs} ms`);
  if (signal === 'SIGTERM' && exit.code !== 0) {
    problems.push(
      `${old.name} did not stop cleanly on SIGTERM: exit code ${exit.code}, signal ${exit.signal}, after ${stoppedMs} ms ` +
        `(terminationGracePeriodSeconds ${GRACE_MS / 1000} s); its last error: ${
          old
            .grep(/^E\d{4} /, 1_000)
            .at(-1)
            ?.slice(0, 600) ?? 'none logged'
        }`,
    );
  }
  try {
    const leader = await waitLeader(kc, standby, TAKEOVER_MS);
    mark(`${signal} takeover: new leader elected`, start);
    expect((await leaseHolder(kc, rendered)).holder).not.toBe(before.holder);
    await waitWorkers(leader, expectedControllers(), CONTROLLERS_MS);
    mark(`${signal} takeover: every expected controller started its workers`, start);
    // Still leading and healthy once its caches synced (a controller whose cache cannot sync has no workers above).
    await sleep(5_000);
    const health = {
      alive: leader.alive,
      leading: await leader.leading(),
      readiness: await leader.probe(container.readinessProbe),
    };
    if (!health.alive || !health.leading || health.readiness)
      problems.push(`${leader.name} after the takeover: ${JSON.stringify(health)}`);
  } catch (e) {
    problems.push((e as Error).message);
  } finally {
    await topUp(spareNames);
  }
  if (problems.length) throw new Error(problems.join('\n'));
}

// ---------------------------------------------------------------------------------------------
// Install and start

/**
 * The install below is judged as on an empty API server; earlier suites share this one and may
 * have left objects of the same names written by other field managers (the runtime flavour's
 * SidecarSet CRD, its ClusterRole), which a first install never meets. Remove them.
 */
async function removeLeftovers(): Promise<void> {
  await uninstallWebhooks(kc);
  const existing: KubernetesObject[] = [];
  for (const o of objects.filter((x) => x.kind !== 'Namespace')) {
    if ((await apiRequest(state, 'GET', await objectPath(o))).status === 200) existing.push(o);
  }
  if (existing.length) log(`removing ${existing.length} objects earlier suites left under the output's names`);
  for (const o of existing.filter((x) => x.kind !== 'CustomResourceDefinition'))
    await apiRequest(state, 'DELETE', await objectPath(o)).catch(() => undefined);
  await removeCrds(existing.filter((x) => x.kind === 'CustomResourceDefinition'));
}

beforeAll(async () => {
  t0 = Date.now();
  await removeLeftovers();

  // As the README says: the synthesized file in ONE `kubectl apply --server-side` pass (CRDs
  // first in the stream). UPSTREAM_REAL_MODULE_CRDS=1 (diagnosis only) adds the module's CRDs
  // the output lacks, applied one by one before the pass.
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const failed: ApplyResult[] = [];
  if (MODULE_CRDS) {
    const have = new Set(crds.map((c) => c.metadata!.name));
    const extra = upstreamModuleCrds().filter((c) => !have.has(c.metadata!.name));
    log(
      `UPSTREAM_REAL_MODULE_CRDS=1: also installing ${extra.length} CRDs from the upstream module that the output lacks: ${extra.map((c) => c.metadata!.name).join(', ')}`,
    );
    for (const crd of extra) {
      const r = await applyServerSide(crd, { fieldManager: FIELD_MANAGER, force: true });
      if (r.status >= 300) failed.push(r);
      else crds.push(crd);
    }
  }
  const pass = await kubectlApply(objects, join(runDir, 'install.yaml'), {
    serverSide: true,
    fieldManager: FIELD_MANAGER,
  });
  if (!pass.ok) failed.push({ object: 'kubectl apply --server-side (one pass)', status: 0, message: pass.output });
  installedCrds.push(...crds);
  for (const crd of installedCrds) {
    await until(
      `CRD ${crd.metadata!.name} to be established`,
      async () => {
        const res = await apiRequest(
          state,
          'GET',
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name}`,
        );
        return (
          JSON.parse(res.body) as { status?: { conditions?: Array<{ type: string; status: string }> } }
        ).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      },
      30_000,
      200,
    );
  }
  applyFailures = failed.map((r) => `${r.object}: HTTP ${r.status}: ${r.message}`);
  for (const o of renderedConfigs) appliedWebhooks[o.metadata!.name!] = (await liveConfig(o))?.webhooks ?? [];
  mark('apply the synthesized output', t0);

  const start = Date.now();
  try {
    const ms = [await startReplica('upstream-a'), await startReplica('upstream-b')];
    log(`adaptations of the rendered container (replica ${ms[0].name}):\n${adaptationTable(ms[0].config.adaptations)}`);
    await Promise.all(ms.map((m) => m.waitReady()));
    mark('two replicas ready', start);
  } catch (e) {
    startupError = e as Error;
  }
}, 240_000);

afterAll(async () => {
  // Webhooks first, so nothing intercepts later suites even while the replicas still run.
  await uninstallWebhooks(kc);
  await Promise.all(replicas.map((m) => m.stop('SIGTERM', 10_000)));
  for (const m of replicas) await removeEndpoint(kc, rendered.namespace, m.name);
  await apiRequest(
    state,
    'DELETE',
    `/apis/coordination.k8s.io/v1/namespaces/${rendered.lease.namespace}/leases/${rendered.lease.name}`,
  ).catch(() => undefined);
  for (const o of createdClusterScoped) await apiRequest(state, 'DELETE', await objectPath(o)).catch(() => undefined);
  // The installed output too (not Namespaces: without a namespace controller they never finish
  // terminating), so a later suite applying another flavour under the same names starts clean.
  for (const o of [...objects]
    .reverse()
    .filter((x) => x.kind !== 'Namespace' && x.kind !== 'CustomResourceDefinition')) {
    await apiRequest(state, 'DELETE', await objectPath(o)).catch(() => undefined);
  }
  // Its CRDs too (their conversion webhooks would point at replicas that are gone).
  await removeCrds(installedCrds);
  if (failures === 0) rmSync(runDir, { recursive: true, force: true });
  else log(`kept the replicas' logs in ${runDir}`);
  log(
    `timings:\n${timings.map(([what, ms]) => `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${what}`).join('\n')}\n  total ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
}, 120_000);

// ---------------------------------------------------------------------------------------------

describe(`real kruise-manager ${state.kruiseVersion} on the synthesized default output`, () => {
  check(
    'the output renders every CRD upstream ships (config/crd/bases of the pinned module)',
    async () => {
      const rendered = new Set(
        objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => o.metadata!.name),
      );
      expectNone(
        'CRDs upstream ships that the synthesized output does not render',
        upstreamModuleCrds()
          .map((c) => c.metadata!.name!)
          .filter((n) => !rendered.has(n))
          .sort(),
        MODULE_CRDS
          ? '(installed from the module for the rest of this run: UPSTREAM_REAL_MODULE_CRDS=1)'
          : `without them kruise-manager ${RELEASE} exits at start ("failed to register field index"); set UPSTREAM_REAL_MODULE_CRDS=1 to run the rest of this file anyway`,
      );
    },
    30_000,
  );

  check(
    'the API server accepts every synthesized object in one `kubectl apply --server-side` pass, for real',
    async () => {
      expectNone('objects the API server rejected', applyFailures);
    },
    10_000,
  );

  check(
    'two replicas start as the rendered ServiceAccount, pass the rendered readinessProbe, and one leads',
    async () => {
      requireStarted();
      const leader = await waitLeader(kc, live(), TAKEOVER_MS);
      log(`first leader: ${leader.name}`);
      const started = (await settledControllers(leader, CONTROLLERS_MS)).sort();
      log(`first leader started ${started.length} controllers: ${started.join(', ')}`);
      expect(started).toEqual(expectedControllers());
    },
    TAKEOVER_MS + CONTROLLERS_MS + 30_000,
  );

  check(
    'the rendered readiness and liveness probe targets answer on every replica',
    async () => {
      requireStarted();
      const problems: string[] = [];
      for (const m of live()) {
        for (const [kind, probe] of [
          ['readinessProbe', container.readinessProbe],
          ['livenessProbe', container.livenessProbe],
        ] as const) {
          if (!probe) {
            log(`no ${kind} rendered: nothing to check`);
            continue;
          }
          const failed = await m.probe(probe);
          if (failed) problems.push(`${m.name} ${kind} ${JSON.stringify(probe.httpGet ?? probe.tcpSocket)}: ${failed}`);
        }
      }
      expectNone('probes that failed', problems);
    },
    60_000,
  );

  check(
    'every rendered webhook entry is still there after the manager ran, unchanged but for caBundle',
    async () => {
      requireStarted();
      await waitConfigurationsSynced();
      const dropped = ignoredPaths();
      expectNone(
        'webhook entries the manager removed or rewrote',
        await webhookDrift(),
        dropped.length
          ? `the replicas logged "Ignore webhook in configuration" (a path ${RELEASE} does not serve with the rendered feature gates) for: ${dropped.join(', ')}`
          : '',
      );
    },
    90_000,
  );

  check(
    "each rendered entry's path answers an AdmissionReview on a replica's webhook port (not 404)",
    async () => {
      requireStarted();
      const m = live()[0];
      const ca = m.caPem();
      const notServed: string[] = [];
      for (const cfg of renderedConfigs) {
        for (const entry of cfg.webhooks ?? []) {
          const path = entry.clientConfig.service?.path ?? '/';
          try {
            const res = await postReview(m.webhookPort, path, ca, await reviewFor(entry));
            if (res.status === 404) notServed.push(`${entry.name} ${path}: HTTP 404`);
            else if (res.status !== 200)
              log(`${entry.name} ${path}: HTTP ${res.status} (served, not 404): ${res.body.slice(0, 200)}`);
          } catch (e) {
            notServed.push(
              `${entry.name} ${path}: no HTTP response (${(e as Error).message}; a handler panic shows as "http: panic serving" in ${m.logPath})`,
            );
          }
        }
      }
      expectNone(`rendered webhook paths ${m.name} does not serve`, notServed);
    },
    90_000,
  );

  check(
    'one object of every Kruise kind whose CRD is installed is admitted, and the controllers reconcile',
    async () => {
      requireStarted();
      const n = { namespace: testNs, app };
      await applyServerSide(
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: testNs } },
        { fieldManager: FIELD_MANAGER, force: true },
      );
      const node = await applyServerSide(crrTargetNode(), { fieldManager: FIELD_MANAGER, force: true });
      if (node.status >= 300) throw new Error(`cannot create the CRR target pod's Node: ${node.message}`);
      createdClusterScoped.push(crrTargetNode());
      const secret = await applyServerSide(pullSecret(n), { fieldManager: FIELD_MANAGER, force: true });
      if (secret.status >= 300) throw new Error(`cannot create the ImagePullJob's pull Secret: ${secret.message}`);
      const core = kc.makeApiClient(CoreV1Api);
      const target = crrTargetPod(n) as V1Pod;
      const created = await applyServerSide(target, { fieldManager: FIELD_MANAGER, force: true });
      if (created.status >= 300)
        throw new Error(`cannot create the ContainerRecreateRequest's target pod: ${created.message}`);
      const pod = await core.readNamespacedPod({ name: target.metadata!.name!, namespace: testNs });
      await core.replaceNamespacedPodStatus({
        name: pod.metadata!.name!,
        namespace: testNs,
        body: { ...pod, status: runningStatus('main') as V1Pod['status'] },
      });

      const liveCrds = new Set(
        (
          JSON.parse(
            (await apiRequest(state, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).body,
          ) as { items: KubernetesObject[] }
        ).items
          .map((c) => c.metadata!.name!)
          .filter((name) => /\.kruise\.io$/.test(name)),
      );
      const samples = kruiseWorkloads(n);
      const rejected: string[] = [];
      const skipped: string[] = [];
      for (const crd of [...liveCrds].sort()) {
        const o = samples[crd];
        if (!o) {
          rejected.push(`${crd}: no sample object in support/kruise-workloads.ts; add one`);
          continue;
        }
        // The webhooks may need a moment after a CRD appears; Kruise's own denials are final.
        let r: ApplyResult = { object: objectId(o), status: 0, message: '' };
        for (let i = 0; i < 10; i++) {
          r = await applyServerSide(o, { fieldManager: FIELD_MANAGER, force: true });
          if (r.status < 500) break;
          await sleep(1_000);
        }
        const gate = /feature-gate (\w+) is not enabled/.exec(r.message)?.[1];
        if (r.status < 300) {
          if (!o.metadata?.namespace) createdClusterScoped.push(o);
        } else if (gate && !enabledGates.has(gate)) {
          skipped.push(`${r.object}: gate ${gate} is off in the rendered --feature-gates`);
        } else {
          rejected.push(`${r.object}: HTTP ${r.status}: ${r.message}`);
        }
      }
      if (skipped.length) log(`kinds left out because their feature gate is off: ${skipped.join('; ')}`);
      expectNone('Kruise objects the API server (and the real webhooks) rejected', rejected);
      expect(liveCrds.size).toBeGreaterThan(0);

      // Controllers act on what was created: a reconciled CloneSet and Advanced StatefulSet report an
      // observedGeneration.
      const reconciled = async (o: KubernetesObject) => {
        const res = await apiRequest(state, 'GET', await objectPath(o));
        return (
          res.status === 200 &&
          ((JSON.parse(res.body) as { status?: { observedGeneration?: number } }).status?.observedGeneration ?? 0) >= 1
        );
      };
      const waitFor = ['clonesets.apps.kruise.io', 'statefulsets.apps.kruise.io']
        .filter((c) => liveCrds.has(c))
        .map((c) => samples[c]);
      const notReconciled: string[] = [];
      for (const o of waitFor)
        await until(`${objectId(o)} to be reconciled`, () => reconciled(o), 30_000, 500).catch(() =>
          notReconciled.push(`${objectId(o)}: no status.observedGeneration after 30 s`),
        );
      const leader = (await Promise.all(live().map(async (m) => ((await m.leading()) ? m : undefined)))).find(Boolean);
      const idle =
        leader
          ?.controllers()
          .filter((c) => !c.workers)
          .map((c) => c.name) ?? [];
      expectNone(
        'workloads no controller reconciled',
        notReconciled,
        `${leader ? `controllers of the leader ${leader.name} without workers: ${idle.join(', ') || 'none'}` : 'no replica leads'} ${logsHint()}`,
      );
    },
    180_000,
  );

  check(
    "an Advanced StatefulSet (v1beta1) and a CloneSet get upstream's defaults from the mutating webhook",
    async () => {
      requireStarted();
      const samples = kruiseWorkloads({ namespace: testNs, app });
      const expected: Array<[KubernetesObject, Record<string, unknown>]> = [
        [
          samples['statefulsets.apps.kruise.io'],
          {
            '/spec/revisionHistoryLimit': 10,
            '/spec/podManagementPolicy': 'OrderedReady',
            '/spec/updateStrategy/type': 'RollingUpdate',
            '/spec/updateStrategy/rollingUpdate/partition': 0,
            '/spec/updateStrategy/rollingUpdate/maxUnavailable': 1,
            '/spec/updateStrategy/rollingUpdate/podUpdatePolicy': 'ReCreate',
            '/spec/updateStrategy/rollingUpdate/minReadySeconds': 0,
          },
        ],
        [
          samples['clonesets.apps.kruise.io'],
          {
            '/spec/revisionHistoryLimit': 10,
            '/spec/updateStrategy/type': 'ReCreate',
            '/spec/updateStrategy/partition': 0,
            '/spec/updateStrategy/maxUnavailable': '20%',
            '/spec/updateStrategy/maxSurge': 0,
          },
        ],
      ];
      const problems: string[] = [];
      for (const [o, fields] of expected) {
        const res = await apiRequest(state, 'GET', await objectPath(o).catch(() => '/no-such-kind'));
        if (res.status !== 200) {
          problems.push(`${objectId(o)}: cannot read it back (HTTP ${res.status}); is its CRD installed?`);
          continue;
        }
        const obj = JSON.parse(res.body) as Record<string, unknown>;
        const at = (p: string) =>
          p
            .split('/')
            .slice(1)
            .reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], obj);
        const wrong = Object.entries(fields)
          .filter(([p, v]) => at(p) !== v)
          .map(([p, v]) => `${p}=${JSON.stringify(at(p))} (upstream default ${JSON.stringify(v)})`);
        if (wrong.length) {
          const creates = auditEvents({ since: t0 })
            .filter((e) => e.verb === 'patch' || e.verb === 'create')
            .filter(
              (e) =>
                e.objectRef?.name === o.metadata!.name &&
                e.objectRef?.namespace === testNs &&
                e.objectRef?.resource === (o.kind === 'CloneSet' ? 'clonesets' : 'statefulsets'),
            );
          const called = [...new Set(creates.flatMap(mutatingWebhooksCalled))];
          problems.push(
            `${objectId(o)}: ${wrong.join(', ')}; mutating webhooks the API server called for it: ${called.join(', ') || 'none'}`,
          );
        }
      }
      expectNone('objects without upstream defaults', problems);
    },
    60_000,
  );

  check(
    'a SidecarSet injects into a matching pod in a test namespace, but pods in kube-system and the install namespace never reach the pod webhook',
    async () => {
      requireStarted();
      const label = `${app}-inject`;
      const sidecarSet = {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: label },
        spec: {
          selector: { matchLabels: { app: label } },
          containers: [{ name: 'injected', image: 'registry.invalid/sidecar:1' }],
        },
      } as KubernetesObject;
      const s = await applyServerSide(sidecarSet, { fieldManager: FIELD_MANAGER, force: true });
      if (s.status >= 300) throw new Error(`cannot create SidecarSet ${label}: HTTP ${s.status}: ${s.message}`);
      createdClusterScoped.push(sidecarSet);
      const core = kc.makeApiClient(CoreV1Api);
      const since = Date.now();
      const createPod = async (namespace: string, name: string) => {
        const body: V1Pod = {
          metadata: { name, namespace, labels: { app: label } },
          spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }] },
        };
        return core.createNamespacedPod({ namespace, body });
      };
      const injected = (p: V1Pod) => p.spec?.containers?.some((c) => c.name === 'injected') ?? false;
      // The webhook's informer sees a new SidecarSet a moment later: retry with fresh pods.
      let attempt = 0;
      const podInTestNs = await until(
        'a pod in the test namespace to get the sidecar',
        async () => {
          const p = await createPod(testNs, `inject-${attempt++}`);
          return injected(p) ? p : undefined;
        },
        30_000,
        1_000,
      );
      expect(injected(podInTestNs)).toBe(true);

      const problems: string[] = [];
      for (const namespace of ['kube-system', rendered.namespace]) {
        const p = await createPod(namespace, `${label}-probe`);
        if (injected(p)) problems.push(`pod ${namespace}/${p.metadata!.name} got the sidecar`);
        await core
          .deleteNamespacedPod({ name: p.metadata!.name!, namespace, gracePeriodSeconds: 0 })
          .catch(() => undefined);
      }
      await sleep(1_000);
      for (const e of auditEvents({ since }).filter(
        (x) => x.verb === 'create' && x.objectRef?.resource === 'pods' && !x.objectRef.subresource,
      )) {
        const called = mutatingWebhooksCalled(e);
        const ns = e.objectRef!.namespace!;
        if ((ns === 'kube-system' || ns === rendered.namespace) && called.length)
          problems.push(`pod create in ${ns} was sent to ${called.join(', ')}`);
      }
      expectNone('pods of excluded namespaces that reached the pod webhook', problems);
    },
    90_000,
  );

  check(
    'SIGTERM to the leader: the standby takes over, starts every controller, and stays healthy',
    async () => {
      await takeover('SIGTERM', ['upstream-c', 'upstream-c2']);
    },
    TAKEOVER_MS + CONTROLLERS_MS + GRACE_MS + 120_000,
  );

  check(
    'SIGKILL to the leader: the standby takes over, starts every controller, and stays healthy',
    async () => {
      await takeover('SIGKILL', ['upstream-d', 'upstream-d2']);
    },
    TAKEOVER_MS + CONTROLLERS_MS + GRACE_MS + 120_000,
  );

  check(
    're-applying the synthesized output (server-side apply, same field manager, no force) succeeds after the manager rewrote the configurations',
    async () => {
      requireStarted();
      await waitConfigurationsSynced();
      const failed: string[] = [];
      for (const o of objects) {
        const r = await applyServerSide(o, { fieldManager: FIELD_MANAGER, force: false });
        if (r.status >= 300) failed.push(`${r.object}: HTTP ${r.status}: ${r.message}`);
      }
      expectNone(`objects a re-apply by field manager "${FIELD_MANAGER}" without force could not apply`, failed);
    },
    120_000,
  );

  check(
    'a client-side apply (kubectl apply: three-way merge against last-applied) succeeds, twice, with the manager rewriting in between',
    async () => {
      requireStarted();
      const version = await kubectlVersion();
      // npm test installs kubectl (test/setup/ensure-docker-registry.sh): a missing one is a failure, not a skip.
      if (!version)
        throw new Error('no kubectl on PATH: run `npm run test:ensure-registry` (Debian: apt-get install kubectl)');
      log(`client-side apply with kubectl ${version}`);
      const file = join(runDir, 'default-output.yaml');
      const first = await kubectlApply(objects, file);
      if (!first.ok) throw new Error(`kubectl apply (first, which records last-applied) failed:\n${first.output}`);
      await waitConfigurationsSynced();
      const second = await kubectlApply(objects, file);
      if (!second.ok)
        throw new Error(`kubectl apply (second, against the manager's rewrite) failed:\n${second.output}`);
      await waitConfigurationsSynced();
    },
    240_000,
  );

  check(
    `the binary's --help has every flag the generated ${RELEASE} data lists and every flag the output renders`,
    async () => {
      // Go's flag package prints usage to stderr and exits 0 (pflag: 0 for --help too).
      const help = await promisify(execFile)(kruiseManagerBinary(RELEASE), ['--help'], { timeout: 30_000 }).then(
        (r) => r.stdout + r.stderr,
        (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
      );
      const listed = new Set([...help.matchAll(/^\s+(?:-\w, )?--?([\w.-]+)/gm)].map((m) => m[1]));
      const generated = release.flags.map((f) => f.name).filter((f) => !listed.has(f));
      const renderedFlags = renderedArgs
        .map((a) => /^--?([^=\s]+)/.exec(a)?.[1])
        .filter((f): f is string => f !== undefined && !listed.has(f));
      expectNone(
        `flags the ${RELEASE} binary does not list in --help`,
        [...generated.map((f) => `--${f} (generated data)`), ...renderedFlags.map((f) => `--${f} (rendered)`)],
        listed.size < 20 ? `--help printed:\n${help.slice(0, 2_000)}` : '',
      );
    },
    60_000,
  );

  check(
    `the binary used every permission tools/upstream/undeclared.json says ${RELEASE} needs without a marker (audit log)`,
    async () => {
      requireStarted();
      const started = new Set(expectedControllers());
      const served = new Set(
        release.handlerSets.filter((h) => h.paths.some((p) => renderedPaths.has(p))).map((h) => h.package),
      );
      const events = auditEvents({ user: saUser, since: t0 });
      const unused: string[] = [];
      for (const need of release.undeclared) {
        if (!started.has(need.component) && !served.has(need.component)) continue;
        const used = need.rules.some((rule) =>
          events.some(
            (e) =>
              rule.apiGroups.includes(e.objectRef?.apiGroup ?? '') &&
              rule.resources.includes(
                e.objectRef?.subresource
                  ? `${e.objectRef.resource}/${e.objectRef.subresource}`
                  : (e.objectRef?.resource ?? ''),
              ) &&
              rule.verbs.includes(e.verb) &&
              (need.namespace === undefined || e.objectRef?.namespace === need.namespace),
          ),
        );
        if (!used)
          unused.push(
            `${need.component}: ${JSON.stringify(need.rules)}${need.namespace ? ` in ${need.namespace}` : ''} (cited: ${need.evidence.file}: "${need.evidence.contains}")`,
          );
      }
      expectNone(
        `undeclared needs of ${RELEASE} the binary never used in this run (either this test does not exercise them, or ${RELEASE} no longer needs them: see docs/upstream-releases.md)`,
        unused,
      );
    },
    30_000,
  );

  check(
    `no RBAC denial (HTTP 403) for ${saUser} from start-up through workloads, takeovers and re-applies (audit log)`,
    async () => {
      const denials = await rbacDenials(saUser, t0);
      expectNone(
        `requests of ${saUser} that RBAC denied`,
        denials,
        startupError ? `(the replicas also failed to start: ${startupError.message.split('\n')[0]})` : '',
      );
      // Positive control: the replicas did talk to the API server as that user.
      expect(auditEvents({ user: saUser, since: t0 }).length).toBeGreaterThan(0);
    },
    60_000,
  );

  // Last: it provokes a denial on purpose, after the zero-denial check above.
  check(
    'what the narrowed wildcard breaks: a PodUnavailableBudget on a custom workload is denied its scale until CustomResourceAccess.including() grants it',
    async () => {
      requireStarted();
      const group = `widgets-${run}.example.com`;
      const crd = {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: 'Namespaced',
          names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              subresources: {
                status: {},
                scale: {
                  specReplicasPath: '.spec.replicas',
                  statusReplicasPath: '.status.replicas',
                  labelSelectorPath: '.status.selector',
                },
              },
            },
          ],
        },
      } as KubernetesObject;
      createdClusterScoped.push(crd);
      expect((await applyServerSide(crd, { fieldManager: FIELD_MANAGER, force: true })).status).toBeLessThan(300);
      await until(
        `CRD ${crd.metadata!.name} established`,
        async () => {
          const res = await apiRequest(
            state,
            'GET',
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name}`,
          );
          return (
            JSON.parse(res.body) as { status?: { conditions?: Array<{ type: string; status: string }> } }
          ).status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
        },
        30_000,
        200,
      );
      const widget = {
        apiVersion: `${group}/v1`,
        kind: 'Widget',
        metadata: { name: 'w1', namespace: testNs },
        spec: { replicas: 2 },
      } as KubernetesObject;
      expect((await applyServerSide(widget, { fieldManager: FIELD_MANAGER, force: true })).status).toBeLessThan(300);
      const pub = (annotation: string) =>
        ({
          apiVersion: 'policy.kruise.io/v1alpha1',
          kind: 'PodUnavailableBudget',
          metadata: { name: 'widget-pub', namespace: testNs, annotations: { 'upstream-real/round': annotation } },
          spec: { targetRef: { apiVersion: `${group}/v1`, kind: 'Widget', name: 'w1' }, maxUnavailable: 1 },
        }) as KubernetesObject;
      const scaleDenials = (since: number) =>
        auditEvents({ user: saUser, code: 403, since }).filter(
          (e) =>
            e.objectRef?.apiGroup === group &&
            e.objectRef.resource === 'widgets' &&
            e.objectRef.subresource === 'scale',
        );
      const before = Date.now();
      expect((await applyServerSide(pub('narrow'), { fieldManager: FIELD_MANAGER, force: true })).status).toBeLessThan(
        300,
      );
      await until(
        'the leader to be denied the Widget scale (default CustomResourceAccess)',
        () => scaleDenials(before).length > 0,
        60_000,
        500,
      );

      // The same app with the custom workload granted: only its manager ClusterRole changes.
      const widened = Testing.synth(
        new (class extends Chart {
          constructor() {
            super(Testing.app(), 'kruise');
            new KruiseManager(this, 'Kruise', {
              image: ManagerImage.upstream({ version: RELEASE }),
              customResourceAccess: CustomResourceAccess.including([{ apiGroup: group, resource: 'widgets' }]),
            });
          }
        })(),
      ) as KubernetesObject[];
      const role = widened.find((o) => o.kind === 'ClusterRole' && o.metadata?.name === 'kruise-manager-role')!;
      expect((await applyServerSide(role, { fieldManager: FIELD_MANAGER, force: false })).status).toBeLessThan(300);
      await sleep(1_000); // the authorizer's RBAC cache follows a watch
      const granted = Date.now();
      expect(
        (await applyServerSide(pub('including'), { fieldManager: FIELD_MANAGER, force: true })).status,
      ).toBeLessThan(300);
      await until(
        'the leader to read the Widget scale once granted',
        () =>
          auditEvents({ user: saUser, since: granted }).some(
            (e) =>
              e.objectRef?.apiGroup === group && e.objectRef.subresource === 'scale' && e.responseStatus?.code === 200,
          ),
        90_000,
        500,
      );
      expect(scaleDenials(granted)).toEqual([]);
      // Put the default ClusterRole back for whatever runs after this file.
      const original = objects.find((o) => o.kind === 'ClusterRole' && o.metadata?.name === 'kruise-manager-role')!;
      expect((await applyServerSide(original, { fieldManager: FIELD_MANAGER, force: false })).status).toBeLessThan(300);
    },
    240_000,
  );
});

/** A minimal v1 AdmissionReview for the first rule of `entry`. */
async function reviewFor(entry: WebhookEntry): Promise<unknown> {
  const rule = (
    entry.rules as Array<{ apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: string[] }>
  )[0];
  const group = rule.apiGroups[0] === '*' ? '' : rule.apiGroups[0];
  const version = rule.apiVersions[0] === '*' ? 'v1' : rule.apiVersions[0];
  const [resource, subResource] = rule.resources[0].split('/');
  const apiVersion = group ? `${group}/${version}` : version;
  const kind = (await discover(apiVersion).catch(() => [])).find((r) => r.name === resource)?.kind ?? resource;
  const operation = rule.operations[0] === '*' ? 'CREATE' : rule.operations[0];
  // A valid sample where we have one: upstream's validators dereference spec fields without checks.
  const sample = kruiseWorkloads({ namespace: testNs, app })[`${resource}.${group}`];
  const object =
    sample && !subResource ? sample : { apiVersion, kind, metadata: { name: 'review-probe', namespace: testNs } };
  const gvk = { group, version, kind };
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: randomUUID(),
      kind: gvk,
      resource: { group, version, resource },
      subResource,
      requestKind: gvk,
      requestResource: { group, version, resource },
      name: object.metadata!.name,
      namespace: object.metadata!.namespace,
      operation,
      userInfo: { username: 'upstream-real-review', groups: ['system:authenticated'] },
      object: operation === 'DELETE' ? null : object,
      oldObject: operation === 'CREATE' ? null : object,
      dryRun: true,
    },
  };
}
