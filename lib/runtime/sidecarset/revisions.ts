import type { V1ControllerRevision } from '@kubernetes/client-node';
import { KRUISE_APPS_GROUP } from '../../contract.js';
import { encode, safeEncode } from './gojson.js';
import { GO_ROOTS } from './gojson.generated.js';
import type { SidecarSet } from './types.js';

/** Labels upstream puts on SidecarSet ControllerRevisions. */
export const RevisionLabels = {
  /** The owning SidecarSet's name (sidecarcontrol.SidecarSetKindName): how its revisions are listed. */
  sidecarSet: 'kruise.io/sidecarset-name',
  /** history.ControllerRevisionHashLabel. */
  hash: 'controller.kubernetes.io/hash',
  /** A SidecarSet's custom version, copied to its revisions (injectionStrategy.revision.customVersion). */
  customVersion: 'apps.kruise.io/sidecarset-custom-version',
} as const;

/** Go's encoding/json of a decoded value (map keys sorted, `<>&` escaped): how upstream's revision data is written. */
export function goJson(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${goJson(k)}:${goJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * What a revision records (upstream history_control.go getPatch): a `$patch: replace` of the
 * spec's containers, imagePullSecrets, initContainers, patchPodMetadata and volumes. Upstream
 * encodes the typed SidecarSet (Go's layout: omitempty fields dropped, quantities canonical, and
 * fields its types lack dropped: the CRD keeps them in volumes, Go's decoding does not), decodes that into a map and
 * encodes the map again (keys sorted), so each field goes through its
 * Go type here too, then {@link goJson}; an absent or empty list is null.
 */
export function revisionData(s: SidecarSet): string {
  const spec = s.spec as SidecarSet['spec'] & { patchPodMetadata?: unknown[] };
  const asGo = (v: unknown[] | undefined, root: string, field: string) =>
    v?.length ? (JSON.parse(encode(v, `[]${root}`, `spec.${field}`, true)) as unknown) : null;
  return goJson({
    spec: {
      $patch: 'replace',
      containers: asGo(spec.containers, GO_ROOTS.container, 'containers'),
      initContainers: asGo(spec.initContainers, GO_ROOTS.container, 'initContainers'),
      imagePullSecrets: asGo(spec.imagePullSecrets, GO_ROOTS.localObjectReference, 'imagePullSecrets'),
      patchPodMetadata: asGo(spec.patchPodMetadata, GO_ROOTS.patchPodMetadata, 'patchPodMetadata'),
      volumes: asGo(spec.volumes, GO_ROOTS.volume, 'volumes'),
    },
  });
}

/** Kubernetes' history.HashControllerRevision: FNV-1 32-bit over the data and the collision count, safe-encoded. */
export function revisionHash(data: string, collisionCount?: number): string {
  let h = 0x811c9dc5;
  const bytes = Buffer.from(collisionCount === undefined ? data : `${data}${collisionCount}`, 'utf8');
  for (const b of bytes) h = (Math.imul(h, 0x01000193) ^ b) >>> 0;
  return safeEncode(String(h));
}

/** history.ControllerRevisionName: the SidecarSet's name (at most 223 characters), a dash, the hash. */
export const revisionName = (sidecarSetName: string, hash: string) => `${sidecarSetName.slice(0, 223)}-${hash}`;

/** The ControllerRevision upstream's NewRevision builds for a SidecarSet (before a name collision bumps the count). */
export function newRevision(
  s: SidecarSet,
  namespace: string,
  revision: number,
  collisionCount: number,
): V1ControllerRevision & { data: object } {
  const raw = revisionData(s);
  const hash = revisionHash(raw, collisionCount);
  const labels: Record<string, string> = {
    ...s.metadata.labels,
    [RevisionLabels.hash]: hash,
    [RevisionLabels.sidecarSet]: s.metadata.name,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(s.metadata.name, hash),
      namespace,
      labels,
      annotations: { ...s.metadata.annotations },
      ownerReferences: s.metadata.uid
        ? [
            {
              apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
              kind: 'SidecarSet',
              name: s.metadata.name,
              uid: s.metadata.uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ]
        : undefined,
    },
    data: JSON.parse(raw) as object,
    revision,
  };
}

/** Same data (and hash label, when both carry a numeric one), as history.EqualRevision. */
export function equalRevision(a: V1ControllerRevision, b: V1ControllerRevision): boolean {
  const num = (r: V1ControllerRevision) => {
    const v = r.metadata?.labels?.[RevisionLabels.hash];
    return v !== undefined && /^-?\d+$/.test(v) ? Number(v) : undefined;
  };
  const [ha, hb] = [num(a), num(b)];
  if (ha !== undefined && hb !== undefined && ha !== hb) return false;
  return goJson(a.data) === goJson(b.data);
}

/** history.SortControllerRevisions: by revision number, then creation time, then name. */
export function sortRevisions(revisions: V1ControllerRevision[]): V1ControllerRevision[] {
  const t = (r: V1ControllerRevision) =>
    r.metadata?.creationTimestamp ? new Date(r.metadata.creationTimestamp).getTime() : 0;
  return [...revisions].sort(
    (a, b) => a.revision - b.revision || t(a) - t(b) || (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
  );
}
