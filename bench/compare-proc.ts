/**
 * What the compare benchmark reads of a process from /proc, the same way for a Go and a Node process, and CPU pinning.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const CLK_TCK = 100;

/**
 * Seconds the main thread of `pid` spent runnable but waiting for a CPU (/proc schedstat, needs
 * CONFIG_SCHEDSTATS): for a Node process the event loop cannot run then, whatever its own work.
 */
export function runQueueWaitSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e9;
  } catch {
    return NaN;
  }
}

/**
 * Seconds all threads of `pid` spent runnable but waiting for a CPU (summed over /proc/<pid>/task/<tid>/schedstat):
 * comparable between a Go process (work on many threads) and a Node process (work on its main thread).
 */
export function runQueueWaitAllThreadsSeconds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).reduce(
      (sum, tid) => sum + (Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1]) || 0) / 1e9,
      0,
    );
  } catch {
    return NaN;
  }
}

/**
 * Resident memory split by what backs it (/proc smaps_rollup): anonymous (heaps, malloc, JIT code) and file-backed
 * (the executable's and libraries' pages it touched: shared, clean, dropped first under memory pressure). For a Node
 * process the node binary alone is ~30 MB of the latter before any JavaScript runs.
 */
export function rssSplit(pid: number): { anonBytes: number; fileBytes: number } {
  try {
    const t = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(t)?.[1] ?? NaN);
    return { anonBytes: kb('Anonymous') * 1024, fileBytes: (kb('Rss') - kb('Anonymous')) * 1024 };
  } catch {
    return { anonBytes: NaN, fileBytes: NaN };
  }
}

/** utime + stime of `pid` in seconds, and its resident set, from /proc (the same for a Go and a Node process). */
export function proc(pid: number): { cpuSeconds: number; rssBytes: number; exited?: true } {
  // Upstream exits by itself under overload ("leader election lost"): its figures then end there.
  if (!existsSync(`/proc/${pid}/stat`)) return { cpuSeconds: NaN, rssBytes: NaN, exited: true };
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
  const rssKb = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return { cpuSeconds, rssBytes: rssKb * 1024 };
}

/**
 * BENCH_COMPARE_PIN=1: the load generator (this process) on CPU 0 and the manager under test on
 * the last CPU, so the two do not take turns on one core; kube-apiserver, etcd and everything else
 * still float over all cores. Off by default: when other work loads the machine, a pinned manager
 * can only wait for its one core (seen: 250 answers/s at 500/s offered, load 13).
 */
export const PIN = process.env.BENCH_COMPARE_PIN === '1' && availableParallelism() >= 2;
export function pin(pid: number, cpu: number): void {
  // -a: every thread the process has now; threads started later inherit the mask.
  if (PIN) execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}
export const MANAGER_CPU = availableParallelism() - 1;
