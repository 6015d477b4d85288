import type { V1Deployment, V1MutatingWebhook, V1Pod, V1ValidatingWebhook } from '@kubernetes/client-node';
import type { ClusterSnapshot } from '../model.js';
import { matchesSelector } from '../../contract/selector.js';

/** Epoch ms of a timestamp as client-node (Date) or plain JSON (string) gives it. */
export function epochMs(t: Date | string | undefined): number | undefined {
  if (t === undefined || t === null) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** `3d 4h`, `12m 5s`, `800ms`: ages and lifetimes as a person reads them. */
export function human(ms: number): string {
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(abs)}ms`;
  const s = Math.floor(abs / 1000);
  const parts: Array<[number, string]> = [
    [Math.floor(s / 86400), 'd'],
    [Math.floor((s % 86400) / 3600), 'h'],
    [Math.floor((s % 3600) / 60), 'm'],
    [s % 60, 's'],
  ];
  const first = parts.findIndex(([n]) => n > 0);
  return parts
    .slice(first, first + 2)
    .filter(([n]) => n > 0)
    .map(([n, u]) => `${n}${u}`)
    .join(' ');
}

/** `a, b, c and 4 more`. */
export function list(items: readonly string[], max = 6): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

export function isReady(pod: V1Pod): boolean {
  return (
    !pod.metadata?.deletionTimestamp &&
    (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** The pods a Deployment owns (by its selector; terminating pods excluded). */
export function podsOf(s: ClusterSnapshot, d: V1Deployment): V1Pod[] {
  return s.pods.filter((p) => !p.metadata?.deletionTimestamp && matchesSelector(d.spec?.selector, p.metadata?.labels));
}

export function managerPods(s: ClusterSnapshot): V1Pod[] {
  const seen = new Set<string>();
  return s.deployments
    .flatMap((d) => podsOf(s, d))
    .filter((p) => !seen.has(p.metadata!.name!) && seen.add(p.metadata!.name!));
}

export type Entry = (V1MutatingWebhook | V1ValidatingWebhook) & { readonly kind: 'mutating' | 'validating' };

export function webhookEntries(s: ClusterSnapshot): Entry[] {
  return [
    ...(s.mutating?.webhooks ?? []).map((w) => ({ ...w, kind: 'mutating' as const })),
    ...(s.validating?.webhooks ?? []).map((w) => ({ ...w, kind: 'validating' as const })),
  ];
}

/** Entries the API server sends to the manager's webhook Service. */
export function entriesOnService(s: ClusterSnapshot, serviceName: string): Entry[] {
  return webhookEntries(s).filter(
    (w) => w.clientConfig?.service?.name === serviceName && w.clientConfig.service.namespace === s.namespace,
  );
}
