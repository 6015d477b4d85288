/**
 * The entrypoint of a program on this runtime: flags and env vars, `--help`, the kubeconfig, the
 * logger, a {@link Manager} with the program's registrations, SIGTERM/SIGINT with the shutdown
 * budget, uncaught errors, and kruise-manager's exit codes (0 after a graceful shutdown, 1 on a fatal
 * error so the container restarts, 2 on bad flags). Kruise's own manager (main.ts) is one such program.
 */
import {
  describeProblem,
  objectNamePrefixProblems,
  objectNamesFor,
  REGISTRATIONS_FLAG,
  type ObjectNames,
  type Registrations,
} from '../contract.js';
import { KubeConfig } from './kube/client-node.js';
import type { LogSink } from './log.js';
import { Logger } from './log.js';
import { Manager, type ExitCode } from './manager.js';
import { parseBool, parseDuration, parseInteger } from './option-parsers.js';
import { helpText, optionsFromFlags, OptionsError, readFlags, type FlagSet } from './options.js';

/**
 * A flag of the program's own, `--<name>=VALUE`, parsed like the runtime's flags: a bad value ends
 * the process with exit code 2 and an error naming the flag. `string` is taken as given; `boolean`
 * is `true` or `false` (default false); `integer` is a whole number; `duration` is Go-style (`15s`,
 * `500ms`, `720h`) and handed over in milliseconds. `help` is its line in `--help`, which adds the default.
 */
export type FlagDefinition =
  | { readonly type: 'string'; readonly default?: string; readonly help: string }
  | { readonly type: 'boolean'; readonly default?: boolean; readonly help: string }
  | { readonly type: 'integer'; readonly default?: number; readonly help: string }
  | { readonly type: 'duration'; readonly default?: string; readonly help: string };

/** The value type of one flag definition: string, boolean, or number (integers and durations in milliseconds). */
export type FlagValue<D extends FlagDefinition> = D['type'] extends 'string'
  ? string
  : D['type'] extends 'boolean'
    ? boolean
    : number;

/**
 * The values of a program's flags, by name, as `register` receives them: given, else the default;
 * undefined for a flag given neither (a boolean is false then).
 */
export type FlagValues<F extends Record<string, FlagDefinition>> = {
  readonly [K in keyof F]: F[K] extends { readonly type: 'boolean' } | { readonly default: unknown }
    ? FlagValue<F[K]>
    : FlagValue<F[K]> | undefined;
};

/** A program on the runtime: what `--help` says of it, its own flags, and its registrations. */
export interface RunOptions<F extends Record<string, FlagDefinition> = Record<never, FlagDefinition>> {
  /**
   * Its name: the start of the first line of `--help`, and (unless `objectNames` is given) the prefix of
   * its object names (objectNamesFor), so a DNS label of at most 47 characters.
   */
  readonly name: string;
  /**
   * The default names of its Lease, webhook Service, certificate Secret and the webhook configurations
   * whose caBundle it keeps: never another program's or Kruise's, or the two would share a Lease and
   * overwrite each other's caBundle.
   * @default objectNamesFor(name): `<name>`, `<name>-webhook-service`, `<name>-webhook-certs`, ...
   */
  readonly objectNames?: ObjectNames;
  /** One sentence after the name in `--help`. */
  readonly description?: string;
  /** Its own flags by name (lower-case letters, digits and dashes); none may reuse a runtime flag's name. */
  readonly flags?: F;
  /**
   * The names of the leader-only controllers `register` adds (Manager.addController): lower-case words
   * joined by dashes, each tunable with `--<name>-workers`. Adding a controller not named here throws.
   * @default none
   */
  readonly controllers?: readonly string[];
  /**
   * Adds the program's webhooks, controllers, caches and health checks to `manager`, before it starts
   * (Manager.registerWebhook, addController, informer, addReadinessCheck, addLivenessCheck). A throw
   * or rejection ends the process with exit code 1.
   */
  register(manager: Manager, flags: FlagValues<F>): void | Promise<void>;
}

/** What {@link run} takes from the process; each defaults to the real one, tests pass their own. */
export interface RunDeps {
  /** Default `process.argv.slice(2)`. */
  readonly argv?: readonly string[];
  /** Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** Where `--help` goes; default stdout. */
  readonly stdout?: (text: string) => void;
  /** Where a flag error goes; default stderr. */
  readonly stderr?: (text: string) => void;
  /** Where the JSON log lines go; default stderr. */
  readonly logSink?: LogSink;
  /** Emits SIGTERM, SIGINT, `uncaughtException` and `unhandledRejection`; default `process`. */
  readonly events?: Pick<NodeJS.EventEmitter, 'on' | 'once'>;
  /**
   * Ends the process with `code`. The default sets `process.exitCode` and exits: at once for 0 (after
   * the shutdown) and 2 (bad flags), 100ms later for 1, so the logs flush without waiting on the
   * component that failed.
   */
  readonly exit?: (code: ExitCode | 2) => void;
}

const PLACEHOLDERS: Record<FlagDefinition['type'], string> = {
  string: 'VALUE',
  boolean: 'BOOL',
  integer: 'N',
  duration: 'DUR',
};

/**
 * Runs a program on the runtime, as kruise-manager runs: parses the runtime's flags and env vars with
 * the program's own flags ({@link FlagDefinition}), prints `--help`, loads the kubeconfig
 * (`--kubeconfig`, else in-cluster, else `$KUBECONFIG`), builds the {@link Manager}, calls `register`,
 * and starts it. SIGTERM or SIGINT stops it (Manager.stop) and exits 0, or 1 when the stop fails or
 * outlasts `--graceful-shutdown-timeout`. A fatal error (start failed, leadership lost, an uncaught
 * exception or rejection) exits 1; bad flags exit 2. Resolves once the manager has started, or at once
 * after `--help` or a flag error. Throws (without exiting) when `program.flags` is malformed.
 */
export async function run<const F extends Record<string, FlagDefinition> = Record<never, FlagDefinition>>(
  program: RunOptions<F>,
  deps: RunDeps = {},
): Promise<void> {
  const definitions = Object.entries(program.flags ?? {}) as [string, FlagDefinition][];
  checkDefinitions(definitions);
  const argv = [...(deps.argv ?? process.argv.slice(2))];
  const env = deps.env ?? process.env;
  const terminate = deps.exit ?? exitProcess;
  const events = deps.events ?? process;
  const names = definitions.map(([name]) => name);
  const controllers = program.controllers ?? [];
  let objectNames = program.objectNames;
  if (objectNames === undefined) {
    const problems = objectNamePrefixProblems('name', program.name);
    if (problems.length > 0) throw new Error(problems.map(describeProblem).join('; '));
    objectNames = objectNamesFor(program.name);
  }
  const stdout = deps.stdout ?? ((t: string) => process.stdout.write(t));
  const stderr = deps.stderr ?? ((t: string) => process.stderr.write(t));
  const flagSet: FlagSet = { extraFlags: names, controllers, names: objectNames };
  if (argv.includes(`--${REGISTRATIONS_FLAG}`)) {
    const rest = argv.filter((a) => a !== `--${REGISTRATIONS_FLAG}`);
    try {
      stdout(`${JSON.stringify(await registrationsOf(program, definitions, flagSet, rest, deps.logSink), null, 2)}\n`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const flagError = err instanceof OptionsError;
      stderr(`error: ${flagError ? '' : 'register failed: '}${message}\n`);
      terminate(flagError ? 2 : 1);
      return;
    }
    terminate(0);
    return;
  }
  let options;
  let flags;
  try {
    const values = readFlags(argv, flagSet);
    if (values === 'help') options = values;
    else {
      options = optionsFromFlags(values, env, flagSet);
      flags = flagValues(values, definitions);
    }
  } catch (err) {
    if (!(err instanceof OptionsError)) throw err;
    stderr(`error: ${err.message}\n`);
    terminate(2);
    return;
  }
  if (options === 'help') {
    const title = program.description ? `${program.name}: ${program.description}` : program.name;
    const usage = definitions.map(([name, d]) => [`${name}=${PLACEHOLDERS[d.type]}`, helpLine(d)] as const);
    stdout(`${helpText({ title, flags: usage, controllers, names: objectNames })}\n`);
    return;
  }
  const logger = new Logger({ pod: options.podName }, options.logLevel, deps.logSink);
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig) kubeConfig.loadFromFile(options.kubeconfig);
  else kubeConfig.loadFromDefault();

  let exiting = false;
  const exit = (code: ExitCode, reason: string) => {
    if (exiting) return;
    exiting = true;
    logger[code === 0 ? 'info' : 'error']('exiting', { code, reason });
    terminate(code);
  };
  const manager = new Manager({ options, kubeConfig, logger, onExit: exit, name: program.name, flags: names });
  try {
    await program.register(manager, flags as FlagValues<F>);
  } catch (err) {
    logger.error('register failed', { error: err });
    exit(1, 'register failed');
    return;
  }

  events.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { error: err });
    exit(1, 'uncaught exception');
  });
  events.on('unhandledRejection', (err) => {
    logger.error('unhandled rejection', { error: err });
    exit(1, 'unhandled rejection');
  });
  const budgetMs = options.gracefulShutdownTimeoutMs;
  let stopping = false;
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // `on`, not `once`: a signal with no listener left would end the process at once, mid-drain, before the Lease is
    // released. A terminal's Ctrl-C often arrives twice (to the whole job, and again from a wrapper such as tsx that
    // relays it); the stop already under way, bounded by the budget, answers every later one.
    events.on(signal, () => {
      if (stopping) {
        logger.info('already shutting down; signal ignored', { signal });
        return;
      }
      stopping = true;
      logger.info('shutting down', { signal, budgetMs });
      // The budget is a promise to the kubelet: whatever still runs then (a hung API call, a
      // stuck server close), the process exits before terminationGracePeriodSeconds ends.
      const budget = setTimeout(() => {
        logger.error('shutdown did not finish within its budget; exiting now', {
          flag: '--graceful-shutdown-timeout',
          budgetMs,
        });
        exit(1, 'shutdown budget exceeded');
      }, budgetMs).unref();
      manager.stop().then(
        () => {
          clearTimeout(budget);
          // After a fatal error's exit 1 that has not ended the process yet, too: the stop finished.
          if (exiting) terminate(0);
          else exit(0, signal);
        },
        (err: unknown) => {
          logger.error('shutdown failed', { error: err });
          exit(1, 'shutdown failed');
        },
      );
    });
  }
  try {
    await manager.start();
  } catch (err) {
    logger.error('start failed', { error: err });
    exit(1, 'start failed');
  }
}

/**
 * `--registrations`: registers the program on a manager that never starts (the flags given beside it, no kubeconfig,
 * no connection) and returns Manager.registrations(), which run() prints as JSON. Operator runs the bundle so at
 * synth, with the flags it renders, and renders the webhook configurations and RBAC from what it prints. `register`
 * must therefore not call the API server.
 */
async function registrationsOf<F extends Record<string, FlagDefinition>>(
  program: RunOptions<F>,
  definitions: readonly [string, FlagDefinition][],
  flagSet: FlagSet,
  argv: readonly string[],
  logSink: LogSink | undefined,
): Promise<Registrations> {
  const values = readFlags(argv, flagSet);
  if (values === 'help') throw new OptionsError('--help and --registrations ask for two answers. Fix: give one');
  const options = optionsFromFlags(values, {}, flagSet);
  const logger = new Logger({}, 'error', logSink);
  const kubeConfig = new KubeConfig();
  const flags = flagSet.extraFlags ?? [];
  const manager = new Manager({ options, kubeConfig, logger, onExit: () => {}, name: program.name, flags });
  await program.register(manager, flagValues(values, definitions) as FlagValues<F>);
  return manager.registrations();
}

/** The real process's end: exit codes as {@link RunDeps.exit} says. */
function exitProcess(code: ExitCode | 2): void {
  process.exitCode = code;
  if (code === 1) setTimeout(() => process.exit(code), 100).unref();
  else process.exit(code);
}

const FLAG_NAME = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

/** A program's flag definitions are its code: a bad one is a bug, thrown, not a flag error. */
function checkDefinitions(definitions: readonly [string, FlagDefinition][]): void {
  for (const [name, d] of definitions) {
    if (!FLAG_NAME.test(name))
      throw new Error(`flag ${JSON.stringify(name)}: names are lower-case letters, digits and dashes, e.g. max-items`);
    if (!(d.type in PLACEHOLDERS))
      throw new Error(`flag ${name}: type ${JSON.stringify(d.type)} is not ${Object.keys(PLACEHOLDERS).join(', ')}`);
    if (d.type === 'duration' && d.default !== undefined) {
      try {
        parseDuration(`--${name}`, d.default);
      } catch (err) {
        throw new Error(`flag ${name}: bad default: ${(err as Error).message}`, { cause: err });
      }
    }
    if (d.type === 'integer' && d.default !== undefined && !Number.isInteger(d.default))
      throw new Error(`flag ${name}: default ${d.default} is not a whole number`);
  }
}

function helpLine(d: FlagDefinition): string {
  const fallback = d.type === 'boolean' ? (d.default ?? false) : d.default;
  return fallback === undefined ? d.help : `${d.help} (default ${fallback})`;
}

function flagValues(
  given: Record<string, string | undefined>,
  definitions: readonly [string, FlagDefinition][],
): Record<string, string | boolean | number | undefined> {
  const values: Record<string, string | boolean | number | undefined> = {};
  for (const [name, d] of definitions) {
    const raw = given[name];
    switch (d.type) {
      case 'string':
        values[name] = raw ?? d.default;
        break;
      case 'boolean':
        values[name] = raw === undefined ? (d.default ?? false) : parseBool(name, raw);
        break;
      case 'integer':
        values[name] = raw === undefined ? d.default : parseInteger(`--${name}`, raw);
        break;
      case 'duration': {
        const value = raw ?? d.default;
        values[name] = value === undefined ? undefined : parseDuration(`--${name}`, value);
        break;
      }
    }
  }
  return values;
}
