import type { V1ControllerRevision, V1Pod } from '@kubernetes/client-node';
import { PatchTypes, type AppsV1Client } from '../kube/index.js';
import { SidecarSetAnnotations } from '../../contract.js';
import { readHashAnnotation } from './hash.js';
import { equalRevision, newRevision, RevisionLabels, sortRevisions } from './revisions.js';
import type { SidecarSet } from './types.js';

export interface HistoryDeps {
  apps: Pick<
    AppsV1Client,
    | 'listNamespacedControllerRevision'
    | 'readNamespacedControllerRevision'
    | 'createNamespacedControllerRevision'
    | 'patchNamespacedControllerRevision'
    | 'deleteNamespacedControllerRevision'
  >;
  /** The manager's namespace: SidecarSet revisions live there, as upstream. */
  namespace: string;
  /** Throws when this process may not write now. */
  mayWrite(): void;
}

/** The latest revision's name and the collision count it took (status.latestRevision, status.collisionCount). */
export interface LatestRevision {
  name: string;
  collisionCount: number;
  truncated: boolean;
}

const ignore = (code: number) => (err: { code?: number }) => {
  if (err.code !== code) throw err;
  return undefined;
};

/**
 * Upstream's registerLatestRevision (sidecarset_processor.go): the revision equal to the
 * SidecarSet's current spec becomes the latest; an unchanged spec keeps the newest revision, an
 * older equal one is renumbered to the next number (a rollback), anything else is created
 * (a name collision with different data bumps the collision count). Then history beyond
 * revisionHistoryLimit (at least 1) is pruned, oldest first, never a revision a pod records.
 */
export async function registerLatestRevision(deps: HistoryDeps, s: SidecarSet, pods: V1Pod[]): Promise<LatestRevision> {
  const { items } = await deps.apps.listNamespacedControllerRevision({
    namespace: deps.namespace,
    labelSelector: `${RevisionLabels.sidecarSet}=${s.metadata.name}`,
  });
  let revisions = sortRevisions(items);
  let collisionCount = s.status?.collisionCount ?? 0;
  const next = (revisions.at(-1)?.revision ?? 0) + 1;
  const wanted = newRevision(s, deps.namespace, next, collisionCount);
  const equal = revisions.filter((r) => equalRevision(r, wanted));
  let latest: V1ControllerRevision;
  if (equal.length && equal.at(-1) === revisions.at(-1)) {
    latest = revisions.at(-1)!;
  } else if (equal.length) {
    deps.mayWrite();
    const old = equal.at(-1)!;
    latest = await deps.apps.patchNamespacedControllerRevision(
      { name: old.metadata!.name!, namespace: deps.namespace, body: { revision: next } },
      { patchType: PatchTypes.merge },
    );
    revisions = [...revisions.filter((r) => r !== old), latest];
  } else {
    for (;;) {
      const candidate = newRevision(s, deps.namespace, next, collisionCount);
      deps.mayWrite();
      const created = await deps.apps
        .createNamespacedControllerRevision({ namespace: deps.namespace, body: candidate })
        .catch(ignore(409));
      if (created) {
        latest = created;
        break;
      }
      const existing = await deps.apps.readNamespacedControllerRevision({
        name: candidate.metadata!.name!,
        namespace: deps.namespace,
      });
      if (equalRevision(existing, candidate)) {
        latest = existing;
        break;
      }
      collisionCount++;
    }
    revisions = [...revisions, latest];
  }
  const custom = s.metadata.labels?.[RevisionLabels.customVersion];
  if (custom && latest.metadata?.labels?.[RevisionLabels.customVersion] !== custom) {
    deps.mayWrite();
    latest = await deps.apps.patchNamespacedControllerRevision(
      {
        name: latest.metadata!.name!,
        namespace: deps.namespace,
        body: { metadata: { labels: { [RevisionLabels.customVersion]: custom } } },
      },
      { patchType: PatchTypes.merge },
    );
  }
  const left = await truncateHistory(deps, s, pods, revisions);
  return {
    name: latest.metadata!.name!,
    collisionCount,
    truncated: left <= Math.max(1, s.spec.revisionHistoryLimit ?? 10),
  };
}

/** Revisions in use: recorded by a pod, or named by injectionStrategy.revision (upstream filterActiveRevisions). */
export function activeRevisions(s: SidecarSet, pods: V1Pod[], revisions: V1ControllerRevision[]): Set<string> {
  const active = new Set<string>();
  for (const pod of pods) {
    const name = readHashAnnotation(pod.metadata?.annotations, SidecarSetAnnotations.hash)[s.metadata.name]
      ?.controllerRevision;
    if (name) active.add(name);
  }
  const ref = (s.spec.injectionStrategy as { revision?: { revisionName?: string; customVersion?: string } } | undefined)
    ?.revision;
  if (ref?.revisionName) active.add(ref.revisionName);
  if (ref?.customVersion !== undefined) {
    const newest = sortRevisions(
      revisions.filter((r) => r.metadata?.labels?.[RevisionLabels.customVersion] === ref.customVersion),
    ).at(-1);
    if (newest?.metadata?.name) active.add(newest.metadata.name);
  }
  return active;
}

/**
 * Upstream truncateHistory: deletes the oldest revisions beyond the limit that no pod uses; the
 * number left, above the limit when revisions in use hold it up (then it is retried later).
 */
export async function truncateHistory(
  deps: HistoryDeps,
  s: SidecarSet,
  pods: V1Pod[],
  revisions: V1ControllerRevision[],
): Promise<number> {
  const limit = Math.max(1, s.spec.revisionHistoryLimit ?? 10);
  let excess = revisions.length - limit;
  if (excess <= 0) return revisions.length;
  const active = activeRevisions(s, pods, revisions);
  // The last (latest) revision is never deleted.
  for (const r of revisions.slice(0, -1)) {
    if (excess === 0) break;
    if (active.has(r.metadata!.name!)) continue;
    deps.mayWrite();
    await deps.apps
      .deleteNamespacedControllerRevision({ name: r.metadata!.name!, namespace: deps.namespace })
      .catch(ignore(404));
    excess--;
  }
  return limit + excess;
}
