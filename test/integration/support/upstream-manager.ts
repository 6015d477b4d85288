/**
 * Runs the REAL upstream kruise-manager binary (built from upstream's pinned Go module by
 * test/envtest/binaries/build.sh) as local processes, each configured from the container of the
 * Deployment we SYNTHESIZE, adapted only where a process outside a pod must differ from a pod
 * (see {@link adaptContainer}, which records every adaptation it makes). Each replica
 * authenticates as the rendered ServiceAccount, so RBAC judges exactly what we render.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  CoordinationV1Api,
  type KubeConfig,
  type KubernetesObject,
  type V1Container,
  type V1Deployment,
  type V1Probe,
} from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { DefaultHaChart } from '../../../examples/default-ha.js';
import { UPSTREAM_VERSION } from '../../../lib/constructs/manager/image.js';
import { KruiseManager, ManagerImage } from '../../../lib/index.js';
import { freePort, killOnExit, tail } from '../../envtest/process.js';
import { envtest, kubeconfigForUser } from '../../envtest/state.js';
import { serviceAccountUser } from './audit.js';
import { until } from './ha.js';

/**
 * The default app (examples/default-ha.ts) as plain objects, synthesized in-process; with a
 * `version`, the same app on that upstream release (`image: ManagerImage.upstream({ version })`).
 */
export function synthesizeDefault(version?: string): KubernetesObject[] {
  return Testing.synth(defaultChart(version)) as KubernetesObject[];
}

function defaultChart(version?: string): { manager: KruiseManager } & Chart {
  if (version === undefined || version === UPSTREAM_VERSION) return new DefaultHaChart(Testing.app(), 'kruise');
  const chart = new Chart(Testing.app(), 'kruise');
  return Object.assign(chart, {
    manager: new KruiseManager(chart, 'Kruise', { image: ManagerImage.upstream({ version }) }),
  });
}

/** The release the envtest run's kruise-manager binary is (KRUISE_RELEASE, else the default). */
export function releaseUnderTest(): string {
  return envtest().kruiseVersion;
}

/** The kruise-manager binary of `version`, built by the envtest global setup; throws how to get it. */
export function kruiseManagerBinary(version: string): string {
  const state = envtest();
  const bin = (state.kruiseManagers ?? { [state.kruiseVersion]: state.kruiseManager })[version];
  if (!bin)
    throw new Error(
      `no kruise-manager ${version} was built for this run (built: ${Object.keys(state.kruiseManagers ?? {}).join(', ')}); ` +
        `run with KRUISE_RELEASE=${version}`,
    );
  return bin;
}

/** The upstream release an output renders (its manager image's tag). */
export function renderedRelease(r: RenderedManager): string {
  const tag = /:([^:/@]+)$/.exec(r.container.image ?? '')?.[1];
  if (!tag) throw new Error(`the rendered manager image ${r.container.image} has no release tag`);
  return tag;
}

/** The controllers the default app's upstream profile says the binary starts (generated data). */
export function generatedControllers(version?: string): string[] {
  const profile = defaultChart(version).manager.upstreamProfile;
  if (!profile) throw new Error('the default app does not render the upstream image');
  return profile.controllers.map((c) => c.name).sort();
}

/**
 * The CRDs of the pinned upstream module (`config/crd/bases` of tools/upstream/pin.json's
 * version, which binaries/build.sh downloads into the Go module cache). Only for diagnosing the
 * rest of a run while the synthesized output lacks CRDs; never a substitute for rendering them.
 */
export function upstreamModuleCrds(version: string = releaseUnderTest()): KubernetesObject[] {
  const pin = {
    ...(JSON.parse(readFileSync(new URL('../../../tools/upstream/pin.json', import.meta.url), 'utf8')) as {
      module: string;
    }),
    version,
  };
  const go = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  const modCache = process.env.GOMODCACHE || execFileSync(go, ['env', 'GOMODCACHE'], { encoding: 'utf8' }).trim();
  // The module cache escapes upper-case letters as `!x`.
  const dir = join(
    modCache,
    `${pin.module.replace(/[A-Z]/g, (c) => `!${c.toLowerCase()}`)}@${pin.version}`,
    'config',
    'crd',
    'bases',
  );
  if (!existsSync(dir))
    throw new Error(
      `${dir} does not exist: run bash test/envtest/binaries/build.sh, which downloads ${pin.module}@${pin.version}`,
    );
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) =>
      parseAllDocuments(readFileSync(join(dir, f), 'utf8'))
        .map((d) => d.toJSON() as KubernetesObject)
        .filter((o) => o?.kind === 'CustomResourceDefinition'),
    );
}

// ---------------------------------------------------------------------------------------------
// What we rendered

/** Flags of kruise-manager v1.8.3 (main.go) that bind a port, with the binary's defaults. */
const ADDRESS_FLAGS = { 'metrics-addr': ':8080', 'health-probe-addr': ':8000', 'pprof-addr': ':8090' } as const;
/** Env of kruise-manager v1.8.3 (pkg/webhook/util) naming the webhook port, and its default. */
const WEBHOOK_PORT_ENV = 'WEBHOOK_PORT';
const DEFAULT_WEBHOOK_PORT = 9876;

export interface RenderedManager {
  deployment: V1Deployment;
  container: V1Container;
  namespace: string;
  serviceAccount: string;
  /** The Lease the replicas elect a leader on (`--leader-election-namespace`/`-id`, or the binary's defaults). */
  lease: { namespace: string; name: string };
}

/** `--name=value` or `--name value` (also single dash), as Go's flag/pflag parse them; undefined if absent. */
export function flagValue(args: readonly string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^=]+)(?:=(.*))?$/.exec(args[i]);
    if (m?.[1] !== name) continue;
    return m[2] ?? args[i + 1];
  }
  return undefined;
}

/** `args` with every occurrence of flag `name` replaced by one `--name=value` (appended if absent). */
function withFlag(args: readonly string[], name: string, value: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const m = /^--?([^=]+)(=.*)?$/.exec(args[i]);
    if (m?.[1] !== name) {
      out.push(args[i]);
      continue;
    }
    if (m[2] === undefined && args[i + 1] !== undefined && !args[i + 1].startsWith('-')) i++; // `--name value`
  }
  return [...out, `--${name}=${value}`];
}

/**
 * `r` with flags of its manager container set (each replacing every occurrence, or appended): a tuned variant of the
 * rendered Deployment, e.g. `{ 'rest-config-qps': '1000' }`. The rendered objects themselves are not changed.
 */
export function withContainerFlags(r: RenderedManager, flags: Record<string, string>): RenderedManager {
  let args = [...(r.container.args ?? [])];
  for (const [name, value] of Object.entries(flags)) args = withFlag(args, name, value);
  return { ...r, container: { ...r.container, args } };
}

/** The manager Deployment of a synthesized stream and the facts a process needs from it. */
export function renderedManager(
  objects: KubernetesObject[],
  deploymentName = 'kruise-controller-manager',
): RenderedManager {
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata?.name === deploymentName) as
    V1Deployment | undefined;
  if (!deployment)
    throw new Error(
      `the synthesized output has no Deployment ${deploymentName}; it has: ${objects.map((o) => `${o.kind}/${o.metadata?.name}`).join(', ')}`,
    );
  const containers = deployment.spec?.template.spec?.containers ?? [];
  const container = containers.find((c) => c.name === 'manager') ?? containers[0];
  if (!container) throw new Error(`Deployment ${deploymentName} has no containers`);
  const namespace = deployment.metadata?.namespace ?? 'default';
  const args = [...(container.command?.slice(1) ?? []), ...(container.args ?? [])];
  return {
    deployment,
    container,
    namespace,
    serviceAccount: deployment.spec?.template.spec?.serviceAccountName ?? 'default',
    lease: {
      namespace: flagValue(args, 'leader-election-namespace') ?? 'kruise-system',
      name: flagValue(args, 'leader-election-id') ?? 'kruise-manager',
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Adapting the container to a process

/** One difference between the rendered container and the process we run. */
export interface Adaptation {
  what: string;
  rendered: string;
  process: string;
  why: string;
}

export interface ProcessConfig {
  args: string[];
  env: Record<string, string>;
  /** Rendered port number (container port, as flags/env/probes name it) -> port of this process on 127.0.0.1. */
  ports: Map<number, number>;
  adaptations: Adaptation[];
}

export interface ReplicaDirs {
  /** Stands in for the pod's /tmp emptyDir (WEBHOOK_CERT_DIR lives under it). */
  tmp: string;
  /** Stands in for the pod's /log emptyDir (`--protection-log-path`). */
  log: string;
}

const portOf = (addr: string): number => Number(addr.slice(addr.lastIndexOf(':') + 1));
const hostOf = (addr: string): string => addr.slice(0, addr.lastIndexOf(':'));

/**
 * The argv and env that run the rendered container as a local process named `podName`.
 * Everything else is passed through untouched; every change is recorded in `adaptations`.
 */
export async function adaptContainer(
  r: RenderedManager,
  podName: string,
  kubeconfigPath: string,
  dirs: ReplicaDirs,
): Promise<ProcessConfig> {
  const c = r.container;
  const adaptations: Adaptation[] = [];
  const ports = new Map<number, number>();
  let args = [...(c.command?.slice(1) ?? []), ...(c.args ?? [])];
  adaptations.push({
    what: 'command',
    rendered: (c.command ?? ['(image entrypoint)']).join(' '),
    process: kruiseManagerBinary(renderedRelease(r)),
    why: `no image: the binary built from the pinned upstream module of ${renderedRelease(r)}`,
  });

  // Ports: every replica shares the host's loopback, so each bound port gets a free one.
  for (const [flag, fallback] of Object.entries(ADDRESS_FLAGS)) {
    if (flag === 'pprof-addr' && flagValue(args, 'enable-pprof') === 'false') continue;
    const rendered = flagValue(args, flag);
    const addr = rendered ?? fallback;
    const local = await freePort();
    ports.set(portOf(addr), local);
    args = withFlag(args, flag, `${hostOf(addr)}:${local}`);
    adaptations.push({
      what: `--${flag}`,
      rendered: rendered ?? `(unset: binary default ${fallback})`,
      process: `${hostOf(addr)}:${local}`,
      why: 'one network namespace for all replicas: unique port per replica',
    });
  }

  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined || !e.valueFrom) {
      env[e.name] = e.value ?? '';
      continue;
    }
    const field = e.valueFrom.fieldRef?.fieldPath;
    const value = field === 'metadata.namespace' ? r.namespace : field === 'metadata.name' ? podName : undefined;
    if (value === undefined)
      throw new Error(
        `env ${e.name}: ${JSON.stringify(e.valueFrom)} has no stand-in outside a pod; add one to adaptContainer`,
      );
    env[e.name] = value;
    adaptations.push({
      what: `env ${e.name}`,
      rendered: `fieldRef ${field}`,
      process: value,
      why: 'no kubelet resolves the downward API',
    });
  }
  const webhookPort = Number(env[WEBHOOK_PORT_ENV] ?? DEFAULT_WEBHOOK_PORT);
  const localWebhook = await freePort();
  ports.set(webhookPort, localWebhook);
  adaptations.push({
    what: `env ${WEBHOOK_PORT_ENV}`,
    rendered: env[WEBHOOK_PORT_ENV] ?? `(unset: binary default ${DEFAULT_WEBHOOK_PORT})`,
    process: String(localWebhook),
    why: 'unique port per replica (the binary binds 0.0.0.0:$WEBHOOK_PORT)',
  });
  env[WEBHOOK_PORT_ENV] = String(localWebhook);

  const certDir = join(dirs.tmp, 'kruise-webhook-certs');
  adaptations.push({
    what: 'env WEBHOOK_CERT_DIR',
    rendered: env.WEBHOOK_CERT_DIR ?? '(unset: /tmp/kruise-webhook-certs)',
    process: certDir,
    why: "per-replica dir, like each pod's own /tmp emptyDir",
  });
  env.WEBHOOK_CERT_DIR = certDir;
  adaptations.push({
    what: 'env TMPDIR',
    rendered: '(unset: /tmp, an emptyDir)',
    process: dirs.tmp,
    why: "per-replica /tmp, like each pod's own emptyDir",
  });
  env.TMPDIR = dirs.tmp;
  for (const blocked of ['WEBHOOK_HOST', 'KUBECONFIG']) {
    if (env[blocked] !== undefined)
      throw new Error(`the rendered container sets ${blocked}; this harness cannot honour it on loopback`);
  }

  const protection = flagValue(args, 'protection-log-path');
  args = withFlag(args, 'protection-log-path', dirs.log);
  adaptations.push({
    what: '--protection-log-path',
    rendered: protection ?? '(unset: binary default /log, an emptyDir)',
    process: dirs.log,
    why: "per-replica dir, like each pod's own /log emptyDir",
  });

  if (flagValue(args, 'kubeconfig') !== undefined)
    throw new Error('the rendered container passes --kubeconfig; a pod uses its ServiceAccount token');
  args = withFlag(args, 'kubeconfig', kubeconfigPath);
  adaptations.push({
    what: '--kubeconfig',
    rendered: `(unset: in-cluster config, ServiceAccount ${r.serviceAccount} token)`,
    process: kubeconfigPath,
    why: `no token mount: a client cert from the envtest CA with CN ${serviceAccountUser(r.namespace, r.serviceAccount)} and the ServiceAccount's groups, so RBAC sees the same user`,
  });
  return { args, env, ports, adaptations };
}

/** The adaptations as a Markdown table, for logs and failure messages. */
export function adaptationTable(adaptations: Adaptation[]): string {
  return [
    '| what | rendered | process | why |',
    '|---|---|---|---|',
    ...adaptations.map((a) => `| ${a.what} | ${a.rendered} | ${a.process} | ${a.why} |`),
  ].join('\n');
}

/** A kubeconfig acting as ServiceAccount `name` in `namespace`: the user and groups the token would carry. */
export function serviceAccountKubeconfig(namespace: string, name: string): Promise<string> {
  return kubeconfigForUser(serviceAccountUser(namespace, name), [
    'system:serviceaccounts',
    `system:serviceaccounts:${namespace}`,
    'system:authenticated',
  ]);
}

// ---------------------------------------------------------------------------------------------
// Processes

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A controller-runtime controller as its log reports it. */
export interface ControllerProgress {
  name: string;
  started: boolean;
  workers: boolean;
}

export class UpstreamManager {
  readonly exited: Promise<Exit>;
  private readonly unregister: () => void;

  private constructor(
    readonly name: string,
    readonly rendered: RenderedManager,
    readonly child: ChildProcess,
    readonly config: ProcessConfig,
    readonly logPath: string,
    readonly dir: string,
    readonly startedAt: number,
  ) {
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    this.unregister = killOnExit({ killNow: () => this.signal('SIGKILL') });
    void this.exited.then(() => this.unregister());
  }

  /** Starts replica `name` (its pod name) under `baseDir/<name>/` with its own log file. */
  static async start(r: RenderedManager, name: string, baseDir: string): Promise<UpstreamManager> {
    const dir = join(baseDir, name);
    const dirs = { tmp: join(dir, 'tmp'), log: join(dir, 'log') };
    for (const d of Object.values(dirs)) mkdirSync(d, { recursive: true });
    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, await serviceAccountKubeconfig(r.namespace, r.serviceAccount), { mode: 0o600 });
    const config = await adaptContainer(r, name, kubeconfigPath, dirs);
    const logPath = join(dir, 'manager.log');
    const fd = openSync(logPath, 'a');
    try {
      // Only the container's env (as adapted): nothing of this test process, KUBECONFIG included, leaks in.
      const child = spawn(kruiseManagerBinary(renderedRelease(r)), config.args, {
        env: config.env,
        stdio: ['ignore', fd, fd],
      });
      return new UpstreamManager(name, r, child, config, logPath, dir, Date.now());
    } finally {
      closeSync(fd);
    }
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Local port standing in for rendered port `rendered` (e.g. 8000 -> a free port). */
  port(rendered: number): number {
    const local = this.config.ports.get(rendered);
    if (local === undefined)
      throw new Error(
        `${this.name}: rendered port ${rendered} is bound by no flag or env this harness knows (${[...this.config.ports.keys()].join(', ')})`,
      );
    return local;
  }

  get webhookPort(): number {
    return this.port(
      Number(this.rendered.container.env?.find((e) => e.name === WEBHOOK_PORT_ENV)?.value ?? DEFAULT_WEBHOOK_PORT),
    );
  }

  get metricsPort(): number {
    return this.port(
      portOf(flagValue([...(this.rendered.container.args ?? [])], 'metrics-addr') ?? ADDRESS_FLAGS['metrics-addr']),
    );
  }

  /** The CA the replica's webhook certificate chains to, from its cert dir. */
  caPem(): string {
    return readFileSync(join(this.config.env.WEBHOOK_CERT_DIR, 'ca-cert.pem'), 'utf8');
  }

  logs(): string {
    return existsSync(this.logPath) ? readFileSync(this.logPath, 'utf8') : '';
  }

  tail(lines = 40): string {
    return `--- last lines of ${this.logPath} ---\n${tail(this.logPath, lines)}`;
  }

  /**
   * Runs a Deployment probe (httpGet or tcpSocket) against this replica; resolves to a description of the failure or
   * undefined.
   */
  async probe(p: V1Probe | undefined): Promise<string | undefined> {
    if (!p) return 'no probe rendered';
    const container = this.rendered.container;
    const resolvePort = (port: number | string) =>
      typeof port === 'number' ? port : (container.ports?.find((x) => x.name === port)?.containerPort ?? Number(port));
    try {
      if (p.httpGet) {
        const url = `${(p.httpGet.scheme ?? 'HTTP').toLowerCase()}://127.0.0.1:${this.port(resolvePort(p.httpGet.port))}${p.httpGet.path ?? '/'}`;
        const res = await fetch(url, { signal: AbortSignal.timeout((p.timeoutSeconds ?? 1) * 1000 + 2_000) });
        const body = await res.text();
        return res.status >= 200 && res.status < 400
          ? undefined
          : `GET ${url}: HTTP ${res.status} ${body.slice(0, 300)}`;
      }
      if (p.tcpSocket) {
        const port = this.port(resolvePort(p.tcpSocket.port));
        await new Promise<void>((resolve, reject) => {
          const s = connect(port, '127.0.0.1', () => {
            s.end();
            resolve();
          });
          s.setTimeout(3_000, () => s.destroy(new Error('connect timed out')));
          s.once('error', reject);
        });
        return undefined;
      }
    } catch (e) {
      return `${this.name}: ${(e as Error).message}`;
    }
    return `probe ${JSON.stringify(p)} is neither httpGet nor tcpSocket`;
  }

  /** Until the rendered readinessProbe passes; fails at once (with the log tail) if the process exits. */
  async waitReady(timeoutMs = 90_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last: string | undefined;
    for (;;) {
      if (!this.alive)
        throw new Error(
          `${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before its readinessProbe passed\n${this.tail()}`,
        );
      last = await this.probe(this.rendered.container.readinessProbe);
      if (last === undefined) return;
      if (Date.now() > deadline)
        throw new Error(
          `${this.name} did not pass its readinessProbe within ${timeoutMs}ms (last: ${last})\n${this.tail()}`,
        );
      await sleep(500);
    }
  }

  /**
   * client-go's `leader_election_master_status{name=<lease>}` on the metrics port (v1.8.3 also
   * registers `kruise_manager_is_leader`, but controller-runtime's metrics provider wins, so it stays 0).
   */
  async leading(): Promise<boolean> {
    if (!this.alive) return false;
    try {
      const text = await (
        await fetch(`http://127.0.0.1:${this.metricsPort}/metrics`, { signal: AbortSignal.timeout(3_000) })
      ).text();
      return text.split('\n').includes(`leader_election_master_status{name="${this.rendered.lease.name}"} 1`);
    } catch {
      return false;
    }
  }

  /** Whether the log says this replica acquired the leader Lease. */
  acquiredLease(): boolean {
    return this.logs().includes(
      `successfully acquired lease ${this.rendered.lease.namespace}/${this.rendered.lease.name}`,
    );
  }

  /** Controllers from controller-runtime's "Starting Controller" / "Starting workers" lines. */
  controllers(): ControllerProgress[] {
    const byName = new Map<string, ControllerProgress>();
    for (const line of this.logs().split('\n')) {
      const started = line.includes('"Starting Controller"');
      const workers = line.includes('"Starting workers"');
      if (!started && !workers) continue;
      // klogr writes `"controller"="cloneset-controller"`, klog's structured form `controller="..."`.
      const name = /"?\bcontroller"?="([^"]+)"/.exec(line)?.[1];
      if (!name) continue;
      const p = byName.get(name) ?? { name, started: false, workers: false };
      p.started ||= started;
      p.workers ||= workers;
      byName.set(name, p);
    }
    return [...byName.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Distinct log lines matching `re`, klog's header (time, pid, file) cut off, each with its count; for failure
   * messages.
   */
  grep(re: RegExp, max = 20): string[] {
    const counts = new Map<string, number>();
    for (const line of this.logs().split('\n')) {
      if (!re.test(line)) continue;
      const text = line.replace(/^[IWEF]\d{4} [\d:.]+\s+\d+ [\w.-]+:\d+\] /, '');
      counts.set(text, (counts.get(text) ?? 0) + 1);
    }
    return [...counts].slice(0, max).map(([text, n]) => (n > 1 ? `${text} (x${n})` : text));
  }

  signal(signal: NodeJS.Signals): void {
    if (this.alive) this.child.kill(signal);
  }

  /** Sends `signal`; SIGKILL after `graceMs` if still running. Resolves with the exit. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM', graceMs = 15_000): Promise<Exit> {
    this.signal(signal);
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  /** Removes the replica's scratch dir (logs included): call only when the test passed. */
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The current holder of the rendered leader Lease (empty if none). */
export async function leaseHolder(
  kc: KubeConfig,
  r: RenderedManager,
): Promise<{ holder: string; transitions: number; renewTime?: Date }> {
  try {
    const lease = await kc.makeApiClient(CoordinationV1Api).readNamespacedLease(r.lease);
    return {
      holder: lease.spec?.holderIdentity ?? '',
      transitions: lease.spec?.leaseTransitions ?? 0,
      renewTime: lease.spec?.renewTime,
    };
  } catch {
    return { holder: '', transitions: 0 };
  }
}

/**
 * The one live replica that both reports `kruise_manager_is_leader 1` and logged acquiring the Lease, once there is
 * exactly one.
 */
export async function waitLeader(
  kc: KubeConfig,
  replicas: UpstreamManager[],
  timeoutMs: number,
): Promise<UpstreamManager> {
  if (!replicas.length) throw new Error('no replica is running, so none can lead');
  return until(
    'exactly one kruise-manager replica to lead (its gauge, its log, and a Lease holder)',
    async () => {
      const flags = await Promise.all(replicas.map((m) => m.leading()));
      const leaders = replicas.filter((m, i) => flags[i] && m.alive && m.acquiredLease());
      const { holder } = await leaseHolder(kc, replicas[0].rendered);
      return leaders.length === 1 && holder ? leaders[0] : undefined;
    },
    timeoutMs,
    500,
  );
}
