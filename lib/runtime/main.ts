#!/usr/bin/env node
/**
 * The kruise-ha manager process. Exit codes: 0 after a graceful shutdown, 1 on a fatal error
 * (the container restarts), 2 on bad flags.
 */
import { KubeConfig } from './kube/client-node.js';
import { isEntrypoint } from './entrypoint.js';
import { Logger } from './log.js';
import { Manager, type ExitCode } from './manager.js';
import { helpText, OptionsError, parseOptions } from './options.js';
import { registerSidecarSet } from './sidecarset/index.js';
import { registerWorkloadSpread } from './workloadspread/index.js';

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<void> {
  let options;
  try {
    options = parseOptions(argv, env);
  } catch (err) {
    if (!(err instanceof OptionsError)) throw err;
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(2);
  }
  if (options === 'help') {
    process.stdout.write(`${helpText()}\n`);
    return;
  }
  const logger = new Logger({ pod: options.podName }, options.logLevel);
  const kubeConfig = new KubeConfig();
  if (options.kubeconfig) kubeConfig.loadFromFile(options.kubeconfig);
  else kubeConfig.loadFromDefault();

  let exiting = false;
  const exit = (code: ExitCode, reason: string) => {
    if (exiting) return;
    exiting = true;
    logger[code === 0 ? 'info' : 'error']('exiting', { code, reason });
    process.exitCode = code;
    // A fatal exit must not wait on the component that failed; give logs a moment to flush.
    if (code !== 0) setTimeout(() => process.exit(code), 100).unref();
  };
  const manager = new Manager({ options, kubeConfig, logger, onExit: exit });
  // Pod CREATE runs WorkloadSpread's step before SidecarSet injection, as upstream's pod webhook.
  registerSidecarSet(manager, registerWorkloadSpread(manager));

  process.on('uncaughtException', (err) => {
    logger.error('uncaught exception', { error: err });
    exit(1, 'uncaught exception');
  });
  process.on('unhandledRejection', (err) => {
    logger.error('unhandled rejection', { error: err });
    exit(1, 'unhandled rejection');
  });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      logger.info('shutting down', { signal, budgetMs: options.gracefulShutdownTimeoutMs });
      // The budget is a promise to the kubelet: whatever still runs then (a hung API call, a
      // stuck server close), the process exits before terminationGracePeriodSeconds ends.
      setTimeout(() => {
        logger.error('shutdown did not finish within its budget; exiting now', {
          flag: '--graceful-shutdown-timeout',
          budgetMs: options.gracefulShutdownTimeoutMs,
        });
        exit(1, 'shutdown budget exceeded');
      }, options.gracefulShutdownTimeoutMs).unref();
      manager.stop().then(
        () => {
          exit(0, signal);
          process.exit(0);
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

if (isEntrypoint(import.meta.url)) await main(process.argv.slice(2), process.env);
