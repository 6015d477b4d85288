/**
 * The pure side of `npm run bench -- cluster-compare` (bench/cluster-compare.ts): one step's figures from its create
 * outcomes, CPU samples and load averages; failures grouped by kind; the manager containers' CPU read from their
 * cgroup; the side-by-side table. No cluster, no I/O: unit-tested in test/unit/bench/cluster-compare.test.ts.
 */
import { summarize, type CreateOutcome, type LoadSummary } from '../test/e2e/support/load.js';

export type Flavour = 'upstream' | 'runtime';

/** One manager container's counters at one moment. */
export interface ManagerSample {
  pod: string;
  /** Host PID of the container's main process (a restart gives a new one). */
  pid: number;
  restarts: number;
  /** CPU seconds of the whole container (its cgroup), or of its main process (/proc) where no cgroup was readable. */
  cpuSeconds: number;
  cpuSource: 'cgroup' | 'proc';
  rssBytes: number;
}

/** What was measured around one step (everything but the outcomes themselves). */
export interface StepInput {
  step: string;
  mode: 'rate' | 'closed';
  /** Creates started per second (open loop), or creates in flight (closed loop). */
  offeredPerSecond?: number;
  concurrency?: number;
  /** From the first create sent until the last answer. */
  wallSeconds: number;
  outcomes: readonly CreateOutcome[];
  managersBefore: readonly ManagerSample[];
  managersAfter: readonly ManagerSample[];
  /** os.loadavg() before and after the step. */
  loadBefore: readonly number[];
  loadAfter: readonly number[];
  /** The step's pods still stored when it ended (the rest were deleted by their ReplicaSet's controller). */
  podsLeft: number;
  /** The bench process's own event-loop delay beyond the 1 ms sampling interval, and its CPU share. */
  generator: { loopDelayP99Ms: number; loopDelayMaxMs: number; cpuShare: number };
}

export interface FailureKind {
  count: number;
  /** One message of this kind, as the API server (or the client) said it. */
  example: string;
}

export interface StepFigures extends LoadSummary {
  step: string;
  mode: 'rate' | 'closed';
  offeredPerSecond?: number;
  concurrency?: number;
  wallSeconds: number;
  /** Creates the API server answered 201, per second of the step. */
  answeredPerSecond: number;
  failuresByKind: Record<string, FailureKind>;
  /** Created pods deleted by their ReplicaSet's controller before the step ended (its ReplicaSet wants 0). */
  deletedByReplicaSetController: number;
  /** CPU seconds of every manager container over the step, summed; null when none could be compared. */
  managerCpuSeconds: number | null;
  managerCpuSecondsPer1000Creates: number | null;
  managerCpuByPod: Record<string, number | null>;
  managerRssMBAfter: Record<string, number>;
  /** Manager containers that restarted (or whose process changed) during the step: their CPU is not counted. */
  managersRestarted: string[];
  loadAverageBefore: number[];
  loadAverageAfter: number[];
  generator: StepInput['generator'];
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * The kind of a failed create: who failed it (webhook or API server), its HTTP status (or none), and the cause's last
 * clause with addresses and numbers blanked, so that "dial tcp 10.0.0.3:9876: connect: connection refused" from two
 * replicas is one kind.
 */
export function failureKind(o: Pick<CreateOutcome, 'failure' | 'status' | 'message'>): string {
  const cause = (o.message ?? '').split(': ').at(-1)!.trim();
  const normalized = cause
    .replace(/\d{1,3}(\.\d{1,3}){3}(:\d+)?/g, '<addr>')
    .replace(/\d+(\.\d+)?(ms|s)\b/g, '<t>')
    .slice(0, 100);
  return `${o.failure ?? 'api'} ${o.status ? `HTTP ${o.status}` : 'no answer'}: ${normalized || '(no message)'}`;
}

/** Failed creates grouped by {@link failureKind}, most frequent first. */
export function failuresByKind(outcomes: readonly CreateOutcome[]): Record<string, FailureKind> {
  const kinds = new Map<string, FailureKind>();
  for (const o of outcomes) {
    if (o.ok) continue;
    const k = failureKind(o);
    const seen = kinds.get(k);
    if (seen) seen.count++;
    else kinds.set(k, { count: 1, example: (o.message ?? '').slice(0, 300) });
  }
  return Object.fromEntries([...kinds].sort((a, b) => b[1].count - a[1].count));
}

/**
 * CPU seconds each manager container spent between two samples. A container whose process or restart count changed
 * (or that appears in only one sample) is left out: its counter started again.
 */
export function managerCpu(
  before: readonly ManagerSample[],
  after: readonly ManagerSample[],
): { total: number | null; byPod: Record<string, number | null>; restarted: string[] } {
  const byPod: Record<string, number | null> = {};
  const restarted: string[] = [];
  let total: number | null = null;
  for (const a of after) {
    const b = before.find((x) => x.pod === a.pod);
    if (!b || b.pid !== a.pid || b.restarts !== a.restarts || !(a.cpuSeconds >= b.cpuSeconds)) {
      byPod[a.pod] = null;
      restarted.push(a.pod);
      continue;
    }
    byPod[a.pod] = round(a.cpuSeconds - b.cpuSeconds, 3);
    total = (total ?? 0) + (a.cpuSeconds - b.cpuSeconds);
  }
  for (const b of before) if (!after.some((a) => a.pod === b.pod)) restarted.push(b.pod);
  return { total: total === null ? null : round(total, 3), byPod, restarted };
}

/** One step's figures. */
export function stepFigures(s: StepInput): StepFigures {
  const load = summarize(s.outcomes);
  const cpu = managerCpu(s.managersBefore, s.managersAfter);
  return {
    step: s.step,
    mode: s.mode,
    ...(s.offeredPerSecond === undefined ? {} : { offeredPerSecond: s.offeredPerSecond }),
    ...(s.concurrency === undefined ? {} : { concurrency: s.concurrency }),
    wallSeconds: round(s.wallSeconds, 1),
    ...load,
    answeredPerSecond: s.wallSeconds > 0 ? round(load.created / s.wallSeconds, 1) : 0,
    failuresByKind: failuresByKind(s.outcomes),
    deletedByReplicaSetController: Math.max(0, load.created - s.podsLeft),
    managerCpuSeconds: cpu.total,
    managerCpuSecondsPer1000Creates:
      cpu.total === null || load.created === 0 ? null : round((cpu.total / load.created) * 1000, 3),
    managerCpuByPod: cpu.byPod,
    managerRssMBAfter: Object.fromEntries(s.managersAfter.map((m) => [m.pod, round(m.rssBytes / 1e6, 1)])),
    managersRestarted: cpu.restarted,
    loadAverageBefore: s.loadBefore.map((x) => round(x)),
    loadAverageAfter: s.loadAfter.map((x) => round(x)),
    generator: s.generator,
  };
}

/**
 * Where a process's CPU accounting file is, from its /proc/<pid>/cgroup: cgroup v1's cpuacct hierarchy
 * (`cpuacct.usage`, nanoseconds) if it has one, else the v2 unified hierarchy (`cpu.stat` usage_usec). Paths are
 * relative to the reader's cgroup namespace, so they resolve under the reader's /sys/fs/cgroup; undefined for a
 * path outside it.
 */
export function cpuAccountingFile(procCgroup: string, root = '/sys/fs/cgroup'): { file: string; v: 1 | 2 } | undefined {
  const lines = procCgroup
    .split('\n')
    .map((l) => /^(\d+):([^:]*):(.*)$/.exec(l.trim()))
    .filter((m): m is RegExpExecArray => !!m);
  const outside = (path: string) => path.startsWith('/..');
  const v1 = lines.find((m) => m[2].split(',').includes('cpuacct'));
  if (v1)
    return outside(v1[3]) ? undefined : { file: `${root}/${v1[2]}${v1[3]}/cpuacct.usage`.replace(/\/+/g, '/'), v: 1 };
  const v2 = lines.find((m) => m[1] === '0' && m[2] === '');
  // Only a pure v2 host gets here (a hybrid one has the v1 cpuacct line): the unified hierarchy is at <root>.
  if (v2) return outside(v2[3]) ? undefined : { file: `${root}${v2[3]}/cpu.stat`.replace(/\/+/g, '/'), v: 2 };
  return undefined;
}

/** CPU seconds from a cgroup accounting file's text ({@link cpuAccountingFile}). */
export function cgroupCpuSeconds(text: string, v: 1 | 2): number {
  if (v === 1) return Number(text.trim()) / 1e9;
  const m = /^usage_usec (\d+)$/m.exec(text);
  return m ? Number(m[1]) / 1e6 : NaN;
}

const cell = (f: StepFigures | undefined): string[] => {
  if (!f) return ['-', '-', '-', '-', '-', '-'];
  const failed = f.webhookFailures + f.apiFailures;
  return [
    `${f.p50Ms}/${f.p99Ms}/${f.maxMs}`,
    String(f.answeredPerSecond),
    failed ? `${failed} (w${f.webhookFailures} a${f.apiFailures})` : '0',
    String(f.withoutSidecar),
    f.managerCpuSecondsPer1000Creates === null ? '-' : String(f.managerCpuSecondsPer1000Creates),
    `${f.loadAverageBefore[0] ?? '-'}→${f.loadAverageAfter[0] ?? '-'}`,
  ];
};

/**
 * The side-by-side table: one row per step, for each flavour latency p50/p99/max (ms), answered creates per second,
 * failed creates (webhook / API server), created pods without the sidecar, manager CPU seconds per 1,000 creates, and
 * the 1-minute load average before → after the step.
 */
export function sideBySide(results: Partial<Record<Flavour, readonly StepFigures[]>>): string[] {
  const flavours = (['upstream', 'runtime'] as const).filter((f) => results[f]);
  const steps = [...new Set(flavours.flatMap((f) => results[f]!.map((s) => s.step)))];
  const heads = ['p50/p99/max ms', 'created/s', 'failed', 'no sidecar', 'CPU s/1k', 'load1m'];
  const rows: string[][] = [
    ['step', ...flavours.flatMap((f) => heads.map((h, i) => (i === 0 ? `${f}: ${h}` : h)))],
    ...steps.map((step) => [step, ...flavours.flatMap((f) => cell(results[f]!.find((s) => s.step === step)))]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]))
      .join('  ')
      .trimEnd(),
  );
}
