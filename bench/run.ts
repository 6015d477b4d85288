/**
 * `npm run bench -- <name>`: runs one benchmark (or all with no name). Each prints its figures
 * and writes them to bench/results/<name>.json with the machine's core count and Node version.
 * Benchmarks measure; tests assert behaviour. Nothing here is part of `npm test`.
 */
import { availableParallelism } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';

export interface BenchmarkResult {
  /** Figures in seconds, milliseconds or bytes; the key names the unit (e.g. `p99Ms`, `rssBytes`). */
  figures: Record<string, unknown>;
  notes?: string[];
}

const BENCHMARKS: Record<string, () => Promise<{ run: () => Promise<BenchmarkResult> }>> = {
  failover: () => import('./failover.js'),
  webhook: () => import('./webhook.js'),
  sidecarset: () => import('./sidecarset.js'),
  compare: () => import('./compare.js'),
  'webhook-dos': () => import('./webhook-dos.js'),
  drills: () => import('./drills.js'),
  'cluster-compare': () => import('./cluster-compare.js'),
};

async function runOne(name: string): Promise<void> {
  const load = BENCHMARKS[name];
  if (!load) throw new Error(`unknown benchmark "${name}". Fix: use one of ${Object.keys(BENCHMARKS).join(', ')}`);
  const startedAt = new Date().toISOString();
  const result = await (await load()).run();
  const record = {
    name,
    startedAt,
    machine: { cores: availableParallelism(), node: process.version, platform: `${process.platform}/${process.arch}` },
    ...result,
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL(`./results/${name}.json`, import.meta.url), `${JSON.stringify(record, null, 2)}\n`);
  process.stdout.write(`\n== ${name}\n${JSON.stringify(record.figures, null, 2)}\n`);
}

const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
for (const name of names.length ? names : Object.keys(BENCHMARKS)) await runOne(name);
