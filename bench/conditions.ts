/**
 * A benchmark run's conditions on a shared machine: the `uptime` line (load averages) at a moment, and the machine.
 * Used by bench/compare.ts and bench/cluster-compare.ts to label every figure with what else the machine was doing.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism, cpus, hostname, loadavg, totalmem } from 'node:os';

/** `uptime`'s line (falls back to the load averages when the command is missing). */
export const uptime = () => {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return `load average: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(', ')}`;
  }
};

export function machine() {
  const model = cpus()[0]?.model ?? 'unknown';
  return {
    hostname: hostname(),
    cores: availableParallelism(),
    cpuModel: model,
    memoryGB: Math.round((totalmem() / 1e9) * 10) / 10,
    node: process.version,
  };
}
