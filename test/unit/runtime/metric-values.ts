// Reads metric samples out of a prom-client registry, so tests assert on what a scrape sees.
import type { Registry } from 'prom-client';

export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

export async function samples(registry: Registry, name: string): Promise<Sample[]> {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`metric ${name} is not registered`);
  return (await metric.get()).values as Sample[];
}

/** The value of the sample whose labels include `labels` (and, for histograms, the right series). */
export async function valueOf(
  registry: Registry,
  name: string,
  labels: Record<string, string>,
  metricName = name,
): Promise<number | undefined> {
  const all = await samples(registry, name);
  const match = all.find(
    (s) => (s.metricName ?? name) === metricName && Object.entries(labels).every(([k, v]) => String(s.labels[k]) === v),
  );
  return match?.value;
}

/** Count of observations of a histogram series. */
export const histogramCount = (registry: Registry, name: string, labels: Record<string, string>) =>
  valueOf(registry, name, labels, `${name}_count`);

/** Sum of observations of a histogram series. */
export const histogramSum = (registry: Registry, name: string, labels: Record<string, string>) =>
  valueOf(registry, name, labels, `${name}_sum`);
