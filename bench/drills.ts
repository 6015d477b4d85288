/**
 * `npm run bench -- drills`: every HA drill ([ha-drills]) for both flavours on the real local
 * cluster, as `npm test` runs them, plus the WorkloadSpread zone loss
 * (KRUISE_HA_DRILLS=all). The e2e drills write their figures
 * to docs/ha-drills-results.json and docs/ha-drills.md; this returns that run's rows.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { BenchmarkResult } from './run.js';

export async function run(): Promise<BenchmarkResult> {
  const startedAt = new Date().toISOString();
  const r = spawnSync('npx', ['projen', 'test:e2e', '--', 'test/e2e/drills-'], {
    stdio: 'inherit',
    env: { ...process.env, KRUISE_HA_DRILLS: 'all' },
  });
  if (r.status !== 0) throw new Error(`the drills failed (exit ${r.status ?? r.signal}); see their output above`);
  const results = JSON.parse(readFileSync(new URL('../docs/ha-drills-results.json', import.meta.url), 'utf8')) as {
    drills: Record<string, { at?: string; startedAt?: string }>;
  };
  const fresh = Object.fromEntries(
    Object.entries(results.drills).filter(([, d]) => (d.at ?? d.startedAt ?? '') >= startedAt),
  );
  return { figures: fresh, notes: ['rows of this run only; docs/ha-drills.md has the table'] };
}
