/**
 * run(), the entrypoint of programs on the runtime, in this process: the exits, the signals and
 * the uncaught errors are a test's own (RunDeps), the manager serves its health and metrics ports
 * on 127.0.0.1, and nothing reaches an API server (a controllers replica without leader election
 * and without caches makes no call).
 */
import { afterAll, afterEach, describe, expect, it, jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Manager,
  objectNamesFor,
  run,
  type FlagDefinition,
  type ManagerOptions,
  type RunOptions,
} from '../../../lib/runtime/index.js';
import { main } from '../../../lib/runtime/main.js';
import { helpText } from '../../../lib/runtime/options.js';

const dir = mkdtempSync(join(tmpdir(), 'run-test-'));
const kubeconfigPath = join(dir, 'kubeconfig');
writeFileSync(
  kubeconfigPath,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
    users: [{ name: 'u', user: {} }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = { POD_NAMESPACE: 'ops', POD_NAME: 'op-0' };
const BUDGET_MS = 2_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The process as a test sees it: what was written, logged and exited, and where signals come from. */
async function harness() {
  const ports = { health: await freePort(), metrics: await freePort() };
  const events = new EventEmitter();
  const exits: number[] = [];
  let exited!: (code: number) => void;
  const firstExit = new Promise<number>((resolve) => (exited = resolve));
  const out = { stdout: '', stderr: '', logs: [] as string[] };
  const deps = {
    env,
    events,
    stdout: (t: string) => void (out.stdout += t),
    stderr: (t: string) => void (out.stderr += t),
    logSink: { write: (line: string) => void out.logs.push(line) },
    exit: (code: 0 | 1 | 2) => {
      exits.push(code);
      exited(code);
    },
  };
  const argv = (...extra: string[]) => [
    `--kubeconfig=${kubeconfigPath}`,
    '--role=controllers',
    '--enable-leader-election=false',
    `--metrics-addr=127.0.0.1:${ports.metrics}`,
    `--health-probe-addr=127.0.0.1:${ports.health}`,
    '--drain-timeout=0s',
    `--graceful-shutdown-timeout=${BUDGET_MS / 1000}s`,
    ...extra,
  ];
  const get = async (path: string, port = ports.health) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(2_000) });
    return { status: res.status, body: await res.text() };
  };
  const logged = (msg: string) =>
    out.logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === msg);
  return { ports, events, exits, firstExit, out, deps, argv, get, logged };
}

const FLAGS = {
  greeting: { type: 'string', default: 'hello', help: 'what to say' },
  label: { type: 'string', help: 'label to add' },
  replicas: { type: 'integer', default: 2, help: 'how many' },
  'dry-run': { type: 'boolean', help: 'change nothing' },
  resync: { type: 'duration', default: '30s', help: 'resync period' },
} as const satisfies Record<string, FlagDefinition>;

/** Managers a test started, stopped after it whatever happened (servers bound in this process). */
const started: Manager[] = [];
afterEach(async () => {
  jest.restoreAllMocks();
  await Promise.all(started.splice(0).map((m) => m.stop()));
});

describe('run: a program on the runtime', () => {
  it('hands register the manager and its flags (given, defaulted, typed), serves its checks, and exits 0 on SIGTERM', async () => {
    const h = await harness();
    const received: unknown[] = [];
    let manager: Manager | undefined;
    await run(
      {
        name: 'my-operator',
        flags: FLAGS,
        controllers: ['greeter'],
        register(m, flags) {
          manager = m;
          received.push(flags);
          // typed: a number, a boolean, a string or undefined
          const replicas: number = flags.replicas;
          const dryRun: boolean = flags['dry-run'];
          const label: string | undefined = flags.label;
          received.push([typeof replicas, typeof dryRun, label]);
          m.addController({ name: 'greeter', reconcile: () => undefined });
          m.addReadinessCheck('greeter-ready', () => {
            throw new Error('still warming up');
          });
          m.addLivenessCheck('greeter-alive', () => undefined);
        },
      },
      { ...h.deps, argv: h.argv('--replicas=5', '--dry-run=true', '--resync=1m') },
    );
    started.push(manager!);
    expect(manager).toBeInstanceOf(Manager);
    expect(received).toEqual([
      { greeting: 'hello', label: undefined, replicas: 5, 'dry-run': true, resync: 60_000 },
      ['number', 'boolean', undefined],
    ]);
    expect(await h.get('/readyz?verbose')).toEqual({
      status: 500,
      body: expect.stringMatching(/\[-\]greeter-ready failed: still warming up/),
    });
    expect(await h.get('/healthz/greeter-alive')).toEqual({ status: 200, body: expect.any(String) });
    expect((await h.get('/metrics', h.ports.metrics)).body).toMatch(
      /^controller_runtime_max_concurrent_reconciles\{controller="greeter"\} 3$/m,
    );

    const t0 = Date.now();
    h.events.emit('SIGTERM', 'SIGTERM');
    expect(await h.firstExit).toBe(0);
    expect(Date.now() - t0).toBeLessThan(BUDGET_MS);
    expect(h.exits).toEqual([0]);
    expect(h.logged('exiting')).toEqual([expect.objectContaining({ code: 0, reason: 'SIGTERM' })]);
    await expect(h.get('/healthz')).rejects.toThrow(); // stopped: nothing listens any more
  });

  it("answers a repeated signal with the stop under way (a Ctrl-C delivered twice), never with Node's default exit", async () => {
    const h = await harness();
    let manager: Manager | undefined;
    await run({ name: 'twice', register: (m) => void (manager = m) }, { ...h.deps, argv: h.argv() });
    started.push(manager!);
    let release: () => void = () => undefined;
    jest.spyOn(Manager.prototype, 'stop').mockReturnValueOnce(new Promise<void>((resolve) => (release = resolve)));
    h.events.emit('SIGINT', 'SIGINT');
    // With no listener left a signal ends a Node process at once; a listener stays for both signals.
    expect(h.events.listenerCount('SIGINT')).toBeGreaterThan(0);
    expect(h.events.listenerCount('SIGTERM')).toBeGreaterThan(0);
    h.events.emit('SIGINT', 'SIGINT');
    h.events.emit('SIGTERM', 'SIGTERM');
    expect(h.exits).toEqual([]);
    release();
    expect(await h.firstExit).toBe(0);
    expect(h.exits).toEqual([0]);
    expect(h.logged('shutting down')).toEqual([expect.objectContaining({ signal: 'SIGINT' })]);
    expect(h.logged('already shutting down; signal ignored')).toEqual([
      expect.objectContaining({ signal: 'SIGINT' }),
      expect.objectContaining({ signal: 'SIGTERM' }),
    ]);
  });

  it('exits 1 when the stop outlasts --graceful-shutdown-timeout, at the budget', async () => {
    const h = await harness();
    let manager: Manager | undefined;
    await run({ name: 'stuck', register: (m) => void (manager = m) }, { ...h.deps, argv: h.argv() });
    started.push(manager!);
    jest.spyOn(Manager.prototype, 'stop').mockReturnValueOnce(new Promise<void>(() => undefined));
    const t0 = Date.now();
    h.events.emit('SIGINT', 'SIGINT');
    expect(await h.firstExit).toBe(1);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(Date.now() - t0).toBeLessThan(BUDGET_MS + 1_000);
    expect(h.logged('shutdown did not finish within its budget; exiting now')).toEqual([
      expect.objectContaining({ flag: '--graceful-shutdown-timeout', budgetMs: BUDGET_MS }),
    ]);
    expect(h.logged('exiting')).toEqual([expect.objectContaining({ code: 1, reason: 'shutdown budget exceeded' })]);
  });

  it("exits 1 on an uncaught exception or rejection, once; 0 when a SIGTERM's stop finishes first", async () => {
    const h = await harness();
    let manager: Manager | undefined;
    await run({ name: 'crashy', register: (m) => void (manager = m) }, { ...h.deps, argv: h.argv() });
    started.push(manager!);
    h.events.emit('unhandledRejection', new Error('nobody awaited me'));
    h.events.emit('uncaughtException', new Error('boom'));
    expect(await h.firstExit).toBe(1);
    expect(h.exits).toEqual([1]);
    expect(h.logged('exiting')).toEqual([expect.objectContaining({ code: 1, reason: 'unhandled rejection' })]);
    expect(h.logged('uncaught exception')).toHaveLength(1);
    // A SIGTERM before the fatal exit took effect: once the stop has finished, the process ends with 0, as before.
    h.events.emit('SIGTERM', 'SIGTERM');
    for (let i = 0; i < 100 && h.exits.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(h.exits).toEqual([1, 0]);
  });

  it('gives each declared controller its --<name>-workers, and refuses a controller it did not declare', async () => {
    const h = await harness();
    let workers: number | undefined;
    await run(
      {
        name: 'mirror',
        controllers: ['configmap-mirror'],
        register(m) {
          workers = m.options.workers['configmap-mirror'];
          m.addController({ name: 'configmap-mirror', reconcile: () => undefined });
        },
      },
      { ...h.deps, argv: h.argv('--configmap-mirror-workers=5') },
    );
    expect(h.exits).toEqual([]);
    expect(workers).toBe(5);

    const h2 = await harness();
    await run(
      {
        name: 'undeclared',
        register: (m) => void m.addController({ name: 'configmap-mirror', reconcile: () => undefined }),
      },
      { ...h2.deps, argv: h2.argv() },
    );
    expect(h2.exits).toEqual([1]);
    expect(JSON.stringify(h2.logged('register failed'))).toMatch(
      /controller \\"configmap-mirror\\" is not among the program's controllers \(none\).*Fix: declare it, run\(\{ controllers: \['configmap-mirror'\] \}\)/,
    );

    const h3 = await harness();
    await run(
      { name: 'kruise-only', register: () => undefined },
      { ...h3.deps, argv: h3.argv('--sidecarset-workers=2') },
    );
    expect(h3.exits).toEqual([2]);
    expect(h3.out.stderr).toMatch(/--sidecarset-workers: is not a worker flag of this project's runtime/);
  });

  it('exits 1 when register throws, and when the manager cannot start', async () => {
    const h = await harness();
    await run(
      {
        name: 'broken',
        register: async () => {
          await Promise.resolve();
          throw new Error('no config map');
        },
      },
      { ...h.deps, argv: h.argv() },
    );
    expect(h.exits).toEqual([1]);
    expect(h.logged('register failed')).toEqual([expect.objectContaining({ error: expect.anything() })]);

    // The health port is taken: the manager's start fails.
    const h2 = await harness();
    const squatter: Server = createServer();
    await new Promise<void>((resolve) => squatter.listen(h2.ports.health, '127.0.0.1', resolve));
    let manager: Manager | undefined;
    try {
      await run({ name: 'unlucky', register: (m) => void (manager = m) }, { ...h2.deps, argv: h2.argv() });
    } finally {
      await new Promise<void>((resolve) => squatter.close(() => resolve()));
    }
    started.push(manager!);
    expect(h2.exits).toEqual([1]);
    expect(h2.logged('exiting')).toEqual([expect.objectContaining({ code: 1, reason: 'start failed' })]);
  });
});

describe('run: flags', () => {
  const program = (register = jest.fn<() => void>()): RunOptions<typeof FLAGS> => ({
    name: 'my-operator',
    description: 'greets pods.',
    flags: FLAGS,
    controllers: ['greeter'],
    register,
  });

  it('--help lists the program under its name with its flags and their defaults, then the runtime’s', async () => {
    const h = await harness();
    const register = jest.fn<() => void>();
    await run(program(register), { ...h.deps, argv: ['--help'] });
    expect(h.exits).toEqual([]);
    expect(register).not.toHaveBeenCalled();
    const lines = h.out.stdout.split('\n');
    expect(lines.slice(0, 9)).toEqual([
      'my-operator: greets pods.',
      '',
      'Flags of this program:',
      `  --${'greeting=VALUE'.padEnd(34)} what to say (default hello)`,
      `  --${'label=VALUE'.padEnd(34)} label to add`,
      `  --${'replicas=N'.padEnd(34)} how many (default 2)`,
      `  --${'dry-run=BOOL'.padEnd(34)} change nothing (default false)`,
      `  --${'resync=DUR'.padEnd(34)} resync period (default 30s)`,
      '',
    ]);
    // The runtime's flags and env vars follow, as in Kruise's manager, with the program's controllers' workers.
    const kruise = helpText({
      title: '',
      flags: [],
      controllers: ['greeter'],
      names: objectNamesFor('my-operator'),
    }).split('\n');
    expect(lines.slice(9)).toEqual([...kruise.slice(2), '']);
    expect(lines).toContain(
      `  --${'greeter-workers=N'.padEnd(34)} concurrent reconciles of the greeter controller (default 3)`,
    );
    expect(h.out.stdout).not.toMatch(/sidecarset-workers|workloadspread-workers/);
  });

  it.each([
    [['--replicas=two'], /^error: --replicas: "two" is not a whole number\. Fix: .*--replicas=3\n$/],
    [['--dry-run=yes'], /^error: --dry-run: "yes" is not a boolean\. Fix: use --dry-run=true or --dry-run=false\n$/],
    [['--resync=10'], /^error: --resync: "10" is not a duration\. Fix: /],
    [['--replicas'], /^error: Option '--replicas <value>' argument missing\. Fix: see --help\n$/],
    [
      ['--replica=3'],
      /^error: --replica: is not a flag of this project's runtime.*; and this program's own: .*replicas/,
    ],
    [['--role=leader'], /^error: --role: "leader" is not a role\./],
  ])('exits 2 on %j, with an error naming the flag', async (extra, message) => {
    const h = await harness();
    const register = jest.fn<() => void>();
    await run(program(register), { ...h.deps, argv: h.argv(...extra) });
    expect(h.exits).toEqual([2]);
    expect(h.out.stderr).toMatch(message);
    expect(register).not.toHaveBeenCalled();
  });

  it("names its Lease, webhook Service, Secret and webhook configurations after itself, never Kruise's", async () => {
    const h = await harness();
    let options: ManagerOptions | undefined;
    const capture = (m: Manager) => {
      options = m.options;
      throw new Error('captured');
    };
    await run({ name: 'team-labeler', register: capture }, { ...h.deps, argv: h.argv() });
    expect(h.exits).toEqual([1]);
    expect(options && pickNames(options)).toEqual({
      leaderElectionId: 'team-labeler',
      serviceName: 'team-labeler-webhook-service',
      secretName: 'team-labeler-webhook-certs',
      mutatingWebhookConfiguration: 'team-labeler-mutating-webhook-configuration',
      validatingWebhookConfiguration: 'team-labeler-validating-webhook-configuration',
    });
    const help = await harness();
    await run({ name: 'team-labeler', register: capture }, { ...help.deps, argv: ['--help'] });
    expect(help.out.stdout).toContain('name of the Lease (default team-labeler)');
    expect(help.out.stdout).toContain('certificate Secret (default team-labeler-webhook-certs)');
    expect(help.out.stdout).not.toMatch(/\(default kruise-(webhook|manager)/);

    // Kruise's manager keeps Kruise's names.
    const k = await harness();
    await main(['--help'], env, k.deps);
    expect(k.out.stdout).toContain('name of the Lease (default kruise-manager)');
    expect(k.out.stdout).toContain('webhook Service (default kruise-webhook-service)');
  });

  it.each([
    [
      'Team Labeler',
      /^name: cannot prefix the program's object names.*\(got "Team Labeler"\)\. Fix: use lower-case letters, digits and "-", at most 47 characters/,
    ],
    ['x'.repeat(48), /its webhook Service's \(x{48}-webhook-service\) a DNS label of at most 63 characters/],
  ])('refuses a name %j that cannot prefix its object names, by throwing, without exiting', async (name, message) => {
    const h = await harness();
    await expect(run({ name, register: jest.fn<() => void>() }, { ...h.deps, argv: [] })).rejects.toThrow(message);
    expect(h.exits).toEqual([]);
    // Given its object names, any display name goes.
    const h2 = await harness();
    await run(
      { name, objectNames: objectNamesFor('ok'), register: jest.fn<() => void>() },
      { ...h2.deps, argv: ['--help'] },
    );
    expect(h2.out.stdout).toContain('name of the Lease (default ok)');
  });

  it.each([
    [{ Bad_Name: { type: 'string', help: 'x' } }, /flag "Bad_Name": names are lower-case/],
    [{ role: { type: 'string', help: 'x' } }, /flag names already read by the runtime: role/],
    [{ help: { type: 'boolean', help: 'x' } }, /already read by the runtime: help/],
    [
      { every: { type: 'duration', default: '5', help: 'x' } },
      /flag every: bad default: --every: "5" is not a duration/,
    ],
    [{ count: { type: 'integer', default: 1.5, help: 'x' } }, /flag count: default 1.5 is not a whole number/],
  ] as [Record<string, FlagDefinition>, RegExp][])(
    'refuses a malformed flag definition %j by throwing, without exiting',
    async (flags, message) => {
      const h = await harness();
      await expect(
        run({ name: 'bad', flags, register: jest.fn<() => void>() }, { ...h.deps, argv: [] }),
      ).rejects.toThrow(message);
      expect(h.exits).toEqual([]);
    },
  );
});

describe("Kruise's manager on run()", () => {
  it('prints the same --help as before, and exits 2 on a bad flag', async () => {
    const h = await harness();
    await main(['--help'], env, h.deps);
    expect(h.out.stdout).toBe(`${helpText()}\n`);
    expect(h.out.stdout.split('\n', 1)[0]).toBe(
      'kruise-ha manager: leader-elected controllers and a replicated admission webhook.',
    );
    expect(h.out.stdout).not.toMatch(/Flags of this program/);
    await main(['--sidecarset-workers=0'], env, h.deps);
    expect(h.exits).toEqual([2]);
    expect(h.out.stderr).toMatch(/^error: --sidecarset-workers: "0" /);
  });
});

function pickNames(o: ManagerOptions) {
  const { leaderElectionId, serviceName, secretName, mutatingWebhookConfiguration, validatingWebhookConfiguration } = o;
  return { leaderElectionId, serviceName, secretName, mutatingWebhookConfiguration, validatingWebhookConfiguration };
}
