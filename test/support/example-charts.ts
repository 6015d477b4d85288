/**
 * Every Chart class the examples export, found by reading examples/, so a new example is judged
 * by every suite that uses this without being registered anywhere.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Chart } from 'cdk8s';

export const EXAMPLES_DIR = fileURLToPath(new URL('../../examples/', import.meta.url));

/** An example's Chart class (every example chart takes just a scope and an id). */
export type ChartClass = new (scope: Chart, id: string) => Chart;

/** `[<file>:<export>, class]` for every exported Chart class, sorted by file name. */
export async function exampleCharts(): Promise<Array<[string, ChartClass]>> {
  const found: Array<[string, ChartClass]> = [];
  for (const file of readdirSync(EXAMPLES_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()) {
    const module = (await import(`${EXAMPLES_DIR}${file}`)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      // Chart overrides Symbol.hasInstance, so `instanceof` cannot test a class's prototype.
      if (typeof value === 'function' && Object.prototype.isPrototypeOf.call(Chart.prototype, value.prototype))
        found.push([`${file}:${name}`, value as ChartClass]);
    }
  }
  return found;
}
