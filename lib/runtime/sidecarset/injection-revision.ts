import type { V1ControllerRevision, V1Pod } from '@kubernetes/client-node';
import {
  isRecord,
  SIDECARSET_INJECT_REVISION_POLICIES,
  SidecarSetAnnotations,
  SidecarSetLabels,
} from '../../contract.js';
import { matchesSelector, validateSelector } from '../../contract/selector.js';
import { GoEncodingError, upstreamSidecarSetHash } from './gojson.js';
import { sortRevisions } from './revisions.js';
import type { SidecarSet, SidecarSetInjectRevision } from './types.js';

/**
 * What injection reads of SidecarSet history: the ControllerRevisions in the manager's namespace
 * (upstream keeps them there, labelled `kruise.io/sidecarset-name`). The runtime supplies a cache;
 * the controller side owns how revisions are written.
 */
export interface SidecarSetRevisionSource {
  /** The ControllerRevision of that name, if any. */
  get(name: string): V1ControllerRevision | undefined;
  /** The ControllerRevisions labelled `kruise.io/sidecarset-name: <sidecarSetName>`. */
  list(sidecarSetName: string): V1ControllerRevision[];
}

/** A pinned revision that cannot be read or chosen: upstream fails the pod's admission, and so do we. */
export class InjectionRevisionError extends Error {}

/** Spec fields a revision records (upstream copySidecarSetSpecRevision). */
const REVISION_FIELDS = ['volumes', 'containers', 'initContainers', 'imagePullSecrets', 'patchPodMetadata'] as const;

/** The ControllerRevision `info` names (upstream realControl.getControllerRevision). */
function findRevision(
  s: SidecarSet,
  info: SidecarSetInjectRevision,
  source: SidecarSetRevisionSource,
): V1ControllerRevision {
  if (info.revisionName) {
    const found = source.get(info.revisionName);
    if (!found)
      throw new InjectionRevisionError(
        `ControllerRevision "${info.revisionName}" (spec.injectionStrategy.revision.revisionName of SidecarSet ${s.metadata.name}) not found`,
      );
    return found;
  }
  const candidates = source
    .list(s.metadata.name)
    .filter((r) => r.metadata?.labels?.[SidecarSetLabels.customVersion] === info.customVersion);
  if (candidates.length === 0) {
    throw new InjectionRevisionError(
      `no ControllerRevision of SidecarSet ${s.metadata.name} has label ${SidecarSetLabels.customVersion}=${info.customVersion} (spec.injectionStrategy.revision.customVersion)`,
    );
  }
  return sortRevisions(candidates)[candidates.length - 1];
}

/**
 * The SidecarSet as it was at the revision `info` names (upstream GetHistorySidecarSet): its spec
 * replaced by the revision's (`$patch: replace`, as upstream records it; a revision without the
 * directive replaces only the fields it records), its hash annotations the revision's (or
 * computed), and status.latestRevision the revision's name, which injection records on the pod.
 */
export function historySidecarSet(
  s: SidecarSet,
  info: SidecarSetInjectRevision,
  source: SidecarSetRevisionSource,
): SidecarSet {
  const revision = findRevision(s, info, source);
  const recorded = (revision.data as { spec?: Record<string, unknown> } | undefined)?.spec;
  if (!recorded || typeof recorded !== 'object')
    throw new InjectionRevisionError(
      `ControllerRevision "${revision.metadata?.name}" has no data.spec; it is not a SidecarSet revision`,
    );
  const restored = structuredClone(s);
  const spec = (recorded.$patch === 'replace' ? {} : restored.spec) as Record<string, unknown>;
  for (const field of REVISION_FIELDS) {
    if (recorded[field] === undefined || recorded[field] === null) delete spec[field];
    else spec[field] = structuredClone(recorded[field]);
  }
  restored.spec = spec as SidecarSet['spec'];
  const annotations = (restored.metadata.annotations = { ...restored.metadata.annotations });
  const fromRevision = revision.metadata?.annotations ?? {};
  try {
    annotations[SidecarSetAnnotations.hash] =
      fromRevision[SidecarSetAnnotations.hash] || upstreamSidecarSetHash(restored.spec);
    annotations[SidecarSetAnnotations.hashWithoutImage] =
      fromRevision[SidecarSetAnnotations.hashWithoutImage] || upstreamSidecarSetHash(restored.spec, true);
  } catch (err) {
    if (!(err instanceof GoEncodingError)) throw err;
    throw new InjectionRevisionError(
      `ControllerRevision "${revision.metadata?.name}" records containers upstream's types cannot hold (${err.message})`,
    );
  }
  restored.status = { ...restored.status, latestRevision: revision.metadata?.name };
  return restored;
}

/** Upstream util.ParsePercentageAsFloat64: "25%" -> 0.25. */
function percentage(value: string): number {
  const match = /^(\d+)%$/.exec(value);
  if (!match)
    throw new InjectionRevisionError(`spec.updateStrategy.partition: ${JSON.stringify(value)} is not a percentage`);
  return Number(match[1]) / 100;
}

/**
 * The SidecarSet to inject into a pod being created (upstream getSuitableRevisionSidecarSet at
 * CREATE): the latest, unless injectionStrategy.revision pins one. Pinned: `Always` injects it;
 * `Partial` injects it into pods outside updateStrategy.selector, and into those inside with the
 * probability a percentage partition gives (an integer partition injects the latest). A paused
 * update always injects the pinned revision. `random` is Math.random in production.
 */
export function revisionToInject(
  s: SidecarSet,
  pod: V1Pod,
  source: SidecarSetRevisionSource | undefined,
  random: () => number,
): SidecarSet {
  const info = s.spec.injectionStrategy?.revision;
  if (!info || (!info.revisionName && !info.customVersion)) return s;
  if (!source)
    throw new InjectionRevisionError(
      `SidecarSet ${s.metadata.name} pins spec.injectionStrategy.revision but this replica reads no ControllerRevisions`,
    );
  const pinned = historySidecarSet(s, info, source);
  const strategy = s.spec.updateStrategy ?? {};
  if (strategy.paused || info.policy !== 'Partial') return pinned;
  if (strategy.selector) {
    const invalid = validateSelector(strategy.selector, 'spec.updateStrategy.selector');
    if (invalid.length) throw new InjectionRevisionError(invalid.join('; '));
    if (!matchesSelector(strategy.selector, pod.metadata?.labels)) return pinned;
  }
  if (typeof strategy.partition !== 'string') return s;
  return random() <= percentage(strategy.partition) ? pinned : s;
}

/**
 * Upstream's validateSidecarSetInjectionStrategy: a revision named by name or custom version, that exists, with a known
 * policy. The existence check needs `revisions` (the webhook's cache); without it, it is skipped.
 */
export function injectionStrategyErrors(s: SidecarSet, revisions: SidecarSetRevisionSource | undefined): string[] {
  const injection = s.spec.injectionStrategy as unknown;
  if (injection === undefined) return [];
  if (!isRecord(injection)) return ['spec.injectionStrategy: must be an object'];
  const errors = Object.keys(injection)
    .filter((k) => k !== 'paused' && k !== 'revision')
    .map((k) => `spec.injectionStrategy.${k}: is not a field of injectionStrategy; remove it`);
  if (injection.paused !== undefined && typeof injection.paused !== 'boolean')
    errors.push('spec.injectionStrategy.paused: must be true or false');
  const revision = injection.revision;
  if (revision === undefined) return errors;
  if (!isRecord(revision)) return [...errors, 'spec.injectionStrategy.revision: must be an object'];
  const at = 'spec.injectionStrategy.revision';
  for (const key of ['revisionName', 'customVersion'])
    if (revision[key] !== undefined && typeof revision[key] !== 'string') errors.push(`${at}.${key}: must be a string`);
  if (!revision.revisionName && !revision.customVersion)
    errors.push(`${at}: set revisionName or customVersion (upstream refuses both empty)`);
  else if (revisions) {
    try {
      historySidecarSet(s, revision as SidecarSetInjectRevision, revisions);
    } catch (err) {
      if (!(err instanceof InjectionRevisionError)) throw err;
      errors.push(`${at}: ${err.message}; create that revision first or fix the reference`);
    }
  }
  if (
    revision.policy !== undefined &&
    revision.policy !== '' &&
    !SIDECARSET_INJECT_REVISION_POLICIES.includes(revision.policy as string)
  ) {
    errors.push(
      `${at}.policy: ${JSON.stringify(revision.policy)} must be one of ${SIDECARSET_INJECT_REVISION_POLICIES.join(', ')}`,
    );
  }
  return errors;
}
