// What the envtest control plane runs with: its credentials on disk and the
// command-line flags of etcd and kube-apiserver. Kept apart from the process
// management in control-plane.ts so each flag's reason is easy to find.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCertificateAuthority, createServiceAccountKeys, issueCertificate, type KeyPairPem } from './pki.js';

export interface Ports {
  etcd: number;
  etcdPeer: number;
  secure: number;
}

/** File names inside the control plane's dir. */
export const FILES = {
  caCert: 'ca.crt',
  caKey: 'ca.key',
  servingCert: 'apiserver.crt',
  servingKey: 'apiserver.key',
  adminCert: 'admin.crt',
  adminKey: 'admin.key',
  saKey: 'sa.key',
  saPub: 'sa.pub',
} as const;

/** kube-apiserver's audit log (JSON lines, one event per line) and its policy, inside the dir. */
export const AUDIT_LOG = 'audit.log';
const AUDIT_POLICY = 'audit-policy.json';

/**
 * Every request at level Metadata (who, verb, resource, response code, admission annotations;
 * no bodies), so a test can prove e.g. that a user met no RBAC denial. RequestReceived is
 * omitted: each request still logs ResponseComplete (or ResponseStarted for watches).
 */
export function writeAuditPolicy(dir: string): void {
  writeFileSync(
    join(dir, AUDIT_POLICY),
    JSON.stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [{ level: 'Metadata' }],
    }),
  );
}

/** The names a kube-apiserver serving certificate covers: how in-cluster clients address it. */
export const API_SERVER_DNS_NAMES = [
  'localhost',
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
];

/** Writes a fresh CA, serving cert, admin (system:masters) client cert and service-account keys. */
export async function writePki(dir: string): Promise<{ caPem: string; admin: KeyPairPem }> {
  const ca = await createCertificateAuthority();
  const serving = await issueCertificate(ca, {
    commonName: 'kube-apiserver',
    usage: 'server',
    dnsNames: API_SERVER_DNS_NAMES,
    ipAddresses: ['127.0.0.1', '10.0.0.1'], // 10.0.0.1: the `kubernetes` Service's ClusterIP
  });
  const admin = await issueCertificate(ca, {
    commonName: 'envtest-admin',
    organizations: ['system:masters'],
    usage: 'client',
  });
  const sa = await createServiceAccountKeys();
  const content: Record<keyof typeof FILES, string> = {
    caCert: ca.certPem,
    caKey: ca.keyPem,
    servingCert: serving.certPem,
    servingKey: serving.keyPem,
    adminCert: admin.certPem,
    adminKey: admin.keyPem,
    saKey: sa.privatePem,
    saPub: sa.publicPem,
  };
  for (const [k, name] of Object.entries(FILES))
    writeFileSync(join(dir, name), content[k as keyof typeof FILES], { mode: 0o600 });
  return { caPem: ca.certPem, admin };
}

export function etcdFlags(dir: string, ports: Ports): string[] {
  const client = `http://127.0.0.1:${ports.etcd}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return [
    '--name=envtest',
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=envtest=${peer}`,
    '--unsafe-no-fsync=true', // throwaway data: skip fsync, which dominates etcd latency on CI disks
    '--log-level=warn',
  ];
}

export function apiServerFlags(dir: string, ports: Ports, extra: string[] = []): string[] {
  const f = (name: keyof typeof FILES) => join(dir, FILES[name]);
  return [
    `--etcd-servers=http://127.0.0.1:${ports.etcd}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${ports.secure}`,
    `--cert-dir=${join(dir, 'apiserver-certs')}`,
    `--tls-cert-file=${f('servingCert')}`,
    `--tls-private-key-file=${f('servingKey')}`,
    `--client-ca-file=${f('caCert')}`,
    '--authorization-mode=RBAC',
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${f('saPub')}`,
    `--service-account-signing-key-file=${f('saKey')}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    // Call webhooks/APIServices on their Service's endpoint addresses, not the ClusterIP
    // (nothing routes ClusterIPs here), so tests can run replicas on 127.0.0.x.
    '--enable-aggregator-routing=true',
    // No controller-manager creates the `default` ServiceAccount, so this plugin would reject every pod.
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    // On SIGTERM, end open watches within 2s instead of holding shutdown for the 60s request timeout.
    '--shutdown-watch-termination-grace-period=2s',
    // Audit log (see writeAuditPolicy); 1 GiB before rotation, i.e. never within a test run.
    `--audit-policy-file=${join(dir, AUDIT_POLICY)}`,
    `--audit-log-path=${join(dir, AUDIT_LOG)}`,
    '--audit-log-format=json',
    '--audit-log-mode=blocking',
    '--audit-log-maxsize=1024',
    ...extra, // last, so a repeated flag overrides the default above
  ];
}
