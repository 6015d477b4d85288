/** The CRDs the manager's enabled controllers and webhooks need, installed and established. */
import type { Expectations } from '../expectations.js';
import type { CheckResult, ClusterSnapshot } from '../model.js';
import { list } from './common.js';

export function checkCrds(s: ClusterSnapshot, e: Expectations | undefined): CheckResult {
  const id = 'crds';
  if (!e) return { id, status: 'skip', message: 'no manager Deployment, so no expected CRDs' };
  const byName = new Map(s.crds.map((c) => [c.metadata!.name!, c]));
  const missing = e.crds.filter((c) => !byName.has(c.name));
  const notEstablished = e.crds.filter(
    (c) =>
      byName.has(c.name) &&
      !(byName.get(c.name)!.status?.conditions ?? []).some((x) => x.type === 'Established' && x.status === 'True'),
  );
  const effect =
    e.flavour === 'upstream'
      ? 'the manager skips the controllers and deletes the webhooks that need them'
      : 'the manager cannot list them (its caches never sync) and their webhooks reject writes';
  if (missing.length > 0 || notEstablished.length > 0) {
    const parts = [
      ...(missing.length
        ? [
            `${missing.length} CRD${missing.length === 1 ? ' is' : 's are'} missing: ${list(
              missing.map((c) => c.name),
              4,
            )}`,
          ]
        : []),
      ...(notEstablished.length
        ? [
            `not established: ${list(
              notEstablished.map((c) => c.name),
              4,
            )}`,
          ]
        : []),
    ];
    return {
      id,
      status: 'fail',
      message: `${parts.join('; ')}: ${effect}`,
      fix: `apply the CRDs (the KruiseManager output renders them first; with CrdSource.none() apply them from your own source), then restart the manager pods so they start what needs them`,
      details: [...missing, ...notEstablished].map((c) => `${c.name}: needed by ${list(c.neededBy, 8)}`),
    };
  }
  return {
    id,
    status: 'pass',
    message: `${e.crds.length} CRD${e.crds.length === 1 ? '' : 's'} installed and established`,
  };
}
