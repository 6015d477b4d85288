/** The webhook configurations: where each entry points, what it is named, what it skips. */
import { Labels, Names, Ports } from '../../contract.js';
import type { Expectations, ExpectedWebhook } from '../expectations.js';
import type { CheckResult, ClusterSnapshot } from '../model.js';
import { matchesSelector } from '../../contract/selector.js';
import { list, webhookEntries, type Entry } from './common.js';

const key = (w: { type?: string; kind?: string; name: string }) => `${w.type ?? w.kind}/${w.name}`;

export function checkWebhookConfigurations(s: ClusterSnapshot, e: Expectations | undefined): CheckResult {
  const id = 'webhook-configurations';
  const reapply =
    're-apply the rendered manifests (kubectl apply --server-side -f cdk8s.out/); the manager only fills caBundle';
  const absent = [
    !s.mutating && `MutatingWebhookConfiguration ${Names.mutatingWebhookConfiguration}`,
    !s.validating && `ValidatingWebhookConfiguration ${Names.validatingWebhookConfiguration}`,
  ].filter(Boolean) as string[];
  if (absent.length > 0) {
    return {
      id,
      status: 'fail',
      message: `${absent.join(' and ')} ${absent.length > 1 ? 'do' : 'does'} not exist: nothing is injected or validated`,
      fix: reapply,
    };
  }
  const entries = webhookEntries(s);
  const problems: string[] = [];
  const servicePorts = new Set((s.webhookService?.spec?.ports ?? []).map((p) => p.port));
  for (const w of entries) {
    const svc = w.clientConfig?.service;
    if (!svc) {
      problems.push(
        `${w.name} points at ${w.clientConfig?.url ? `URL ${w.clientConfig.url}` : 'nothing'}, not Service ${s.namespace}/${Names.webhookService}`,
      );
    } else if (svc.name !== Names.webhookService || svc.namespace !== s.namespace) {
      problems.push(
        `${w.name} points at Service ${svc.namespace}/${svc.name}, not ${s.namespace}/${Names.webhookService}`,
      );
    } else if (servicePorts.size > 0 && !servicePorts.has(svc.port ?? Ports.webhookService)) {
      problems.push(
        `${w.name} dials port ${svc.port ?? Ports.webhookService}, which Service ${Names.webhookService} does not expose (${[...servicePorts].join(', ')})`,
      );
    }
  }
  let missing: ExpectedWebhook[] = [];
  if (e) {
    const live = new Map(entries.map((w) => [key(w), w]));
    const expected = new Map(e.webhooks.map((w) => [key(w), w]));
    missing = e.webhooks.filter((w) => !live.has(key(w)));
    for (const w of e.webhooks) {
      const got = live.get(key(w))?.clientConfig?.service?.path;
      if (live.has(key(w)) && got !== w.path)
        problems.push(`${w.name} calls path ${got ?? '(none)'}, but the manager serves it on ${w.path}`);
    }
    const extra = entries.filter((w) => !expected.has(key(w)));
    if (extra.length > 0) {
      problems.push(
        `${extra.length} entr${extra.length === 1 ? 'y is' : 'ies are'} not served by this ${e.flavour} manager (calls fail): ${list(extra.map((w) => `${w.kind} ${w.name} ${w.clientConfig?.service?.path ?? ''}`.trim()))}`,
      );
    }
    if (e.flavour === 'upstream') problems.push(...templateProblems(s, e));
  }
  if (missing.length > 0) {
    problems.unshift(
      `${missing.length} webhook${missing.length === 1 ? ' is' : 's are'} missing: ${list(missing.map((w) => `${w.type} ${w.name} (${w.path})`))}`,
    );
  }
  if (problems.length > 0) {
    return {
      id,
      status: 'fail',
      message: problems[0] + (problems.length > 1 ? ` (+${problems.length - 1} more problems)` : ''),
      fix: reapply,
      details: problems,
    };
  }
  return {
    id,
    status: 'pass',
    message: `${entries.length} entries point at Service ${Names.webhookService}${e ? `; names and paths match what the ${e.flavour} manager serves` : ''}`,
  };
}

/** Upstream rebuilds its configurations from the `template` annotation: a stale one comes back on restart. */
function templateProblems(s: ClusterSnapshot, e: Expectations): string[] {
  const out: string[] = [];
  for (const [kind, config] of [
    ['mutating', s.mutating],
    ['validating', s.validating],
  ] as const) {
    const raw = config?.metadata?.annotations?.[Labels.webhookTemplate];
    if (raw === undefined) continue;
    let template: Array<{ name?: string; clientConfig?: { service?: { path?: string } } }>;
    try {
      template = JSON.parse(raw) as typeof template;
    } catch {
      out.push(`the ${kind} configuration's template annotation is not JSON: the manager cannot rebuild from it`);
      continue;
    }
    const got = new Set(template.map((t) => `${t.name} ${t.clientConfig?.service?.path}`));
    const want = e.webhooks.filter((w) => w.type === kind).map((w) => `${w.name} ${w.path}`);
    const stale = [...want.filter((w) => !got.has(w)), ...[...got].filter((g) => !want.includes(g))];
    if (stale.length > 0)
      out.push(
        `the ${kind} configuration's template annotation is stale (the manager rewrites the entries from it on restart): ${list(stale, 4)}`,
      );
  }
  return out;
}

function interceptsPods(w: Entry): boolean {
  return (w.rules ?? []).some(
    (r) =>
      (r.apiGroups ?? []).some((g) => g === '' || g === '*') &&
      (r.resources ?? []).some((x) => x === 'pods' || x === '*' || x.startsWith('pods/') || x === '*/*'),
  );
}

export function checkNamespaceExclusion(s: ClusterSnapshot): CheckResult {
  const id = 'namespace-exclusion';
  const podWebhooks = webhookEntries(s).filter(interceptsPods);
  if (podWebhooks.length === 0) return { id, status: 'skip', message: 'no webhook intercepts pods' };
  const protectedNs = ['kube-system', s.namespace];
  const caught: string[] = [];
  for (const ns of protectedNs) {
    const object = s.namespaces.find((n) => n.metadata?.name === ns);
    // The API server labels every namespace with its name (1.21+); judge an unread one by that alone.
    const labels = object?.metadata?.labels ?? { [Labels.namespaceName]: ns };
    for (const w of podWebhooks.filter(
      (x) => matchesSelector(x.namespaceSelector ?? {}, labels) /* absent: every namespace, as the API defaults it */,
    ))
      caught.push(`${w.name} intercepts pods in ${ns}`);
  }
  if (caught.length > 0) {
    return {
      id,
      status: 'fail',
      message: `${list(caught, 4)}: the manager cannot start its own pods while its webhook is down (deadlock)`,
      fix: `exclude both namespaces by the immutable label: namespaceSelector ${Labels.namespaceName} NotIn [kube-system, ${s.namespace}] (the default of KruiseManager's webhooks.podExcludedNamespaces), and re-apply`,
      details: caught,
    };
  }
  return {
    id,
    status: 'pass',
    message: `${podWebhooks.length} pod webhook${podWebhooks.length === 1 ? ' skips' : 's skip'} kube-system and ${s.namespace}`,
  };
}
