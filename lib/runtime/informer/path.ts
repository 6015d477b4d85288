export interface ResourceRef {
  /** API group; empty or omitted for the core group. */
  group?: string;
  version: string;
  /** Lower-case plural resource name, e.g. `pods`, `sidecarsets`. */
  plural: string;
  /** Restrict to one namespace; omit for cluster-scoped resources or all namespaces. */
  namespace?: string;
}

/** The collection path informers list and watch, for core and custom resources alike. */
export function resourcePath(ref: ResourceRef): string {
  const base = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = ref.namespace ? `/namespaces/${encodeURIComponent(ref.namespace)}` : '';
  return `${base}${ns}/${ref.plural}`;
}
