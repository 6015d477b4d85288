/** Replicas, the webhook Service's endpoints, the leader Lease and the disruption budget. */
import { Names } from '../../contract.js';
import type { Expectations } from '../expectations.js';
import type { CheckResult, ClusterSnapshot } from '../model.js';
import { matchesSelector } from '../../contract/selector.js';
import { entriesOnService, epochMs, human, isReady, list, podsOf } from './common.js';

const selector = 'control-plane=controller-manager';

export function checkReplicas(s: ClusterSnapshot, e: Expectations | undefined): CheckResult {
  const id = 'manager-replicas';
  if (!e) {
    return {
      id,
      status: 'fail',
      message: `no manager Deployment (label ${selector}) in namespace ${s.namespace}`,
      fix: `install kruise-manager into ${s.namespace}, or pass --namespace with the namespace it runs in (kubectl get deploy -A -l ${selector})`,
    };
  }
  const lines = s.deployments.map((d) => {
    const desired = d.spec?.replicas ?? 1;
    const pods = podsOf(s, d);
    const ready = pods.filter(isReady).length;
    return {
      name: d.metadata!.name!,
      desired,
      ready,
      notReady: pods.filter((p) => !isReady(p)).map((p) => p.metadata!.name!),
    };
  });
  const text = lines.map((l) => `${l.name} ${l.ready}/${l.desired} ready`).join(', ');
  const details = [
    `flavour: ${e.flavour} (${e.image})${e.release ? `, judged against upstream ${e.release}'s definitions` : ''}`,
    ...(e.versionNote ? [e.versionNote] : []),
    ...lines.flatMap((l) => (l.notReady.length ? [`${l.name}: not ready: ${l.notReady.join(', ')}`] : [])),
  ];
  const down = lines.filter((l) => l.ready < Math.min(2, l.desired) || l.ready === 0);
  if (down.length > 0) {
    return {
      id,
      status: 'fail',
      message: `${text}: fewer than ${Math.min(2, down[0].desired)} ready replicas, so one more failure stops admission`,
      fix: `find why the pods are not ready: kubectl -n ${s.namespace} describe pods -l ${selector}; kubectl -n ${s.namespace} logs -l ${selector} --tail=50`,
      details,
    };
  }
  const single = lines.filter((l) => l.desired < 2);
  if (single.length > 0) {
    return {
      id,
      status: 'warn',
      message: `${text}: ${single.map((l) => l.name).join(', ')} has fewer than 2 replicas (no high availability)`,
      fix: 'run at least 2 replicas (KruiseManager replicas: 2 or more)',
      details,
    };
  }
  const partial = lines.filter((l) => l.ready < l.desired);
  if (partial.length > 0) {
    return {
      id,
      status: 'warn',
      message: `${text}: not every replica is ready`,
      fix: `kubectl -n ${s.namespace} describe pods -l ${selector}`,
      details,
    };
  }
  return { id, status: 'pass', message: `${text} (${e.flavour} flavour)`, details };
}

export function checkEndpoints(s: ClusterSnapshot): CheckResult {
  const id = 'webhook-endpoints';
  const svc = Names.webhookService;
  if (!s.webhookService) {
    return {
      id,
      status: 'fail',
      message: `Service ${s.namespace}/${svc} does not exist: every webhook call fails`,
      fix: `re-apply the rendered manifests (the Service ${svc} is part of KruiseManager)`,
    };
  }
  const ready = s.endpointSlices.flatMap((slice) =>
    (slice.endpoints ?? []).filter((ep) => ep.conditions?.ready !== false).flatMap((ep) => ep.addresses),
  );
  const closed = entriesOnService(s, svc)
    .filter((w) => (w.failurePolicy ?? 'Fail') === 'Fail')
    .map((w) => w.name);
  const open = entriesOnService(s, svc)
    .filter((w) => w.failurePolicy === 'Ignore')
    .map((w) => w.name);
  if (ready.length === 0) {
    return {
      id,
      status: 'fail',
      message: `Service ${svc} has no ready endpoint: ${closed.length} webhooks fail closed now (${list(closed, 4)})${closed.some((n) => n === 'vpod.kb.io' || n === 'mpod.kb.io') ? ', so pod creation fails cluster-wide ("no endpoints available for service")' : ''}; ${open.length} are skipped silently`,
      fix: `get a manager replica ready (kubectl -n ${s.namespace} get pods -l ${selector}; logs of the pods). In an emergency, let writes through by deleting the webhook configurations (kubectl delete mutatingwebhookconfiguration ${Names.mutatingWebhookConfiguration}; kubectl delete validatingwebhookconfiguration ${Names.validatingWebhookConfiguration}) and re-apply them once a replica is ready`,
      details: [`fail closed: ${closed.join(', ')}`, `fail open: ${open.join(', ') || 'none'}`],
    };
  }
  return {
    id,
    status: 'pass',
    message: `Service ${svc} has ${ready.length} ready endpoint${ready.length === 1 ? '' : 's'}; ${closed.length} webhooks would fail closed without one`,
    details: [`fail closed: ${closed.join(', ')}`],
  };
}

/** Lease holder identities are `<pod name>_<random>` in both flavours. */
function holderPod(holder: string): string {
  const i = holder.lastIndexOf('_');
  return i > 0 ? holder.slice(0, i) : holder;
}

const FLAPPING_CHANGES = 3;
const RECENT_MS = 60 * 60_000;

export function checkLeader(s: ClusterSnapshot, e: Expectations | undefined): CheckResult {
  const id = 'leader';
  if (!e) return { id, status: 'skip', message: 'no manager Deployment, so no Lease to judge' };
  const where = `Lease ${e.lease.namespace}/${e.lease.name}`;
  const lease = s.lease;
  if (!lease) {
    return {
      id,
      status: 'fail',
      message: `${where} does not exist: no replica has ever led, so no controller runs`,
      fix: `check that the manager runs with leader election and may write Leases in ${e.lease.namespace} (see the rbac check); kubectl -n ${s.namespace} logs -l ${selector}`,
    };
  }
  const holder = lease.spec?.holderIdentity ?? '';
  const duration = (lease.spec?.leaseDurationSeconds ?? 15) * 1000;
  const renewed = epochMs(lease.spec?.renewTime as Date | string | undefined);
  const acquired = epochMs(lease.spec?.acquireTime as Date | string | undefined);
  const transitions = lease.spec?.leaseTransitions ?? 0;
  const recentEvents = s.leaderEvents.filter((ev) => {
    const t = epochMs((ev.lastTimestamp ?? ev.eventTime ?? ev.firstTimestamp) as Date | string | undefined);
    return t !== undefined && s.now - t < RECENT_MS;
  });
  const changes = recentEvents.reduce((n, ev) => n + (ev.count ?? 1), 0);
  const details = [
    `holder: ${holder || '(none)'}`,
    `lease duration: ${duration / 1000}s`,
    `transitions: ${transitions}`,
    ...(acquired !== undefined ? [`acquired ${human(s.now - acquired)} ago`] : []),
    ...(s.leaderEvents.length > 0 ? [`leader changes in the last hour (events): ${changes}`] : []),
  ];
  if (!holder) {
    return {
      id,
      status: 'fail',
      message: `${where} has no holder: no replica leads, so no controller runs`,
      fix: `a standby takes it within a retry period; if none does, every replica is down or cannot write the Lease: kubectl -n ${s.namespace} logs -l ${selector}`,
      details,
    };
  }
  const age = renewed === undefined ? Infinity : s.now - renewed;
  const pod = holderPod(holder);
  if (age > duration) {
    const gone = !s.pods.some((p) => p.metadata?.name === pod);
    return {
      id,
      status: 'fail',
      message: `leader ${holder} stopped renewing ${renewed === undefined ? 'long' : human(age)} ago (lease duration ${duration / 1000}s)${gone ? `, its pod ${pod} is gone,` : ''} and no standby took over: no controller runs`,
      fix: `${gone ? '' : `look at the leader pod: kubectl -n ${s.namespace} logs ${pod}; `}a standby takes over once the Lease expires — if none does, every replica is down, frozen or cannot reach the API server (kubectl -n ${s.namespace} get pods -l ${selector}); check the clocks if the time above looks wrong`,
      details,
    };
  }
  if (changes >= FLAPPING_CHANGES) {
    return {
      id,
      status: 'warn',
      message: `leader ${holder} (renewed ${human(age)} ago), but leadership changed ${changes} times in the last hour`,
      fix: `leaders that lose their Lease often are starved of CPU or cannot reach the API server in time: check restarts, CPU throttling and API-server latency, or use LeaseTiming.tolerant()`,
      details,
    };
  }
  return {
    id,
    status: 'pass',
    message: `leader ${holder}, renewed ${human(age)} ago (lease ${duration / 1000}s), ${transitions} transitions`,
    details,
  };
}

export function checkDisruptionBudget(s: ClusterSnapshot): CheckResult {
  const id = 'disruption-budget';
  if (s.deployments.length === 0) return { id, status: 'skip', message: 'no manager Deployment' };
  const results = s.deployments.map((d) => {
    const labels = d.spec?.template?.metadata?.labels;
    const pdb = s.pdbs.find((p) => p.spec?.selector && matchesSelector(p.spec.selector, labels));
    return { d: d.metadata!.name!, pdb };
  });
  const missing = results.filter((r) => !r.pdb).map((r) => r.d);
  if (missing.length > 0) {
    return {
      id,
      status: 'warn',
      message: `no PodDisruptionBudget covers ${missing.join(', ')}: a node drain may evict every replica at once`,
      fix: 'keep the default disruptionBudget (DisruptionBudget.maxUnavailable(1)) and re-apply',
    };
  }
  const blocked = results.filter(
    (r) => r.pdb!.status?.observedGeneration !== undefined && (r.pdb!.status.disruptionsAllowed ?? 0) < 1,
  );
  const stale = results.filter(
    (r) =>
      r.pdb!.status?.observedGeneration === undefined ||
      r.pdb!.status.observedGeneration < (r.pdb!.metadata?.generation ?? 0),
  );
  const text = results
    .map((r) => `${r.pdb!.metadata!.name} allows ${r.pdb!.status?.disruptionsAllowed ?? 0}`)
    .join(', ');
  if (blocked.length > 0) {
    return {
      id,
      status: 'fail',
      message: `${text}: ${blocked.map((r) => r.pdb!.metadata!.name).join(', ')} allows no disruption (${blocked.map((r) => `${r.pdb!.status?.currentHealthy ?? 0} healthy, ${r.pdb!.status?.desiredHealthy ?? 0} needed`).join('; ')}), so node drains block`,
      fix: `get every replica ready first (see manager-replicas); a budget that can never allow a disruption (minAvailable equal to the replicas) must be loosened: DisruptionBudget.maxUnavailable(1)`,
    };
  }
  if (stale.length > 0) {
    return {
      id,
      status: 'warn',
      message: `${stale.map((r) => r.pdb!.metadata!.name).join(', ')}: status not computed yet (is kube-controller-manager's disruption controller running?)`,
      fix: 'wait a few seconds and run again; if it stays, check kube-controller-manager',
    };
  }
  return { id, status: 'pass', message: text };
}
