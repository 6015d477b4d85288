/**
 * The upstream releases this library renders, from the generated data (kruise.generated.ts):
 * the newest stored whole, the others rebuilt from their differences when first used.
 */
import { applyPatch, type Json, type PatchOp } from './json-patch.js';
import {
  BASE_RELEASE,
  BASE_RELEASE_JSON,
  DEFAULT_RELEASE,
  RELEASE_PATCHES,
  RELEASE_VERSIONS,
} from './kruise.generated.js';
import type { UpstreamRelease } from './release.js';

/** Release tags this library renders, oldest first. */
export const UPSTREAM_RELEASES: readonly string[] = RELEASE_VERSIONS;
/** The release rendered when no version is given: the newest stable one. */
export const DEFAULT_UPSTREAM_RELEASE: string = DEFAULT_RELEASE;

const cache = new Map<string, UpstreamRelease>();

/** Whether `version` is one of {@link UPSTREAM_RELEASES}. */
export function isUpstreamRelease(version: string): boolean {
  return UPSTREAM_RELEASES.includes(version);
}

/** The generated data of one release; throws for a release the library has no data for. */
export function upstreamRelease(version: string = DEFAULT_UPSTREAM_RELEASE): UpstreamRelease {
  const hit = cache.get(version);
  if (hit) return hit;
  let release: UpstreamRelease;
  if (version === BASE_RELEASE) {
    release = JSON.parse(BASE_RELEASE_JSON) as UpstreamRelease;
  } else {
    const patch = RELEASE_PATCHES[version];
    if (patch === undefined)
      throw new Error(
        `upstream release data: no release ${version}; this library renders ${UPSTREAM_RELEASES.join(', ')}`,
      );
    release = applyPatch(
      JSON.parse(BASE_RELEASE_JSON) as Json,
      JSON.parse(patch) as PatchOp[],
    ) as unknown as UpstreamRelease;
  }
  if (release.version !== version)
    throw new Error(`upstream release data: the data for ${version} says it is ${release.version}`);
  cache.set(version, release);
  return release;
}

/** The releases that have a feature gate / flag, for "which releases have it" messages. */
export function releasesWith(has: (release: UpstreamRelease) => boolean): string[] {
  return UPSTREAM_RELEASES.filter((v) => has(upstreamRelease(v)));
}
