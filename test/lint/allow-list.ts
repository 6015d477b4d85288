/**
 * The linter findings this project keeps on purpose: each a deliberate trade-off, with the
 * objects it applies to and the reason. Everything else kube-score and checkov report on an
 * example fails `test/lint/linters.test.ts`, and so does an entry here that no longer matches
 * any finding. The README's linter section is written from this list.
 */
import { Finding } from './linters.js';

export interface Allowance {
  /** `kube-score:<check id>` or `checkov:<check id>`. */
  readonly checks: readonly string[];
  /** `Kind/name` of each object the trade-off covers. */
  readonly objects: readonly string[];
  /** Why the finding stays, and what a user who decides otherwise can do. */
  readonly reason: string;
}

const MANAGERS = ['Deployment/kruise-controller-manager', 'Deployment/kruise-webhook', 'Deployment/kruise-controllers'];
const DAEMON = 'DaemonSet/kruise-daemon';
const GUARD = 'Job/kruise-uninstall-guard';

export const ALLOW_LIST: readonly Allowance[] = [
  {
    checks: ['checkov:CKV_K8S_19'],
    objects: [...MANAGERS, DAEMON],
    reason:
      "Host network. The manager serves admission from the node's network so that pod creation never depends on the CNI " +
      '(upstream issues #908, #1958), with dnsPolicy ClusterFirstWithHostNet; `hostNetwork: false` moves it to the pod network. ' +
      "kruise-daemon is upstream's node agent and runs on the node's network like upstream's.",
  },
  {
    checks: ['kube-score:pod-networkpolicy', 'checkov:CKV2_K8S_6'],
    objects: [...MANAGERS, DAEMON, GUARD],
    reason:
      'No NetworkPolicy by default. Most CNIs do not enforce NetworkPolicy on host-network pods, so a policy for the ' +
      'manager or the daemon would be rendered but not applied; `networkPolicy: true` (with `hostNetwork: false`) renders an ' +
      'ingress policy for the manager. No egress policy: these pods talk to the API server, whose address a manifest cannot ' +
      'know and which CNIs disagree on matching by ipBlock. The uninstall guard listens on nothing.',
  },
  {
    checks: ['kube-score:container-security-context-user-group-id', 'checkov:CKV_K8S_23', 'checkov:CKV_K8S_40'],
    objects: [DAEMON],
    reason:
      "kruise-daemon runs as root: it talks to the container runtime's socket, which is owned by root on the node. " +
      'It keeps no capabilities (drop ALL), a read-only root filesystem, no privilege escalation, RuntimeDefault seccomp, ' +
      'and mounts the host directory read-only.',
  },
  {
    checks: ['kube-score:pod-probes-identical'],
    objects: [DAEMON],
    reason:
      'kruise-daemon serves one health endpoint (/healthz, failing until its informers sync), so readiness and liveness ' +
      'probe the same path, with different timing: readiness paces the DaemonSet rollout (maxUnavailable 10%, ' +
      'minReadySeconds 3), liveness waits 60 s and three failures. No Service selects the daemon, so readiness never ' +
      'takes it out of one (the cascade kube-score warns about).',
  },
  {
    checks: ['kube-score:pod-probes-identical'],
    objects: ['Deployment/kruise-controller-manager'],
    reason:
      'The upstream image registers no /healthz check, and a TCP liveness probe passes for a frozen process (the ' +
      "[ha-drills] hang drill: the SIGSTOPped replica was never restarted), so liveness probes upstream's /readyz, " +
      'which the process answers itself (webhook controller initialized, webhook server answering over TLS) without the ' +
      'API server once started. Timing differs: readiness every 5 s takes a replica out of the webhook Service, liveness ' +
      'every 10 s (5 s timeout) restarts it only after three failures. The runtime image has separate /healthz and /readyz.',
  },
  {
    checks: ['kube-score:container-image-pull-policy', 'checkov:CKV_K8S_15'],
    objects: [...MANAGERS, DAEMON, GUARD],
    reason:
      'imagePullPolicy IfNotPresent on every container, not Always. The images are pinned (a release tag, or a ' +
      'content-addressed tag for the runtime), and with Always every restart of the admission webhook, which pod creation ' +
      'waits on, would depend on the registry being reachable.',
  },
  {
    checks: ['checkov:CKV_K8S_43'],
    objects: [...MANAGERS, DAEMON, GUARD],
    reason:
      'Images by tag, not digest. Upstream publishes and documents release tags, and mirrors (offline-registry) keep ' +
      "the tags; the runtime image's tag is a hash of its content. `ManagerImage.runtime('...@sha256:...')` takes a digest.",
  },
  {
    checks: ['checkov:CKV_K8S_38'],
    objects: [...MANAGERS, DAEMON, GUARD],
    reason:
      'Service account tokens are mounted only into these pods, and each is an API client: the manager watches and ' +
      "writes the cluster's objects, the daemon its node's, the guard lists Kruise workloads. Their ServiceAccounts set " +
      'automountServiceAccountToken: false.',
  },
  {
    checks: ['checkov:CKV2_K8S_5'],
    objects: ['RoleBinding/kruise-webhook-rolebinding', 'RoleBinding/kruise-daemon-secret-rolebinding'],
    reason:
      'Secrets in one namespace each. The manager creates, watches and rotates its serving certificate Secret in its ' +
      'own namespace; the daemon reads the image pull Secrets that ImagePullJobs copy into the dedicated ' +
      'kruise-daemon-config namespace. Neither can read Secrets anywhere else.',
  },
  {
    checks: ['checkov:CKV_K8S_155'],
    objects: ['ClusterRole/kruise-certs-role'],
    reason:
      'With self-managed certificates the manager patches the caBundle into its own mutating and validating webhook ' +
      "configurations (and conversion CRDs), as upstream's does; the role names them by resourceNames.",
  },
];

/** The allowance covering a finding, if any. */
export function allowanceFor(finding: Finding): Allowance | undefined {
  const check = `${finding.linter}:${finding.check}`;
  const object = `${finding.kind}/${finding.name}`;
  return ALLOW_LIST.find((a) => a.checks.includes(check) && a.objects.includes(object));
}
