import type { V1ControllerRevision } from '@kubernetes/client-node';
import { isRecord, KRUISE_APPS_GROUP } from '../../contract.js';
import { encode } from '../sidecarset/gojson.js';
import { goJson, RevisionLabels, revisionHash, revisionName } from '../sidecarset/revisions.js';
import { CLONESET_GO_TYPES } from './gojson.generated.js';
import { CloneSetKeys, type CloneSet } from './types.js';

/**
 * What a CloneSet revision records (upstream pkg/controller/cloneset/revision getPatch): the pod
 * template as a `$patch: replace`. Upstream encodes the typed CloneSet (Go's layout: omitempty
 * fields dropped, quantities canonical, `creationTimestamp: null`, fields its types lack dropped),
 * decodes that into a map and encodes the map again (keys sorted): so the template goes through
 * its Go type here, then {@link goJson}.
 */
export function cloneSetRevisionData(cs: CloneSet): string {
  const template = JSON.parse(
    encode(cs.spec.template, 'v1.PodTemplateSpec', 'spec.template', true, CLONESET_GO_TYPES),
  ) as Record<string, unknown>;
  return goJson({ spec: { template: { ...template, $patch: 'replace' } } });
}

/** FNV-1a, 32 bits, over UTF-8 bytes. */
function fnv1a32(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

/**
 * Upstream's hash of volume claim templates (pkg/util/volumeclaimtemplate getExpectHash): the claims
 * reduced to name and spec, sorted by name, Go-encoded as []PersistentVolumeClaim (`null` for none);
 * that byte slice printed as Kubernetes' DeepHashObject prints one (spew `%#v`: `([]uint8)[123 34 …]`),
 * hashed with FNV-1a 32.
 */
export function volumeClaimTemplatesHashValue(templates: CloneSet['spec']['volumeClaimTemplates']): number {
  const byName = (t: { metadata?: { name?: string } }) => t.metadata?.name ?? '';
  const claims = templates?.length
    ? templates
        .map((t) => ({ metadata: { name: t.metadata?.name }, spec: t.spec }))
        .sort((a, b) => (byName(a) < byName(b) ? -1 : byName(a) > byName(b) ? 1 : 0))
    : null;
  const json = Buffer.from(
    encode(claims, '[]v1.PersistentVolumeClaim', 'spec.volumeClaimTemplates', true, CLONESET_GO_TYPES),
    'utf8',
  );
  return fnv1a32(Buffer.from(`([]uint8)[${[...json].join(' ')}]`, 'latin1'));
}

/** The `kruise.io/cloneset-volumeclaimtemplate-hash` a revision carries (PatchVCTemplateHash): "" for no claims. */
export const volumeClaimTemplatesHash = (templates: CloneSet['spec']['volumeClaimTemplates']): string =>
  templates?.length ? String(volumeClaimTemplatesHashValue(templates)) : '';

/**
 * The ControllerRevision upstream's NewRevision builds for a CloneSet (before a name collision
 * bumps the count; the controller passes its status.collisionCount, 0 when unset): named
 * `<cloneset>-<hash>`, labelled with the template's labels and the hash, annotated with the
 * CloneSet's annotations and the claims' hash, owned by the CloneSet. The namespace is the caller's
 * to set, as upstream's history control sets it when it creates the revision.
 */
export function newCloneSetRevision(
  cs: CloneSet,
  revision: number,
  collisionCount = 0,
): V1ControllerRevision & { data: object } {
  const raw = cloneSetRevisionData(cs);
  const hash = revisionHash(raw, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: revisionName(cs.metadata.name, hash),
      labels: { ...cs.spec.template.metadata?.labels, [RevisionLabels.hash]: hash },
      annotations: {
        ...cs.metadata.annotations,
        [CloneSetKeys.volumeClaimTemplateHash]: volumeClaimTemplatesHash(cs.spec.volumeClaimTemplates),
      },
      ownerReferences: [
        {
          apiVersion: `${KRUISE_APPS_GROUP}/v1alpha1`,
          kind: 'CloneSet',
          name: cs.metadata.name,
          uid: cs.metadata.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: JSON.parse(raw) as object,
    revision,
  };
}

/**
 * The CloneSet as a revision restores it (upstream ApplyRevision): the revision's `$patch: replace`
 * template takes the place of the CloneSet's whole template; nothing else changes.
 */
export function applyCloneSetRevision(cs: CloneSet, revision: Pick<V1ControllerRevision, 'data'>): CloneSet {
  const spec = isRecord(revision.data) && isRecord(revision.data.spec) ? revision.data.spec : undefined;
  if (!spec || !isRecord(spec.template))
    throw new Error(
      `ControllerRevision data ${JSON.stringify(revision.data).slice(0, 200)} holds no spec.template: it is not a CloneSet revision; use a revision owned by the CloneSet`,
    );
  const template = structuredClone(spec.template);
  delete template.$patch;
  const restored = structuredClone(cs);
  restored.spec.template = template as CloneSet['spec']['template'];
  return restored;
}

/** The short hash: what follows the last `-` of a revision name (upstream GetShortHash). */
export const shortHash = (revision: string) => revision.slice(revision.lastIndexOf('-') + 1);

/**
 * The labels upstream's CloneSet puts on a pod of `revision` (the revision's name; WriteRevisionHash):
 * `controller-revision-hash` is the name (its short hash under the CloneSetShortHash gate) and
 * `pod-template-hash` always the short hash.
 */
export function podRevisionLabels(revision: string, cloneSetShortHash = false): Record<string, string> {
  const short = shortHash(revision);
  return { [CloneSetKeys.revisionHash]: cloneSetShortHash ? short : revision, [CloneSetKeys.podTemplateHash]: short };
}

/**
 * Whether a pod is of `revision`: its `controller-revision-hash` equals it, in full or by short hash
 * (upstream EqualToRevisionHash).
 */
export function podIsOfRevision(labels: Record<string, string> | undefined, revision: string): boolean {
  const own = labels?.[CloneSetKeys.revisionHash] ?? '';
  return own === revision || shortHash(own) === shortHash(revision);
}
