/**
 * The drills' figures: every drill merges its figures into the run's results, .test-output/ha-drills-results.json
 * (one entry per drill and flavour, with the run's conditions), which no test run's commit carries: a test run leaves
 * tracked files alone. `npm run drills:publish` (publishDrills) merges them into docs/ha-drills-results.json and
 * regenerates docs/ha-drills.md and the README's table from it, so the tables the README and docs/real-nodes.md
 * show are a run's, never hand-written.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import type { ClusterState } from '../../cluster/state.js';
import { acquireLock } from '../../support/content-cache.js';
import type { DrillReport } from './drill.js';
import { ROOT } from './synth.js';

/** The published figures, relative to the repository's root. */
export const RESULTS_JSON = join('docs', 'ha-drills-results.json');
export const RESULTS_MD = join('docs', 'ha-drills.md');
export const README = 'README.md';
/** The figures of the drills run since the last publish (KRUISE_HA_DRILL_RESULTS overrides the place). */
export const runResultsPath = (env: NodeJS.ProcessEnv = process.env): string =>
  env.KRUISE_HA_DRILL_RESULTS ?? join(ROOT, '.test-output', 'ha-drills-results.json');
/** The README's HA section carries the per-drill summary between these markers. */
export const README_BEGIN =
  '<!-- ha-drills table: npm run drills:publish writes it from docs/ha-drills-results.json -->';
export const README_END = '<!-- end of the ha-drills table -->';

export interface DrillFigures {
  drill: string;
  flavour: string;
  at: string;
  /** Load average before → after the drill. */
  uptime: string;
  creates: number;
  webhookFailures: number;
  apiFailures: number;
  withoutSidecar: number;
  createP99Ms: number;
  routeAwayS: number | null;
  failuresAfterRouteAway: number;
  newLeaderS: number | null;
  leaderChanges: number;
  maxLeadersAtOnce: number;
  longestRenewalGapS: number | null;
  convergeS: number | null;
  extra: Record<string, number | string | boolean | null>;
  failures: Array<{ atS: number; failure: string; message: string }>;
}

export interface Results {
  conditions: Record<string, string | number | boolean>;
  drills: Record<string, DrillFigures>;
}

export function recordDrill(report: DrillReport, state: ClusterState, title: string): DrillFigures {
  const figures: DrillFigures = {
    drill: title,
    flavour: report.flavour,
    at: new Date(report.faultAt).toISOString(),
    uptime: report.uptime,
    creates: report.load.sent,
    webhookFailures: report.load.webhookFailures,
    apiFailures: report.load.apiFailures,
    withoutSidecar: report.load.withoutSidecar,
    createP99Ms: report.load.p99Ms,
    routeAwayS: report.routeAwayS,
    failuresAfterRouteAway: report.failuresAfterRouteAway,
    newLeaderS: report.newLeaderS,
    leaderChanges: report.leaderChanges,
    maxLeadersAtOnce: report.maxLeadersAtOnce,
    longestRenewalGapS: report.longestRenewalGapS,
    convergeS: report.convergeS,
    extra: report.figures,
    failures: report.failures.slice(0, 20),
  };
  const runResults = runResultsPath();
  mkdirSync(dirname(runResults), { recursive: true });
  // The two e2e processes of npm test (one per cluster) each add their flavour's drills to the same file.
  const release = acquireLock(`${runResults}.lock`, () => undefined, 60_000, 'drill results');
  try {
    writeResults(runResults, state, report.drill, report.flavour, figures);
  } finally {
    release();
  }
  // Every sample and create of the run, for looking into a figure (not committed).
  const raw = join(tmpdir(), 'kruise-ha-drills');
  mkdirSync(raw, { recursive: true });
  writeFileSync(
    join(raw, `${report.drill}-${report.flavour}.json`),
    JSON.stringify({ faultAt: report.faultAt, samples: report.samples, outcomes: report.outcomes }),
  );
  process.stderr.write(
    `drill ${report.drill}/${report.flavour}: ${JSON.stringify({ ...figures, failures: figures.failures.length })}\n` +
      `(in ${runResults}; npm run drills:publish writes them into docs/ha-drills.md and the README)\n`,
  );
  return figures;
}

function writeResults(runResults: string, state: ClusterState, drill: string, flavour: string, figures: DrillFigures) {
  const results: Results = existsSync(runResults)
    ? (JSON.parse(readFileSync(runResults, 'utf8')) as Results)
    : { conditions: {}, drills: {} };
  results.conditions = {
    machine: `${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB`,
    cluster: `${state.ha ? '3 etcd members + 3 API servers (HA)' : '1 control-plane member'}, ${state.nodes.length} real nodes over ${new Set(state.nodes.map((n) => n.zone)).size} zones`,
    kubernetes: state.kubernetesVersion,
    load: '4 pod creates/s through the pod webhook (failurePolicy Fail, timeout 10 s) into a SidecarSet-selected namespace; one Deployment (+ a CloneSet for upstream) scaled at the fault',
  };
  results.drills[`${drill}/${flavour}`] = figures;
  // Whole or not at all: a reader (the other process, drills:publish) never sees half a file.
  writeFileSync(`${runResults}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
  renameSync(`${runResults}.tmp`, runResults);
}

/**
 * `npm run drills:publish`: the run's figures over the published ones (a drill not run keeps its last figures, and
 * the conditions become the run's), then docs/ha-drills.md and the README's table regenerated. Returns the keys
 * (drill/flavour) it published; throws, naming the file, when the run's results are missing or not results.
 */
export function publishDrills(from = runResultsPath(), root = ROOT): string[] {
  if (!existsSync(from))
    throw new Error(`drills:publish: no drill figures at ${from}: run the drills first (npm run test:e2e -- drills)`);
  let run: Results;
  try {
    run = JSON.parse(readFileSync(from, 'utf8')) as Results;
  } catch (e) {
    throw new Error(`drills:publish: ${from} is not JSON (${(e as Error).message}); run the drills again`, {
      cause: e,
    });
  }
  if (!run || typeof run.drills !== 'object' || run.drills === null || typeof run.conditions !== 'object')
    throw new Error(`drills:publish: ${from} has no 'drills' and 'conditions' objects; run the drills again`);
  const jsonPath = join(root, RESULTS_JSON);
  const published: Results = existsSync(jsonPath)
    ? (JSON.parse(readFileSync(jsonPath, 'utf8')) as Results)
    : { conditions: {}, drills: {} };
  const merged: Results = { conditions: run.conditions, drills: { ...published.drills, ...run.drills } };
  writeFileSync(jsonPath, `${JSON.stringify(merged, null, 2)}\n`);
  writeFileSync(join(root, RESULTS_MD), renderDrillsMarkdown(merged));
  const readme = join(root, README);
  if (existsSync(readme)) writeFileSync(readme, withReadmeTable(readFileSync(readme, 'utf8'), merged));
  return Object.keys(run.drills).sort();
}

/** What the drills revealed (kept with the generator so the page always carries it). */
const FINDINGS = [
  '## What the drills revealed',
  '',
  '- **Upstream liveness could not see a hung process (constructs, fixed).** The rendered TCP probe of the health',
  '  port passes for a SIGSTOPped process: the kernel completes the handshake for its listener. The frozen upstream',
  '  replica left the Service (readiness) but was never restarted. Liveness now asks the process itself',
  '  (`/readyz`: its webhook controller initialized and its webhook server answering over TLS; no API server needed',
  '  once started); the drill shows the kubelet restarting it (`lib/constructs/manager/flavour.ts`, unit tests in',
  '  `test/unit/constructs/flavour.test.ts` and `kruise-manager.test.ts`).',
  '- **Upstream stops listening at SIGTERM, with no drain (fixed in the constructs).** In a rollout, creates the API',
  '  server sent to an old replica between its SIGTERM and kube-proxy dropping it failed with `connection refused`',
  '  (4 of 166 at 4 creates/s in one run, 0 in another; 7 of 3,922 in the v1.8.3 -> v1.9.1 upgrade). The upstream',
  "  replicas now keep serving 5 s after they start terminating (the kubelet's preStop sleep action, Kubernetes 1.30+,",
  "  added to the rendered Deployment: cdk8s-plus-28's types drop it, and upstream's image has no executable for an",
  '  exec hook). The drill still bounds failures to that window; the upgrade test requires 0. The runtime fails',
  '  readiness first and keeps serving through `--drain-timeout`: 0.',
  '- **A frozen replica costs the reviews pinned to it until it leaves the endpoints** (3 readiness failures of',
  '  5 s: routed away after 15–19 s): 1–5 failed creates per run, each a 10 s webhook timeout; none after the route-',
  '  away, which the drill asserts. Liveness then restarted it (~65–72 s: 10 s delay, 3 failures of 10 s, then the 30 s',
  '  grace a stopped process ignores).',
  '- **A crash fails the reviews sent to the dead process until the Service stops routing to it**: the one it was',
  '  serving, the next one each API server sends on its connection to it (the kernel answers with a reset; the API',
  '  server retries no POST it has sent), and each new connection the Service sends to its address before the kubelet',
  '  has marked the pod unready (`connect: connection refused`, about half the dials in that window): 0–1 per run for',
  '  upstream, 1–5 of ~123 in three runs for the runtime (why it sees more dials there is not established). The drill',
  '  asserts transport failures only, and none sent after the dead replica left the endpoints (2–3 s).',
  '- **The runtime refused admission from a stale cache past an API outage (runtime, fixed; figures from the run',
  '  before the fix).** With every API server killed, both runtime replicas failed `/readyz` from ~7 s into the',
  '  outage (cache older than `--max-cache-staleness` 10 s) until ~5 s after the first API server was back; meanwhile',
  '  the pod webhook denied with "cache not current … the watch is down, reconnecting" and the Service had no ready',
  '  endpoint (`connection refused`): 12 failed creates were sent after the first API server was back, the last 2.8 s',
  '  after it. In an earlier run the tail was ~11 s: the `kubernetes` Service still listed the two API servers not yet',
  '  restarted, so reconnects through it were refused 2 times in 3 and backed off (up to 5 s). Upstream serves from',
  '  its stale cache at any age and failed none. Now (`lib/runtime/informer`): a refused connect is retried at once,',
  '  then within 1 s; a review that finds a cache past the bound wakes the reconnect and waits (up to 8 s) for the',
  '  relist, then answers from it, so a SidecarSet written during the gap is never missed and no create fails once',
  '  an API server is back; readiness fails on staleness only when an API server refused this replica (4xx) or',
  '  called it while it could reach none, not in a total outage (the kubelet could publish the change only after',
  '  it, emptying the Service while the caches relist). The drill now asserts 0 webhook-failed creates after the',
  '  first API server is back and the standby Ready throughout; `manager-apiserver-restart.test.ts` shows it on',
  '  the real kube-apiserver (before the fix: 37 and 28 creates refused after it was back; after: 0).',
  '- **The runtime gave up its Lease 2 s before client-go would (runtime, fixed).** With every API server restarted',
  "  (drill 7) the runtime's leader lost its Lease in 3 runs of 3, upstream in none. Its log: renewals refused at +2, +4,",
  '  +6 and +8 s after the last one, an API server answering at +8.5 s, leadership ended at +10 s (RenewDeadline). In',
  '  client-go a renew round starts RetryPeriod after a success and lasts RenewDeadline, so its leader tries once more',
  '  at +10 and leads until +12. The runtime now uses that window (`lib/runtime/leader/elector.ts`, a unit test',
  '  replays the timing); drill 7 re-run: 0 leader changes.',
  "- **A pod created together with its SidecarSet can miss its sidecar (the drills' setup, fixed).** The drills apply",
  '  the SidecarSet and the Deployment it selects together; a pod the ReplicaSet creates before the SidecarSet reaches',
  "  the webhook's cache is admitted without the sidecar (both flavours read SidecarSets from an informer cache), and the SidecarSet never counts it, so the",
  "  drills' convergence waited in vain. The setup now replaces such a pod before the drills start.",
  '- **Admission traffic is pinned per connection.** The API server keeps one connection per webhook through the',
  '  ClusterIP, so kube-proxy picks a replica once per connection, not per review: a dead or frozen replica only costs',
  '  the reviews on connections that were pinned to it, which is why most drills saw 0 or 1 failed creates.',
  '- **With host ports and 3 schedulable nodes** the 100 % surge cannot be placed: the scheduler leaves one surge pod',
  '  Pending ("didn\'t have free ports for the requested pod ports") and the Deployment completes one pod at a time,',
  '  never below 2 Ready replicas and with 0 failed creates; `expectedNodes: 3` refuses at synth ("4 nodes are',
  '  needed"), which is the full-surge arithmetic the scheduler confirmed.',
  "- **Node and zone loss take the node monitor's grace**: a cut-off node turns NotReady after ~45–50 s and only",
  '  then does the EndpointSlice controller drop its replica; until then reviews pinned to it time out (10 s).',
  "- **Harness**: Node's `request.setTimeout` only starts once a socket is connected; a SYN to a cut-off node retries",
  '  for two minutes, which stalled the first node-loss figures. Every poll now has a hard deadline.',
];

const cell = (v: number | null | undefined, unit = '') => (v === null || v === undefined ? '–' : `${v}${unit}`);

const FLAVOURS = ['upstream', 'runtime'] as const;

/**
 * The README's summary: one row per drill, each cell upstream / runtime, from the same results as
 * docs/ha-drills.md (which has every figure, the failures' messages and the load averages).
 */
export function renderReadmeTable(results: Results): string {
  const byDrill = new Map<string, Partial<Record<string, DrillFigures>>>();
  for (const [key, f] of Object.entries(results.drills).sort(([a], [b]) => a.localeCompare(b))) {
    const id = key.slice(0, key.lastIndexOf('/'));
    byDrill.set(id, { ...byDrill.get(id), [f.flavour]: f });
  }
  const both = (row: Partial<Record<string, DrillFigures>>, pick: (f: DrillFigures) => string) =>
    FLAVOURS.map((fl) => (row[fl] ? pick(row[fl]) : 'not run')).join(' / ');
  const dates = [...new Set(Object.values(results.drills).map((f) => f.at.slice(0, 10)))].sort();
  const span = dates.length > 1 ? `runs of ${dates[0]} to ${dates.at(-1)}` : `run of ${dates[0] ?? 'no date'}`;
  return [
    '| drill (upstream / runtime) | webhook-failed creates | routed away | new leader | converged |',
    '|---|---|---|---|---|',
    ...[...byDrill.values()].map((row) => {
      const title = (row.upstream ?? row.runtime)!.drill;
      return `| ${title} | ${both(row, (f) => `${f.webhookFailures} of ${f.creates}`)} | ${both(row, (f) => cell(f.routeAwayS, ' s'))} | ${both(row, (f) => cell(f.newLeaderS, ' s'))} | ${both(row, (f) => cell(f.convergeS, ' s'))} |`;
    }),
    '',
    `Times from the fault (${span}, ${results.conditions.cluster ?? ''}, ${results.conditions.machine ?? ''});`,
    '"–": nothing was routed away, or no new leader was due. Drill 6 refuses the app namespace\'s creates by design while',
    'no replica is up (`failurePolicy: Fail`); it asserts that `kube-system` and the install namespace still get pods.',
    'Elsewhere a failed create is a review an API server had already sent to the killed, frozen or cut-off replica',
    "before it left the endpoints (a frozen or unreachable one holds it for the webhook's 10 s); the drills assert",
    'that none fails after that, and 0 wherever the design promises 0.',
  ].join('\n');
}

/** `readme` with the text between the drills' markers replaced by the current table (unchanged if they are absent). */
export function withReadmeTable(readme: string, results: Results): string {
  const begin = readme.indexOf(README_BEGIN);
  const end = readme.indexOf(README_END);
  if (begin < 0 || end < begin) return readme;
  return `${readme.slice(0, begin + README_BEGIN.length)}\n${renderReadmeTable(results)}\n${readme.slice(end)}`;
}

export function renderDrillsMarkdown(results: Results): string {
  const rows = Object.entries(results.drills).sort(([a], [b]) => a.localeCompare(b));
  const lines = [
    '# HA drills: figures',
    '',
    '<!-- Written by npm run drills:publish from the figures of the e2e drills (docs/ha-drills-results.json); do not edit. -->',
    '',
    "Each drill makes an operator's failure happen on the local cluster (`test/cluster`) while pods are created",
    'through the pod webhook, and asserts the HA promise (see issue [ha-drills]). The tests assert behaviour;',
    'the times below are measurements of one run, on a shared machine, under the load average shown.',
    '',
    ...Object.entries(results.conditions).map(([k, v]) => `- **${k}**: ${v}`),
    '',
    '| drill | flavour | creates | webhook-failed | API-failed | no sidecar | route away | new leader | leader changes | max leaders | longest renewal gap | converge | load avg (1/5/15 min) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      ([, f]) =>
        `| ${f.drill} | ${f.flavour} | ${f.creates} | ${f.webhookFailures} | ${f.apiFailures} | ${f.withoutSidecar} | ${cell(f.routeAwayS, ' s')} | ${cell(f.newLeaderS, ' s')} | ${f.leaderChanges} | ${f.maxLeadersAtOnce} | ${cell(f.longestRenewalGapS, ' s')} | ${cell(f.convergeS, ' s')} | ${f.uptime} |`,
    ),
    '',
    ...FINDINGS,
    '',
    '## Per drill',
    '',
    ...rows.flatMap(([key, f]) => [
      `### ${f.drill} (${f.flavour}), ${f.at}`,
      '',
      ...Object.entries(f.extra).map(([k, v]) => `- ${k}: ${v}`),
      `- create p99: ${f.createP99Ms} ms; webhook-failed creates after route-away: ${f.failuresAfterRouteAway}`,
      ...(f.failures.length
        ? [
            '- failed creates (s after the fault, kind, message):',
            ...f.failures.map((x) => `  - ${x.atS} s ${x.failure}: ${x.message.replace(/\|/g, '/')}`),
          ]
        : []),
      `<!-- ${key} -->`,
      '',
    ]),
  ];
  return `${lines.join('\n')}\n`;
}
