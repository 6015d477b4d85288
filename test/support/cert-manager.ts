/**
 * A real cert-manager for tests: its controller and cainjector (built from cert-manager's pinned
 * module by test/envtest/binaries/build.sh) as local processes on a cluster's API server, and its
 * CRDs from the same module. Runs as the kubeconfig's user, not under its chart's RBAC: the
 * permissions of cert-manager are not what the tests judge.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { resolveCertManager, type CertManagerBinaries } from '../envtest/binaries.js';

export interface RunningCertManager {
  readonly binaries: CertManagerBinaries;
  /** Its CRDs as applied (labels dropped: the module's manifests carry Helm template expressions there). */
  readonly crds: KubernetesObject[];
  /** Stops both processes (SIGTERM, then waits for them). */
  stop(): Promise<void>;
}

/** cert-manager's CRDs from its module, ready to apply. */
export function certManagerCrds(binaries: CertManagerBinaries): KubernetesObject[] {
  return readdirSync(binaries.crdsDir)
    .filter((f) => f.endsWith('.yaml'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(binaries.crdsDir, f), 'utf8')).map((d) => d.toJSON()))
    .filter((o): o is KubernetesObject => o?.kind === 'CustomResourceDefinition')
    .map((o) => ({ ...o, metadata: { name: o.metadata!.name } }));
}

/**
 * Builds (first use only) and starts cert-manager against `kubeconfig`; `apply` installs its CRDs
 * first. Cluster-scoped issuers keep their Secrets in `clusterResourceNamespace`. Logs go to
 * `<logDir>/cert-manager-{controller,cainjector}.log`.
 */
export async function startCertManager(options: {
  readonly kubeconfig: string;
  readonly clusterResourceNamespace: string;
  readonly logDir: string;
  readonly apply: (crds: KubernetesObject[]) => Promise<void>;
}): Promise<RunningCertManager> {
  const binaries = await resolveCertManager();
  const crds = certManagerCrds(binaries);
  await options.apply(crds);
  const children: ChildProcess[] = [];
  const start = (binary: string, name: string, args: string[]) => {
    const fd = openSync(join(options.logDir, `cert-manager-${name}.log`), 'a');
    try {
      children.push(
        spawn(binary, [`--kubeconfig=${options.kubeconfig}`, '--leader-elect=false', '--v=2', ...args], {
          stdio: ['ignore', fd, fd],
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        }),
      );
    } finally {
      closeSync(fd);
    }
  };
  start(binaries.controller, 'controller', [`--cluster-resource-namespace=${options.clusterResourceNamespace}`]);
  start(binaries.cainjector, 'cainjector', []);
  return {
    binaries,
    crds,
    stop: async () => {
      const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
      const exited = running.map((c) => new Promise((resolve) => c.once('exit', resolve)));
      for (const c of running) c.kill('SIGTERM');
      await Promise.all(exited);
    },
  };
}
