// Test-side view of the control plane that global-setup.ts started. Jest runs
// test files in other module registries (or worker processes) than global
// setup, so they reach it through a state file and a small HTTP control
// endpoint instead of the ControlPlane object.
import { readFileSync } from 'node:fs';
import type { ControlPlaneInfo, RestartMode } from './control-plane.js';
import { plainHttp } from './http.js';
import { issueCertificate, loadCertificateAuthority, renderKubeconfig, type KeyPairPem } from './pki.js';

/** Env var global-setup.ts sets to the state file's path. */
export const STATE_ENV = 'ENVTEST_STATE';

export interface EnvtestState extends ControlPlaneInfo {
  /** http://127.0.0.1:port of the control endpoint served by global setup. */
  controlUrl: string;
}

/** The running control plane; throws with a how-to if the test was not started by the integration project. */
export function envtest(): EnvtestState {
  const path = process.env[STATE_ENV];
  if (!path) {
    throw new Error(
      `envtest: ${STATE_ENV} is not set, so no control plane is running for this test. ` +
        'Run it through the Jest "integration" project (npm run test:integration), whose globalSetup is test/envtest/global-setup.ts.',
    );
  }
  return JSON.parse(readFileSync(path, 'utf8')) as EnvtestState;
}

/**
 * Restarts kube-apiserver (same etcd, port and certs), cutting every open watch;
 * resolves once it is ready again. See ControlPlane.restartApiServer for `mode`.
 */
export async function restartApiServer(mode: RestartMode = 'graceful', state = envtest()): Promise<void> {
  // Bounded by the API server's own stop (SIGKILL after 10s) plus start-up waits.
  const res = await plainHttp('POST', `${state.controlUrl}/restart-apiserver?mode=${mode}`, 300_000);
  if (res.status !== 200) throw new Error(`envtest: restarting kube-apiserver failed (${res.status}): ${res.body}`);
}

/**
 * A kubeconfig (text) authenticating as `user` in `groups` via a client cert
 * from the control plane's CA. Such a user has only what RBAC grants it.
 */
export async function kubeconfigForUser(user: string, groups: string[] = [], state = envtest()): Promise<string> {
  const ca = await loadCertificateAuthority(
    readFileSync(state.caCertPath, 'utf8'),
    readFileSync(state.caKeyPath, 'utf8'),
  );
  const cert = await issueCertificate(ca, { commonName: user, organizations: groups, usage: 'client' });
  return renderKubeconfig(state.server, ca.certPem, cert, user);
}

/**
 * A serving certificate from the control plane's CA, e.g. for a webhook the
 * API server calls as `<service>.<namespace>.svc`; `caPem` goes into caBundle.
 */
export async function servingCertificate(
  dnsNames: string[],
  ipAddresses: string[] = [],
  state = envtest(),
): Promise<KeyPairPem & { caPem: string }> {
  const ca = await loadCertificateAuthority(
    readFileSync(state.caCertPath, 'utf8'),
    readFileSync(state.caKeyPath, 'utf8'),
  );
  const cert = await issueCertificate(ca, {
    commonName: dnsNames[0] ?? ipAddresses[0] ?? 'envtest-server',
    dnsNames,
    ipAddresses,
    usage: 'server',
  });
  return { ...cert, caPem: ca.certPem };
}
