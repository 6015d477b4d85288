/**
 * Reads the envtest kube-apiserver's audit log (every request at level Metadata, JSON lines; see
 * test/envtest/config.ts), the witness for "this user met no RBAC denial" and "this webhook was
 * (not) called for that request".
 */
import { existsSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { envtest } from '../../envtest/state.js';

export interface AuditEvent {
  auditID: string;
  stage: string;
  verb: string;
  requestURI: string;
  user: { username: string; groups?: string[] };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    subresource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
    apiVersion?: string;
  };
  responseStatus?: { code?: number; reason?: string; message?: string };
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

export interface AuditFilter {
  /** Only events whose stage completed at or after this instant (Date or epoch ms). */
  since?: Date | number;
  /** Exact `user.username`, e.g. `system:serviceaccount:kruise-system:kruise-manager`. */
  user?: string;
  /** `responseStatus.code`, e.g. 403 for an RBAC denial. */
  code?: number;
}

/** The username Kubernetes gives a ServiceAccount (also the CN of a certificate acting as one). */
export const serviceAccountUser = (namespace: string, name: string): string =>
  `system:serviceaccount:${namespace}:${name}`;

/** Audit events matching `filter`, oldest first. Reads the whole file (a test run writes a few MB). */
export function auditEvents(filter: AuditFilter = {}, path = envtest().auditLogPath): AuditEvent[] {
  if (!existsSync(path))
    throw new Error(
      `no audit log at ${path}: was the control plane started with the audit flags of test/envtest/config.ts?`,
    );
  const since = filter.since === undefined ? undefined : Number(filter.since);
  // Cheap substring tests first: most lines are other users' requests.
  const needle = filter.user === undefined ? undefined : `"username":${JSON.stringify(filter.user)}`;
  const out: AuditEvent[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (!line || (needle && !line.includes(needle))) continue;
    let e: AuditEvent;
    try {
      e = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // the line being written right now
    }
    if (filter.user !== undefined && e.user.username !== filter.user) continue;
    if (filter.code !== undefined && e.responseStatus?.code !== filter.code) continue;
    if (since !== undefined && Date.parse(e.stageTimestamp) < since) continue;
    out.push(e);
  }
  return out;
}

/** `list storage.k8s.io/storageclasses`, `get /namespaces/kruise-system/secrets/x`: what was asked, for messages. */
export function describeRequest(e: AuditEvent): string {
  const r = e.objectRef;
  if (!r?.resource) return `${e.verb} ${e.requestURI}`;
  const resource = `${r.apiGroup ? `${r.apiGroup}/` : ''}${r.resource}${r.subresource ? `/${r.subresource}` : ''}`;
  return `${e.verb} ${resource}${r.namespace ? ` in ${r.namespace}` : ' (cluster-wide)'}${r.name ? ` name=${r.name}` : ''}`;
}

/**
 * RBAC denials (HTTP 403) of `user` since `since`, deduplicated into sorted
 * `verb group/resource [in ns]` lines with a count. Waits briefly first: the log backend writes
 * each event when its request completes, so a request that just finished may still be in flight.
 */
export async function rbacDenials(user: string, since: Date | number, settleMs = 1_000): Promise<string[]> {
  await sleep(settleMs);
  const counts = new Map<string, number>();
  for (const e of auditEvents({ user, code: 403, since })) {
    const key = describeRequest({ ...e, objectRef: e.objectRef && { ...e.objectRef, name: undefined } });
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k} (x${n})`).sort();
}

/**
 * Mutating webhooks the API server called for the requests of `events`, from the Metadata-level
 * annotations `mutation.webhook.admission.k8s.io/round_<r>_index_<i>`, e.g. `mpod.kb.io (mutated)`.
 */
export function mutatingWebhooksCalled(e: AuditEvent): string[] {
  return Object.entries(e.annotations ?? {}).flatMap(([k, v]) => {
    if (!k.startsWith('mutation.webhook.admission.k8s.io/')) return [];
    const a = JSON.parse(v) as { webhook: string; mutated: boolean };
    return [`${a.webhook}${a.mutated ? ' (mutated)' : ''}`];
  });
}
