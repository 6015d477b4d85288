/** Nodes: zone labels, how the replicas are spread, and whether a rollout's surge pods fit. */
import type {
  V1Deployment,
  V1Node,
  V1NodeSelector,
  V1NodeSelectorRequirement,
  V1Pod,
  V1Taint,
  V1Toleration,
} from '@kubernetes/client-node';
import type { CheckResult, ClusterSnapshot } from '../model.js';
import { matchesSelector } from '../../contract/selector.js';
import { list, managerPods, podsOf } from './common.js';

export const ZONE_LABEL = 'topology.kubernetes.io/zone';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** The topology key the manager spreads over (its first non-hostname spread constraint). */
function spreadKey(s: ClusterSnapshot): { key: string; configured: boolean } {
  for (const d of s.deployments) {
    const c = (d.spec?.template?.spec?.topologySpreadConstraints ?? []).find((t) => t.topologyKey !== HOSTNAME_LABEL);
    if (c) return { key: c.topologyKey, configured: true };
  }
  return { key: ZONE_LABEL, configured: false };
}

/** Nodes a manager pod may be scheduled to: Ready, schedulable, selected, taints tolerated. */
export function eligibleNodes(s: ClusterSnapshot, d: V1Deployment | undefined = s.deployments[0]): V1Node[] {
  const pod = d?.spec?.template?.spec;
  return (s.nodes ?? []).filter((n) => {
    if (n.spec?.unschedulable) return false;
    if (!(n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')) return false;
    if (!matchesSelector({ matchLabels: pod?.nodeSelector }, n.metadata?.labels)) return false;
    if (!matchesRequiredAffinity(pod?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution, n))
      return false;
    return (n.spec?.taints ?? [])
      .filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute')
      .every((t) => (pod?.tolerations ?? []).some((tol) => tolerates(tol, t)));
  });
}

/**
 * The scheduler's required node affinity: any term matches (OR); within a term every label
 * expression (as a label selector's, plus Gt and Lt on integers) and every field expression
 * (`metadata.name` only, as the API allows) must hold. No terms selects no node.
 */
function matchesRequiredAffinity(required: V1NodeSelector | undefined, node: V1Node): boolean {
  if (!required) return true;
  const labels = node.metadata?.labels ?? {};
  const holds = (e: V1NodeSelectorRequirement, value: string | undefined): boolean => {
    if (e.operator === 'Gt' || e.operator === 'Lt') {
      const [have, bound] = [Number(value), Number(e.values?.[0])];
      if (value === undefined || !Number.isInteger(have) || !Number.isInteger(bound)) return false;
      return e.operator === 'Gt' ? have > bound : have < bound;
    }
    const present = value !== undefined;
    return matchesSelector({ matchExpressions: [{ ...e, key: 'v' }] }, present ? { v: value } : {});
  };
  return required.nodeSelectorTerms.some(
    (t) =>
      ((t.matchExpressions ?? []).length > 0 || (t.matchFields ?? []).length > 0) &&
      (t.matchExpressions ?? []).every((e) => holds(e, labels[e.key])) &&
      (t.matchFields ?? []).every((e) => e.key === 'metadata.name' && holds(e, node.metadata?.name)),
  );
}

function tolerates(tol: V1Toleration, taint: V1Taint): boolean {
  if (tol.effect && tol.effect !== taint.effect) return false;
  if (tol.operator === 'Exists') return !tol.key || tol.key === taint.key;
  return tol.key === taint.key && (tol.value ?? '') === (taint.value ?? '');
}

const nodeFix = `set the label on every node (kubectl label node <node> ${ZONE_LABEL}=<zone>); on bare metal use racks or rooms as zones, or spread by another label (ZoneSpread.preferred({ topologyKey }))`;

export function checkZoneLabels(s: ClusterSnapshot): CheckResult {
  const id = 'zone-labels';
  if (!s.nodes)
    return {
      id,
      status: 'skip',
      message: `cannot list nodes (${s.readErrors.find((e) => e.startsWith('nodes')) ?? 'not read'})`,
    };
  const { key, configured } = spreadKey(s);
  const nodes = eligibleNodes(s);
  if (nodes.length === 0)
    return {
      id,
      status: 'fail',
      message: 'no Ready, schedulable node can run a manager pod (node selector, taints)',
      fix: 'add nodes, or adjust the nodeSelector and tolerations of the manager',
    };
  const unlabelled = nodes.filter((n) => !n.metadata?.labels?.[key]).map((n) => n.metadata!.name!);
  const zones = new Set(nodes.map((n) => n.metadata?.labels?.[key]).filter(Boolean));
  if (unlabelled.length > 0) {
    return {
      id,
      status: configured ? 'fail' : 'warn',
      message: `${unlabelled.length} of ${nodes.length} nodes have no ${key} label (${list(unlabelled, 4)}): ${configured ? 'the zone spread silently treats them as no zone, so replicas can share a failure domain' : 'replicas cannot be spread over zones'}`,
      fix: nodeFix,
      details: unlabelled,
    };
  }
  return {
    id,
    status: 'pass',
    message: `all ${nodes.length} eligible nodes carry ${key} (${zones.size} zone${zones.size === 1 ? '' : 's'}: ${list([...zones] as string[], 4)})`,
  };
}

export function checkSpread(s: ClusterSnapshot): CheckResult {
  const id = 'replica-spread';
  if (!s.nodes) return { id, status: 'skip', message: 'cannot list nodes' };
  if (s.deployments.length === 0) return { id, status: 'skip', message: 'no manager Deployment' };
  const { key } = spreadKey(s);
  const byName = new Map((s.nodes ?? []).map((n) => [n.metadata!.name!, n]));
  const problems: string[] = [];
  const facts: string[] = [];
  for (const d of s.deployments) {
    const pods = podsOf(s, d).filter((p) => p.spec?.nodeName);
    const nodes = pods.map((p) => p.spec!.nodeName!);
    const shared = nodes.filter((n, i) => nodes.indexOf(n) !== i);
    if (shared.length > 0)
      problems.push(
        `${d.metadata!.name}: ${pods.length} pods on ${new Set(nodes).size} nodes (${[...new Set(shared)].join(', ')} runs several): one node failure takes them together`,
      );
    const zoneOf = (p: V1Pod) => byName.get(p.spec!.nodeName!)?.metadata?.labels?.[key];
    if (pods.some((p) => !zoneOf(p))) {
      facts.push(
        `${d.metadata!.name}: ${pods.length} pods on ${new Set(nodes).size} nodes; zones unknown (see zone-labels)`,
      );
      continue;
    }
    const have = new Set(pods.map(zoneOf));
    const available = new Set(
      eligibleNodes(s, d)
        .map((n) => n.metadata?.labels?.[key])
        .filter(Boolean),
    );
    const wanted = Math.min(pods.length, available.size);
    if (have.size < wanted)
      problems.push(
        `${d.metadata!.name}: ${pods.length} pods in ${have.size} zone${have.size === 1 ? '' : 's'} (${[...have].join(', ')}) although ${available.size} zones have nodes: one zone outage takes them together`,
      );
    else
      facts.push(
        `${d.metadata!.name}: ${pods.length} pods on ${new Set(nodes).size} nodes in ${have.size} zone${have.size === 1 ? '' : 's'}`,
      );
  }
  if (problems.length > 0) {
    return {
      id,
      status: 'fail',
      message: problems.join('; '),
      fix: `delete one of the co-located pods so the scheduler places it again (kubectl -n ${s.namespace} delete pod <pod>); to enforce the spread use ZoneSpread.required() and keep the required hostname anti-affinity`,
      details: [...problems, ...facts],
    };
  }
  return { id, status: 'pass', message: facts.join('; ') || 'no scheduled manager pods' };
}

function surgePods(d: V1Deployment): number {
  if (d.spec?.strategy?.type === 'Recreate') return 0;
  const replicas = d.spec?.replicas ?? 1;
  const raw = d.spec?.strategy?.rollingUpdate?.maxSurge ?? '25%';
  if (typeof raw === 'number') return raw;
  const m = /^(\d+)%$/.exec(String(raw));
  return m ? Math.ceil((replicas * Number(m[1])) / 100) : Number(raw) || 0;
}

function hostPorts(pod: V1Pod): number[] {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  return containers.flatMap((c) =>
    (c.ports ?? []).flatMap((p) =>
      pod.spec?.hostNetwork ? [p.hostPort ?? p.containerPort] : p.hostPort ? [p.hostPort] : [],
    ),
  );
}

export function checkRolloutCapacity(s: ClusterSnapshot): CheckResult {
  const id = 'rollout-capacity';
  if (!s.nodes) return { id, status: 'skip', message: 'cannot list nodes' };
  if (s.deployments.length === 0) return { id, status: 'skip', message: 'no manager Deployment' };
  const groups = portSharingGroups(s.deployments);
  const results = groups.map((g) => groupCapacity(s, g));
  const needed = results.reduce((n, r) => n + r.needed, 0);
  if (needed === 0) return { id, status: 'pass', message: 'no surge pods (Recreate or maxSurge 0)' };
  const named = (r: GroupCapacity) => (groups.length > 1 ? `${r.names.join(', ')}: ${r.text}` : r.text);
  const short = results.filter((r) => r.free.length < r.needed);
  if (short.length > 0) {
    return {
      id,
      status: 'fail',
      message: `a rollout cannot complete: ${short.map(named).join('; ')}; the surge pods stay Pending and the rollout stalls`,
      fix: 'reduce the surge (KruiseManager rollout: Rollout.surge(1)), add nodes, or free the ports on more nodes',
      details: short.flatMap((r) => [...r.occupied].map(([n, why]) => `${n}: ${why.join('; ')}`)),
    };
  }
  return { id, status: 'pass', message: results.map(named).join('; ') };
}

/**
 * Deployments whose pods declare a common host port compete for the same free nodes during a
 * rollout (one apply rolls them all at once); the others do not (the split topology gives each
 * role its own ports). Pods of one Deployment always repel each other (hostname anti-affinity).
 */
function portSharingGroups(deployments: V1Deployment[]): { deployment: V1Deployment; ports: Set<number> }[][] {
  const groups: { deployment: V1Deployment; ports: Set<number> }[][] = [];
  for (const d of deployments) {
    const entry = { deployment: d, ports: new Set(hostPorts({ spec: d.spec!.template!.spec } as V1Pod)) };
    const joined = groups.filter((g) => g.some((e) => [...e.ports].some((p) => entry.ports.has(p))));
    const merged = [...joined.flat(), entry];
    groups.splice(0, groups.length, ...groups.filter((g) => !joined.includes(g)), merged);
  }
  return groups;
}

interface GroupCapacity {
  readonly names: string[];
  readonly needed: number;
  readonly free: string[];
  readonly occupied: Map<string, string[]>;
  readonly text: string;
}

function groupCapacity(s: ClusterSnapshot, group: { deployment: V1Deployment; ports: Set<number> }[]): GroupCapacity {
  const ports = new Set(group.flatMap((e) => [...e.ports]));
  const hostNetwork = group.some((e) => e.deployment.spec?.template?.spec?.hostNetwork);
  const occupied = new Map<string, string[]>(); // node -> why it cannot take a surge pod
  const block = (node: string, why: string) => occupied.set(node, [...(occupied.get(node) ?? []), why]);
  const own = new Set<string>();
  for (const e of group)
    for (const p of podsOf(s, e.deployment)) {
      own.add(p.metadata!.name!);
      if (p.spec?.nodeName) block(p.spec.nodeName, `manager pod ${p.metadata!.name}`);
    }
  for (const p of [...managerPods(s), ...s.hostPortPods]) {
    if (!p.spec?.nodeName || own.has(p.metadata!.name!) || p.metadata?.deletionTimestamp) continue;
    own.add(p.metadata!.name!); // listed once even when it is both a manager pod and a host-port pod
    const clash = hostPorts(p).filter((x) => ports.has(x));
    if (clash.length > 0)
      block(p.spec.nodeName, `${p.metadata!.namespace}/${p.metadata!.name} holds port ${clash.join(', ')}`);
  }
  const needed = group.reduce((n, e) => n + surgePods(e.deployment), 0);
  const free = eligibleNodes(s, group[0].deployment)
    .filter((n) => !occupied.has(n.metadata!.name!))
    .map((n) => n.metadata!.name!);
  const text = `${needed} surge pod${needed === 1 ? '' : 's'} need a node without a manager pod${hostNetwork ? ` and with ports ${[...ports].join(', ')} free` : ''}; ${free.length} such node${free.length === 1 ? '' : 's'}${free.length ? ` (${list(free, 4)})` : ''}`;
  return { names: group.map((e) => e.deployment.metadata!.name!), needed, free, occupied, text };
}
