// WorkloadSpread validation against the REAL upstream kruise-manager v1.9.1 (built from the pinned
// module by test/envtest/binaries/build.sh), through the real API server: the synthesized default
// output installs upstream's CRDs and webhooks (vworkloadspread.kb.io), upstream's manager serves
// them, and the generated WorkloadSpreads (support/workloadspread-cases.ts: one change per
// validated field, conflicts, updates, random ones) are created (and updated) there. Each answer
// of upstream's webhook must equal this runtime's validateWorkloadSpread on the same object, with
// the same other WorkloadSpreads and the same stored one. Requests upstream's CRD schema refuses
// never reach a webhook (the runtime flavour will serve the same CRD): they are counted, not
// compared. This runtime does not serve WorkloadSpread yet, so its side runs in-process.
//
// Then the custom-workload whitelist (ConfigMap kruise-configuration in upstream's namespace,
// WorkloadSpread_Watch_Custom_Workload_WhiteList): targets of listed and unlisted groups, kinds and
// versions, a built-in kind outside upstream's switch (DaemonSet) listed, a built-in kind of another
// group listed, with the whitelist absent, listed, and undecodable.
//
// Seeded by test/support/draw.ts: KRUISE_HA_SEED=<n> replays a run (seed and command printed),
// KRUISE_HA_FULL_DRAW=1 draws all 300 random cases; WSDIFF_CASES=<n> (random cases).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseWorkloadSpreadWhitelist, WORKLOADSPREAD_WHITELIST_KEY } from '../../lib/contract.js';
import { validateWorkloadSpread } from '../../lib/runtime/workloadspread/validate.js';
import { ReferenceUpstream } from './support/reference-upstream.js';
import { kubeConfig } from './support/runtime-cluster.js';
import { ApiClient } from './support/sidecarset-differential.js';
import { RUNTIME_REFERENCE_RELEASE } from '../envtest/binaries.js';
import { generateWorkloadSpreadCases, type WorkloadSpreadCase } from './support/workloadspread-cases.js';
import { draw } from '../support/draw.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

// Full draw: 300 random cases, and the budget is the same 300: measured, the random cases cost
// little here (jest 32 s at 100, 34 s at 300, load 10-12 on 2 shared cores); the API server and
// manager start-up dominate. The seed still changes with the commit, so coverage accumulates. The
// per-field and conflict/update cases are not drawn: they always all run.
const DRAW = draw('workloadspread-differential', {
  full: 300,
  budget: 300,
  modules: ['lib/runtime/workloadspread', 'lib/runtime/webhook', 'test/integration/support/workloadspread-cases.ts'],
  fallbackSeed: 24,
  file: 'test/integration/workloadspread-differential.test.ts',
});
const SEED = DRAW.seed;
const RANDOM = Number(process.env.WSDIFF_CASES ?? DRAW.numRuns);
const NS = 'wsdiff';
const WEBHOOK = 'vworkloadspread.kb.io';
const api = new ApiClient();
const runDir = mkdtempSync(join(tmpdir(), 'wsdiff-'));
// The runtime's reference release (test/envtest/binaries.ts), whatever the constructs' default is.
const reference = new ReferenceUpstream({
  release: RUNTIME_REFERENCE_RELEASE,
  suffix: 'wsdiff',
  api,
  kc: kubeConfig(),
  runDir,
  // Earlier suites may have left the runtime flavour's SidecarSet CRD (another field manager).
  foreignCrds: ['sidecarsets.apps.kruise.io'],
});
const rendered = reference.rendered;
const log = (msg: string) => process.stderr.write(`workloadspread-differential: ${msg}\n`);

type Answer = { kind: 'allowed' } | { kind: 'webhook'; message: string } | { kind: 'schema'; message: string };

interface Judged {
  c: WorkloadSpreadCase;
  answer: Answer;
}

let judged: Judged[] = [];
/** The whitelist cases: each with the whitelist value upstream had (undefined: no key). */
const whitelistJudged: Array<Judged & { whitelist?: string }> = [];

const LISTED = JSON.stringify({
  workloads: [
    { Group: 'game.kruise.io', Version: 'v1alpha1', Kind: 'GameServerSet', replicasPath: 'spec.replicas' },
    { group: 'apps', version: 'v1', kind: 'DaemonSet' },
    { Group: 'example.com', Version: 'v1', Kind: 'Deployment' },
  ],
});
const BROKEN = '{"workloads": [{"Group": 7}]}';

/** Targets judged under each whitelist (the rest of the spec valid). */
const WHITELIST_TARGETS: Array<[string, string]> = [
  ['game.kruise.io/v1alpha1', 'GameServerSet'],
  ['game.kruise.io/v2', 'GameServerSet'],
  ['other.io/v1alpha1', 'GameServerSet'],
  ['game.kruise.io/v1alpha1', 'GameServer'],
  ['apps/v1', 'DaemonSet'],
  ['example.com/v1', 'Deployment'],
  ['apps/v1', 'Deployment'],
  ['game.kruise.io/v1alpha1/x', 'GameServerSet'],
];
const whitelistWs = (apiVersion: string, kind: string) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  spec: whitelistSpec(apiVersion, kind),
});
const whitelistSpec = (apiVersion: string, kind: string) => ({
  targetRef: { apiVersion, kind, name: 'gss' },
  subsets: [{ name: 'a', maxReplicas: '50%' }, { name: 'b' }],
});

/** Sets (or, with undefined, removes) upstream's whitelist, then waits until its webhook answers by it. */
async function setWhitelist(value: string | undefined, ns: string): Promise<void> {
  const path = `/api/v1/namespaces/${rendered.namespace}/configmaps`;
  await api.call('DELETE', `${path}/kruise-configuration`);
  if (value !== undefined)
    await api.call('POST', path, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'kruise-configuration' },
      data: { [WORKLOADSPREAD_WHITELIST_KEY]: value },
    });
  // A listed kind is admitted (dry run) only once upstream's cache has the ConfigMap; unlisted: refused.
  const probe = named(whitelistWs('game.kruise.io/v1alpha1', 'GameServerSet'), 'probe', ns);
  const admitted = value === LISTED;
  let denial = '';
  for (let i = 0; i < 200; i++) {
    const res = await api.call('POST', `${pathOf(ns)}?dryRun=All`, probe);
    denial = res.status < 300 ? 'admitted' : String(res.body?.message ?? '');
    if (admitted ? res.status < 300 : res.status >= 300 && (value !== BROKEN || /[Ii]nternal error/.test(denial)))
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`upstream's webhook never answered by the whitelist ${value}: last answer ${denial}`);
}
const namespaces: string[] = [];

/** What the API server answered: allowed, denied by the webhook, or refused before it (schema, metadata). */
function answerOf(res: { status: number; body: Json }): Answer {
  if (res.status >= 200 && res.status < 300) return { kind: 'allowed' };
  const message = String(res.body?.message ?? JSON.stringify(res.body));
  if (message.includes(`admission webhook "${WEBHOOK}"`)) return { kind: 'webhook', message };
  if (res.status === 422 || res.status === 400) return { kind: 'schema', message };
  throw new Error(`unexpected answer ${res.status}: ${message}`);
}

/** The case's object under `name` in namespace `ns`. */
const named = (o: Json, name: string, ns = NS) => ({ ...structuredClone(o), metadata: { name, namespace: ns } });
const pathOf = (ns: string) => `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/workloadspreads`;

/**
 * Upstream's webhook reads the other WorkloadSpreads from its informer cache: before asking, wait
 * until it sees `other` (a dry-run twin of it, same target, is then denied as a conflict).
 */
async function awaitSeen(ns: string, other: Json): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const res = await api.call('POST', `${pathOf(ns)}?dryRun=All`, named(other, 'probe', ns));
    if (res.status >= 300 && String(res.body?.message).includes('in conflict with other WorkloadSpread')) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`upstream's webhook never saw WorkloadSpread ${ns}/other`);
}

/** One case in its own namespace (the conflict check is per namespace; nothing of an earlier case lingers). */
async function judge(c: WorkloadSpreadCase, ns: string): Promise<Judged> {
  const path = pathOf(ns);
  namespaces.push(ns);
  await api.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const other of c.wsExisting ?? []) {
    const res = await api.call('POST', path, named(other, 'other', ns));
    if (res.status >= 300) return judge({ ...c, wsExisting: undefined, label: `${c.label} (alone)` }, `${ns}-alone`);
    await awaitSeen(ns, other);
  }
  if (c.wsOlder) {
    const res = await api.call('POST', path, named(c.wsOlder, 'ws', ns));
    if (res.status >= 300)
      return judge({ ...c, wsOlder: undefined, label: `${c.label} (as a create)` }, `${ns}-create`);
    // Upstream's controller writes the status meanwhile: read the latest resourceVersion, retry on a conflict.
    for (let attempt = 0; ; attempt++) {
      const update = named(c.ws, 'ws', ns);
      update.metadata.resourceVersion = (await api.call('GET', `${path}/ws`)).body.metadata.resourceVersion;
      const put = await api.call('PUT', `${path}/ws`, update);
      if (put.status !== 409 || attempt >= 20) return { c, answer: answerOf(put) };
    }
  }
  return { c, answer: answerOf(await api.call('POST', path, named(c.ws, 'ws', ns))) };
}

beforeAll(async () => {
  const { fieldCases, pairCases, randomCases } = generateWorkloadSpreadCases(RANDOM, SEED);
  const cases = [...fieldCases, ...pairCases, ...randomCases];
  log(
    `seed ${SEED}: ${fieldCases.length} per-field, ${pairCases.length} conflict/update, ${randomCases.length} random cases`,
  );
  await reference.withUpstream(async () => {
    judged = [];
    for (const [i, c] of cases.entries()) judged.push(await judge(c, `${NS}-${i}`));
    const ns = `${NS}-whitelist`;
    namespaces.push(ns);
    await api.call('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    for (const whitelist of [LISTED, BROKEN, undefined]) {
      await setWhitelist(whitelist, ns);
      for (const [apiVersion, kind] of WHITELIST_TARGETS) {
        const c = {
          label: `whitelist ${whitelist === LISTED ? 'listed' : whitelist === BROKEN ? 'broken' : 'absent'}: ${apiVersion} ${kind}`,
          ws: whitelistWs(apiVersion, kind),
        };
        const res = await api.call('POST', `${pathOf(ns)}?dryRun=All`, named(c.ws, 'ws', ns));
        whitelistJudged.push({ c, answer: answerOf(res), whitelist });
      }
    }
    await api.call('DELETE', `/api/v1/namespaces/${rendered.namespace}/configmaps/kruise-configuration`);
  });
}, 600_000);

afterAll(async () => {
  await reference.stop();
  for (const ns of namespaces) await api.call('DELETE', `/api/v1/namespaces/${ns}`);
  await reference.removeOutputObjects(true);
  api.close();
  rmSync(runDir, { recursive: true, force: true });
}, 120_000);

describe(`WorkloadSpread validation = the real upstream kruise-manager's webhook, through the API server (seed ${SEED}: ${DRAW.replay})`, () => {
  it('reaches the webhook with cases it admits and cases it denies', () => {
    const count = (k: Answer['kind']) => judged.filter((j) => j.answer.kind === k).length;
    log(
      `${judged.length} cases: ${count('allowed')} admitted, ${count('webhook')} denied by ${WEBHOOK}, ` +
        `${count('schema')} refused by upstream's CRD schema (${judged.filter((j) => / \((alone|as a create)\)$/.test(j.c.label)).length} ` +
        'asked alone or as a create: their other or stored WorkloadSpread was refused)',
    );
    const reasons = new Map<string, number>();
    for (const j of judged)
      if (j.answer.kind === 'schema') {
        const reason = j.answer.message
          .replace(/^.*?: /, '')
          .replace(/"[^"]*"/g, '"…"')
          .slice(0, 120);
        reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
    log(
      `schema refusals, most frequent: ${[...reasons]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([r, n]) => `${n} x ${r}`)
        .join(' | ')}`,
    );
    expect(count('allowed')).toBeGreaterThan(10);
    expect(count('webhook')).toBeGreaterThan(100);
  });

  it("admits and denies exactly what upstream's webhook does", () => {
    const differences = judged
      .filter((j) => j.answer.kind === 'allowed' || j.answer.kind === 'webhook')
      .flatMap(({ c, answer }) => {
        const ours = validateWorkloadSpread(named(c.ws, 'ws'), {
          others: (c.wsExisting ?? []).map((o) => ({ name: 'other', targetRef: o.spec.targetRef })),
          previous: c.wsOlder && named(c.wsOlder, 'ws'),
        });
        const theirs = answer.kind === 'webhook';
        return ours.length > 0 === theirs
          ? []
          : [
              `${c.label}: ours ${JSON.stringify(ours.slice(0, 2))}, upstream ${answer.kind === 'webhook' ? answer.message.slice(0, 300) : 'admitted'}`,
            ];
      });
    log(`${differences.length} differences`);
    expect(differences.slice(0, 15)).toEqual([]);
  });

  it("admits and denies custom-workload targets exactly as upstream's webhook does under its whitelist", () => {
    const differences = whitelistJudged
      .filter((j) => j.answer.kind === 'allowed' || j.answer.kind === 'webhook')
      .flatMap(({ c, answer, whitelist }) => {
        const ours = validateWorkloadSpread(named(c.ws, 'ws'), {
          customWorkloads: () => parseWorkloadSpreadWhitelist(whitelist),
        });
        return ours.length > 0 === (answer.kind === 'webhook')
          ? []
          : [
              `${c.label}: ours ${JSON.stringify(ours)}, upstream ${answer.kind === 'webhook' ? answer.message.slice(0, 300) : 'admitted'}`,
            ];
      });
    const count = (k: Answer['kind']) => whitelistJudged.filter((j) => j.answer.kind === k).length;
    log(
      `whitelist: ${whitelistJudged.length} cases, ${count('allowed')} admitted, ${count('webhook')} denied, ${count('schema')} refused by the schema; ${differences.length} differences`,
    );
    expect(count('allowed')).toBeGreaterThanOrEqual(4);
    expect(count('webhook')).toBeGreaterThanOrEqual(10);
    expect(differences).toEqual([]);
  });
});
