/**
 * docs/runtime.md's local loop ("Run the manager against the local control plane"), run as a person runs it:
 *
 *   npm run envtest                      (terminal 1, stopped with Ctrl-C)
 *   npm run envtest:install-runtime
 *   POD_NAMESPACE=kruise-system WEBHOOK_CERT_DIR=/tmp/kruise-certs npm run runtime -- --kubeconfig=.envtest/kubeconfig
 *
 * each as a child process of its own (npm, projen and tsx included, in a process group of its own, stopped by
 * that PID's group as a terminal's Ctrl-C stops it). The commands are read from the doc and must be the ones below,
 * so the doc and this test cannot drift apart. The only differences from a terminal are what keeps this run off
 * others' files and ports: KRUISE_HA_ENVTEST_DIR moves `.envtest/` into a temp dir (the runtime's `--kubeconfig`
 * follows it), WEBHOOK_CERT_DIR is a temp dir instead of the shared /tmp/kruise-certs, and the runtime's webhook,
 * probe and metrics ports are free ones (WEBHOOK_PORT, which install-runtime reads too, and two flags). The Jest
 * run's own control plane (ENVTEST_STATE, KUBECONFIG) is removed from the children's environment: a terminal
 * has none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { SidecarSetAnnotations } from '../../lib/contract.js';
import { plainHttp } from '../envtest/http.js';
import { LOCAL_DIR_ENV } from '../envtest/local.js';
import { freePort, liveGroupMembers } from '../envtest/process.js';
import { containerImage, createSidecarSet, deleteSidecarSet, podBody, until } from './support/ha.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOC = 'docs/runtime.md';
/** The doc's commands, in its order; the test checks the doc still says exactly this. */
const ENVTEST = 'npm run envtest';
const INSTALL = 'npm run envtest:install-runtime';
const RUNTIME =
  'POD_NAMESPACE=kruise-system WEBHOOK_CERT_DIR=/tmp/kruise-certs npm run runtime -- --kubeconfig=.envtest/kubeconfig';
const APPLY = 'kubectl --kubeconfig .envtest/kubeconfig apply -f my-sidecarset.yaml';
const SLOW = 90_000; // bound for a step on a loaded 2-core machine; never a speed assertion

const dir = mkdtempSync(join(tmpdir(), 'kruise-local-loop-'));
const loopDir = join(dir, 'envtest');
const kubeconfigPath = join(loopDir, 'kubeconfig');

/** The commands of the doc's block that holds `npm run envtest`, comments dropped, `\` continuations joined. */
function documentedLoop(): string[] {
  const text = readFileSync(join(ROOT, DOC), 'utf8');
  const block = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]).find((b) => b.includes(ENVTEST));
  if (!block) throw new Error(`${DOC}: no \`\`\`sh block with \`${ENVTEST}\`. Fix: restore the local loop's block`);
  return block
    .replace(/\\\n\s*/g, '')
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter(Boolean);
}

/** A documented command line as the environment it sets and the argv it runs. */
function parse(command: string): { env: Record<string, string>; argv: string[] } {
  const words = command.split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_]+=/.test(words[0])) {
    const [name, value] = words.shift()!.split(/=(.*)/s);
    env[name] = value;
  }
  return { env, argv: words };
}

/** What a terminal has: this environment without the Jest run's control plane. */
function terminalEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, [LOCAL_DIR_ENV]: loopDir, ...extra };
  for (const name of ['ENVTEST_STATE', 'ENVTEST_KUBECONFIG', 'KUBECONFIG']) delete env[name];
  return env;
}

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * The processes of its group still running when the job's leader (npm, what a terminal waits for) exited: any
   * means the prompt came back before the command had stopped. Undefined while the leader runs.
   */
  leftAtExit: () => number[] | undefined;
}

/** Starts `argv` in the repo as the leader of a new process group (as a terminal's job), output collected. */
function start(argv: string[], env: NodeJS.ProcessEnv): Run {
  const child = spawn(argv[0], argv.slice(1), { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  // 'close', not 'exit': the output is read to its end.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once('close', (code, signal) => res({ code, signal })),
  );
  let left: number[] | undefined;
  child.once('exit', () => (left = liveGroupMembers(child.pid!)));
  return { child, output: () => out, exited, leftAtExit: () => left };
}

/** Whether any process of the group `pgid` is left (one that has not exited: see liveGroupMembers). */
function groupAlive(pgid: number): boolean {
  return liveGroupMembers(pgid).length > 0;
}

/**
 * A Ctrl-C may take this long to end a job before the test calls it stuck: the control plane's stop is bounded by
 * SIGKILL 10 s after SIGTERM for each of kube-apiserver and etcd, the runtime's by its drain. Idle it takes 3 s
 * (envtest) and 6 s (runtime). On CI the envtest job once outlived 25 s; its output was not kept, so the cause is
 * unseen (orphaned zombies that an init which never reaps keeps in the group are one candidate, no longer counted),
 * and a job that outlives this bound now fails with its output.
 */
const STOP_GRACE_MS = 60_000;

/**
 * A terminal's Ctrl-C to the job `run` leads (SIGINT to its group), SIGKILL after STOP_GRACE_MS. Throws, with the
 * job's output, when the job outlived that bound.
 */
async function interrupt(run: Run | undefined, what: string): Promise<void> {
  const pid = run?.child.pid;
  if (pid === undefined || !groupAlive(pid)) return;
  process.kill(-pid, 'SIGINT');
  const began = Date.now();
  while (groupAlive(pid) && Date.now() - began < STOP_GRACE_MS) await sleep(100);
  const ended = !groupAlive(pid);
  if (!ended) process.kill(-pid, 'SIGKILL');
  await Promise.race([run!.exited, sleep(5_000, undefined, { ref: false })]);
  if (!ended) {
    throw new Error(
      `${what} was still running ${STOP_GRACE_MS / 1000} s after Ctrl-C (then killed). Its output:\n` +
        run!.output().slice(-4_000),
    );
  }
}

let envtestRun: Run | undefined;
let runtimeRun: Run | undefined;
/** kube-apiserver's and etcd's PIDs (their own process groups), from the control plane's pids.json. */
let controlPlanePids: number[] = [];
const ports = { webhook: 0, health: 0, metrics: 0 };

beforeAll(async () => {
  expect(documentedLoop()).toEqual([ENVTEST, INSTALL, RUNTIME, APPLY]);
  Object.assign(ports, { webhook: await freePort(), health: await freePort(), metrics: await freePort() });
  envtestRun = start(parse(ENVTEST).argv, terminalEnv({}));
  const ready = await until<RegExpExecArray>(
    `\`${ENVTEST}\` to report its API server ready`,
    () => {
      if (envtestRun!.child.exitCode !== null) throw new Error(`exited ${envtestRun!.child.exitCode}`);
      return /logs: +(\S+)\/kube-apiserver\.log/.exec(envtestRun!.output()) ?? undefined;
    },
    SLOW,
    100,
    async () => envtestRun!.output(),
  );
  const pids = JSON.parse(readFileSync(join(ready[1], 'pids.json'), 'utf8')) as { children: number[] };
  controlPlanePids = pids.children;
}, SLOW);

afterAll(
  async () => {
    await interrupt(runtimeRun, 'the runtime').catch(() => undefined); // the last test reports it
    await interrupt(envtestRun, 'envtest').catch(() => undefined);
    for (const pid of controlPlanePids) {
      try {
        process.kill(-pid, 'SIGKILL'); // only if the control plane's own stop failed (the last test then fails)
      } catch {
        /* gone, as it should be */
      }
    }
    rmSync(dir, { recursive: true, force: true });
  },
  STOP_GRACE_MS * 2 + 20_000,
);

describe(`${DOC}'s local loop, as documented`, () => {
  it(`\`${ENVTEST}\` writes the kubeconfig into ${LOCAL_DIR_ENV} (.envtest/ by default)`, () => {
    expect(existsSync(kubeconfigPath)).toBe(true);
    expect(envtestRun!.output()).toContain(`kubeconfig: ${kubeconfigPath}`);
    expect(controlPlanePids).toHaveLength(2);
  });

  it(
    `\`${INSTALL}\` installs the runtime into that control plane`,
    async () => {
      const run = start(parse(INSTALL).argv, terminalEnv({ WEBHOOK_PORT: String(ports.webhook) }));
      const { code } = await run.exited;
      expect({ code, output: run.output() }).toEqual({
        code: 0,
        output: expect.stringMatching(
          new RegExp(
            `applied \\d+ objects into kruise-system; kruise-webhook-service -> 127\\.0\\.0\\.1:${ports.webhook}`,
          ),
        ),
      });
    },
    SLOW,
  );

  it(
    `\`npm run runtime -- --kubeconfig=.envtest/kubeconfig\` becomes ready and admits pods through the API server`,
    async () => {
      const { env, argv } = parse(RUNTIME);
      expect(env).toEqual({ POD_NAMESPACE: 'kruise-system', WEBHOOK_CERT_DIR: '/tmp/kruise-certs' });
      runtimeRun = start(
        [
          ...argv.map((a) => a.replace('=.envtest/', `=${loopDir}/`)),
          `--health-probe-addr=127.0.0.1:${ports.health}`,
          `--metrics-addr=127.0.0.1:${ports.metrics}`,
        ],
        terminalEnv({
          ...env,
          WEBHOOK_CERT_DIR: join(dir, 'certs'),
          WEBHOOK_PORT: String(ports.webhook),
          WEBHOOK_HOST: '127.0.0.1',
        }),
      );
      const runtimeOutput = async () => runtimeRun!.output().split('\n').slice(-40).join('\n');
      await until(
        'the runtime to answer 200 on /readyz',
        async () => {
          if (runtimeRun!.child.exitCode !== null) throw new Error(`exited ${runtimeRun!.child.exitCode}`);
          return (await plainHttp('GET', `http://127.0.0.1:${ports.health}/readyz`)).status === 200;
        },
        SLOW,
        250,
        runtimeOutput,
      );

      // The doc's next step (`kubectl apply -f my-sidecarset.yaml`, then pods), through the API server.
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfigPath);
      const core = kc.makeApiClient(CoreV1Api);
      const sidecarSet = {
        name: 'loop',
        namespace: 'default',
        appLabel: 'loop',
        container: 'loop-sidecar',
        image: 'registry.invalid/sidecar:v1',
      };
      await createSidecarSet(kc, sidecarSet, SLOW);
      let n = 0;
      const pod = await until<V1Pod>(
        'a pod created through the API server to get the sidecar',
        async () => {
          const created = await core.createNamespacedPod({
            namespace: 'default',
            body: podBody(`loop-${n++}`, 'loop'),
          });
          return containerImage(created, sidecarSet.container) ? created : undefined;
        },
        SLOW,
        250,
        runtimeOutput,
      );
      expect(pod.metadata?.annotations?.[SidecarSetAnnotations.injectedList]).toBe(sidecarSet.name);
      // "The manager then leads the Lease": its gauge says so.
      await until(
        'the runtime to lead (leader_election_master_status 1)',
        async () =>
          /^leader_election_master_status\{name="kruise-manager"\} 1$/m.test(
            (await plainHttp('GET', `http://127.0.0.1:${ports.metrics}/metrics`)).body,
          ),
        SLOW,
        250,
        runtimeOutput,
      );
      await deleteSidecarSet(kc, sidecarSet.name);
    },
    SLOW * 2,
  );

  it(
    'Ctrl-C stops the runtime, then the control plane, which removes its kubeconfig; each prompt comes back once stopped',
    async () => {
      await interrupt(runtimeRun, `\`${RUNTIME}\``);
      expect(runtimeRun!.output()).toMatch(/"msg":"released the lease"/);
      // The prompt comes back once the runtime has stopped, not before (projen's task runner, between npm and the
      // command once, died at the Ctrl-C and left the command stopping behind the prompt).
      expect(runtimeRun!.leftAtExit()).toEqual([]);
      await interrupt(envtestRun, `\`${ENVTEST}\``);
      expect(envtestRun!.output()).toContain('envtest: stopped.');
      expect(envtestRun!.leftAtExit()).toEqual([]);
      expect(controlPlanePids.filter((pid) => groupAlive(pid))).toEqual([]);
      expect(existsSync(kubeconfigPath)).toBe(false);
    },
    STOP_GRACE_MS * 2 + 20_000,
  );
});
