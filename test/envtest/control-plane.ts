// A real Kubernetes control plane for tests, like controller-runtime's envtest:
// etcd + kube-apiserver on 127.0.0.1, no kubelet or controller-manager (so
// nothing fills in Endpoints, runs pods or creates ServiceAccounts by itself).
import type { ChildProcess } from 'node:child_process';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { resolveBinaries, type Binaries } from './binaries.js';
import { apiServerFlags, AUDIT_LOG, etcdFlags, FILES, writeAuditPolicy, writePki, type Ports } from './config.js';
import { apiRequest, plainHttp } from './http.js';
import { renderKubeconfig } from './pki.js';
import {
  DIR_PREFIX,
  freePort,
  isRunning,
  killGroup,
  killOnExit,
  reapLeftovers,
  recordPids,
  spawnLogged,
  stopProcess,
  tail,
} from './process.js';

export type RestartMode = 'graceful' | 'kill';

export interface ControlPlaneOptions {
  /** Also write the admin kubeconfig here (it is always written to `<dir>/kubeconfig`). */
  kubeconfigPath?: string;
  extraApiServerArgs?: string[];
  /** Per wait (etcd healthy, API server ready); generous because CI machines have 2 cores. */
  readyTimeoutMs?: number;
  log?: (msg: string) => void;
}

/** Everything a test needs to connect; plain data so it can go into a state file. */
export interface ControlPlaneInfo {
  dir: string;
  server: string;
  kubeconfigPath: string;
  caCertPath: string;
  caKeyPath: string;
  adminCertPath: string;
  adminKeyPath: string;
  etcdUrl: string;
  /** What `kube-apiserver --version` says, e.g. `v1.36.3`. */
  kubernetesVersion: string;
  pinnedKubernetesVersion: string;
  kubeApiServerSource: string;
  /** The kube-apiserver binary that runs. */
  kubeApiServerPath: string;
  /** kube-apiserver's audit log: JSON lines, every request at level Metadata (see config.ts). */
  auditLogPath: string;
  /** The real upstream kruise-manager binary under test (binaries/build.sh) and its version, e.g. `v1.9.1`. */
  kruiseManager: string;
  kruiseVersion: string;
  /** Every kruise-manager binary built for this run, by release (see Binaries.kruiseManagers). */
  kruiseManagers: Record<string, string>;
}

export class ControlPlane {
  private etcd?: ChildProcess;
  private apiServer?: ChildProcess;
  private apiServerBin = '';
  private apiServerArgs: string[] = [];
  private current?: ControlPlaneInfo;
  private dir?: string;
  private unregister?: () => void;
  private readonly log: (msg: string) => void;

  constructor(private readonly opts: ControlPlaneOptions = {}) {
    this.log = opts.log ?? ((m) => process.stderr.write(`envtest: ${m}\n`));
  }

  get info(): ControlPlaneInfo {
    if (!this.current) throw new Error('envtest: ControlPlane.info read before start() completed');
    return this.current;
  }

  async start(): Promise<ControlPlaneInfo> {
    if (this.current) throw new Error('envtest: ControlPlane already started');
    reapLeftovers();
    const bins = await resolveBinaries();
    const dir = (this.dir = mkdtempSync(join(tmpdir(), DIR_PREFIX)));
    this.unregister = killOnExit(this);
    recordPids(dir, []);
    try {
      return await this.boot(dir, bins);
    } catch (e) {
      await this.stop();
      throw e;
    }
  }

  private async boot(dir: string, bins: Binaries): Promise<ControlPlaneInfo> {
    const { stdout } = await promisify(execFile)(bins.kubeApiServer, ['--version']);
    const ports: Ports = { etcd: await freePort(), etcdPeer: await freePort(), secure: await freePort() };
    const etcdUrl = `http://127.0.0.1:${ports.etcd}`;
    const f = (name: keyof typeof FILES) => join(dir, FILES[name]);
    const { caPem, admin } = await writePki(dir);
    writeAuditPolicy(dir);

    this.log(`starting etcd on ${etcdUrl}`);
    const etcdLog = join(dir, 'etcd.log');
    this.etcd = spawnLogged(bins.etcd, etcdFlags(dir, ports), etcdLog);
    recordPids(dir, [this.etcd]);
    await this.waitFor('etcd', this.etcd, etcdLog, async () =>
      (await plainHttp('GET', `${etcdUrl}/health`)).body.includes('"health":"true"'),
    );

    this.apiServerBin = bins.kubeApiServer;
    this.apiServerArgs = apiServerFlags(dir, ports, this.opts.extraApiServerArgs);
    this.current = {
      dir,
      etcdUrl,
      server: `https://127.0.0.1:${ports.secure}`,
      kubeconfigPath: join(dir, 'kubeconfig'),
      caCertPath: f('caCert'),
      caKeyPath: f('caKey'),
      adminCertPath: f('adminCert'),
      adminKeyPath: f('adminKey'),
      kubernetesVersion: stdout.trim().replace(/^Kubernetes /, ''),
      pinnedKubernetesVersion: bins.pinnedKubernetesVersion,
      kubeApiServerSource: bins.kubeApiServerSource,
      kubeApiServerPath: bins.kubeApiServer,
      auditLogPath: join(dir, AUDIT_LOG),
      kruiseManager: bins.kruiseManager,
      kruiseVersion: bins.kruiseVersion,
      kruiseManagers: bins.kruiseManagers,
    };
    await this.startApiServer();

    const kubeconfig = renderKubeconfig(this.current.server, caPem, admin, 'envtest-admin');
    for (const path of [this.current.kubeconfigPath, this.opts.kubeconfigPath]) {
      if (!path) continue;
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, kubeconfig, { mode: 0o600 });
    }
    return this.current;
  }

  private async startApiServer(): Promise<void> {
    const info = this.info;
    const log = join(info.dir, 'kube-apiserver.log');
    this.log(`starting kube-apiserver ${info.kubernetesVersion} on ${info.server}`);
    this.apiServer = spawnLogged(this.apiServerBin, this.apiServerArgs, log);
    recordPids(info.dir, [this.etcd, this.apiServer]);
    const get = async (path: string) => (await apiRequest(info, 'GET', path)).status === 200;
    await this.waitFor('kube-apiserver /readyz', this.apiServer, log, () => get('/readyz'));
    // /readyz does not cover these bootstrap writes, and tests depend on both existing.
    await this.waitFor(
      'default namespace and RBAC bootstrap',
      this.apiServer,
      log,
      async () =>
        (await get('/api/v1/namespaces/default')) &&
        (await get('/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin')),
    );
  }

  /**
   * Restarts only kube-apiserver (same etcd, port and certs), which cuts every
   * open watch. `graceful` ends watches cleanly as a rolling upgrade does;
   * `kill` (SIGKILL) drops connections mid-stream as a crash does. `downMs` keeps it down that
   * long before starting it again (an outage).
   */
  async restartApiServer(mode: RestartMode = 'graceful', downMs = 0): Promise<void> {
    if (!this.apiServer) throw new Error('envtest: restartApiServer() called before start()');
    await stopProcess(this.apiServer, mode === 'kill' ? 0 : 10_000);
    if (downMs > 0) await sleep(downMs);
    await this.startApiServer();
  }

  /** Graceful shutdown: SIGTERM, SIGKILL after a bound, then remove all scratch files. */
  async stop(): Promise<void> {
    for (const child of [this.apiServer, this.etcd]) if (child) await stopProcess(child);
    this.killNow();
  }

  /** Synchronous last resort for exit hooks, where nothing async can run any more. */
  killNow(): void {
    for (const child of [this.apiServer, this.etcd]) {
      if (child?.pid !== undefined && isRunning(child)) killGroup(child.pid, 'SIGKILL');
    }
    this.apiServer = this.etcd = undefined;
    if (this.dir) rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
    // A kubeconfig left behind would point at a dead server with a dead CA.
    if (this.opts.kubeconfigPath) rmSync(this.opts.kubeconfigPath, { force: true });
    this.dir = this.current = undefined;
    this.unregister?.();
  }

  private async waitFor(what: string, child: ChildProcess, log: string, probe: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + (this.opts.readyTimeoutMs ?? 120_000);
    let lastError = '';
    while (Date.now() < deadline) {
      if (!isRunning(child)) {
        throw new Error(
          `envtest: waiting for ${what}: process exited (${child.exitCode ?? child.signalCode}). ` +
            `Last lines of ${log}:\n${tail(log)}`,
        );
      }
      try {
        if (await probe()) return;
      } catch (e) {
        lastError = (e as Error).message;
      }
      await sleep(250);
    }
    throw new Error(
      `envtest: timed out waiting for ${what} (last error: ${lastError || 'none'}). Last lines of ${log}:\n${tail(log)}`,
    );
  }
}
